#!/usr/bin/env python3
"""fp32 convolutions as cuDNN runs them, against the implicit GEMM the estimator prices.

The estimator prices a convolution as its implicit GEMM ((samples x output positions) x
C_out x (C_in x kernel)) at the profile's matmul rate (Hardware::ConvTime). cuDNN may
instead pick Winograd (3 x 3, stride 1: 2.25x fewer multiplies for F(2x2, 3x3), more for
larger tiles) or FFT, so a network of 3 x 3 convolutions (VGG16) can run faster than its
FLOPs at the GEMM rate say. This times, in fp32 with TF32 off (what Chainer ran on V100s
for ParaDL), each distinct convolution of VGG16 and ResNet-50 forward and backward (data
and weight gradients), with cuDNN's heuristic choice (benchmark off, Chainer's default) and
its autotuned one, and the same-FLOP GEMM of its implicit-GEMM shape; one JSON line each:
  conv_ms_fwd / conv_ms_bwd             heuristic choice; *_tuned the autotuned one
  gemm_ms_fwd / gemm_ms_bwd             the implicit GEMM (forward; data + weight gradients)
  speedup_fwd / speedup_bwd             gemm_ms / conv_ms: above 1, cuDNN beats the GEMM

Run on one GPU (not in CI):
    python3 scripts/microbench/conv_algorithms.py --out conv.jsonl
(docs/microbench/h200_conv_algorithms.jsonl: an H200, PyTorch 2.11, cuDNN 9.)
Needs PyTorch with CUDA.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_timing import gpu_ms  # noqa: E402

# (network, name, batch, C_in, C_out, H = W of the input, kernel, stride, padding)
VGG = [(c_in, c_out, hw) for c_in, c_out, hw in
       [(3, 64, 224), (64, 64, 224), (64, 128, 112), (128, 128, 112), (128, 256, 56), (256, 256, 56),
        (256, 512, 28), (512, 512, 28), (512, 512, 14)]]
LAYERS = [("vgg16", "conv%dx%d@%d" % (ci, co, hw), 32, ci, co, hw, 3, 1, 1) for ci, co, hw in VGG] + [
    ("resnet50", "stem7x7", 64, 3, 64, 224, 7, 2, 3),
    ("resnet50", "3x3_64@56", 64, 64, 64, 56, 3, 1, 1),
    ("resnet50", "3x3_128@28", 64, 128, 128, 28, 3, 1, 1),
    ("resnet50", "3x3_256@14", 64, 256, 256, 14, 3, 1, 1),
    ("resnet50", "3x3_512@7", 64, 512, 512, 7, 3, 1, 1),
    ("resnet50", "1x1_256to64@56", 64, 256, 64, 56, 1, 1, 0),
    ("resnet50", "1x1_64to256@56", 64, 64, 256, 56, 1, 1, 0),
    ("resnet50", "1x1_1024to256@14", 64, 1024, 256, 14, 1, 1, 0),
    ("resnet50", "1x1_256to1024@14", 64, 256, 1024, 14, 1, 1, 0),
]


def conv_times(x, conv, reps):
    x = x.detach().requires_grad_(True)
    fwd = gpu_ms(lambda: conv(x), reps)
    y = conv(x)
    g = torch.randn_like(y)
    bwd = gpu_ms(lambda: torch.autograd.grad(y, (x, conv.weight), g, retain_graph=True), reps)
    return fwd, bwd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="conv_algorithms.jsonl")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    name = torch.cuda.get_device_name(0)
    with open(args.out, "w") as out:
        for net, layer, n, c_in, c_out, hw, k, s, p in LAYERS:
            conv = torch.nn.Conv2d(c_in, c_out, k, s, p, bias=False).cuda()
            x = torch.randn(n, c_in, hw, hw, device="cuda")
            torch.backends.cudnn.benchmark = False
            fwd, bwd = conv_times(x, conv, args.reps)
            torch.backends.cudnn.benchmark = True
            fwd_t, bwd_t = conv_times(x, conv, args.reps)
            h_out = (hw + 2 * p - k) // s + 1
            m, kk = n * h_out * h_out, c_in * k * k
            a = torch.randn(m, kk, device="cuda")
            w = torch.randn(kk, c_out, device="cuda")
            gy = torch.randn(m, c_out, device="cuda")
            gemm_fwd = gpu_ms(lambda: a @ w, args.reps)
            gemm_bwd = gpu_ms(lambda: (gy @ w.t(), a.t() @ gy), args.reps)
            flops = 2.0 * m * kk * c_out
            row = {"gpu": name, "network": net, "layer": layer, "batch": n, "c_in": c_in, "c_out": c_out,
                   "hw": hw, "kernel": k, "stride": s, "dtype": "fp32 (TF32 off)",
                   "conv_ms_fwd": round(fwd, 4), "conv_ms_bwd": round(bwd, 4),
                   "conv_ms_fwd_tuned": round(fwd_t, 4), "conv_ms_bwd_tuned": round(bwd_t, 4),
                   "gemm_ms_fwd": round(gemm_fwd, 4), "gemm_ms_bwd": round(gemm_bwd, 4),
                   "gemm_tflops_fwd": round(flops / (gemm_fwd * 1e-3) / 1e12, 2),
                   "speedup_fwd": round(gemm_fwd / fwd, 3), "speedup_bwd": round(gemm_bwd / bwd, 3),
                   "speedup_fwd_tuned": round(gemm_fwd / fwd_t, 3), "speedup_bwd_tuned": round(gemm_bwd / bwd_t, 3)}
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            del conv, x, a, w, gy
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
