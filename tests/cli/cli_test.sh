#!/usr/bin/env bash
# CLI end-to-end: exit codes, JSON contract fields, profile versions, batch errors,
# metrics, SIGTERM drain. Prints "N passed, M failed".
set -u
server=$1 cli=$2
dir=$(mktemp -d)
pass=0 fail=0
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port) mport=$(free_port)
"$server" --listen "127.0.0.1:$port" --db "$dir/paraplan.db" --metrics-listen "127.0.0.1:$mport" \
  >"$dir/server.out" 2>"$dir/server.err" &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
P() { "$cli" --server "127.0.0.1:$port" "$@"; }
check() {  # check NAME EXPECTED_RC COMMAND... ; output in $dir/out, $dir/err
  local name=$1 want=$2; shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, want $want"; head -c 600 "$dir/err"; fi
}
expect() {  # expect NAME PYTHON-EXPR-over-text-in-t
  if python3 -c "import json,sys; t=open('$dir/out').read(); e=open('$dir/err').read(); sys.exit(0 if ($2) else 1)"; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1"; head -c 600 "$dir/out"; head -c 300 "$dir/err"; fi
}
for _ in $(seq 1 100); do P health >/dev/null 2>&1 && break; sleep 0.1; done

check "health" 0 P health
expect "health says SERVING" "'SERVING' in t"
check "no command is a usage error" 2 P
check "unknown command" 2 P frobnicate
check "unknown flag value" 2 P --output yaml models
check "plan without gpus" 2 P plan --profile dgx-a100-80gb --model gpt3-175b
check "missing file" 65 P profiles put "$dir/nope.json"
expect "missing file is named" "'nope.json' in e"
echo '{"name": "x", "gpus_per_node": }' >"$dir/bad.json"
check "malformed json" 65 P profiles put "$dir/bad.json"
expect "malformed json names the file" "'bad.json' in e"
check "server unavailable" 69 "$cli" --server "127.0.0.1:$(free_port)" --timeout 1 models

check "profiles list" 0 P profiles list
expect "built-in profiles listed" "all(n in t for n in ['dgx-a100-80gb','dgx-h100-80gb','abci-v100-16gb'])"
check "models" 0 P models
expect "gpt3-175b preset" "'gpt3-175b' in t and 'llama3-405b' in t"

P --output json profiles show dgx-a100-80gb >"$dir/profile.json"
python3 - "$dir/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "lab-cluster"
p.pop("version", None); p.pop("created_at", None)
json.dump(p, open(sys.argv[1], "w"))
PY
check "put creates version 1" 0 P profiles put "$dir/profile.json"
expect "version 1" "t.strip() == 'lab-cluster@1'"
check "put again writes version 2" 0 P profiles put "$dir/profile.json"
expect "version 2" "t.strip() == 'lab-cluster@2'"
check "show @1" 0 P --output json profiles show lab-cluster@1
expect "show @1 is version 1" "json.loads(t)['version'] == 1"
check "history" 0 P profiles history lab-cluster
check "show unknown version" 1 P profiles show lab-cluster@9
expect "NOT_FOUND named" "'NOT_FOUND' in e and 'version 9' in e"
check "delete" 0 P profiles delete lab-cluster

cat >"$dir/config.json" <<'JSON'
{"tensor_parallel": 8, "pipeline_parallel": 8, "data_parallel": 16, "micro_batch_size": 1,
 "global_batch_size": 1536, "recompute": "RECOMPUTE_SELECTIVE", "sequence_parallel": true,
 "virtual_pipeline_stages": 3}
JSON
check "estimate table" 0 P estimate --profile dgx-a100-80gb --model gpt3-175b --config "$dir/config.json"
expect "breakdown shown" "'pipeline bubble' in t and 'MFU' in t and 'fits' in t"
check "estimate json" 0 P --output json estimate --profile dgx-a100-80gb --model gpt3-175b --config "$dir/config.json"
expect "estimate json fields" "all(k in json.loads(t) for k in ['iteration_time_s','time','memory','mfu','bottleneck','energy_per_iteration_j','cost_per_iteration_usd'])"
echo '{"tensor_parallel": 7, "global_batch_size": 8}' >"$dir/bad_config.json"
check "invalid config" 1 P estimate --profile dgx-a100-80gb --model gpt3-175b --config "$dir/bad_config.json"
expect "invalid config names the field" "'INVALID_ARGUMENT' in e and 'config.tensor_parallel' in e"

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
cfg = json.load(open(d + "/config.json"))
good = {"profile": "dgx-a100-80gb", "workload": {"name": "g", "transformer": {"num_layers": 96,
        "hidden_size": 12288, "num_attention_heads": 96, "seq_length": 2048, "vocab_size": 51200}}, "config": cfg}
