#!/usr/bin/env python3
"""Sliding-window attention against full causal attention on the same kernel: what a
window of w keys costs beside the whole causal prefix, forward and backward.

GPT-OSS's heads (64 query, 8 key/value, head dimension 64), one 4,096- and one 8,192-token
sequence, bf16, through FlexAttention (torch.compile'd, block masks skip what lies outside
the mask: the way a windowed kernel skips masked tiles), causal and causal with a window of
128 and 1,024 keys. Per case: forward and backward GPU time (CUDA events, median of 10)
and the keys a query attends on average (s / 2 causal; w - w^2 / 2s windowed), the FLOP
count paraplan uses. The estimator takes a windowed layer's attention as the causal one's
kernel at that many keys a query, each call paying fixed work per query tile worth
attention_half_keys keys (model.md); the ratios printed here are what to hold it against.
Prints one JSON line per case. Not in CI: needs a CUDA GPU with FlexAttention (PyTorch
2.5+) and ~10 GB.
"""
import json
import sys

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from gpu_timing import gpu_ms

HEADS, KV, D = 64, 8, 64
PEAK = 989e12


def main():
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    flex = torch.compile(flex_attention)
    for s in (4096, 8192):
        q = torch.randn(1, HEADS, s, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(1, KV, s, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(1, KV, s, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
        grad = torch.randn(1, HEADS, s, D, device=dev, dtype=torch.bfloat16)
        for window in (0, 1024, 128):
            try:
                if window:
                    def mask(b, h, qi, ki, w=window):
                        return (qi >= ki) & (qi - ki < w)
                else:
                    def mask(b, h, qi, ki):
                        return qi >= ki
                block = create_block_mask(mask, 1, 1, s, s, device=dev)

                def fwd():
                    return flex(q, k, v, block_mask=block, enable_gqa=True)

                def both():
                    fwd().backward(grad)
                fwd_ms = gpu_ms(fwd, 10)
                bwd_ms = gpu_ms(both, 10) - fwd_ms
                keys = window - window * window / (2 * s) if window else s / 2
                flops = 2.0 * HEADS * s * keys * 2 * D
                print(json.dumps({"kernel": "flex", "s": s, "window": window, "keys_per_query": keys,
                                  "fwd_ms": round(fwd_ms, 4), "bwd_ms": round(bwd_ms, 4),
                                  "fwd_share_of_peak": round(flops / (fwd_ms * 1e-3) / PEAK, 4),
                                  "bwd_share_of_peak": round(2.5 * flops / (bwd_ms * 1e-3) / PEAK, 4)}),
                      flush=True)
            except Exception as e:  # reported, not fatal
                print(json.dumps({"s": s, "window": window, "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)


if __name__ == "__main__":
    main()
