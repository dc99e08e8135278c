#!/usr/bin/env bash
# The nccl-tests runs whose output `paraplan profiles fit-network` reads. Run on the
# cluster you want to calibrate (not in CI), with nccl-tests built
# (https://github.com/NVIDIA/nccl-tests: make MPI=1 for several nodes).
#
#   scripts/microbench/nccl_tests.sh /path/to/nccl-tests/build [GPUS_PER_NODE] [NODES]
#   paraplan profiles fit-network my-cluster nccl/all_reduce_8gpu.txt            # NVLink level
#   paraplan profiles fit-network my-cluster nccl/all_reduce_16gpu.txt --level infiniband
#
# One node: every group size from 2 to GPUS_PER_NODE on NVLink. Several nodes (mpirun):
# one rank per GPU across NODES nodes, which crosses the inter-node level. Sizes 1 MiB to
# 1 GiB doubling, 20 iterations after 5 warm-up ones, out-of-place and in-place timed.
set -euo pipefail
BUILD=${1:?path to nccl-tests/build}
GPN=${2:-8}
NODES=${3:-1}
OUT=${OUT:-nccl}
mkdir -p "$OUT"
ARGS=(-b 1M -e 1G -f 2 -w 5 -n 20)
for op in all_reduce all_gather reduce_scatter alltoall; do
  for g in $(seq 2 "$GPN"); do
    "$BUILD/${op}_perf" -g "$g" "${ARGS[@]}" > "$OUT/${op}_${g}gpu.txt"
  done
done
if [ "$NODES" -gt 1 ]; then
  N=$((GPN * NODES))
  for op in all_reduce all_gather reduce_scatter; do
    mpirun -np "$N" -N "$GPN" "$BUILD/${op}_perf" -g 1 "${ARGS[@]}" > "$OUT/${op}_${N}gpu.txt"
  done
fi
echo "wrote $OUT/*.txt"
