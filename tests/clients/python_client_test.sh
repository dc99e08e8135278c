#!/usr/bin/env bash
# The README's Python client recipe, as written: Debian's protoc and grpc_python_plugin
# generate the stubs, and examples/python/paraplan_client.py runs against a real server
# on a loopback port (estimate, a refused request's BadRequest detail, reflection).
#   python_client_test.sh --server PATH/paraplan-server
# Exit 0 when the client's three steps pass, 1 otherwise, 77 (skipped) without Debian's
# python3 with grpcio or without grpc_python_plugin.
set -uo pipefail
[[ ${1:-} == --server && -x ${2:-} ]] || { echo "usage: $0 --server PATH" >&2; exit 2; }
SERVER=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3  # Debian's, where python3-grpcio installs (not a pyenv shim)
"$PY" -c 'import grpc, google.protobuf' 2>/dev/null || { echo "skip: python3-grpcio / python3-protobuf missing"; exit 77; }
[[ -x /usr/bin/grpc_python_plugin ]] || { echo "skip: grpc_python_plugin missing"; exit 77; }

TMP=$(mktemp -d)
PID=""
trap '[[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$ROOT"
mkdir -p "$TMP/py"
protoc -I proto -I /usr/share/grpc-proto/grpc --python_out="$TMP/py" --grpc_out="$TMP/py" \
  --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin \
  proto/paraplan/v1/*.proto proto/google/rpc/error_details.proto \
  /usr/share/grpc-proto/grpc/reflection/v1alpha/reflection.proto || exit 1

"$SERVER" --listen 127.0.0.1:0 --db "$TMP/paraplan.db" --metrics-listen off --log-level warn >"$TMP/server.out" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q "listening on" "$TMP/server.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -nE 's/.*listening on 127\.0\.0\.1:([0-9]+) .*/\1/p' "$TMP/server.out")
[[ -n $PORT ]] || { echo "server did not start:"; cat "$TMP/server.out"; exit 1; }
PYTHONPATH="$TMP/py" "$PY" examples/python/paraplan_client.py "127.0.0.1:$PORT"
