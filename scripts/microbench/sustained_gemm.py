#!/usr/bin/env python3
"""Sustained large-GEMM rate under the GPU's power cap, for the profile's matmul_efficiency:
8192^3 bf16 torch.matmul back to back for 60 s in 5 s windows, the SM clock, power and
temperature from nvidia-smi every 2 s. A single short GEMM (gemm_sweep.py) runs at boost
clock; a training job's GEMMs run at the clock the power cap allows. Prints TFLOP/s per
window and the share of the 989 TFLOP/s H100 SXM datasheet peak (edit PEAK for others).
Not in CI: needs a CUDA GPU and nvidia-smi.
"""
import subprocess
import threading
import time

import torch

PEAK = 989e12  # H100 SXM dense BF16, datasheet
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
clocks = []
stop = False
def poll():
    while not stop:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout.strip()
        clocks.append(out); time.sleep(2)
t = threading.Thread(target=poll); t.start()
flop = 2 * n ** 3
for window in range(12):  # 12 x ~5 s
    torch.cuda.synchronize(); t0 = time.perf_counter(); k = 0
    while time.perf_counter() - t0 < 5:
        for _ in range(50):
            torch.matmul(a, b)
        k += 50
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"window {window}: {k * flop / dt / 1e12:.0f} TFLOP/s ({k * flop / dt / PEAK:.3f} of peak)", flush=True)
stop = True; t.join()
print("clocks.sm MHz, power W, temp C samples:", clocks)
