#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang into ./build-fuzz and runs each for
# a bounded time on its seed corpus (tests/fuzz/corpus/<target>). Exits non-zero when a
# target finds a crash, a sanitizer report, a broken invariant, a timeout (an input that
# takes over 10 s) or an out-of-memory.
#
#   scripts/fuzz.sh [TARGET...]   all four targets when none is named
#   FUZZ_SECONDS  seconds per target (default 60; 0 = build only)
#   FUZZ_JOBS     targets fuzzed at once (default: one per core)
#
# New inputs are kept in build-fuzz/corpus/<target> (the seeds in the repository are read,
# never written); a finding is saved under build-fuzz/findings/<target>/ — reproduce with
# `build-fuzz/tests/fuzz/<target> FILE`. Only the targets and what they link are built.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-$(nproc)}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(estimate_request_fuzzer plan_request_fuzzer profile_fuzzer cli_json_fuzzer)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DPARAPLAN_FUZZ=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build-fuzz -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
[ "$seconds" -gt 0 ] || exit 0

# Allocation stacks two frames deep: deeper, ASan's fast unwinder walks into the Debian
# libraries (built without frame pointers), records garbage stacks that are all distinct,
# and its stack store grows without bound (700 MB in a minute). Crash stacks are whole.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:malloc_context_size=2}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p build-fuzz/logs
fuzz_one() {
  local t=$1
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  rm -f "build-fuzz/logs/$t.rc"
  set +e
  "build-fuzz/tests/fuzz/$t" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t/" >"build-fuzz/logs/$t.log" 2>&1
  echo $? >"build-fuzz/logs/$t.rc"
}

echo "fuzzing ${#targets[@]} target(s) for ${seconds} s each, ${jobs} at a time"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait

failed=0
for t in "${targets[@]}"; do
  rc=$(cat "build-fuzz/logs/$t.rc" 2>/dev/null || echo 1)
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/logs/$t.log" | grep -o '[0-9]*$' || true)
  cov=$(grep -o 'cov: [0-9]*' "build-fuzz/logs/$t.log" | tail -1 || true)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz $t: ok (${runs:-?} inputs, ${cov:-cov: ?})"
  else
    failed=1
    echo "fuzz $t: FAILED (exit $rc):"
    grep -m 3 -E 'runtime error|ERROR: (Address|Leak|libFuzzer)|invariant broken' "build-fuzz/logs/$t.log" || true
    echo "last lines of build-fuzz/logs/$t.log:"
    tail -n 40 "build-fuzz/logs/$t.log"
    echo "findings:" build-fuzz/findings/"$t"/*
  fi
done
exit $failed
