#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (unit, integration
# against a real server on loopback with a real SQLite file, and validation against
# the public measurements in ../shared/data), then the fuzz targets for a bounded time
# (scripts/fuzz.sh: FUZZ_SECONDS per target, default 30; FUZZ_SECONDS=0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "${JOBS:-2}" --timeout 600
if [ "${FUZZ_SECONDS:-30}" -gt 0 ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} scripts/fuzz.sh
fi
