#!/usr/bin/env bash
# Starts a real paraplan-server on a free loopback port with a temporary SQLite file,
# runs validate_public.py through the real CLI, and always stops the server.
set -euo pipefail
server=$1 cli=$2 shared=$3
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --listen "127.0.0.1:$port" --db "$dir/paraplan.db" --metrics-listen "" >"$dir/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
  "$cli" --server "127.0.0.1:$port" profiles list >/dev/null 2>&1 && break
  sleep 0.1
done
python3 "$shared/tools/validate_public.py" --cli "$cli" --server "127.0.0.1:$port"
