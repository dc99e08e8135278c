#!/usr/bin/env python3
"""Causal attention from 2 k to 128 k tokens, by kernel: PyTorch SDPA's FlashAttention-2
and cuDNN backends (torchtitan asks for cuDNN first; Transformer Engine's FusedAttention
is cuDNN's), bf16, Llama 3 heads (32 query, 8 key/value, head dim 128).

For each sequence length: forward and backward GPU time (CUDA events, median) and the
rate they reach on the causal FLOPs paraplan counts (forward 4 * b * heads * s * s/2 * d;
backward 2.5 x that), as a share of the 989 TFLOP/s H100 SXM BF16 peak (edit PEAK for
others): the profile's attention_efficiency_fwd / _bwd. Prints one JSON line per case.
--mla: DeepSeek-V3's multi-head latent attention core instead (16 heads a GPU, as at TP 8;
query / key head dimension 192, value 128; FLOPs 2 * s * s/2 * heads * (192 + 128)
forward), which only cuDNN runs among SDPA's backends.
--head-dims 64,128: per head dimension d, about 4,096 / d query heads (4 x round(1,024 / d))
and a quarter as many key/value heads (about the same FLOPs whatever d; rates are per FLOP),
2 k-16 k tokens, both backends in one run:
what a narrower head costs a FLOP (the profile's attention_softmax_head_dim_fwd / _bwd;
fit_attention.py derives them from these lines).
Not in CI: needs a CUDA GPU with ~20 GB.
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_timing import gpu_ms

PEAK = 989e12
HEADS, KV, D = 32, 8, 128
SEQS = [2048, 4096, 8192, 16384, 32768, 65536, 131072]
BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def case(backend, s, dev, mla=False, head_dim=None):
    b = max(1, 16384 // s)
    heads, kv, dqk, dv = (16, 16, 192, 128) if mla else (HEADS, KV, D, D)
    if head_dim:
        kv = max(1, round(1024 / head_dim))  # query heads 4 x that: ~4,096 / d, the same FLOPs
        heads, dqk, dv = 4 * kv, head_dim, head_dim
    q = torch.randn(b, heads, s, dqk, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kv, s, dqk, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kv, s, dv, device=dev, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(b, heads, s, dv, device=dev, dtype=torch.bfloat16)
    reps = 10 if s <= 16384 else 4

    def fwd():
        with sdpa_kernel([BACKENDS[backend]]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != heads)

    def both():
        out = fwd()
        out.backward(grad)

    fwd_ms = gpu_ms(fwd, reps)
    both_ms = gpu_ms(both, reps)
    flops = 2.0 * b * heads * s * (s / 2) * (dqk + dv)
    bwd_ms = both_ms - fwd_ms
    return {"backend": backend, "mla": mla, "head_dim": dqk if dqk == dv else None, "heads": heads, "b": b, "s": s, "fwd_ms": round(fwd_ms, 3), "bwd_ms": round(bwd_ms, 3),
            "fwd_tflops": round(flops / (fwd_ms * 1e-3) / 1e12, 1),
            "bwd_tflops": round(2.5 * flops / (bwd_ms * 1e-3) / 1e12, 1),
            "fwd_share_of_peak": round(flops / (fwd_ms * 1e-3) / PEAK, 3),
            "bwd_share_of_peak": round(2.5 * flops / (bwd_ms * 1e-3) / PEAK, 3)}


def main():
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    mla = "--mla" in sys.argv[1:]
    dims = [None]
    if "--head-dims" in sys.argv[1:]:
        dims = [int(d) for d in sys.argv[sys.argv.index("--head-dims") + 1].split(",")]
    for backend in BACKENDS:
        for s, d in [(s, d) for s in (SEQS[:4] if mla or dims[0] else SEQS) for d in dims]:
            try:
                print(json.dumps(case(backend, s, dev, mla, d)), flush=True)
            except Exception as e:
                print(json.dumps({"backend": backend, "s": s, "head_dim": d, "error": f"{type(e).__name__}: {e}"[:200]}), flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
