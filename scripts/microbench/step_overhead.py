#!/usr/bin/env python3
"""Host time per kernel of an eager training step, for the profile's `kernel_overhead_us`.

Builds a stack of Megatron-style GPT layers in plain PyTorch (LayerNorm, QKV / projection
/ MLP linears, unfused attention or SDPA, GELU, bias-dropout-add as separate kernels, none or
full activation recompute with torch.utils.checkpoint, reentrant as Megatron-LM's or not), runs forward + backward steps at shapes
so small that the GPU idles between kernels, counts the kernels one step launches with
torch.profiler, and divides the step's wall time by that count: the host cost per kernel
that sets the floor of small, high-TP layers. Then it sweeps the hidden size up so the
CSV also shows where the GPU's own time takes over (time per step = the larger of the two,
which is what the estimator charges per phase).

Run it on one GPU of the cluster, with the framework version the jobs use (not in CI):
    python3 scripts/microbench/step_overhead.py --out step_overhead.csv
then set calibration.kernel_overhead_us to the `floor_us_per_kernel` it prints (or let
calibration fit it from measured runs). CSV: hidden,layers,batch,seq,recompute,attention,
kernels,step_s,gpu_busy_s,us_per_kernel. Needs PyTorch with CUDA; nothing else.
"""
import argparse
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Layer(torch.nn.Module):
    """One pre-norm GPT layer as Megatron-LM (eager) launches it."""

    def __init__(self, h, heads, attention, dropout):
        super().__init__()
        self.heads, self.attention, self.p = heads, attention, dropout
        self.ln1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h)
        self.proj = torch.nn.Linear(h, h, bias=False)
        self.proj_bias = torch.nn.Parameter(torch.zeros(h))
        self.ln2 = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, 4 * h)
        self.fc2 = torch.nn.Linear(4 * h, h, bias=False)
        self.fc2_bias = torch.nn.Parameter(torch.zeros(h))

    def bias_dropout_add(self, x, bias, residual):
        return residual + F.dropout(x + bias, self.p, self.training)

    def forward(self, x):  # x: [s, b, h]
        s, b, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.ln1(x)).view(s, b * self.heads, 3 * d).chunk(3, dim=-1)
        if self.attention == "sdpa":
            ctx = F.scaled_dot_product_attention(
                q.transpose(0, 1).unsqueeze(0), k.transpose(0, 1).unsqueeze(0),
                v.transpose(0, 1).unsqueeze(0), dropout_p=self.p if self.training else 0.0,
                is_causal=True).squeeze(0)
        else:  # Megatron's baddbmm -> fused scale-mask-softmax -> dropout -> bmm
            scores = torch.baddbmm(
                torch.empty(b * self.heads, s, s, dtype=x.dtype, device=x.device),
                q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2), beta=0.0,
                alpha=1.0 / math.sqrt(d))
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            probs = F.dropout(torch.softmax(scores.masked_fill(mask, -1e4), dim=-1), self.p,
                              self.training)
            ctx = torch.bmm(probs, v.transpose(0, 1))
        ctx = ctx.transpose(0, 1).reshape(s, b, h)
        x = self.bias_dropout_add(self.proj(ctx), self.proj_bias, x)
        y = self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return self.bias_dropout_add(y, self.fc2_bias, x)


def step_fn(layers, x, recompute):
    def run():
        y = x
        for layer in layers:
            # Megatron-LM's CheckpointFunction is reentrant; torch's default is not.
            y = checkpoint(layer, y, use_reentrant=recompute == "reentrant") if recompute else layer(y)
        y.float().pow(2).mean().backward()
    return run


