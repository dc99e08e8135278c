#!/usr/bin/env bash
# CPU a server spends on calls whose client gave up: each heavy call is made with a 1 s
# deadline (--timeout 1) against a fresh server, and the server's CPU time (utime +
# stime of all its threads and its reaped children, from /proc) is read before the call, when the client has
# given up, and 3 s later. Prints one line per call:
#   NAME before_deadline_cpu_s=X after_deadline_cpu_s=Y
# The bar (issue 21) is Y <= 1. Exit 1 when a call goes over. A SimGrid child's CPU is
# counted when it is reaped (after it was killed), so its share from before the
# deadline shows in Y too.
#
# Usage: bench/deadline_cpu.sh [BUILD_DIR]   (default build; needs ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
data=../shared/data
source bench/server_fixture.sh
BENCH_KEEP_LOG=/tmp/deadline_server.log
start_server "$build"
cli() { "$build/client/paraplan" --server "127.0.0.1:$port" --timeout 1 "$@" >/dev/null 2>&1 || true; }
cpu() { awk '{printf "%.2f", ($14 + $15 + $16 + $17) / 100}' "/proc/$pid/stat"; }  # with reaped children (SimGrid)

# An 8 MiB GEMM sweep (the shipped one repeated): 84 CPU-s after the deadline before.
python3 - "$data/h100_microbench/gemm.csv" "$tmp/gemm.csv" <<'EOF'
import sys
lines = [l for l in open(sys.argv[1]).read().split('\n') if l.strip()]
head, body = lines[0], [l for l in lines[1:] if not l.startswith('#')]
out, size, i = [head], len(head), 0
while size < 8 * 1024 * 1024 - 200:
    out.append(body[i % len(body)]); size += len(body[i % len(body)]) + 1; i += 1
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
EOF
# A 99,000-layer graph (conv / relu alternating): 47 s after the deadline before.
python3 - "$tmp/graph.json" <<'EOF'
import json, sys
layers = []
for i in range(99000):
    l = {"name": f"l{i}", "kind": "conv" if i % 2 == 0 else "relu", "input_shape": [64, 32, 32],
         "output_shape": [64, 32, 32]}
    if i % 2 == 0: l.update(kernel_shape=[3, 3], stride=[1, 1])
    layers.append(l)
json.dump({"name": "deep", "precision": "PRECISION_FP16",
           "layer_graph": {"sample_shape": [64, 32, 32], "layers": layers}}, open(sys.argv[1], 'w'))
EOF

over=0
measure() {
  local name=$1; shift
  local before mid after
  before=$(cpu)
  cli "$@"
  mid=$(cpu)
  sleep 3
  after=$(cpu)
  echo "$name before_deadline_cpu_s=$(awk -v a="$mid" -v b="$before" 'BEGIN { printf "%.2f", a - b }')" \
    "after_deadline_cpu_s=$(awk -v a="$after" -v b="$mid" 'BEGIN { printf "%.2f", a - b }')"
  awk -v a="$after" -v b="$mid" 'BEGIN { exit !(a - b > 1) }' && over=1
  return 0
}
measure fit-gemm profiles fit-gemm dgx-h100-80gb "$tmp/gemm.csv" --dry-run
measure plan-99k-layers plan --profile abci-v100-16gb --workload "$tmp/graph.json" --gpus 64 --global-batch 256
measure plan-gpt3-4096 plan --profile dgx-a100-80gb --model gpt3-175b --gpus 4096 --global-batch 1536
measure simulate simulate --profile dgx-a100-80gb --model gpt3-175b --tp 1 --pp 8 --dp 128 --global-batch 1536
exit $over
