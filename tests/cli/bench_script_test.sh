#!/usr/bin/env bash
# Runs a checking script against the real server (temporary SQLite file, free loopback
# port) through the real CLI: `python3 bench/SCRIPT --cli CLI --server ADDR ARGS...`
# (SCRIPT relative to the repository root where it names a folder), failing when the
# script does. Used for bench/qwen3_moe_dev.py --check (the Qwen3-235B runs of
# ../shared/data: none rejected, none that ran predicted not to fit),
# bench/bridge_configs_check.py --check (Megatron-Bridge's shipped configurations),
# bench/plan_consistency.py (the planner against the estimator) and
# scripts/check_transcripts.py (the docs' command transcripts as the CLI prints them).
# usage: bench_script_test.sh PARAPLAN_SERVER PARAPLAN_CLI SCRIPT [ARGS...]
set -euo pipefail
server=$1
cli=$2
script=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
http=$(free_port)
# The HTTP port too, for scripts that read $PARAPLAN_TEST_HTTP (check_transcripts.py's curl transcripts).
"$server" --listen "127.0.0.1:$port" --http-listen "127.0.0.1:$http" --db "$dir/paraplan.db" --metrics-listen off \
  >"$dir/server.log" 2>&1 &
export PARAPLAN_TEST_HTTP=127.0.0.1:$http
pid=$!
for _ in $(seq 100); do
  "$cli" --server "127.0.0.1:$port" health >/dev/null 2>&1 && break
  sleep 0.1
done
case $script in */*) path=$root/$script ;; *) path=$root/bench/$script ;; esac
python3 "$path" --cli "$cli" --server "127.0.0.1:$port" "$@"
