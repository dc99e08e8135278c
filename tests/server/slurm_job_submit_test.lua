--[[
Runs deploy/slurm/job_submit.lua as slurmctld's job_submit/lua plugin would: a `slurm`
table with Slurm's constants and log functions (the only stand-in: Slurm itself), job
descriptions as tables, and the real HTTP/JSON API of a paraplan-server the calling
script started (PARAPLAN_URL).

  lua slurm_job_submit_test.lua JOB_SUBMIT_LUA MODE [OUT_FILE]
    MODE live:  the server is up; plans are attached. OUT_FILE gets the attached admin
                comment (line 1) and the environment the job got (KEY=VALUE lines).
    MODE down:  nothing listens at PARAPLAN_URL; every job still gets slurm.SUCCESS.
    MODE hang:  the server accepts and never answers; the same, within the timeout.
    MODE hang5: five submissions against that server: the first waits out the timeout
                and opens the circuit breaker, the other four do not call paraplan.
    MODE nocjson: require("cjson") fails: the script still loads, says why once in
                slurmctld's log, and lets every job through unchanged.
Prints "ok - ..." / "not ok - ..." lines; exits 1 if any check failed.
--]]

local script, mode, out_file = arg[1], arg[2], arg[3]
local failures = 0
local logs, user_logs = {}, {}

local function check(cond, what, detail)
  if cond then
    print("ok - " .. what)
  else
    failures = failures + 1
    print("not ok - " .. what .. (detail and (": " .. tostring(detail)) or ""))
  end
end

