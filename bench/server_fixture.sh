# Sourced by the bench scripts: start_server BUILD_DIR [SERVER FLAGS...] starts
# BUILD_DIR/server/paraplan-server on a random loopback port (`port` if the script set
# it) with a fresh SQLite file in a temporary folder, waits for it to answer, and sets
# `pid`, `port` and `tmp` (removed, with the server stopped, when the script exits;
# BENCH_KEEP_LOG=FILE keeps its log).
# Exits the script when the server does not start.
start_server() {
  local build=$1
  shift
  tmp=$(mktemp -d)
  trap 'kill "$pid" 2>/dev/null || true; [ -n "${BENCH_KEEP_LOG:-}" ] && cp "$tmp/server.log" "$BENCH_KEEP_LOG"; rm -rf "$tmp"' EXIT
  port=${port:-$((20000 + RANDOM % 20000))}
  "$build/server/paraplan-server" --listen "127.0.0.1:$port" --db "$tmp/p.db" --metrics-listen off "$@" \
    >"$tmp/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    "$build/client/paraplan" --server "127.0.0.1:$port" --timeout 1 models >/dev/null 2>&1 && break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null || { echo "the server did not start:"; cat "$tmp/server.log"; exit 1; }
}
