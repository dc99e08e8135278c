#!/usr/bin/env python3
"""A whole MoE transformer layer, forward + backward, as one GPU of an expert-parallel run
computes it: what the estimator's MoE layer (attention, router, permute, local experts'
GEMMs, unpermute) should add up to, measured end to end rather than kernel by kernel.

Shapes (the expert-parallel rank's share, force-balanced routing as Megatron-Bridge's
performance recipes set moe_router_force_load_balancing):
  qwen3-30b-a3b-ep16  Qwen3-30B-A3B at EP 16, one 4,096-token sequence: hidden 2,048,
                      32 query heads / 4 KV heads of 128, QK RMSNorm; 8 local experts of
                      768, every token's 8 copies spread over the 16 ranks -> 4,096 rows
                      each (stated here as 8 experts, top 8);
  gpt-oss-120b-ep8    GPT-OSS-120B at EP 8: hidden 2,880, 64 / 8 heads of 64; 16 local
                      experts of 2,880, top 4 -> 1,024 rows each (stated as 16 experts,
                      top 4); full causal attention in every layer.
The layer: RMSNorm, Q / K / V linears, RoPE, SDPA (cuDNN / flash, causal), output
linear, residual; RMSNorm, router linear + fp32 softmax + top-k (indices then replaced by
a balanced assignment, as force balancing replaces the logits), the routed-token counts
brought to the host (`.tolist()`, the synchronisation Megatron-Core's dispatchers make
each forward), argsort permute + index_select, the experts' SwiGLU MLPs, probability
weighting, index_add unpermute, residual. Experts run either as one torch.mm per expert
and GEMM ("loop", as Transformer Engine's GroupedLinear issues separate cuBLAS calls) or
as torch._grouped_mm ("grouped").

Per case, four layers stacked (the ends' launch latency shared as in a model): wall time
per layer between CUDA events (the GPU's idle gaps while the host launches included),
the GPU's busy time per layer (kernel durations from torch.profiler, one step), the
kernel count per layer and the busy time by kind (gemm, attention, other). Prints one
JSON line per case; the estimator's numbers for the same shapes come from
`paraplan estimate` on a 1-GPU workload of 4 minus 2 layers (docs/accuracy.md).

Then the host link: pinned host <-> GPU copies of 1 GiB, each direction alone and both at
once (two streams), and an 8,192^3 bf16 GEMM's time alone and beside both copies, one
JSON line. Not in CI: needs a CUDA GPU with ~20 GB.
"""
import json
import sys

import torch
import torch.nn.functional as F

from autograd_memory import BF, rope_cache, self_attention
from gpu_timing import gpu_ms

CASES = {
    # name: hidden, heads, kv_heads, head_dim, qk_norm, local experts, top_k, expert ffn, tokens
    "qwen3-30b-a3b-ep16": (2048, 32, 4, 128, True, 8, 8, 768, 4096),
    "gpt-oss-120b-ep8": (2880, 64, 8, 64, False, 16, 4, 2880, 4096),
}


class MoeLayer(torch.nn.Module):
    def __init__(s, h, heads, kv, hd, qk_norm, experts, k, ffn, seq, dev, grouped):
        super().__init__()
        s.heads, s.kv, s.hd, s.E, s.k, s.ffn, s.grouped = heads, kv, hd, experts, k, ffn, grouped
        L = lambda i, o: torch.nn.Linear(i, o, bias=False)
        s.norm1, s.norm2 = torch.nn.RMSNorm(h, eps=1e-6), torch.nn.RMSNorm(h, eps=1e-6)
        s.q_norm = torch.nn.RMSNorm(hd, eps=1e-6) if qk_norm else None
        s.k_norm = torch.nn.RMSNorm(hd, eps=1e-6) if qk_norm else None
        s.wq, s.wk, s.wv, s.wo = L(h, heads * hd), L(h, kv * hd), L(h, kv * hd), L(heads * hd, h)
        s.router = L(h, experts)
        if grouped:  # one 3-D weight per GEMM, as the grouped kernel takes them
            s.w13 = torch.nn.Parameter(torch.randn(experts, h, 2 * ffn) * h ** -0.5)
            s.w2 = torch.nn.Parameter(torch.randn(experts, ffn, h) * ffn ** -0.5)
        else:  # a weight per expert, as GroupedLinear holds weight0 ... weightN
            s.w13 = torch.nn.ParameterList([torch.randn(h, 2 * ffn) * h ** -0.5 for _ in range(experts)])
            s.w2 = torch.nn.ParameterList([torch.randn(ffn, h) * ffn ** -0.5 for _ in range(experts)])
        s.register_buffer("cis", rope_cache(seq, hd, dev), persistent=False)

    def experts(s, xs, counts):
        if s.grouped:
            offs = torch.cumsum(torch.tensor(counts, device=xs.device, dtype=torch.int32), 0, dtype=torch.int32)
            a = torch._grouped_mm(xs, s.w13, offs=offs)
            act = F.silu(a[:, : s.ffn]) * a[:, s.ffn:]
            return torch._grouped_mm(act, s.w2, offs=offs)
        outs = []
        for e, part in enumerate(torch.split(xs, counts)):
            a = part @ s.w13[e]
            outs.append((F.silu(a[:, : s.ffn]) * a[:, s.ffn:]) @ s.w2[e])
        return torch.cat(outs)

    def forward(s, x):
        b, t, h = x.shape
        x = x + self_attention(s, s.norm1(x), (s.q_norm, s.k_norm) if s.q_norm is not None else None)
        z = s.norm2(x).view(b * t, h)
        probs = torch.softmax(s.router(z).float(), dim=-1)
        top_p, top_i = torch.topk(probs, s.k, dim=-1)
        top_p = top_p / top_p.sum(-1, keepdim=True)
        slots = torch.arange(b * t * s.k, device=x.device).view(b * t, s.k)
        top_i = slots % s.E + 0 * top_i  # balanced: token t's slot j -> expert (t k + j) mod E
        flat = top_i.flatten()
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=s.E).tolist()  # the dispatcher's host sync
        tok = order // s.k
        ys = s.experts(z.index_select(0, tok), counts)
        ys = ys * top_p.flatten().index_select(0, order).unsqueeze(1).to(ys.dtype)
        out = torch.zeros_like(z).index_add_(0, tok, ys)
        return x + out.view(b, t, h)


