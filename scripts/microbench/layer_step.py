#!/usr/bin/env python3
"""One torchtitan Llama 3 8B block (autograd_memory.py's), forward + backward GPU time at
8,192 tokens, eager, under torch.compile, and under torchtitan's selective activation
checkpointing ("op" policy, autograd_memory.op_sac), in BF16 and with its seven linears in FP8 as
torchao's float8 training runs them with tensorwise dynamic scaling (torchtitan's
`--model.converters float8`; torchao is not needed: the linear below does what its
tensorwise recipe does). What compiling and FP8 buy a PyTorch-native stack per layer.

The FP8 linear, per call: forward casts the input and the weight to e4m3 with one scale
each (amax of the whole tensor, this step's: "dynamic"), one _scaled_mm; backward casts
the output gradient to e5m2, transposes the FP8 operands the two gradient GEMMs need
(FP8 GEMMs take A row-major and B column-major), two _scaled_mm. Separate wq / wk / wv
and w1 / w3 each cast the same input, as torchtitan's modules do.

Times are CUDA-event medians of 10 steps after warm-up; the rate is the block's model
FLOPs (linears 6 * tokens * params plus causal attention, forward 4 * s * s/2 * h,
backward 2.5x) per second. Prints one JSON line per mode. Not in CI: needs a CUDA GPU with
FP8 (sm_89+) and ~20 GB.
"""
import json
import sys

import torch

from autograd_memory import BF, Llama, op_sac
from gpu_timing import gpu_ms

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def to_fp8(t, dtype):
    """Tensorwise dynamic scaling: the FP8 tensor and the inverse of its scale."""
    fmax = torch.finfo(dtype).max
    scale = fmax / t.abs().amax().float().clamp(min=1e-12)
    return (t.float() * scale).clamp(-fmax, fmax).to(dtype), scale.reciprocal()


class Fp8Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):  # x (M, K) bf16, w (N, K) bf16 -> (M, N)
        x8, sx = to_fp8(x, E4M3)
        w8, sw = to_fp8(w, E4M3)
        ctx.save_for_backward(x8, sx, w8, sw)
        return torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, out_dtype=BF)

    @staticmethod
    def backward(ctx, go):  # go (M, N)
        x8, sx, w8, sw = ctx.saved_tensors
        g8, sg = to_fp8(go, E5M2)
        dx = torch._scaled_mm(g8, w8.t().contiguous().t(), scale_a=sg, scale_b=sw, out_dtype=BF)
        dw = torch._scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(), scale_a=sg, scale_b=sx, out_dtype=BF)
        return dx, dw


class Fp8Linear(torch.nn.Linear):
    def forward(self, x):
        shape = x.shape
        y = Fp8Matmul.apply(x.reshape(-1, shape[-1]), self.weight)
        return y.view(*shape[:-1], y.shape[-1])


def float8_block(block):
    for name in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
        lin = getattr(block, name)
        f8 = Fp8Linear(lin.in_features, lin.out_features, bias=False, device=lin.weight.device, dtype=lin.weight.dtype)
        f8.weight = lin.weight
        setattr(block, name, f8)
    return block


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
    fp8 = "--no-float8" not in sys.argv[1:] and torch.cuda.get_device_capability() >= (8, 9)
    f8_block = float8_block(Llama(h, 32, 8, ffn, s, dev).to(dev, BF)) if fp8 else None
    modes = {"eager": lambda: block, "compile": lambda: torch.compile(block), "op-sac": lambda: op_sac(block)}
    if "--op-sac-only" in sys.argv[1:]:
        modes = {"eager": lambda: block, "op-sac": lambda: op_sac(block)}
        fp8 = False
    if fp8:
        modes.update({"float8-eager": lambda: f8_block, "float8-compile": lambda: torch.compile(f8_block)})
    for name, make in modes.items():
        try:
            fn = make()

            def step(fn=fn):
                fn(x).backward(grad)
            ms = gpu_ms(step, 10)
            print(json.dumps({"mode": name, "tokens": s, "ms": round(ms, 3),
                              "tflops": round(flops / (ms * 1e-3) / 1e12, 1)}), flush=True)
        except Exception as e:  # a mode this PyTorch cannot run is reported, not fatal
            print(json.dumps({"mode": name, "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)


if __name__ == "__main__":
    main()
