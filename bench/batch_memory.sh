#!/usr/bin/env bash
# Memory of a server under 8 concurrent 10,000-request batch estimates on its HTTP port
# (GPT-3 175B on 1,024 A100, one configuration repeated). Prints:
#   start_rss_mib=A peak_rss_mib=B rss_60s_after_mib=C answers=N/8
# The bar (issue 21): B <= 1024 and C < 200. Exit 1 when either is missed.
#
# Usage: bench/batch_memory.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
source bench/server_fixture.sh
port=$((20000 + RANDOM % 20000))
start_server "$build" --http-listen "127.0.0.1:$((port + 1))"
url="http://127.0.0.1:$((port + 1))"
for _ in $(seq 50); do curl -sf -o /dev/null "$url/v1/version" && break; sleep 0.1; done
python3 - "$tmp/batch.json" <<'EOF'
import json, sys
r = {"profile": "dgx-a100-80gb", "model": "gpt3-175b",
     "config": {"tensor_parallel": 8, "pipeline_parallel": 8, "data_parallel": 16, "micro_batch_size": 1,
                "global_batch_size": 1536, "sequence_parallel": True, "flash_attention": True}}
json.dump({"requests": [r] * 10000}, open(sys.argv[1], "w"))
EOF
rss() { awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$pid/status"; }
start=$(rss)
clients=()
for i in $(seq 8); do
  curl -s -o /dev/null -w '%{http_code}\n' -X POST --data-binary @"$tmp/batch.json" "$url/v1/estimate:batch" \
    >"$tmp/code$i" &
  clients+=($!)
done
running() { for c in "${clients[@]}"; do kill -0 "$c" 2>/dev/null && return 0; done; return 1; }
peak=$start
while running; do
  r=$(rss)
  [ "$r" -gt "$peak" ] && peak=$r
  sleep 0.2
done
answered=$(cat "$tmp"/code* | grep -c '^200$' || true)
sleep 60
after=$(rss)
echo "start_rss_mib=$start peak_rss_mib=$peak rss_60s_after_mib=$after answers=$answered/8"
[ "$peak" -le 1024 ] && [ "$after" -lt 200 ] && [ "$answered" -eq 8 ]
