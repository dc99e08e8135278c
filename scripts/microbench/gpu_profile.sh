#!/usr/bin/env bash
# The measurements a GPU profile's calibration rests on, in one run on one GPU (not in CI):
# the sustained BF16 and FP8 GEMM rates under the power cap (sustained_gemm.py), the GEMM
# sweep `paraplan profiles fit-gemm` reads (gemm_sweep.py), causal attention by kernel from
# 2 k to 128 k tokens (long_attention.py; `fit_attention.py` fits its lines), and the
# memory-bound kernels against a device copy (memory_bound_backward.py). ~3 minutes at
# SECONDS_EACH=40 on an H200 (docs/microbench/h200_*).
#
#   OUT=h200 SECONDS_EACH=45 scripts/microbench/gpu_profile.sh
#
# Writes into $OUT: env.txt (GPU, power limit, clocks, PyTorch, cuDNN), sustained_bf16.txt,
# sustained_fp8.txt, gemm_sweep.csv, long_attention.jsonl, memory_bound_backward.csv.
# The rates are shares of the H100 / H200 SXM peaks (989 BF16, 1,979 FP8 TFLOP/s); pass
# PEAK_BF16 / PEAK_FP8 (TFLOP/s) for other GPUs' sustained runs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-gpu_profile}
SECONDS_EACH=${SECONDS_EACH:-45}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,memory.total,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem --format=csv
  "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
  "$PY" -c "import transformer_engine as te; print('transformer_engine', te.__version__)" 2>&1 | tail -1
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
run() {  # name, timeout seconds, command...
  local name=$1 limit=$2; shift 2
  echo "== $name" >&2
  timeout "$limit" "$@" || echo "== $name: exit $?" >&2
}
run sustained_bf16 $((SECONDS_EACH + 30)) "$PY" "$HERE/sustained_gemm.py" --seconds "$SECONDS_EACH" \
  --peak-tflops "${PEAK_BF16:-989}" > "$OUT/sustained_bf16.txt"
run sustained_fp8 $((SECONDS_EACH + 30)) "$PY" "$HERE/sustained_gemm.py" --fp8 --seconds "$SECONDS_EACH" \
  --peak-tflops "${PEAK_FP8:-1979}" > "$OUT/sustained_fp8.txt"
run gemm_sweep 180 "$PY" "$HERE/gemm_sweep.py" --out "$OUT/gemm_sweep.csv"
run long_attention 240 "$PY" "$HERE/long_attention.py" > "$OUT/long_attention.jsonl"
run memory_bound 120 "$PY" "$HERE/memory_bound_backward.py" --out "$OUT/memory_bound_backward.csv" \
  > "$OUT/memory_bound_backward.txt"
tail -n 3 "$OUT"/sustained_*.txt
