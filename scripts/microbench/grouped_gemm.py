#!/usr/bin/env python3
"""Expert GEMMs at the token counts MoE layers give them: BF16 time of one MoE layer's
local experts as a function of tokens per expert, three ways a framework runs them:

  loop            one torch.mm per expert on one stream (Megatron-Core's SequentialMLP),
                  launched from Python: at a few tokens per expert this times the host;
  loop_graph      the same GEMMs replayed from a CUDA graph: the GPU's time alone;
  streams4_graph  the same GEMMs round-robin over 4 CUDA streams (Transformer Engine's
                  GroupedLinear: transformer_engine/common/util/multi_stream.h,
                  num_compute_streams = 4), from a CUDA graph;
  grouped         one torch._grouped_mm call (a CUTLASS grouped GEMM, as the grouped_gemm
                  package and TE's cuBLASLt grouped path run it), where PyTorch has it.

Passes: fc1 / fc2 forward (m x n x k with m = tokens per expert), and their weight
gradients (the contraction over the m tokens: a few tokens make a shallow GEMM).
Shapes are the expert FFNs of Qwen3-235B-A22B, Qwen3-30B-A3B, DeepSeek-V3, GPT-OSS-120B
and Mixtral 8x7B (hidden, expert FFN hidden; gated, so fc1 is 2 x FFN wide).

Writes CSV: model,experts,tokens_per_expert,pass,m,n,k,method,seconds,tflops, with
m x n x k the per-expert GEMM. Compare with paraplan's GroupedMatmulTime through
`build/bench/grouped_gemm_check CSV` (docs/model.md, "Expert-parallel folding"). Not in CI: needs a CUDA GPU.
"""
import argparse
import csv
import sys

import torch

from gpu_timing import gpu_ms

MODELS = {  # hidden, expert FFN hidden (published configs)
    "qwen3-235b-a22b": (4096, 1536),
    "qwen3-30b-a3b": (2048, 768),
    "deepseek-v3": (7168, 2048),
    "gpt-oss-120b": (2880, 2880),
    "mixtral-8x7b": (4096, 14336),
}
TOKENS = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
EXPERTS = [4, 16]


def offsets(e, m, dev):
    return torch.arange(1, e + 1, device=dev, dtype=torch.int32) * m


def run_loop(fns):
    for f in fns:
        f()


def make_streams4(fns):
    streams = [torch.cuda.Stream() for _ in range(4)]

    def go():
        cur = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(cur)
        for i, f in enumerate(fns):
            with torch.cuda.stream(streams[i % 4]):
                f()
        for s in streams:
            cur.wait_stream(s)
    return go


def graphed(fn):
    """fn captured in a CUDA graph (after two warm-up calls on a side stream); its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
        fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def try_grouped(fn):
    try:
        fn()
        torch.cuda.synchronize()
        return fn
    except Exception as e:  # unsupported layout or PyTorch without _grouped_mm
        print(f"  grouped unavailable: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="grouped_gemm.csv")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    dev = torch.device("cuda")
    bf = torch.bfloat16
    grouped_ok = hasattr(torch, "_grouped_mm")
    rows = []
    for model, (h, f) in MODELS.items():
        for e in EXPERTS:
            w1 = torch.randn(e, h, 2 * f, device=dev, dtype=bf)   # fc1: h -> 2f (gated)
            w2 = torch.randn(e, f, h, device=dev, dtype=bf)       # fc2: f -> h
            for m in TOKENS:
                x = torch.randn(e * m, h, device=dev, dtype=bf)
                y1 = torch.randn(e * m, 2 * f, device=dev, dtype=bf)  # fc1 output / its gradient
                a2 = torch.randn(e * m, f, device=dev, dtype=bf)      # fc2 input
                dy = torch.randn(e * m, h, device=dev, dtype=bf)      # fc2 output gradient
                offs = offsets(e, m, dev)
                sl = [slice(i * m, (i + 1) * m) for i in range(e)]
                passes = {
                    # pass: (per-expert m, n, k, per-expert calls, grouped call)
                    "fc1_fprop": (m, 2 * f, h, [lambda i=i: torch.mm(x[sl[i]], w1[i]) for i in range(e)],
                                  lambda: torch._grouped_mm(x, w1, offs=offs)),
                    "fc2_fprop": (m, h, f, [lambda i=i: torch.mm(a2[sl[i]], w2[i]) for i in range(e)],
                                  lambda: torch._grouped_mm(a2, w2, offs=offs)),
                    "fc1_wgrad": (h, 2 * f, m, [lambda i=i: torch.mm(x[sl[i]].t(), y1[sl[i]]) for i in range(e)],
                                  lambda: torch._grouped_mm(x.t(), y1, offs=offs)),
                    "fc2_wgrad": (f, h, m, [lambda i=i: torch.mm(a2[sl[i]].t(), dy[sl[i]]) for i in range(e)],
                                  lambda: torch._grouped_mm(a2.t(), dy, offs=offs)),
                }
                for name, (pm, pn, pk, calls, grouped) in passes.items():
                    loop = lambda calls=calls: run_loop(calls)
                    methods = {"loop": loop, "loop_graph": graphed(loop),
                               "streams4_graph": graphed(make_streams4(calls))}
                    if grouped_ok:
                        g = try_grouped(grouped)
                        if g is not None:
                            methods["grouped"] = g
                    flops = 2.0 * pm * pn * pk * e
                    for method, fn in methods.items():
                        s = gpu_ms(fn, a.reps) * 1e-3
                        rows.append((model, e, m, name, pm, pn, pk, method, f"{s:.6e}", f"{flops / s / 1e12:.1f}"))
                    print(model, e, m, name, " ".join(f"{r[7]}={r[9]}" for r in rows[-len(methods):]), flush=True)
                    del methods
                del x, y1, a2, dy
            del w1, w2
            torch.cuda.empty_cache()
    with open(a.out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "experts", "tokens_per_expert", "pass", "m", "n", "k", "method", "seconds", "tflops"])
        w.writerows(rows)
    print(f"{len(rows)} rows -> {a.out}")


if __name__ == "__main__":
    main()
