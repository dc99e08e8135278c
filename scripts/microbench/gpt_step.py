#!/usr/bin/env python3
"""A plain PyTorch GPT training step (autocast bf16, fp32 parameters, fused AdamW, SDPA
flash attention, GPT-2 style blocks, vocabulary 50,304, sequence 1,024) timed on one GPU:
step seconds, kernels per step (torch.profiler), GPU-busy seconds, peak
torch.cuda.max_memory_allocated. The shape of `workload.mixed_precision = FP32_PARAMS`
in paraplan; compare with `paraplan estimate --profile ... --workload W.json --tp 1 --pp 1
--dp 1 --mbs B --global-batch B --flash on` (W: the same GPT with "dropout": 0 and
"mixed_precision": "MIXED_PRECISION_FP32_PARAMS"). Prints one JSON line per model.
Not in CI: needs a CUDA GPU with ~40 GB.
"""
import math, statistics, sys, time, json
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(s, h, heads):
        super().__init__()
        s.heads = heads
        s.ln1 = torch.nn.LayerNorm(h); s.attn = torch.nn.Linear(h, 3 * h); s.proj = torch.nn.Linear(h, h)
        s.ln2 = torch.nn.LayerNorm(h); s.fc = torch.nn.Linear(h, 4 * h); s.fc2 = torch.nn.Linear(4 * h, h)
        s.drop = 0.0

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.attn(s.ln1(x)).split(C, dim=2)
        q = q.view(B, T, s.heads, C // s.heads).transpose(1, 2)
        k = k.view(B, T, s.heads, C // s.heads).transpose(1, 2)
        v = v.view(B, T, s.heads, C // s.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + s.proj(y)
        return x + s.fc2(F.gelu(s.fc(s.ln2(x))))


class GPT(torch.nn.Module):
    def __init__(s, layers, h, heads, vocab=50304, seq=1024):
        super().__init__()
        s.wte = torch.nn.Embedding(vocab, h); s.wpe = torch.nn.Embedding(seq, h)
        s.blocks = torch.nn.ModuleList([Block(h, heads) for _ in range(layers)])
        s.lnf = torch.nn.LayerNorm(h); s.head = torch.nn.Linear(h, vocab, bias=False)
        s.head.weight = s.wte.weight

    def forward(s, idx, tgt):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in s.blocks:
            x = b(x)
        logits = s.head(s.lnf(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), tgt.view(-1))


# GPU time by kind of kernel, from the kernel's name (cuBLAS / CUTLASS GEMMs, flash
# attention, the loss, the optimizer's multi-tensor passes, LayerNorm, everything else).
KINDS = (("gemm", ("gemm", "cutlass", "xmma", "nvjet", "cublas")),
         ("attention", ("flash", "fmha", "attention")),
         ("loss", ("cross_entropy", "nll_loss", "log_softmax", "softmax")),
         ("optimizer", ("adam", "multi_tensor", "foreach")),
         ("layernorm", ("layer_norm",)))


def kernel_kind(name):
    low = name.lower()
    for kind, keys in KINDS:
        if any(k in low for k in keys):
            return kind
    return "other"


def run(layers, h, heads, batch, seq=1024):
    torch.cuda.reset_peak_memory_stats()
    m = GPT(layers, h, heads, seq=seq).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, 50304, (batch, seq), device="cuda")
    tgt = torch.randint(0, 50304, (batch, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = m(idx, tgt)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        step(); torch.cuda.synchronize()
    cuda = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    kernels = len(cuda)
    busy = sum(e.device_time_total for e in cuda) * 1e-6
    by_kind = {}
    for e in cuda:
        kind = kernel_kind(e.name)
        by_kind[kind] = by_kind.get(kind, 0.0) + e.device_time_total * 1e-6
    torch.cuda.reset_peak_memory_stats()
    ts = []
    for _ in range(3):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(5):
            step()
        torch.cuda.synchronize(); ts.append((time.perf_counter() - t0) / 5)
    peak = torch.cuda.max_memory_allocated() / 2**30
    params = sum(p.numel() for p in m.parameters())
    del m, opt
    torch.cuda.empty_cache()
    return dict(layers=layers, hidden=h, heads=heads, batch=batch, params=params, kernels=kernels,
                step_s=statistics.median(ts), gpu_busy_s=busy, peak_gib=peak,
                busy_s_by_kind={k: round(v, 6) for k, v in sorted(by_kind.items())})


out = []
for (l, h, a, b) in [(12, 768, 12, 8), (24, 1024, 16, 8), (24, 2048, 16, 4)]:
    r = run(l, h, a, b)
    print(json.dumps(r)); sys.stdout.flush()
    out.append(r)
