#!/usr/bin/env python3
"""Sustained large-GEMM rate under the GPU's power cap, for the profile's matmul_efficiency:
8192^3 GEMMs back to back for 60 s (--seconds) in 5 s windows, the SM clock, power and
temperature from nvidia-smi every 2 s. A single short GEMM (gemm_sweep.py) runs at boost
clock; a training job's GEMMs run at the clock the power cap allows. bf16 torch.matmul by
default; --fp8: torch._scaled_mm on e4m3 operands with per-tensor scales and bf16 output
(what Transformer Engine's delayed / current scaling runs), against the FP8 peak. Prints
TFLOP/s per window and the share of the datasheet's dense peak (--peak-tflops; default the
H100 / H200 SXM's 989 BF16, 1,979 FP8).
Not in CI: needs a CUDA GPU and nvidia-smi.
"""
import argparse
import time

import torch

from smi_poll import SmiPoller

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=60)
ap.add_argument("--fp8", action="store_true")
ap.add_argument("--peak-tflops", type=float, default=0)
args = ap.parse_args()
PEAK = (args.peak_tflops or (1979 if args.fp8 else 989)) * 1e12
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
if args.fp8:
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.to(torch.float8_e4m3fn).t().contiguous().t()  # column-major second operand
    one = torch.ones((), device="cuda")
    gemm = lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
else:
    gemm = lambda: torch.matmul(a, b)
smi = SmiPoller(every_s=2).start()
flop = 2 * n ** 3
print(f"{'fp8 e4m3 _scaled_mm' if args.fp8 else 'bf16 matmul'} {n}^3 on {torch.cuda.get_device_name()}, peak {PEAK / 1e12:.0f} TFLOP/s", flush=True)
for window in range(max(1, round(args.seconds / 5))):  # ~5 s each
    torch.cuda.synchronize(); t0 = time.perf_counter(); k = 0
    while time.perf_counter() - t0 < 5:
        for _ in range(50):
            gemm()
        k += 50
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"window {window}: {k * flop / dt / 1e12:.0f} TFLOP/s ({k * flop / dt / PEAK:.3f} of peak)", flush=True)
print("clocks.sm MHz, power W, temp C samples:", [s[1:] for s in smi.stop()])
