#!/usr/bin/env bash
# Installs the Debian 12 packages paraplan builds and tests with (only the missing ones).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config ccache python3
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev prometheus-cpp-dev libsqlite3-dev sqlite3 libceres-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev prometheus
  clang libclang-rt-14-dev
  chromium  # headless rendering of the plan report page (tests/cli)
  lua5.1 lua5.4 lua-cjson curl jq  # deploy/slurm/: job_submit.lua under Slurm's Lua (5.1 on Debian) and the newest, with lua-cjson; epilog.sh with jq (tests/server/slurm_test.sh)
  libsimgrid-dev  # paraplan simulate: flow-level SimGrid replay of a plan's collectives
  postgresql libpqxx-dev  # the PostgreSQL store (libpqxx) and the throwaway servers its tests start (initdb, pg_ctl)
  python3-grpcio python3-protobuf  # the README's Python client recipe (tests/clients)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
