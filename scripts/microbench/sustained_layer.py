#!/usr/bin/env python3
"""A training layer's GPU time as its clocks settle under the power cap: one torchtitan
Llama 3 8B block (layer_step.py's) at 8,192 tokens, forward + backward back to back for
--seconds, in 1 s windows for the first 5 s (boost clock) and 5 s windows after, with the
SM clock and board power from nvidia-smi each second. sustained_gemm.py shows how far
back-to-back GEMMs fall from boost under the cap (an H100: 0.81 -> 0.69 of peak); a
layer also runs attention, norms and elementwise kernels that draw less power, so it may
keep more of its boost clock. The ratio of the settled to the first window's time per
step is what the profile's sustained matmul efficiency should hold for a real mix.
--mode eager (default) | compile | float8-compile (torchao-style tensorwise FP8 linears,
compiled). Prints one JSON line per window, and the GPU's busy time of one step by kind
(gemm, attention, other; torch.profiler) at boost (the first step after a rest) and once
settled (after --seconds). Not in CI: needs a CUDA GPU and nvidia-smi.
"""
import argparse
import json
import statistics
import time

import torch

from autograd_memory import BF, Llama
from layer_step import float8_block
from moe_layer_step import busy_by_kind
from smi_poll import SmiPoller

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=40)
ap.add_argument("--mode", default="eager", choices=("eager", "compile", "float8-compile"))
args = ap.parse_args()
dev = torch.device("cuda")
h, s, ffn = 4096, 8192, 14336
block = Llama(h, 32, 8, ffn, s, dev).to(dev, BF)
if args.mode == "float8-compile":
    block = float8_block(block)
fn = torch.compile(block) if "compile" in args.mode else block
x = torch.randn(1, s, h, device=dev, dtype=BF, requires_grad=True)
grad = torch.randn(1, s, h, device=dev, dtype=BF)


def step():
    fn(x).backward(grad)


for _ in range(5):
    step()
torch.cuda.synchronize()


def profiled(when):
    busy, kernels, _ = busy_by_kind(step)
    print(json.dumps({"mode": args.mode, "when": when, "kernels": kernels,
                      "busy_ms_by_kind": {k: round(v * 1e3, 3) for k, v in busy.items()}}), flush=True)


time.sleep(3)  # let the clocks recover to boost
profiled("boost")
time.sleep(3)  # and again before the first window
smi = SmiPoller(every_s=1).start()
start = time.perf_counter()
window = 0
while time.perf_counter() - start < args.seconds:
    length = 1.0 if time.perf_counter() - start < 5 else 5.0
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    k = 0
    while time.perf_counter() - t0 < length:
        step()
        k += 1
        if k % 4 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    inside = [(c, p) for (_, c, p, _) in smi.between(t0, t1)]
    print(json.dumps({"mode": args.mode, "device": torch.cuda.get_device_name(), "window": window,
                      "from_s": round(t0 - start, 1), "steps": k, "ms_per_step": round((t1 - t0) / k * 1e3, 3),
                      "sm_mhz": statistics.median([c for c, _ in inside]) if inside else None,
                      "power_w": statistics.median([p for _, p in inside]) if inside else None}), flush=True)
    window += 1
smi.stop()
profiled("settled")
