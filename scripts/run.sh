#!/usr/bin/env bash
# Installs dependencies, builds, and starts paraplan-server in the foreground with an
# embedded SQLite database (./paraplan.db) seeded with the built-in profiles.
#   gRPC on 127.0.0.1:50051, Prometheus metrics on 127.0.0.1:9464/metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/server/paraplan-server --listen "${PARAPLAN_LISTEN:-127.0.0.1:50051}" \
  --db "${PARAPLAN_DB:-paraplan.db}" --metrics-listen "${PARAPLAN_METRICS:-127.0.0.1:9464}" "$@"
