#!/usr/bin/env python3
"""Host and GPU time of the optimizer's fp32 cast of 16-bit gradients, per tensor.

Megatron-LM's fp16 runs (and --grad-reduce-in-bf16) keep a 16-bit gradient buffer; before
the step the optimizer gives each fp32 master parameter a new fp32 gradient,
`main_param.grad = model_param.main_grad.float()` (Float16OptimizerWithFloat16Params and
DistributedOptimizer._copy_model_grads_to_main_grads), in a Python loop over the tensors.
The estimator charges one launch per tensor at the profile's kernel_overhead_us and
2 + 4 bytes per parameter at its memory-bound rate. This times that loop as written, over
views into one flat 16-bit buffer (as Megatron-Core's DDP lays them out):
  host_us_per_tensor   wall time of the loop over many small tensors (host-bound), per tensor
  bytes_per_param      GPU time of the loop over large tensors, in bytes per parameter at the
                       rate a plain device copy reaches (2 + 4 = 6 if it streams like a copy)

Run on one GPU (not in CI):
    python3 scripts/microbench/grad_cast.py --out grad_cast.jsonl
One JSON line per case. Needs PyTorch with CUDA.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_timing import copy_bytes_per_s, gpu_ms  # noqa: E402


def tensors(sizes, dtype):
    """Views into one flat buffer of `dtype`, one per size, and fp32 master parameters."""
    flat = torch.randn(sum(sizes), dtype=dtype, device="cuda")
    views, masters, at = [], [], 0
    for n in sizes:
        views.append(flat[at:at + n])
        masters.append(torch.nn.Parameter(torch.empty(n, dtype=torch.float32, device="cuda")))
        at += n
    return views, masters


def cast_all(views, masters):
    for g, p in zip(views, masters):
        p.grad = g.float()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="grad_cast.jsonl")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    rate = copy_bytes_per_s(args.reps)
    rows = []
    for dtype in (torch.float16, torch.bfloat16):
        # Host-bound: 436 tensors of 4,096 elements (a small model's step).
        views, masters = tensors([4096] * 436, dtype)
        for _ in range(3):
            cast_all(views, masters)
        torch.cuda.synchronize()
        walls = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            cast_all(views, masters)
            walls.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        walls.sort()
        rows.append({"case": "small", "dtype": str(dtype).replace("torch.", ""), "tensors": len(views),
                     "host_us_per_tensor": round(1e6 * walls[len(walls) // 2] / len(views), 2)})
        # Bandwidth-bound: 64 tensors of 16 M elements (1 G parameters' worth in 16 calls).
        views, masters = tensors([1 << 24] * 64, dtype)
        params = sum(v.numel() for v in views)
        ms = gpu_ms(lambda: cast_all(views, masters), args.reps)
        rows.append({"case": "large", "dtype": str(dtype).replace("torch.", ""), "tensors": len(views),
                     "params": params, "ms": round(ms, 3),
                     "bytes_per_param": round(ms * 1e-3 * rate / params, 2),
                     "copy_gbytes_per_s": round(rate / 1e9, 1)})
        del views, masters
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
            print(json.dumps(r))


if __name__ == "__main__":
    main()
