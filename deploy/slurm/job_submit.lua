--[[
paraplan job_submit/lua plugin: a training plan for every job that asks for one.

Contract.
  A job opts in with a comment (sbatch --comment) holding one word
      paraplan:model=PRESET,profile=PROFILE,global_batch=N[,gpus=N][,objective=time|cost|energy]
  (other text may stand around it). PRESET is a paraplan model preset (GET /v1/models),
  PROFILE a stored system profile (NAME or NAME@VERSION). The GPU count is the job's:
  --gpus / --gres=gpu:N with --nodes (tres_per_job, or tres_per_node times min_nodes);
  gpus=N in the comment overrides it.

  At submit time the plugin asks paraplan for the best plan (POST /v1/plan on the
  HTTP/JSON API, via curl) and attaches it to the job:
    - admin_comment gets " paraplan=" and one JSON object without spaces:
        {"model":"llama3-8b","profile":"dgx-h100-80gb","profile_version":1,"gpus":16,
         "predicted_iteration_time_s":7.1,"config":{...ParallelConfig, zeros left out...}}
      the other members in any order, `config` last, as it always was: epilog.sh reads
      the object with jq, an epilog from before jq cut `config` out with sed (users
      cannot change admin_comment; the epilog reads it back);
    - batch jobs get environment variables for the training script: PARAPLAN_MODEL,
      PARAPLAN_PROFILE, PARAPLAN_GPUS, PARAPLAN_TP, PARAPLAN_PP, PARAPLAN_DP, PARAPLAN_CP,
      PARAPLAN_EP, PARAPLAN_VPP, PARAPLAN_MBS, PARAPLAN_GBS, PARAPLAN_SP (0/1),
      PARAPLAN_RECOMPUTE (none|selective|full), PARAPLAN_ZERO, PARAPLAN_SCHEDULE,
      PARAPLAN_PREDICTED_ITERATION_TIME_S and PARAPLAN_CONFIG_JSON (the config above);
    - the user sees one line (slurm.log_user) with the plan and its prediction.

  Fails open: the job is never rejected because of paraplan. A server that is down,
  slow (PARAPLAN_TIMEOUT_S), refusing, or a comment that does not parse, or no plan that
  fits: the job goes on unchanged, with the reason in slurmctld's log (slurm.log_info)
  and told to the user. Jobs without the comment are not touched and cost nothing.
  Values from the comment are checked against strict patterns before they reach the
  request (no shell or JSON injection); the request goes to curl through a file.

Configuration (slurmctld's environment, or edit the defaults below):
  PARAPLAN_URL         the HTTP/JSON API, default http://127.0.0.1:8080
  PARAPLAN_TOKEN_FILE  a file holding a bearer token (reader role) when the server has
                       --tokens-file; default none
  PARAPLAN_TIMEOUT_S   the most a submission waits for a plan, default 0.7 (the server
                       answers its best so far by then; curl gives up 0.2 s later)
  PARAPLAN_BREAKER_S   after a call that got no answer (or a 5xx), the next submissions
                       skip paraplan for this many seconds, default 60: a hung or dead
                       server costs slurmctld one timeout per window, not one per job
  PARAPLAN_BREAKER_FILE where that window is kept, so that it outlives a reload of this
                       script, default /tmp/paraplan_job_submit.breaker
  PARAPLAN_CURL        the curl binary, default curl

Works with Lua 5.1 (what Debian's Slurm embeds) to 5.4, with lua-cjson for JSON (Debian:
lua-cjson; without it the plugin loads, says so in slurmctld's log, and lets every job
through unchanged). slurm_job_modify leaves jobs as they are: a plan is made once, at
submission.
--]]

local URL = os.getenv("PARAPLAN_URL") or "http://127.0.0.1:8080"
local TOKEN_FILE = os.getenv("PARAPLAN_TOKEN_FILE") or ""
local TIMEOUT_S = tonumber(os.getenv("PARAPLAN_TIMEOUT_S") or "") or 0.7
local BREAKER_S = tonumber(os.getenv("PARAPLAN_BREAKER_S") or "") or 60
local BREAKER_FILE = os.getenv("PARAPLAN_BREAKER_FILE") or "/tmp/paraplan_job_submit.breaker"
local CURL = os.getenv("PARAPLAN_CURL") or "curl"

-- Slurm's "unset" numbers (NO_VAL, NO_VAL16, NO_VAL64 and friends).
local NO_VAL_MIN = 65534

---------------------------------------------------------------------------- JSON

-- lua-cjson (Debian: lua-cjson), a private instance: its settings stay out of the other
-- plugins slurmctld runs. Without it every job goes on unchanged; slurmctld's log says
-- why once (below), and users who ask for a plan are told.
local json, json_missing
do
  local ok, cjson = pcall(require, "cjson")
  if ok and type(cjson) == "table" and type(cjson.new) == "function" then
    json = cjson.new()
    json.decode_invalid_numbers(false)  -- JSON numbers only: no hex, inf or nan
  else
    json_missing = "lua-cjson is not installed (apt-get install lua-cjson): " ..
                   tostring(cjson):match("^[^\n]*"):sub(1, 200)
  end
end

------------------------------------------------------------------ the job's request

local NAME = "^[%w][%w._-]*$"               -- presets and profile names
local PROFILE_REF = "^[%w][%w._-]*@?%d*$"   -- NAME or NAME@VERSION
local OBJECTIVES = { time = "OBJECTIVE_TIME", cost = "OBJECTIVE_COST", energy = "OBJECTIVE_ENERGY" }

-- The job's paraplan request from its comment: nil when it has none; or the request
-- table; or nil and the reason it does not parse.
local function parse_request(comment)
  if type(comment) ~= "string" then return nil end
  local spec = comment:match("paraplan:(%S+)")
  if not spec then return nil end
  local req = {}
  for item in spec:gmatch("[^,]+") do
    local k, v = item:match("^([%w_]+)=(.+)$")
    if not k then return nil, string.format("\"%s\" is not KEY=VALUE", item:sub(1, 40)) end
    if k == "model" then
      if not v:find(NAME) or #v > 64 then return nil, "model: not a preset name" end
      req.model = v
    elseif k == "profile" then
      if not v:find(PROFILE_REF) or #v > 80 then return nil, "profile: not NAME or NAME@VERSION" end
      req.profile = v
    elseif k == "global_batch" or k == "gbs" then
      if not v:find("^%d+$") or #v > 9 or tonumber(v) < 1 then return nil, k .. ": not a positive integer" end
      req.global_batch = tonumber(v)
    elseif k == "gpus" then
      if not v:find("^%d+$") or #v > 7 or tonumber(v) < 1 then return nil, "gpus: not a positive integer" end
      req.gpus = tonumber(v)
    elseif k == "objective" then
      if not OBJECTIVES[v] then return nil, "objective: one of time, cost, energy" end
      req.objective = v
    else
      return nil, string.format("unknown key \"%s\" (model, profile, global_batch, gpus, objective)", k:sub(1, 40))
    end
  end
  for _, k in ipairs({ "model", "profile", "global_batch" }) do
    if req[k] == nil then return nil, k .. ": missing" end
  end
  return req
end

local function is_set(n)
  return type(n) == "number" and n > 0 and n < NO_VAL_MIN
end

-- GPUs in a TRES string ("gres/gpu:8", "gres/gpu:h100:8", "gpu:8", "gres:gpu:2,gres/nic:1");
-- nil when it names none.
local function gpus_in(tres)
  if type(tres) ~= "string" then return nil end
  local total
  for item in tres:gmatch("[^,]+") do
    item = item:gsub("^gres[/:]", "")
    if item == "gpu" or item:find("^gpu[:=]") then
      local n = tonumber(item:match("[:=](%d+)$") or "1")
      total = (total or 0) + n
    end
  end
  return total
end

-- The GPUs the job asks for; nil when it asks for none.
local function job_gpus(job_desc)
  local per_job = gpus_in(job_desc.tres_per_job)
  if per_job then return per_job end
  local per_node = gpus_in(job_desc.tres_per_node)
  if per_node then
    local nodes = is_set(job_desc.min_nodes) and job_desc.min_nodes or 1
    return per_node * nodes
  end
  return nil
end

---------------------------------------------------------------------------- HTTP

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function write_file(path, s)
  local f = io.open(path, "wb")
  if not f then return false end
  f:write(s)
  f:close()
  return true
end

-- POSTs `body` (JSON) to URL .. path. Returns the HTTP status and the body, or nil and
-- why not.
local function http_post(path, body)
  if URL:find("[^%w%.:/%[%]_-]") then return nil, "PARAPLAN_URL has characters a URL does not need" end
  local body_file, out_file, header_file = os.tmpname(), os.tmpname(), os.tmpname()
  local function cleanup()
    os.remove(body_file)
    os.remove(out_file)
    os.remove(header_file)
  end
  local headers = "Content-Type: application/json\r\nX-Paraplan-Timeout-S: " .. json.encode(TIMEOUT_S) .. "\r\n"
  if TOKEN_FILE ~= "" then
    local token = (read_file(TOKEN_FILE) or ""):match("^%s*(%S+)")
    if not token then
      cleanup()
      return nil, "PARAPLAN_TOKEN_FILE " .. TOKEN_FILE .. " holds no token"
    end
    headers = headers .. "Authorization: Bearer " .. token .. "\r\n"
  end
  if not (write_file(body_file, body) and write_file(header_file, headers)) then
    cleanup()
    return nil, "cannot write temporary files"
  end
  -- The whole call, connection included, within the timeout plus a little for transfer.
  local cmd = string.format("%s -sS -X POST --max-time %s -H @%s --data-binary @%s -o %s -w '%%{http_code}' '%s%s' 2>&1",
                            CURL, json.encode(TIMEOUT_S + 0.2), header_file, body_file, out_file, URL, path)
  local p = io.popen(cmd, "r")
  if not p then
    cleanup()
    return nil, "cannot run curl"
  end
  local said = p:read("*a") or ""
  p:close()
  local response = read_file(out_file) or ""
  cleanup()
  local status = tonumber(said:match("(%d%d%d)$") or "")
  if not status or status == 0 then
    return nil, "no answer from " .. URL .. ": " .. (said:gsub("%s*%d*$", ""):sub(1, 200))
  end
  return status, response
end

---------------------------------------------------------------- circuit breaker

-- The epoch second until which submissions skip paraplan, from BREAKER_FILE (0 = closed).
local function breaker_open_until()
  return tonumber((read_file(BREAKER_FILE) or ""):match("^%s*(%d+)")) or 0
end

-- A call that got no answer, or a server error, opens the breaker for BREAKER_S; an
-- answer closes it.
local function breaker_record(server_failed)
  if server_failed then
    write_file(BREAKER_FILE, tostring(os.time() + BREAKER_S) .. "\n")
  elseif breaker_open_until() ~= 0 then
    os.remove(BREAKER_FILE)
  end
end

---------------------------------------------------------------------- the plan

local RECOMPUTE = { RECOMPUTE_UNSPECIFIED = "none", RECOMPUTE_NONE = "none", RECOMPUTE_SELECTIVE = "selective",
                    RECOMPUTE_FULL = "full" }

-- The configuration without nulls, zeros, false, empty strings and *_UNSPECIFIED enums:
-- what the proto3 JSON mapping reads back as the same message.
local function compact(v)
  if type(v) ~= "table" then return v end
  local out, any = {}, false
  for k, x in pairs(v) do
    x = compact(x)
    local empty = x == nil or x == json.null or x == 0 or x == false or x == "" or
                  (type(x) == "string" and x:find("_UNSPECIFIED$")) or (type(x) == "table" and next(x) == nil)
    if not empty then
      out[k] = x
      any = true
    end
  end
  return any and out or {}
end

-- The request body for POST /v1/plan.
local function plan_request(req, gpus)
  local body = { profile = req.profile, model = req.model, gpus = { gpus }, global_batch_size = req.global_batch,
                 top_k = 1 }
  if req.objective then body.objective = OBJECTIVES[req.objective] end
  return json.encode(body)
end

-- The plan as attached to the job: one JSON object without spaces, `config` last (see
-- the top of this file).
local function attachment(req, gpus, best, config)
  local head = json.encode({ model = req.model, profile = req.profile:gsub("@.*$", ""),
                             profile_version = tonumber(best.profile_version), gpus = gpus,
                             predicted_iteration_time_s = tonumber(best.iteration_time_s) })
  return head:sub(1, -2) .. ',"config":' .. json.encode(config) .. "}"
end

local function set_env(job_desc, vars)
  -- Only batch jobs carry an environment (nil for salloc / srun); older Slurm has none.
  local ok, env = pcall(function() return job_desc.environment end)
  if not ok or env == nil then return false end
  -- Numbers as JSON writes them: 8, not Lua 5.3+'s 8.0 for a decoded 8.
  for k, v in pairs(vars) do env[k] = type(v) == "number" and json.encode(v) or tostring(v) end
  return true
end

local function degree(n)
  return (type(n) == "number" and n > 0) and n or 1
end

-- Asks for a plan and attaches it; returns the line for the user, or nil and why not.
local function plan_job(job_desc, req)
  local gpus = req.gpus or job_gpus(job_desc)
  if not gpus then return nil, "the job asks for no GPUs (use --gpus, --gres=gpu:N or gpus= in the comment)" end
  local until_s = breaker_open_until()
  if until_s > os.time() then
    return nil, string.format("paraplan at %s did not answer a recent call; not asked again for %d s", URL,
                              until_s - os.time())
  end
  local status, body = http_post("/v1/plan", plan_request(req, gpus))
  breaker_record(not status or status >= 500)
  if not status then return nil, body end
  local ok, resp = pcall(json.decode, body)
  if not ok or type(resp) ~= "table" then return nil, "HTTP " .. status .. ": not JSON: " .. tostring(resp) end
  if status ~= 200 then
    local e = type(resp.error) == "table" and resp.error or {}
    return nil, string.format("HTTP %d %s: %s", status, tostring(e.code), tostring(e.message))
  end
  local best = type(resp.plans) == "table" and resp.plans[1]
  if type(best) ~= "table" or type(best.config) ~= "table" then
    local why = resp.infeasible_reason
    return nil, string.format("no configuration of %s fits %d GPUs of %s%s", req.model, gpus, req.profile,
                              (type(why) == "string" and why ~= "") and (": " .. why) or "")
  end
  local c = compact(best.config)  -- nulls and defaults out: nil, as the old fields read
  local plan = attachment(req, gpus, best, c)
  local previous = job_desc.admin_comment
  job_desc.admin_comment = ((type(previous) == "string" and previous ~= "") and (previous .. " ") or "") ..
                           "paraplan=" .. plan
  local recompute = RECOMPUTE[c.recompute] or "none"
  set_env(job_desc, {
    PARAPLAN_MODEL = req.model, PARAPLAN_PROFILE = req.profile, PARAPLAN_GPUS = gpus,
    PARAPLAN_TP = degree(c.tensor_parallel), PARAPLAN_PP = degree(c.pipeline_parallel),
    PARAPLAN_DP = degree(c.data_parallel), PARAPLAN_CP = degree(c.context_parallel),
    PARAPLAN_EP = degree(c.expert_parallel), PARAPLAN_VPP = degree(c.virtual_pipeline_stages),
    PARAPLAN_MBS = degree(c.micro_batch_size), PARAPLAN_GBS = c.global_batch_size or req.global_batch,
    PARAPLAN_SP = c.sequence_parallel and 1 or 0, PARAPLAN_RECOMPUTE = recompute,
    PARAPLAN_ZERO = c.zero_stage or 0, PARAPLAN_SCHEDULE = c.pipeline_schedule or "SCHEDULE_UNSPECIFIED",
    PARAPLAN_PREDICTED_ITERATION_TIME_S = tonumber(best.iteration_time_s) or 0,
    PARAPLAN_CONFIG_JSON = json.encode(c),
  })
  return string.format("paraplan: %s on %d GPUs of %s: tp=%d pp=%d dp=%d cp=%d mbs=%d recompute=%s zero=%d, " ..
                       "predicted %.3f s per iteration", req.model, gpus, req.profile, degree(c.tensor_parallel),
                       degree(c.pipeline_parallel), degree(c.data_parallel), degree(c.context_parallel),
                       degree(c.micro_batch_size), recompute, c.zero_stage or 0, tonumber(best.iteration_time_s) or 0)
end

------------------------------------------------------------------- Slurm's hooks

local function user_message(msg)
  if slurm.log_user then pcall(slurm.log_user, "%s", msg) end
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local ok, err = pcall(function()
    local req, why = parse_request(job_desc.comment)
    if not req then
      if why then
        slurm.log_info("paraplan: job of uid %s: comment not understood: %s", tostring(submit_uid), why)
        user_message("paraplan: no plan attached: " .. why)
      end
      return
    end
    if json_missing then  -- in slurmctld's log once, at load
      user_message("paraplan: no plan attached (the job is submitted as it is): " .. json_missing)
      return
    end
    local line, failure = plan_job(job_desc, req)
    if line then
      slurm.log_info("%s (uid %s)", line, tostring(submit_uid))
      user_message(line)
    else
      slurm.log_info("paraplan: job of uid %s goes on without a plan: %s", tostring(submit_uid), failure)
      user_message("paraplan: no plan attached (the job is submitted as it is): " .. failure)
    end
  end)
  if not ok then slurm.log_info("paraplan: job goes on without a plan: internal error: %s", tostring(err)) end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

-- For tests: the pure parts, reachable without Slurm.
paraplan_internal = { json = json, parse_request = parse_request, gpus_in = gpus_in, job_gpus = job_gpus,
                      compact = compact }

if json_missing then
  slurm.log_info("paraplan: job_submit.lua loaded without plans, every job goes on unchanged: %s", json_missing)
else
  slurm.log_info("paraplan: job_submit.lua loaded (server %s)", URL)
end
return slurm.SUCCESS