-- Slurm's side of the plugin API (src/lua/slurm_lua.c): constants and log functions
-- that take a format string.
slurm = {
  SUCCESS = 0, ERROR = -1, FAILURE = -1,
  NO_VAL = 4294967294, NO_VAL16 = 65534, NO_VAL64 = 18446744073709551614,
  log_info = function(fmt, ...) logs[#logs + 1] = string.format(fmt, ...) end,
  log_verbose = function(fmt, ...) end,
  log_debug = function(fmt, ...) end,
  log_error = function(fmt, ...) logs[#logs + 1] = "error: " .. string.format(fmt, ...) end,
  log_user = function(fmt, ...) user_logs[#user_logs + 1] = string.format(fmt, ...) end,
}

if mode == "nocjson" then
  package.loaded.cjson = nil
  package.preload.cjson = function() error("cjson hidden by the test") end
end

local loaded = dofile(script)
check(loaded == slurm.SUCCESS, "the script loads and returns slurm.SUCCESS")
check(type(slurm_job_submit) == "function" and type(slurm_job_modify) == "function",
      "slurm_job_submit and slurm_job_modify are defined")

local function last(t) return t[#t] or "" end

-- A batch job as sbatch --comment ... --gres=gpu:8 -N 2 describes it.
local function job(fields)
  local j = { min_nodes = slurm.NO_VAL, user_id = 1000, environment = {} }
  for k, v in pairs(fields) do j[k] = v end
  return j
end

local function submit(j)
  local start = os.time()
  local rc = slurm_job_submit(j, {}, 1000)
  return rc, os.time() - start
end

local OPT_IN = "paraplan:model=llama3-8b,profile=dgx-h100-80gb,global_batch=128"

-- The pure parts, without a server.
local internal = paraplan_internal
check(internal.gpus_in("gres/gpu:8") == 8 and internal.gpus_in("gres/gpu:h100:4,gres/nic:1") == 4 and
      internal.gpus_in("gpu:2") == 2 and internal.gpus_in("gres:gpu") == 1 and internal.gpus_in("gres/nic:1") == nil,
      "GPU counts from TRES strings")
check(internal.job_gpus({ tres_per_node = "gres/gpu:8", min_nodes = 4 }) == 32 and
      internal.job_gpus({ tres_per_job = "gres/gpu:12", tres_per_node = "gres/gpu:8", min_nodes = 4 }) == 12 and
      internal.job_gpus({ tres_per_node = "gres/gpu:8", min_nodes = slurm.NO_VAL }) == 8,
      "GPUs of a job: per job, or per node times nodes")
do
  local req = internal.parse_request("run 3 paraplan:model=llama3-70b,profile=dgx-h100-80gb@2,gbs=512,objective=cost")
  check(req and req.model == "llama3-70b" and req.profile == "dgx-h100-80gb@2" and req.global_batch == 512 and
        req.objective == "cost", "comment parsed")
  local bad, why = internal.parse_request("paraplan:model=llama3-8b;touch /tmp/x,profile=p,global_batch=1")
  check(bad == nil and why and why:find("model"), "a model name with shell characters is refused", why)
  bad, why = internal.parse_request("paraplan:model=llama3-8b,profile=p")
  check(bad == nil and why and why:find("global_batch"), "a missing key is named", why)
  check(internal.parse_request("no plan please") == nil, "no paraplan: word, no request")
end
if mode ~= "nocjson" then
  local json = internal.json
  local v = json.decode('{"a":[1,2.5,"x\\u00e9\\n\\ud83d\\ude80"],"b":{"c":true,"d":null},"e":-1e3}')
  check(v.a[2] == 2.5 and v.a[3] == "x\195\169\n\240\159\154\128" and v.b.c == true and v.b.d == json.null and
        v.e == -1000, "JSON decodes (lua-cjson): escapes, a surrogate pair, null")
  -- Strings that need escaping survive a round trip; the text stays one line.
  local odd = 'q"\\/\n\t\1 \195\169'
  local text = json.encode({ b = { 1, 2 }, a = odd, c = {} })
  local back = json.decode(text)
  check(back.a == odd and back.b[2] == 2 and type(back.c) == "table" and not text:find("[\n\1]"),
        "JSON encodes: quote, backslash, controls, UTF-8 round trip", text)
  check(not pcall(json.decode, '{"a":0x10}') and not pcall(json.decode, '{"a":1} x'), "JSON: hex and trailing text refused")
  check(next(internal.compact({ a = json.null, b = 0, c = { d = json.null, e = "X_UNSPECIFIED" } })) == nil,
        "nulls, zeros and unspecified enums left out of the config")
end

if mode == "live" then
  -- 1. A job that opts in: 2 nodes x 8 GPUs.
  local j = job({ comment = OPT_IN, tres_per_node = "gres/gpu:8", min_nodes = 2 })
  local rc = submit(j)
  check(rc == slurm.SUCCESS, "opted-in job: slurm.SUCCESS")
  local attached = type(j.admin_comment) == "string" and j.admin_comment:match("paraplan=(%S+)$")
  check(attached ~= nil, "opted-in job: admin_comment carries paraplan={...}", j.admin_comment)
  local ok, plan = pcall(internal.json.decode, attached or "")
  check(ok and type(plan) == "table" and plan.model == "llama3-8b" and plan.profile == "dgx-h100-80gb" and plan.gpus == 16,
        "the attachment is JSON naming model, profile and 16 GPUs", attached)
  check(attached and not attached:find(" ") and attached:find('"config":{.*}}$'), "no spaces, config last", attached)
  local e = j.environment
  local tp, pp, dp, cp = tonumber(e.PARAPLAN_TP), tonumber(e.PARAPLAN_PP), tonumber(e.PARAPLAN_DP), tonumber(e.PARAPLAN_CP)
  check(tp and pp and dp and cp and tp * pp * dp * cp == 16, "PARAPLAN_TP x PP x DP x CP = 16 GPUs",
        string.format("%s %s %s %s", tostring(tp), tostring(pp), tostring(dp), tostring(cp)))
  check(e.PARAPLAN_MODEL == "llama3-8b" and e.PARAPLAN_PROFILE == "dgx-h100-80gb" and e.PARAPLAN_GPUS == "16" and
        tonumber(e.PARAPLAN_MBS) and tonumber(e.PARAPLAN_GBS) == 128, "environment names the plan")
  check(ok and plan.config and plan.config.data_parallel == dp and
        (plan.config.tensor_parallel or 1) == tp, "environment and attachment agree")
  check(tonumber(e.PARAPLAN_PREDICTED_ITERATION_TIME_S) and tonumber(e.PARAPLAN_PREDICTED_ITERATION_TIME_S) > 0,
        "predicted iteration time exported")
  local integers = true
  for _, k in ipairs({ "TP", "PP", "DP", "CP", "EP", "VPP", "MBS", "GBS", "SP", "ZERO", "GPUS" }) do
    integers = integers and tostring(e["PARAPLAN_" .. k]):find("^%d+$") ~= nil
  end
  check(integers, "degrees exported as integers (8, not 8.0)", e.PARAPLAN_TP)
  local cok, cfg = pcall(internal.json.decode, e.PARAPLAN_CONFIG_JSON or "")
  local same = cok and type(cfg) == "table" and ok and type(plan.config) == "table"
  for k, x in pairs(same and cfg or {}) do same = same and (type(x) == "table" or plan.config[k] == x) end
  for k in pairs(same and plan.config or {}) do same = same and cfg[k] ~= nil end
  check(same, "PARAPLAN_CONFIG_JSON is the attachment's config", e.PARAPLAN_CONFIG_JSON)
  check(last(user_logs):find("llama3%-8b on 16 GPUs of dgx%-h100%-80gb") ~= nil, "the user is told the plan",
        last(user_logs))
  if out_file then
    local f = assert(io.open(out_file, "w"))
    f:write(j.admin_comment, "\n")
    local keys = {}
    for k in pairs(e) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do f:write(k, "=", e[k], "\n") end
    f:close()
  end

  -- 2. GPUs per job (--gpus 8), an admin comment already there, objective cost.
  j = job({ comment = "paraplan:model=llama3-8b,profile=dgx-h100-80gb,global_batch=64,objective=cost",
            tres_per_job = "gres/gpu:h100:8", admin_comment = "site=abc" })
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment:find("^site=abc paraplan={") ~= nil and j.environment.PARAPLAN_GPUS == "8",
        "--gpus 8: plan for 8 GPUs, the earlier admin comment kept", j.admin_comment)

  -- 3. Not opted in: untouched, no request.
  local before = #logs
  j = job({ comment = "my experiment", tres_per_node = "gres/gpu:8" })
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment == nil and next(j.environment) == nil and #logs == before,
        "a job without the comment is not touched")

  -- 4. A comment that does not parse: the job goes on, the user is told why.
  j = job({ comment = "paraplan:model=llama3-8b,profile=dgx-h100-80gb,global_batch=128,tp=8", tres_per_node = "gres/gpu:8" })
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment == nil and last(user_logs):find("unknown key \"tp\"") ~= nil,
        "an unknown key: no plan, the user is told", last(user_logs))

  -- 5. An interactive job (no environment): the plan still goes into admin_comment.
  j = job({ comment = OPT_IN, tres_per_node = "gres/gpu:4" })
  j.environment = nil
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment and j.admin_comment:find("paraplan=") ~= nil,
        "salloc-style job without environment: admin_comment only")

  -- 6. Nothing fits: no plan, the job goes on.
  j = job({ comment = "paraplan:model=llama3-405b,profile=dgx-h100-80gb,global_batch=16,gpus=1" })
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment == nil and last(user_logs):find("no configuration") ~= nil,
        "nothing fits on 1 GPU: no plan, SUCCESS, told why", last(user_logs))

  -- 7. Unknown profile: the server's 404 is reported, the job goes on.
  j = job({ comment = "paraplan:model=llama3-8b,profile=no-such-cluster,global_batch=128", tres_per_node = "gres/gpu:8" })
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment == nil and last(user_logs):find("HTTP 404") ~= nil,
        "unknown profile: HTTP 404 reported, SUCCESS", last(user_logs))

  -- 8. No GPUs asked for.
  j = job({ comment = OPT_IN })
  rc = submit(j)
  check(rc == slurm.SUCCESS and j.admin_comment == nil and last(user_logs):find("no GPUs") ~= nil,
        "no GPUs: no plan, SUCCESS", last(user_logs))

  check(slurm_job_modify(job({}), {}, {}, 1000) == slurm.SUCCESS, "slurm_job_modify: SUCCESS")
