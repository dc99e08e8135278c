#!/usr/bin/env bash
# Memory and first answer of one wide plan: DeepSeek-V3 on A100s over 64 GPU counts (64,
# 128, ..., 4096; 2.27 million (count, shape) work items, 145 million configurations).
# Starts a server, asks once with a 1 s deadline and once without, and prints:
#   start_hwm_mib=A after_hwm_mib=B plans_at_1s=N candidates_at_1s=M search_s=S
# B - A is what the request's search held at its peak (VmHWM, the resident high-water
# mark); N and M what a 1 s deadline leaves (the enumeration of every count's shapes used
# to take all of it on a loaded machine). Exit 1 unless the 1 s answer holds a plan.
#
# Usage: bench/plan_memory.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
source bench/server_fixture.sh
start_server "$build" --quiet
cli() { "$build/client/paraplan" --server "127.0.0.1:$port" "$@"; }
hwm() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$pid/status"; }
gpus=$(seq -s, 64 64 4096)
plan() { cli --timeout "$1" -o json plan --profile dgx-a100-80gb --model deepseek-v3 --gpus "$gpus" \
  --global-batch 1536 --top 3 || true; }
start=$(hwm)
read -r plans candidates < <(plan 1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d.get("plans", [])), d.get("candidates_enumerated", 0))')
search_s=$(plan 600 | python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["search_time_s"])')
after=$(hwm)
echo "start_hwm_mib=$start after_hwm_mib=$after plans_at_1s=$plans candidates_at_1s=$candidates search_s=$search_s"
[ "$plans" -gt 0 ]
