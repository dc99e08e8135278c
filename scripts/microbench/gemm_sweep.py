#!/usr/bin/env python3
"""GEMM sweep for `paraplan profiles fit-gemm`: times torch.matmul (bf16) and, where the
GPU has FP8 tensor cores, torch._scaled_mm (fp8 e4m3, bf16 output) over the m x n x k of
transformer layers, and writes CSV: m,n,k,dtype,seconds,tflops.

Run it on one GPU of the cluster you want to calibrate (not in CI):
    python3 scripts/microbench/gemm_sweep.py --out gemm.csv
    paraplan profiles fit-gemm my-cluster gemm.csv

Each figure is the median of CUDA-event-timed repetitions after warm-up. Needs PyTorch
with CUDA; nothing else.
"""
import argparse
import statistics
import sys

import torch

# n x k of the linear layers of GPT-3 / Llama / Megatron models (hidden h, ffn f),
# as Q/K/V, output projection, MLP up and down; m = tokens per micro-batch.
LAYERS = [
    (768, 3072), (1024, 4096), (2048, 8192), (4096, 11008), (4096, 14336), (5120, 13824),
    (6144, 24576), (8192, 28672), (12288, 49152),
]
M_VALUES = [256, 512, 1024, 2048, 4096, 8192, 16384]


def shapes():
    out = set()
    for h, f in LAYERS:
        for n, k in ((3 * h, h), (h, h), (f, h), (h, f)):
            out.add((n, k))
    return sorted(out)


def time_op(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="gemm.csv")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--max-elements", type=float, default=4e9,
                    help="skip shapes whose m*n + n*k + m*k exceed this (memory)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    fp8 = hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn") and \
        torch.cuda.get_device_capability() >= (8, 9)
    rows = []
    for n, k in shapes():
        for m in M_VALUES:
            if m * n + n * k + m * k > a.max_elements:
                continue
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            w = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
            t = time_op(lambda: torch.matmul(x, w), a.reps)
            rows.append((m, n, k, "bf16", t))
            if fp8:
                x8 = x.to(torch.float8_e4m3fn)
                # _scaled_mm wants the second operand column-major.
                w8 = w.t().contiguous().to(torch.float8_e4m3fn).t()
                one = torch.ones((), device=dev, dtype=torch.float32)
                t8 = time_op(lambda: torch._scaled_mm(x8, w8, scale_a=one, scale_b=one,
                                                      out_dtype=torch.bfloat16), a.reps)
                rows.append((m, n, k, "fp8", t8))
            del x, w
    with open(a.out, "w") as f:
        f.write("m,n,k,dtype,seconds,tflops\n")
        for m, n, k, dtype, t in rows:
            f.write("%d,%d,%d,%s,%.9g,%.6g\n" % (m, n, k, dtype, t, 2.0 * m * n * k / t / 1e12))
    print("%d shapes -> %s (%s)" % (len(rows), a.out, torch.cuda.get_device_name()))


if __name__ == "__main__":
    main()