def kind(name):
    n = name.lower()
    if any(w in n for w in ("gemm", "cutlass", "nvjet", "sm90_xmma", "cublas")):
        return "gemm"
    if any(w in n for w in ("flash", "fmha", "cudnn", "attention")):
        return "attention"
    return "other"


def busy_by_kind(step, top=12):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    busy, n, names = {"gemm": 0.0, "attention": 0.0, "other": 0.0}, 0, {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0:
            busy[kind(e.name)] += e.device_time * 1e-6
            n += 1
            if kind(e.name) == "other":
                names[e.name[:90]] = names.get(e.name[:90], 0.0) + e.device_time * 1e-6
    return busy, n, sorted(names.items(), key=lambda kv: -kv[1])[:top]


def moe_cases(dev, layers=4):
    for name, (h, heads, kv, hd, qkn, E, k, ffn, s) in CASES.items():
        for grouped in (False, True):
            if grouped and not hasattr(torch, "_grouped_mm"):
                continue
            try:
                torch.manual_seed(0)
                stack = torch.nn.Sequential(*[MoeLayer(h, heads, kv, hd, qkn, E, k, ffn, s, dev, grouped)
                                              for _ in range(layers)]).to(dev, BF)
                x = torch.randn(1, s, h, device=dev, dtype=BF, requires_grad=True)
                g = torch.randn(1, s, h, device=dev, dtype=BF)

                def step():  # gradients replaced, not accumulated (Megatron's wgrad GEMMs
                    for p in stack.parameters():  # write main_grad in place)
                        p.grad = None
                    stack(x).backward(g)
                ms = gpu_ms(step, 10)
                try:
                    busy, kernels, other = busy_by_kind(step)
                except Exception as e:  # the profiler unavailable: wall time alone
                    print(json.dumps({"profiler_error": f"{type(e).__name__}: {e}"[:300]}), flush=True)
                    busy, kernels, other = {"gemm": 0.0, "attention": 0.0, "other": 0.0}, 0, []
                print(json.dumps({"case": name, "experts": "grouped" if grouped else "loop", "tokens": s,
                                  "rows_per_expert": s * k // E,
                                  "wall_ms_per_layer": round(ms / layers, 3),
                                  "busy_ms_per_layer": round(1e3 * sum(busy.values()) / layers, 3),
                                  "busy_ms_per_layer_by_kind": {kk: round(1e3 * v / layers, 3) for kk, v in busy.items()},
                                  "kernels_per_layer": round(kernels / layers, 1),
                                  "other_ms_per_layer_top": {k: round(1e3 * v / layers, 3) for k, v in other}}),
                      flush=True)
                del stack, x, g
                torch.cuda.empty_cache()
            except Exception as e:  # a case this PyTorch cannot run is reported, not fatal
                print(json.dumps({"case": name, "grouped": grouped, "error": f"{type(e).__name__}: {e}"[:300]}),
                      flush=True)


def host_link(dev):
    n = 1 << 30
    host_a = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    host_b = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    gpu_a = torch.empty(n, dtype=torch.uint8, device=dev)
    gpu_b = torch.empty(n, dtype=torch.uint8, device=dev)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    a = torch.randn(8192, 8192, device=dev, dtype=BF)
    bm = torch.randn(8192, 8192, device=dev, dtype=BF)

    def copies_beside(gemms):  # one copy each way on its own stream, `gemms` GEMMs meanwhile
        cur = torch.cuda.current_stream()
        s1.wait_stream(cur)
        s2.wait_stream(cur)
        with torch.cuda.stream(s1):
            gpu_a.copy_(host_a, non_blocking=True)
        with torch.cuda.stream(s2):
            host_b.copy_(gpu_b, non_blocking=True)
        for _ in range(gemms):
            torch.mm(a, bm)
        cur.wait_stream(s1)
        cur.wait_stream(s2)

    h2d = gpu_ms(lambda: gpu_a.copy_(host_a, non_blocking=True), 5)
    d2h = gpu_ms(lambda: host_b.copy_(gpu_b, non_blocking=True), 5)
    bi = gpu_ms(lambda: copies_beside(0), 5)
    gemm = gpu_ms(lambda: [torch.mm(a, bm) for _ in range(20)], 5)
    mixed = gpu_ms(lambda: copies_beside(20), 5)
    print(json.dumps({"host_link": "pinned 1 GiB", "h2d_gbytes_per_s": round(n / h2d / 1e6, 1),
                      "d2h_gbytes_per_s": round(n / d2h / 1e6, 1),
                      "both_directions_gbytes_per_s_each": round(n / bi / 1e6, 1),
                      "gemm20_ms": round(gemm, 2), "gemm20_beside_both_copies_ms": round(mixed, 2),
                      "both_copies_ms": round(bi, 2)}), flush=True)


def main():
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
    if "--host-link-only" not in sys.argv[1:]:
        moe_cases(dev)
    if "--moe-only" not in sys.argv[1:]:
        host_link(dev)


if __name__ == "__main__":
    main()
