#!/usr/bin/env python3
"""One torchtitan Llama 3 8B block (autograd_memory.py's), forward + backward GPU time at
8,192 tokens, eager and under torch.compile: what compiling buys a PyTorch-native stack
per layer.

Times are CUDA-event medians of 10 steps after warm-up; the rate is the block's model
FLOPs (linears 6 * tokens * params plus causal attention, forward 4 * s * s/2 * h, backward
2.5x) per second. Prints one JSON line per mode. Not in CI: needs a CUDA GPU with ~20 GB.
"""
import json
import sys

import torch

from autograd_memory import BF, Llama
from gpu_timing import gpu_ms


def main():
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    h, s, ffn = 4096, 8192, 14336
    block = Llama(h, 32, 8, ffn, s, dev).to(dev, BF)
    params = sum(p.numel() for p in block.parameters())
    flops = 6.0 * s * params + 3.5 * 4 * s * (s / 2) * h
    x = torch.randn(1, s, h, device=dev, dtype=BF, requires_grad=True)
    grad = torch.randn(1, s, h, device=dev, dtype=BF)
    modes = {"eager": block, "compile": torch.compile(block)}
    for name, fn in modes.items():
        def step(fn=fn):
            fn(x).backward(grad)
        ms = gpu_ms(step, 10)
        print(json.dumps({"mode": name, "tokens": s, "ms": round(ms, 3), "tflops": round(flops / (ms * 1e-3) / 1e12, 1)}),
              flush=True)


if __name__ == "__main__":
    main()