bad = dict(good, config=dict(cfg, pipeline_parallel=5))
with open(d + "/batch.jsonl", "w") as f:
    f.write(json.dumps(good) + "\n" + json.dumps(bad) + "\n" + "{not json\n")
PY
check "estimate --batch" 0 P estimate --batch "$dir/batch.jsonl"
expect "one line per request, errors as objects" "len(t.splitlines()) == 3 and 'iteration_time_s' in json.loads(t.splitlines()[0]) and json.loads(t.splitlines()[1])['error']['code'] == 3 and 'error' in json.loads(t.splitlines()[2])"

check "plan table" 0 P plan --profile dgx-a100-80gb --model gpt3-175b --gpus 1024 --global-batch 1536 --top 5
expect "ranked table" "'MFU %' in t and 'candidates enumerated' in t"
check "plan json" 0 P --output json plan --profile dgx-a100-80gb --model gpt3-175b --gpus 1024 --global-batch 1536
expect "plan json fields" "(lambda r: len(r['plans']) == 10 and 'iteration_time_s' in r['plans'][0] and all(k in r for k in ['pareto','candidates_enumerated','candidates_feasible','candidates_evaluated','search_time_s','truncated']))(json.loads(t))"
check "plan with constraints" 0 P --output json plan --profile dgx-a100-80gb --model gpt3-175b --gpus 512 --global-batch 512 --tp 4 --max-pp 16 --recompute full
expect "constraints honoured" "all(p['config']['tensor_parallel'] == 4 and p['config']['recompute'] == 'RECOMPUTE_FULL' for p in json.loads(t)['plans'])"
check "plan nothing fits" 0 P plan --profile abci-v100-16gb --model gpt3-175b --gpus 8 --global-batch 8
expect "infeasible reason" "'no plan' in t and 'GiB short' in t"

data="$(cd "$(dirname "$0")/../../../shared/data" && pwd)/korthikanti22_iteration_times.jsonl"
ex="$(cd "$(dirname "$0")/../../examples" && pwd)"
check "estimate a CNN layer graph" 0 P --output json estimate --profile abci-v100-16gb --workload "$ex/cnn-small.json" --config "$ex/config-cnn-spatial.json"
expect "CNN estimate with halo exchange" "(lambda e: e['config']['spatial_parallel'] == 4 and e['time']['tp_comm_s'] > 0 and e['memory']['fits'])(json.loads(t))"
check "plan a CNN layer graph" 0 P --output json plan --profile abci-v100-16gb --workload "$ex/cnn-small.json" --gpus 16 --global-batch 16 --top 20
expect "CNN plans include ParaDL splits" "any(p['config']['spatial_parallel'] * p['config']['filter_parallel'] * p['config']['channel_parallel'] > 1 for p in json.loads(t)['plans'])"
check "ingest" 0 P ingest "$data"
expect "nine accepted" "'9 accepted' in t"
check "ingest again" 0 P ingest "$data"
expect "duplicates reported" "'9 duplicate' in t or '0 accepted' in t"
check "accuracy" 0 P --output json accuracy --profile dgx-a100-80gb
expect "accuracy counts" "json.loads(t)['overall']['count'] == 9"
check "calibrate" 0 P calibrate --profile dgx-a100-80gb
expect "fit report" "'cross-validated' in t and 'dgx-a100-80gb@2' in t"

python3 - "$mport" >"$dir/out" 2>"$dir/err" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())
PY
expect "metrics exported" "'paraplan_rpc_requests_total' in t and 'paraplan_prediction_mape_ratio' in t and 'paraplan_calibrations_total' in t"

# SIGTERM while a plan is in flight: the plan completes, the server exits 0.
P --output json plan --profile dgx-a100-80gb --model gpt3-175b --gpus 4096,2048,1024,512 --global-batch 1536 >"$dir/inflight" 2>&1 &
cpid=$!
sleep 0.05
kill -TERM "$pid"
wait "$pid"; src=$?
wait "$cpid"; crc=$?
if [ "$src" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL server exit $src after SIGTERM"; fi
if [ "$crc" -eq 0 ] && grep -q iteration_time_s "$dir/inflight"; then pass=$((pass + 1)); else
  # The request may have arrived after the listener closed; then it must fail cleanly.
  if [ "$crc" -eq 69 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL in-flight plan rc=$crc"; fi
fi
if [ "$(sqlite3 "$dir/paraplan.db" 'PRAGMA integrity_check')" = "ok" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL integrity_check"; fi
grep -q "level=info rpc=Plan code=OK" "$dir/server.err" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no request log"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
