#!/usr/bin/env bash
# The measurements a GPU profile's calibration rests on, in one run on one GPU (not in CI):
# the sustained BF16 and FP8 GEMM rates under the power cap (sustained_gemm.py), the GEMM
# sweep `paraplan profiles fit-gemm` reads (gemm_sweep.py), causal attention by kernel from
# 2 k to 128 k tokens (long_attention.py; `fit_attention.py` fits its lines), and the
# memory-bound kernels against a device copy (memory_bound_backward.py), then a training
# layer settled under the cap, by kind (sustained_layer.py, BF16 and FP8): what the GEMM
# and memory-bound shares become in a real mix (docs/accuracy.md). ~3 minutes at
# SECONDS_EACH=40 on an H200 without the layer (docs/microbench/h200_*), ~2 more with it.
#
#   OUT=h200 SECONDS_EACH=45 scripts/microbench/gpu_profile.sh
#
# Writes into $OUT: env.txt (GPU, power limit, clocks, PyTorch, cuDNN), sustained_bf16.txt,
# sustained_fp8.txt, gemm_sweep.csv, long_attention.jsonl, memory_bound_backward.csv,
# sustained_layer.jsonl (LAYER=0 leaves it out).
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
if [ "${LAYER:-1}" != 0 ]; then
  run sustained_layer_bf16 $((SECONDS_EACH + 60)) "$PY" "$HERE/sustained_layer.py" --seconds "$SECONDS_EACH" \
    > "$OUT/sustained_layer.jsonl"
  run sustained_layer_fp8 $((SECONDS_EACH + 120)) "$PY" "$HERE/sustained_layer.py" --mode float8-compile \
    --seconds "$SECONDS_EACH" >> "$OUT/sustained_layer.jsonl"
fi
tail -n 3 "$OUT"/sustained_*.txt