elseif mode == "nocjson" then
  check(internal.json == nil and #logs == 1 and logs[1]:find("without plans.*lua%-cjson is not installed") ~= nil,
        "nocjson: loaded; slurmctld's log says why, once", logs[1])
  for i = 1, 2 do
    local j = job({ comment = OPT_IN, tres_per_node = "gres/gpu:8", min_nodes = 2 })
    local rc = submit(j)
    check(rc == slurm.SUCCESS and j.admin_comment == nil and next(j.environment) == nil and
          last(user_logs):find("submitted as it is.*lua%-cjson") ~= nil,
          "nocjson: opted-in job " .. i .. ": SUCCESS, unchanged, the user is told", last(user_logs))
  end
  local said = #user_logs
  local j = job({ comment = "my experiment", tres_per_node = "gres/gpu:8" })
  check(submit(j) == slurm.SUCCESS and j.admin_comment == nil and #user_logs == said and #logs == 1,
        "nocjson: a job without the comment: untouched, nothing logged")
elseif mode == "hang5" then
  for i = 1, 5 do
    local j = job({ comment = OPT_IN, tres_per_node = "gres/gpu:8", min_nodes = 2 })
    local rc = submit(j)
    check(rc == slurm.SUCCESS and j.admin_comment == nil, "hang5: submission " .. i .. ": slurm.SUCCESS, nothing attached")
    local said = last(user_logs)
    if i == 1 then
      check(said:find("no answer") ~= nil, "hang5: the first waits out the timeout", said)
    else
      check(said:find("not asked again") ~= nil, "hang5: submission " .. i .. " skips paraplan (breaker open)", said)
    end
  end
else
  -- The server is down or hangs: fail open.
  local j = job({ comment = OPT_IN, tres_per_node = "gres/gpu:8", min_nodes = 2 })
  local rc, took = submit(j)
  check(rc == slurm.SUCCESS, mode .. ": slurm.SUCCESS")
  check(j.admin_comment == nil and next(j.environment) == nil, mode .. ": nothing attached")
  check(took <= (tonumber(os.getenv("PARAPLAN_TIMEOUT_S") or "2") + 3), mode .. ": answered within the timeout", took)
  check(last(logs):find("without a plan") ~= nil, mode .. ": slurmctld's log says why", last(logs))
  check(last(user_logs):find("submitted as it is") ~= nil, mode .. ": the user is told", last(user_logs))
end

print(string.format("%s: %d failure(s)", _VERSION, failures))
os.exit(failures == 0 and 0 or 1)
