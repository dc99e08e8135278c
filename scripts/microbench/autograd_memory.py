#!/usr/bin/env python3
"""What PyTorch's autograd keeps per transformer layer, as the PyTorch-native stacks build
the layer: bytes saved for backward per layer, per token and per unit of hidden size
(bytes / (s * b * h)), the number Korthikanti et al.'s 34 (+ 5as/h) stands for in
Megatron-LM.

Blocks (bf16 parameters and activations, as FSDP2's param_dtype = bf16 computes; no
dropout):
  llama   torchtitan's Llama 3 block: nn.RMSNorm, wq / wk / wv (GQA), RoPE through
          complex fp32 (torchtitan/models/common/rope.py), SDPA (cuDNN / flash), wo,
          SwiGLU w2(silu(w1 x) * w3 x);
  gpt     an MPT / GPT block as llm-foundry builds it: LayerNorm, fused Wqkv, SDPA, out
          projection, GELU MLP (4h), no bias.
Modes: eager; compile (torch.compile of each block, default mode); checkpoint (each block
wrapped in torch.utils.checkpoint, non-reentrant).
Loss: torchtitan's output projection + cross_entropy(logits.float()) per token and
vocabulary entry.

Method: the allocator's bytes after the forward of 4 layers minus 2 layers, halved (the
ends cancel), and the peak during backward beyond what the forward kept; then the tensors
one eager layer's autograd graph holds, by the node that saved them. Prints one JSON
line per case. Not in CI: needs a CUDA GPU with ~40 GB.
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

BF = torch.bfloat16


def rope_cache(s, head_dim, dev):
    freqs = 1.0 / (500000.0 ** (torch.arange(0, head_dim, 2, device=dev)[: head_dim // 2].float() / head_dim))
    t = torch.arange(s, device=dev, dtype=torch.float32)
    return torch.polar(torch.ones(s, head_dim // 2, device=dev), torch.outer(t, freqs))


def apply_rope(q, k, cis):  # torchtitan: complex fp32, type_as back
    q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    k_ = torch.view_as_complex(k.float().reshape(*k.shape[:-1], -1, 2))
    c = cis.view(1, q.shape[1], 1, q_.shape[-1])
    return torch.view_as_real(q_ * c).flatten(3).type_as(q), torch.view_as_real(k_ * c).flatten(3).type_as(k)


def attention(q, k, v, kv_groups):
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv_groups > 1).transpose(1, 2)


def self_attention(s, y, qk_norms=None):
    """GQA self-attention of a block holding wq / wk / wv / wo, heads, kv, hd and its RoPE
    cache cis, on the normed input y: the output projection's result. qk_norms: the query
    and key norms (Qwen3's), applied per head before RoPE."""
    b, t, _ = y.shape
    q = s.wq(y).view(b, t, s.heads, s.hd)
    k = s.wk(y).view(b, t, s.kv, s.hd)
    v = s.wv(y).view(b, t, s.kv, s.hd)
    if qk_norms is not None:
        q, k = qk_norms[0](q), qk_norms[1](k)
    q, k = apply_rope(q, k, s.cis)
    return s.wo(attention(q, k, v, s.heads // s.kv).reshape(b, t, -1))


class Llama(torch.nn.Module):
    def __init__(s, h, heads, kv_heads, ffn, seq, dev):
        super().__init__()
        s.heads, s.kv, s.hd = heads, kv_heads, h // heads
        L = lambda i, o: torch.nn.Linear(i, o, bias=False)
        s.attention_norm, s.ffn_norm = torch.nn.RMSNorm(h, eps=1e-5), torch.nn.RMSNorm(h, eps=1e-5)
        s.wq, s.wk, s.wv, s.wo = L(h, h), L(h, kv_heads * s.hd), L(h, kv_heads * s.hd), L(h, h)
        s.w1, s.w2, s.w3 = L(h, ffn), L(ffn, h), L(h, ffn)
        s.register_buffer("cis", rope_cache(seq, s.hd, dev), persistent=False)

    def forward(s, x):
        h = x + self_attention(s, s.attention_norm(x))
        z = s.ffn_norm(h)
        return h + s.w2(F.silu(s.w1(z)) * s.w3(z))


class Gpt(torch.nn.Module):
    def __init__(s, h, heads, ffn, seq, dev):
        super().__init__()
        s.heads, s.hd = heads, h // heads
        s.ln1, s.ln2 = torch.nn.LayerNorm(h, bias=False), torch.nn.LayerNorm(h, bias=False)
        s.wqkv, s.out = torch.nn.Linear(h, 3 * h, bias=False), torch.nn.Linear(h, h, bias=False)
        s.up, s.down = torch.nn.Linear(h, ffn, bias=False), torch.nn.Linear(ffn, h, bias=False)

    def forward(s, x):
        b, t, c = x.shape
        q, k, v = s.wqkv(s.ln1(x)).view(b, t, 3, s.heads, s.hd).unbind(2)
        h = x + s.out(attention(q, k, v, 1).reshape(b, t, c))
        return h + s.down(F.gelu(s.up(s.ln2(h)), approximate="tanh"))


# torchtitan's selective activation checkpointing, "op" policy
# (torchtitan/distributed/activation_checkpoint.py): keep the outputs of compute-intensive
# ops except every second matmul; recompute the rest from the block's input.
_MM = (torch.ops.aten.mm.default, torch.ops.aten.linear.default)
_SAVE = set(_MM) | {torch.ops.aten._scaled_dot_product_cudnn_attention.default,
                    torch.ops.aten._scaled_dot_product_flash_attention.default,
                    torch.ops.aten._scaled_dot_product_efficient_attention.default,
                    torch.ops.aten.addmm.default, torch.ops.aten.bmm.default, torch.ops.aten._scaled_mm.default}


def op_sac_context():
    counts = {"forward": 0, "recompute": 0}

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func in _MM:
            counts[mode] += 1
            if counts[mode] % 2 == 0:
                return CheckpointPolicy.PREFER_RECOMPUTE
        return CheckpointPolicy.MUST_SAVE if func in _SAVE else CheckpointPolicy.PREFER_RECOMPUTE
    return create_selective_checkpoint_contexts(policy)


def op_sac(block):
    return lambda y: checkpoint(block, y, use_reentrant=False, context_fn=op_sac_context)


def build(kind, n, h, seq, dev):
    if kind == "llama":
        return [Llama(h, 32, 8, 14336, seq, dev).to(dev, BF) for _ in range(n)]
    return [Gpt(h, 32, 4 * h, seq, dev).to(dev, BF) for _ in range(n)]


def kept_and_peak(blocks, mode, b, s, h, dev):
    fns = blocks
    if mode == "compile":
        fns = [torch.compile(m) for m in blocks]
    x = torch.randn(b, s, h, device=dev, dtype=BF, requires_grad=True)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    y = x
    if mode == "op-sac":
        fns = [op_sac(m) for m in blocks]
    for f in fns:
        y = checkpoint(f, y, use_reentrant=False) if mode == "checkpoint" else f(y)
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    y.float().sum().backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del x, y
    for m in blocks:
        m.zero_grad(set_to_none=True)
    return kept, peak


def layer_case(kind, mode, b, s, h, dev):
    out = {}
    for n in (2, 4):
        blocks = build(kind, n, h, s, dev)
        if mode == "compile":  # compile and warm once (the first call's workspace is not the steady state)
            kept_and_peak(blocks, mode, b, s, h, dev)
        out[n] = kept_and_peak(blocks, mode, b, s, h, dev)
        del blocks
        torch.cuda.empty_cache()
    per_layer = (out[4][0] - out[2][0]) / 2
    return {"block": kind, "mode": mode, "b": b, "s": s, "h": h, "kept_bytes_per_layer": per_layer,
            "bytes_per_token_hidden": round(per_layer / (b * s * h), 3),
            "backward_transient_bytes_per_token_hidden": round((out[4][1] - out[4][0]) / (b * s * h), 3)}


def saved_tensors(kind, b, s, h, dev):
    """The tensors one eager layer's autograd graph holds, by the node that saved them
    (each storage once), as bytes per token and unit of hidden."""
    block = build(kind, 1, h, s, dev)[0]
    x = torch.randn(b, s, h, device=dev, dtype=BF, requires_grad=True)
    y = block(x)
    seen, rows, stack, visited = set(), [], [y.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in visited:
            continue
        visited.add(node)
        for attr in dir(node):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(node, attr)
            except Exception:
                continue
            for t in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(t, torch.Tensor) and t.device.type == "cuda":
                    key = t.untyped_storage().data_ptr()
                    if key in seen:
                        continue
                    seen.add(key)
                    rows.append({"node": node.name(), "attr": attr, "shape": list(t.shape), "dtype": str(t.dtype),
                                 "bytes_per_token_hidden": round(t.untyped_storage().nbytes() / (b * s * h), 3)})
        stack.extend(f for f, _ in node.next_functions)
    total = sum(r["bytes_per_token_hidden"] for r in rows)
    return {"block": kind, "mode": "eager-saved-tensors", "b": b, "s": s, "h": h,
            "bytes_per_token_hidden": round(total, 3), "tensors": rows}


def loss_case(b, s, h, vocab, dev):
    out_proj = torch.nn.Linear(h, vocab, bias=False).to(dev, BF)
    x = torch.randn(b, s, h, device=dev, dtype=BF, requires_grad=True)
    labels = torch.randint(0, vocab, (b * s,), device=dev)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    loss = F.cross_entropy(out_proj(x).flatten(0, 1).float(), labels)
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    return {"block": "loss", "b": b, "s": s, "h": h, "vocab": vocab,
            "kept_bytes_per_token_vocab": round(kept / (b * s * vocab), 3),
            "backward_peak_bytes_per_token_vocab": round(peak / (b * s * vocab), 3)}


def main():
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    torch.manual_seed(0)
    # eager cases first: compiling takes the most time
    cases = [("llama", "eager", 1, 8192), ("llama", "checkpoint", 1, 8192), ("llama", "eager", 2, 2048),
             ("gpt", "eager", 1, 8192), ("gpt", "eager", 4, 2048), ("llama", "compile", 1, 8192),
             ("gpt", "compile", 1, 8192)]
    for kind, mode, b, s in cases:
        try:
            print(json.dumps(layer_case(kind, mode, b, s, 4096, dev)), flush=True)
        except Exception as e:
            print(json.dumps({"block": kind, "mode": mode, "b": b, "s": s, "error": f"{type(e).__name__}: {e}"[:300]}),
                  flush=True)
        torch.cuda.empty_cache()
    print(json.dumps(loss_case(1, 8192, 4096, 128256, dev)), flush=True)
    for kind in ("llama", "gpt"):
        print(json.dumps(saved_tensors(kind, 1, 8192, 4096, dev)), flush=True)


if __name__ == "__main__":
    main()
