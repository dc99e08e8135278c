#!/usr/bin/env python3
"""Host and GPU cost of Megatron-LM's unfused softmax fallback against its fused kernel.

Megatron's FusedScaleMaskSoftmax runs one fused kernel each way only where the kernel
applies (b x heads-per-GPU a multiple of 4 above 128 keys, ...); elsewhere it runs
`forward_torch_softmax`: cast to fp32, scale, masked_fill_, a new torch.nn.Softmax module,
cast back. This script builds a stack of Megatron-style attention cores (baddbmm -> softmax
-> dropout -> bmm, scores [b, heads, s, s]) in plain PyTorch, each under a reentrant
checkpoint as Megatron-LM's CheckpointFunction, and times a forward + backward step two
ways at the same shapes:
  fused     a one-kernel-each-way autograd.Function standing in for Megatron's
            ScaledUpperTriangMaskedSoftmax (its extension is not needed to time launches);
  fallback  Megatron's forward_torch_softmax, verbatim in its operations.
It prints the extra wall time per checkpointed core, the extra kernels (torch.profiler),
and the extra time per extra kernel: what the estimator's fallback charges (in units of
the profile's kernel_overhead_us) should be, at shapes where the host is the bottleneck.

Run on one GPU with the framework version the jobs use (not in CI):
    python3 scripts/microbench/softmax_fallback.py --out softmax_fallback.csv
CSV: batch_heads,head_dim,seq,path,recompute,kernels,step_s,gpu_busy_s. Needs PyTorch with
CUDA; nothing else.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from step_overhead import kernels_and_busy, wall_per_call  # noqa: E402  (same timing as there)


class FusedStandIn(torch.autograd.Function):
    """One kernel forward, one backward, as Megatron's fused scale-mask-softmax."""

    @staticmethod
    def forward(ctx, scores, scale):
        probs = torch._softmax(scores, -1, False)
        ctx.save_for_backward(probs)
        return probs

    @staticmethod
    def backward(ctx, grad):
        (probs,) = ctx.saved_tensors
        return torch._softmax_backward_data(grad, probs, -1, probs.dtype), None


def megatron_fallback(scores, mask, scale):
    """megatron/model/fused_softmax.py forward_torch_softmax (fp16 input, softmax in fp32,
    query-key layer scaling) with megatron's attention_mask_func."""
    x = scores.float()
    x = x * scale
    x.masked_fill_(mask, -10000.0)
    probs = torch.nn.Softmax(dim=-1)(x)
    return probs.half()


class Core(torch.nn.Module):
    """Megatron's attention core on q, k, v of one micro-batch ([s, b*heads, d])."""

    def __init__(self, batch, heads, path, layer_number):
        super().__init__()
        self.b, self.np, self.path = batch, heads, path
        self.scale = float(layer_number)  # query-key layer scaling: coeff = layer number

    def forward(self, q, k, v, mask):
        s, bn, d = q.shape
        buf = torch.empty(bn, s, s, dtype=q.dtype, device=q.device)
        scores = torch.baddbmm(buf, q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2),
                               beta=0.0, alpha=1.0 / (d ** 0.5 * self.scale))
        scores = scores.view(self.b, self.np, s, s)
        if self.path == "fused":
            probs = FusedStandIn.apply(scores, self.scale)
        else:
            probs = megatron_fallback(scores, mask, self.scale)
        probs = F.dropout(probs, 0.1, self.training)
        ctx = torch.bmm(probs.view(bn, s, s), v.transpose(0, 1))
        return ctx.transpose(0, 1)


def make_step(cores, q, k, v, mask, recompute):
    def run():
        outs = []
        for core in cores:
            if recompute:
                outs.append(checkpoint(core, q, k, v, mask, use_reentrant=True))
            else:
                outs.append(core(q, k, v, mask))
        torch.stack(outs).float().sum().backward()
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="softmax_fallback.csv")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    rows, summary = [], []
    # (micro-batch, heads per GPU, head dim): 16 heads at TP 8 give 2 per GPU; head dim 64
    # (hidden 1,024) and 128 (hidden 2,048); micro-batch 1 falls back in Megatron, 2 not.
    for b, heads, d in ((1, 2, 64), (1, 2, 128), (2, 2, 64), (1, 2, 16)):
        s = args.seq
        q, k, v = (torch.randn(s, b * heads, d, device="cuda", dtype=torch.float16,
                               requires_grad=True) for _ in range(3))
        mask = torch.ones(1, 1, s, s, dtype=torch.bool, device="cuda").triu(1)
        for recompute in (True, False):
            result = {}
            for path in ("fused", "fallback"):
                cores = torch.nn.ModuleList(
                    [Core(b, heads, path, i + 1) for i in range(args.cores)]).cuda()
                run = make_step(cores, q, k, v, mask, recompute)
                run()
                kernels, busy = kernels_and_busy(run)
                step = wall_per_call(run, args.reps)
                result[path] = (kernels, step, busy)
                rows.append((b * heads, d, s, path, "reentrant" if recompute else "none",
                             kernels, step, busy))
            extra_k = (result["fallback"][0] - result["fused"][0]) / args.cores
            extra_us = (result["fallback"][1] - result["fused"][1]) / args.cores * 1e6
            summary.append("b*heads %d d %d %s: fallback +%.1f kernels, +%.0f us per core "
                           "(%.1f us per extra kernel); fused step %.2f ms, GPU busy %.2f ms"
                           % (b * heads, d, "checkpointed" if recompute else "plain", extra_k,
                              extra_us, extra_us / max(extra_k, 1e-9),
                              result["fused"][1] * 1e3, result["fused"][2] * 1e3))
    with open(args.out, "w") as f:
        f.write("batch_heads,head_dim,seq,path,recompute,kernels,step_s,gpu_busy_s\n")
        for r in rows:
            f.write("%d,%d,%d,%s,%s,%d,%.6e,%.6e\n" % r)
    print("%s (%s, PyTorch %s)" % (args.out, torch.cuda.get_device_name(), torch.__version__))
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
