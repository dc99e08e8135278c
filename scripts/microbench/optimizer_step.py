#!/usr/bin/env python3
"""GPU time of a mixed-precision optimizer step per parameter, for the estimator's optimizer term.

Times, over fp32 master parameters with fp32 gradients (Megatron-LM's
Float16OptimizerWithFloat16Params with fp32 main grads, the layout DeepSpeed's fp16/bf16
optimizers share), the step's streaming passes one by one and together:
  unscale   found-inf check and unscale of the gradients (torch._amp_foreach_non_finite_check_and_unscale_)
  norm      the gradients' L2 norm (torch._foreach_norm), for clipping
  adam      fused Adam (torch.optim.AdamW(fused=True): reads param, grad, m, v; writes param, m, v)
  copy      master to 16-bit model weights (torch._foreach_copy_)
  zero      zeroing the gradients (torch._foreach_zero_)
Each in ms and in bytes per parameter at the rate a plain device copy reaches on the same GPU;
the estimator charges bytes per parameter at its memory-bound rate.

Run on one GPU (not in CI):
    python3 scripts/microbench/optimizer_step.py --out optimizer_step.csv
CSV: pass,params,tensors,ms,copy_gbytes_per_s,bytes_per_param_at_copy_rate. Needs PyTorch with CUDA.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_timing import copy_bytes_per_s, gpu_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="optimizer_step.csv")
    ap.add_argument("--params", type=float, default=1.0e9, help="parameters in total")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    rate = copy_bytes_per_s(args.reps)
    rows = []
    # A GPT layer's tensors: 4 h^2-sized weights, their biases and two norms (h = 2,048:
    # 12.6 M parameters a layer), as many layers as fill --params.
    h = 2048
    shapes = [(3 * h, h), (3 * h,), (h, h), (h,), (4 * h, h), (4 * h,), (h, 4 * h), (h,), (h,), (h,), (h,), (h,)]
    per_layer = sum(torch.Size(s).numel() for s in shapes)
    layers = max(1, int(args.params // per_layer))
    master = [torch.zeros(s, device="cuda", dtype=torch.float32) for _ in range(layers) for s in shapes]
    for p in master:
        p.grad = torch.randn_like(p) * 1e-3
    model = [torch.empty_like(p, dtype=torch.bfloat16) for p in master]
    grads = [p.grad for p in master]
    n = sum(p.numel() for p in master)
    opt = torch.optim.AdamW(master, lr=1e-4, fused=True)
    found_inf = torch.zeros(1, device="cuda")
    inv_scale = torch.ones(1, device="cuda")
    passes = {
        "unscale": lambda: torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale),
        "norm": lambda: torch._foreach_norm(grads),
        "adam": lambda: opt.step(),
        "copy": lambda: torch._foreach_copy_(model, master),
        "zero": lambda: torch._foreach_zero_(grads),
    }

    def step():
        for fn in passes.values():
            fn()

    for name, fn in list(passes.items()) + [("step", step)]:
        ms = gpu_ms(fn, args.reps)
        rows.append((name, n, len(master), ms, rate / 1e9, ms * 1e-3 * rate / n))
    with open(args.out, "w") as f:
        f.write("pass,params,tensors,ms,copy_gbytes_per_s,bytes_per_param_at_copy_rate\n")
        for r in rows:
            f.write("%s,%d,%d,%.4f,%.0f,%.2f\n" % r)
    print("%s (%s, PyTorch %s); %d parameters in %d tensors; device copy %.0f GB/s"
          % (args.out, torch.cuda.get_device_name(), torch.__version__, n, len(master), rate / 1e9))
    for r in rows:
        print("%-8s %8.3f ms = %6.2f bytes per parameter at the copy rate" % (r[0], r[3], r[5]))


if __name__ == "__main__":
    main()
