#!/usr/bin/env bash
# The Qwen3-235B Megatron-Core runs of ../shared/data through the real server (temporary
# SQLite file, free loopback port) and the real CLI: bench/qwen3_moe_dev.py --check prints
# each run's prediction beside its measurement and fails when a run is rejected or one
# that ran as published is predicted not to fit.
# usage: qwen3_dev_test.sh PARAPLAN_SERVER PARAPLAN_CLI
set -euo pipefail
server=$1
cli=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --listen "127.0.0.1:$port" --db "$dir/paraplan.db" --metrics-listen off >"$dir/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  "$cli" --server "127.0.0.1:$port" health >/dev/null 2>&1 && break
  sleep 0.1
done
python3 "$root/bench/qwen3_moe_dev.py" --cli "$cli" --server "127.0.0.1:$port" \
  --file "$root/../shared/data/megatron_moe_qwen3_235b.jsonl" --check