def kernels_and_busy(run):
    """Kernels one call launches and the seconds the GPU spends in them (torch.profiler)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    kernels, busy_us = 0, 0.0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels += 1
            busy_us += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    return kernels, busy_us * 1e-6


def wall_per_call(run, reps):
    for _ in range(5):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            run()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


class Tiny(torch.nn.Module):
    """A block of two tiny kernels (linear, GELU): what checkpointing it costs is host time."""

    def __init__(self, h):
        super().__init__()
        self.fc = torch.nn.Linear(h, h)

    def forward(self, x):
        return F.gelu(self.fc(x))


def checkpoint_cost(blocks, reps, dtype):
    """Host time per checkpointed block beyond its kernels: the same tiny blocks run plain
    and under torch.utils.checkpoint (reentrant, as Megatron-LM's CheckpointFunction, and
    not), forward + backward; per block (step_ckpt - step_plain - extra kernels x the plain
    step's time per kernel) / blocks. RNG state is preserved, as both frameworks do."""
    layers = torch.nn.ModuleList([Tiny(64) for _ in range(blocks)]).cuda().to(dtype)
    x = torch.randn(16, 64, device="cuda", dtype=dtype, requires_grad=True)

    def make(mode):
        def run():
            y = x
            for layer in layers:
                y = layer(y) if mode == "none" else checkpoint(layer, y, use_reentrant=mode == "reentrant")
            y.float().sum().backward()
        return run

    out = {}
    for mode in ("none", "reentrant", "non-reentrant"):
        run = make(mode)
        run()
        kernels, _ = kernels_and_busy(run)
        out[mode] = (kernels, wall_per_call(run, reps))
    per_kernel = out["none"][1] / out["none"][0]
    rows = []
    for mode in ("reentrant", "non-reentrant"):
        extra = out[mode][1] - out["none"][1] - (out[mode][0] - out["none"][0]) * per_kernel
        rows.append((mode, blocks, out["none"][0], out[mode][0], out["none"][1], out[mode][1],
                     per_kernel * 1e6, extra / blocks * 1e6))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="step_overhead.csv")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--hidden", type=int, nargs="*", default=[64, 128, 256, 512, 1024, 2048, 4096])
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--checkpoint-out", default="",
                    help="also measure the host cost per checkpointed block into this CSV")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    rows = []
    for attention in ("unfused", "sdpa"):
        for recompute in ("", "reentrant", "non-reentrant"):
            for h in args.hidden:
                heads = min(args.heads, h // 16)
                layers = torch.nn.ModuleList(
                    [Layer(h, heads, attention, 0.1) for _ in range(args.layers)]).cuda().to(dtype)
                x = torch.randn(args.seq, args.batch, h, device="cuda", dtype=dtype,
                                requires_grad=True)
                run = step_fn(layers, x, recompute)
                run()
                kernels, busy = kernels_and_busy(run)
                step = wall_per_call(run, args.reps)
                rows.append((h, args.layers, args.batch, args.seq, recompute or "none",
                             attention, kernels, step, busy, step / kernels * 1e6))
                del layers, x, run
                torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        f.write("hidden,layers,batch,seq,recompute,attention,kernels,step_s,gpu_busy_s,us_per_kernel\n")
        for r in rows:
            f.write("%d,%d,%d,%d,%s,%s,%d,%.6e,%.6e,%.2f\n" % r)
    if args.checkpoint_out:
        ck = [r for _ in range(3) for r in checkpoint_cost(32, args.reps, dtype)]
        with open(args.checkpoint_out, "w") as f:
            f.write("mode,blocks,kernels_plain,kernels_checkpointed,step_plain_s,step_checkpointed_s,"
                    "us_per_kernel,checkpoint_us_per_block\n")
            for r in ck:
                f.write("%s,%d,%d,%d,%.6e,%.6e,%.2f,%.1f\n" % r)
        for mode in ("reentrant", "non-reentrant"):
            print("checkpoint_us_per_block %s %.1f (median of 3)"
                  % (mode, statistics.median(r[7] for r in ck if r[0] == mode)))
    # The floor: configurations where the GPU is busy less than a quarter of the step.
    floor = [r[9] for r in rows if r[8] < 0.25 * r[7]]
    print("%d configurations -> %s (%s)" % (len(rows), args.out, torch.cuda.get_device_name()))
    if floor:
        print("floor_us_per_kernel %.1f (median of %d host-bound configurations)"
              % (statistics.median(floor), len(floor)))


if __name__ == "__main__":
    main()
