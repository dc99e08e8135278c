#!/usr/bin/env bash
# The hardening campaign (issue 21) in one script, against the real server binary on
# loopback with a throwaway SQLite file:
#   1. fuzz by bytes, then by structure (bench/rpc_fuzz.py), each on a fresh server: no
#      crash, no UNKNOWN / INTERNAL / DATA_LOSS, no NaN or Inf in any answer, and (runs of
#      90 s or more) resident memory at the end at most twice what it was after a minute;
#   2. hostile HTTP and 300 slow connections (bench/http_attacks.py): /metrics answers
#      another client in under 1 s;
#   3. a mixed soak (build/bench/rpc_load --rpc soak): no failed call, and (runs of 90 s or
#      more) memory at the end at most twice what it was after a minute;
#   4. kill -9 with automatic calibrations in flight (crash_test *InFlight): no
#      acknowledged measurement lost, the database intact after every kill;
#   5. full run only: the CPU a server spends after a 1 s client deadline
#      (bench/deadline_cpu.sh, needs ../shared/data) and 8 concurrent 10,000-request batch
#      estimates (bench/batch_memory.sh).
# --short is the version ctest runs (campaign.short, about a minute on 2 cores): 1,500
# requests per fuzz, 1 round of attacks, a 15 s soak, 5 kills. The full run (100,000
# requests per fuzz, 20 rounds, a 10-minute soak, 100 kills) takes about 25 minutes.
# Prints `campaign: STEP ok|FAILED (N s)` per step and `campaign: N steps, M failed`;
# exit 1 when any failed.
#
# Usage: bench/campaign.sh [--short] [BUILD_DIR]   (default build)
set -uo pipefail
cd "$(dirname "$0")/.."
short=0
[[ ${1:-} == --short ]] && { short=1; shift; }
build=${1:-build}
if ((short)); then
  fuzz_requests=1500 rounds=1 soak_s=15 kills=5
else
  fuzz_requests=100000 rounds=20 soak_s=600 kills=100
fi
tmp=$(mktemp -d)
pid=""
trap 'stop_server; rm -rf "$tmp"' EXIT
steps=0 failed=0

start_server() {  # a fresh server on a fresh database; sets pid, grpc, api, metrics
  stop_server
  local try
  for try in 1 2 3 4 5; do  # another port when one of the three is taken
    local port=$((20000 + RANDOM % 20000))
    grpc=127.0.0.1:$port api=127.0.0.1:$((port + 1)) metrics=127.0.0.1:$((port + 2))
    rm -f "$tmp"/p.db*
    "$build/server/paraplan-server" --listen "$grpc" --db "$tmp/p.db" --http-listen "$api" \
      --metrics-listen "$metrics" --quiet >>"$tmp/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      curl -sf -o /dev/null "http://$api/v1/version" && return 0
      sleep 0.1
    done
    stop_server
  done
  echo "campaign: the server did not start:"; tail -20 "$tmp/server.log"
  return 1
}
stop_server() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=""; }

step() {  # step NAME COMMAND...: runs it, keeps its output in $tmp, says ok or FAILED
  local name=$1 began=$SECONDS
  shift
  steps=$((steps + 1))
  if "$@" >"$tmp/step.out" 2>&1; then
    echo "campaign: $name ok ($((SECONDS - began)) s)"
  else
    failed=$((failed + 1))
    echo "campaign: $name FAILED ($((SECONDS - began)) s)"
  fi
  grep -E "requests=|rss|answers|checks|kills|server_pid|_cpu_s|FAILED|Failure|error" "$tmp/step.out" | head -20 |
    sed 's/^/  /'
}

fuzz() { start_server && bench/rpc_fuzz.py --server "$grpc" --requests "$fuzz_requests" --server-pid "$pid" "$@"; }

soak() {
  start_server || return 1
  "$build/bench/rpc_load" --server "$grpc" --rpc soak --threads 2 --seconds "$soak_s" --server-pid "$pid" \
    >"$tmp/soak.out" 2>&1 || { cat "$tmp/soak.out"; return 1; }
  cat "$tmp/soak.out"
  # rss_mib_every_10s=a,b,c,...: the 7th sample is a minute in.
  python3 - "$tmp/soak.out" "$soak_s" <<'EOF'
import re, sys
series = re.search(r'rss_mib_every_10s=([\d,]+)', open(sys.argv[1]).read())
if series and int(sys.argv[2]) >= 90:
    rss = [int(x) for x in series.group(1).split(',')]
    ok = rss[-1] <= 2 * rss[6]
    print(f'rss_end_at_most_twice_the_first_minute={"yes" if ok else "NO"} ({rss[6]} -> {rss[-1]} MiB)')
    sys.exit(0 if ok else 1)
EOF
}

attacks() { start_server && bench/http_attacks.py --api "$api" --metrics "$metrics" --rounds "$rounds"; }

kills() { PARAPLAN_CRASH_ROUNDS=$kills "$build/tests/server/crash_test" --gtest_filter='*InFlight'; }

step "fuzz by bytes ($fuzz_requests requests)" fuzz --mutator bytes
step "fuzz by structure ($fuzz_requests requests)" fuzz --mutator fields
step "hostile HTTP ($rounds rounds) and 300 slow connections" attacks
step "soak (${soak_s} s)" soak
stop_server
step "kill -9 with calibrations in flight ($kills kills)" kills
if ((!short)); then
  if [[ -d ../shared/data ]]; then
    step "CPU after a 1 s deadline" bench/deadline_cpu.sh "$build"
  else
    echo "campaign: CPU after a 1 s deadline skipped (no ../shared/data)"
  fi
  step "8 concurrent 10,000-request batch estimates" bench/batch_memory.sh "$build"
fi
echo "campaign: $steps steps, $failed failed"
((failed == 0))
