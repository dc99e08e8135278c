#!/usr/bin/env python3
"""FP8 as the PyTorch-native stacks run it (torchao float8 training, as torchtitan's
`--model.converters float8` uses it): tensorwise vs rowwise scaling, GEMM and cast.

For the linear shapes of Llama 3 8B and 70B at 8,192 tokens:
  gemm   bf16 torch.mm; fp8 e4m3 torch._scaled_mm with one scale per tensor
         (tensorwise) and with one per row of A and column of B (rowwise, fp32 scales);
  cast   the quantisation of a bf16 activation (amax, scale, saturate, cast) eager and
         under torch.compile (one fused kernel where Inductor manages it), per tensor
         and per row, as bytes of the bf16 input per second against the device copy rate.
Prints one JSON line per shape. Not in CI: needs an FP8-capable CUDA GPU (sm_89+).
"""
import json
import sys

import torch

from gpu_timing import copy_bytes_per_s, gpu_ms

E4M3 = torch.float8_e4m3fn
FMAX = torch.finfo(E4M3).max
SHAPES = {  # name: (m tokens, n out, k in)
    "llama3-8b.qkv": (8192, 6144, 4096),
    "llama3-8b.w13": (8192, 28672, 4096),
    "llama3-8b.w2": (8192, 4096, 14336),
    "llama3-70b.w13": (8192, 57344, 8192),
    "llama3-70b.w2": (8192, 8192, 28672),
}


def cast_tensorwise(x):
    scale = FMAX / x.abs().amax().float().clamp(min=1e-12)
    return (x.float() * scale).clamp(-FMAX, FMAX).to(E4M3), scale.reciprocal()


def cast_rowwise(x):
    scale = FMAX / x.abs().amax(dim=-1, keepdim=True).float().clamp(min=1e-12)
    return (x.float() * scale).clamp(-FMAX, FMAX).to(E4M3), scale.reciprocal()


def main():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9):
        sys.exit("needs an FP8-capable CUDA GPU")
    dev = torch.device("cuda")
    copy_rate = copy_bytes_per_s(10)
    compiled = {"tensorwise": torch.compile(cast_tensorwise), "rowwise": torch.compile(cast_rowwise)}
    eager = {"tensorwise": cast_tensorwise, "rowwise": cast_rowwise}
    for name, (m, n, k) in SHAPES.items():
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        flops = 2.0 * m * n * k
        row = {"shape": name, "m": m, "n": n, "k": k, "copy_rate_gbs": round(copy_rate / 1e9)}
        row["bf16_tflops"] = round(flops / (gpu_ms(lambda: torch.mm(a, b.t()), 20) * 1e-3) / 1e12, 1)
        a8, sa = cast_tensorwise(a)
        b8, sb = cast_tensorwise(b)
        row["fp8_tensorwise_tflops"] = round(flops / (gpu_ms(
            lambda: torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16), 20) * 1e-3) / 1e12, 1)
        a8r, sar = cast_rowwise(a)
        b8r, sbr = cast_rowwise(b)
        try:
            row["fp8_rowwise_tflops"] = round(flops / (gpu_ms(
                lambda: torch._scaled_mm(a8r, b8r.t(), scale_a=sar, scale_b=sbr.t(), out_dtype=torch.bfloat16),
                20) * 1e-3) / 1e12, 1)
        except Exception as e:
            row["fp8_rowwise_error"] = f"{type(e).__name__}: {e}"[:200]
        in_bytes = 2.0 * m * k
        for recipe in ("tensorwise", "rowwise"):
            for how, table in (("eager", eager), ("compiled", compiled)):
                ms = gpu_ms(lambda: table[recipe](a), 20)
                # the cast's cost in bytes at the copy rate, per byte of its bf16 input
                row[f"cast_{recipe}_{how}_us"] = round(ms * 1e3, 1)
                row[f"cast_{recipe}_{how}_bytes_per_input_byte"] = round(ms * 1e-3 * copy_rate / in_bytes, 2)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
