#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (unit, integration
# against a real server on loopback with a real SQLite file, and validation against
# the public measurements in ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "${JOBS:-2}" --timeout 600
