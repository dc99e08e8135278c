#!/usr/bin/env python3
"""GPU time of the language-model loss on the logits, for the estimator's cross-entropy term.

Times forward + backward of the loss over 16-bit logits [tokens, vocab], two ways:
  megatron  Megatron-LM's _VocabParallelCrossEntropy on logits.float() (TP 1: the all-reduces
            drop out), its operations as in megatron/mpu/cross_entropy.py;
  pytorch   F.cross_entropy(logits.float(), target), as plain PyTorch / FSDP / torchtitan.
Each is reported in ms and as bytes per logit at the HBM rate a plain device copy reaches on
the same GPU (the estimator charges bytes per logit at its memory-bound rate). The LM-head
GEMMs are not included.

Run on one GPU (not in CI):
    python3 scripts/microbench/cross_entropy.py --out cross_entropy.csv
CSV: path,tokens,vocab,dtype,ms,copy_gbytes_per_s,bytes_per_logit. Needs PyTorch with CUDA.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_timing import copy_bytes_per_s, gpu_ms  # noqa: E402


class VocabParallelCrossEntropyTp1(torch.autograd.Function):
    """Megatron-LM's vocab-parallel cross-entropy with one TP rank (no all-reduces)."""

    @staticmethod
    def forward(ctx, logits, target):
        logits_max = torch.max(logits, dim=-1)[0]
        logits.sub_(logits_max.unsqueeze(dim=-1))
        vocab = logits.size()[-1]
        target_mask = (target < 0) | (target >= vocab)
        masked_target = target.clone()
        masked_target[target_mask] = 0
        logits_2d = logits.view(-1, vocab)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0], device=logits_2d.device)
        predicted = logits_2d[arange_1d, masked_target_1d].clone().contiguous().view_as(target)
        predicted[target_mask] = 0.0
        exp_logits = torch.exp(logits)
        sum_exp = exp_logits.sum(dim=-1)
        loss = torch.log(sum_exp) - predicted
        exp_logits.div_(sum_exp.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        grad = softmax
        grad_2d = grad.view(-1, softmax.size()[-1])
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
        grad_2d[arange_1d, masked_target_1d] -= 1.0 - target_mask.view(-1).float()
        grad.mul_(grad_output.unsqueeze(dim=-1))
        return grad, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="cross_entropy.csv")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    copy_rate = copy_bytes_per_s(args.reps)
    rows = []
    for tokens, vocab in ((8192, 50304), (8192, 51200), (4096, 51200), (1024, 51200)):
        for dtype in (torch.float16, torch.bfloat16):
            logits = torch.randn(tokens, vocab, device="cuda", dtype=dtype, requires_grad=True)
            target = torch.randint(0, vocab, (tokens,), device="cuda")

            # The gradient is dropped before each call, as zero_grad(set_to_none) does, so
            # backward writes a fresh logits.grad rather than accumulating into the last.
            def megatron():
                logits.grad = None
                VocabParallelCrossEntropyTp1.apply(logits.float(), target).sum().backward()

            def pytorch():
                logits.grad = None
                F.cross_entropy(logits.float(), target).backward()

            for name, fn in (("megatron", megatron), ("pytorch", pytorch)):
                ms = gpu_ms(fn, args.reps)
                per_logit = ms * 1e-3 * copy_rate / (tokens * vocab)
                rows.append((name, tokens, vocab, str(dtype).split(".")[-1], ms, copy_rate / 1e9, per_logit))
            del logits
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        f.write("path,tokens,vocab,dtype,ms,copy_gbytes_per_s,bytes_per_logit\n")
        for r in rows:
            f.write("%s,%d,%d,%s,%.4f,%.0f,%.1f\n" % r)
    print("%s (%s, PyTorch %s); device copy %.0f GB/s" % (args.out, torch.cuda.get_device_name(),
                                                        torch.__version__, copy_rate / 1e9))
    for r in rows:
        print("%-8s tokens %5d vocab %5d %-8s %7.3f ms = %5.1f bytes per logit at the copy rate" %
              (r[0], r[1], r[2], r[3], r[4], r[6]))


if __name__ == "__main__":
    main()
