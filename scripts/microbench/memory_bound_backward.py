#!/usr/bin/env python3
"""Forward and backward HBM traffic of a transformer layer's memory-bound kernels.

The estimator charges a memory-bound op its forward bytes at the profile's memory-bound
rate (memory_bound_efficiency x peak: 0.70) and its backward twice that. This times forward
and backward separately (CUDA events) for the ops of a Megatron-style layer at training
shapes and reports each in bytes per element at the rate a plain device copy reaches on the
same GPU, beside the bytes the estimator counts (multiply those by copy rate / model rate,
~1.26 on an H100, to compare):
  layernorm  F.layer_norm with weight and bias   model fwd 2p, bwd 4p
  gelu       F.gelu                              model fwd 2p, bwd 4p
  softmax    torch.softmax over the keys         model fwd 2p, bwd 4p
  dropout    F.dropout (mask kept, 1 byte)        model fwd 2p + 1, bwd 4p + 2
Run on one GPU (not in CI):
    python3 scripts/microbench/memory_bound_backward.py --out memory_bound_backward.csv
CSV: op,elements,dtype,fwd_ms,bwd_ms,fwd_bytes_per_element,bwd_bytes_per_element (at the copy
rate),model_fwd,model_bwd. Needs PyTorch with CUDA.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_timing import copy_bytes_per_s, gpu_ms  # noqa: E402


def fwd_bwd_ms(make_input, op, reps):
    """GPU ms of op's forward, and of its backward alone, on a fresh input each call."""
    x = make_input()
    fwd = gpu_ms(lambda: op(x), reps)
    y = op(x)
    dy = torch.randn_like(y)

    def backward():
        x.grad = None
        y.backward(dy, retain_graph=True)
    bwd = gpu_ms(backward, reps)
    return fwd, bwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="memory_bound_backward.csv")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    rate = copy_bytes_per_s(args.reps)
    dt = torch.bfloat16
    p = 2
    tokens, h = 8192, 2048
    w = torch.ones(h, device="cuda", dtype=dt, requires_grad=True)
    b = torch.zeros(h, device="cuda", dtype=dt, requires_grad=True)

    def tensor(*shape):
        return lambda: torch.randn(*shape, device="cuda", dtype=dt, requires_grad=True)

    ops = [
        ("layernorm", tensor(tokens, h), lambda x: F.layer_norm(x, (h,), w, b), 2 * p, 4 * p),
        ("gelu", tensor(tokens, 4 * h), F.gelu, 2 * p, 4 * p),
        ("softmax", tensor(8 * 16, 1024, 1024), lambda x: torch.softmax(x, -1), 2 * p, 4 * p),
        ("dropout", tensor(8 * 16, 1024, 1024), lambda x: F.dropout(x, 0.1, True), 2 * p + 1, 4 * p + 2),
    ]
    rows = []
    for name, make, op, model_fwd, model_bwd in ops:
        n = make().numel()
        fwd, bwd = fwd_bwd_ms(make, op, args.reps)
        rows.append((name, n, "bf16", fwd, bwd, fwd * 1e-3 * rate / n, bwd * 1e-3 * rate / n, model_fwd, model_bwd))
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        f.write("op,elements,dtype,fwd_ms,bwd_ms,fwd_bytes_per_element,bwd_bytes_per_element,model_fwd,model_bwd\n")
        for r in rows:
            f.write("%s,%d,%s,%.4f,%.4f,%.2f,%.2f,%d,%d\n" % r)
    print("%s (%s, PyTorch %s); device copy %.0f GB/s"
          % (args.out, torch.cuda.get_device_name(), torch.__version__, rate / 1e9))
    for r in rows:
        print("%-9s fwd %.3f ms = %5.2f B/elem (model %d), bwd %.3f ms = %5.2f B/elem (model %d), bwd/fwd %.2f"
              % (r[0], r[3], r[5], r[7], r[4], r[6], r[8], r[4] / r[3]))


if __name__ == "__main__":
    main()
