#!/usr/bin/env python3
"""What a collective's kernel beside them costs a layer's GEMMs.

A data-parallel gather or reduction overlapped with compute (FSDP's prefetch, Megatron's
overlapped gradient reduction) runs as NCCL kernels on a side stream: one thread block per
channel, each holding an SM for the whole collective (24 blocks for an H100 all-gather in
the case reported on NVIDIA's forum, "Compute-Communication Overlap Causes Severe GEMM
Performance Degradation because of Tail Effect", 2025). A cuBLAS GEMM block fills an SM's
registers, so it cannot share one. The estimator charges the overlapped stretch
1 - calibration.overlap_efficiency of its time (Hardware::ExposedBeside).

This times back-to-back BF16 GEMMs of a transformer layer's shapes alone and beside a
side-stream kernel of k persistent blocks of 512 threads that outlasts them, in two kinds
that bracket an NCCL kernel over InfiniBand (mostly waiting on the network, some copying):
  spin   the blocks only hold their SMs (register arithmetic, no memory traffic)
  copy   the blocks stream a 2 GiB device-to-device copy as fast as k blocks can
(Beside memory-bound kernels, whose small blocks fit on an SM beside a side block, the spin
blocks also take the SMs' issue slots: a LayerNorm runs 3.5x as long beside 8 of them. A
collective's blocks move data and wait on memory, as the copy blocks do.)
One JSON line per (GEMM shape, kind, k):
  slowdown   the work's time beside the kernel over alone, minus 1: the overlapped
             stretch's cost as a share of its time (1 - overlap_efficiency)
  sm_share   k / SMs, what the blocks take if the GEMM's waves shrink in proportion
  side_gbytes_per_s   the copy kernel's rate (read + write) while beside the GEMMs

With --memory-bound, a LayerNorm and an add (what a layer runs beside its GEMMs) instead.

Run on one GPU (not in CI):
    python3 scripts/microbench/overlap_interference.py --out overlap.jsonl [--memory-bound]
Needs PyTorch with CUDA and Triton.
"""
import argparse
import json
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_timing import gpu_ms  # noqa: E402

THREADS = 512  # NCCL_NTHREADS' default for the simple protocol
BLOCK = 4 * THREADS


@triton.jit
def _spin(out_ptr, iters, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = offs.to(tl.float32)
    for _ in range(iters):
        x = x * 0.999999 + 0.5
    tl.store(out_ptr + tl.program_id(0) * BLOCK + offs, x)


@triton.jit
def _copy(src, dst, n, passes, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    for _ in range(passes):
        for start in range(pid * BLOCK, n, step):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


class Side:
    """A side-stream kernel of k blocks sized to run `seconds`."""

    def __init__(self, kind, k):
        self.kind, self.k = kind, k
        self.out = torch.empty(k * BLOCK, dtype=torch.float32, device="cuda")
        if kind == "copy":
            self.src = torch.empty(1 << 29, dtype=torch.float32, device="cuda")  # 2 GiB
            self.dst = torch.empty_like(self.src)
        self.units = 1

    def launch(self, units=None):
        units = self.units if units is None else units
        w = THREADS // 32
        if self.kind == "spin":
            _spin[(self.k,)](self.out, units * 100000, BLOCK=BLOCK, num_warps=w)
        else:
            _copy[(self.k,)](self.src, self.dst, self.src.numel(), units, BLOCK=BLOCK, num_warps=w)

    def size_to(self, seconds):
        one = gpu_ms(lambda: self.launch(1), 3) * 1e-3
        self.units = max(1, int(seconds / one) + 1)
        return one * self.units


def beside(side, loop):
    """The work loop's time (ms) on the current stream while `side` runs on another, and
    the side kernel's own time (ms)."""
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g0, g1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        s0.record()
        side.launch()
        s1.record()
    torch.cuda._sleep(2_000_000)  # let the side kernel's blocks take their SMs first
    g0.record()
    loop()
    g1.record()
    torch.cuda.synchronize()
    return g0.elapsed_time(g1), s0.elapsed_time(s1)


def works(memory_bound):
    """(label, fields, fn) of what runs on the critical path: a layer's GEMMs, or with
    `memory_bound` the memory-bound kernels beside them (a LayerNorm, an add)."""
    if memory_bound:
        x = torch.randn(16384, 4096, dtype=torch.bfloat16, device="cuda")
        w = torch.ones(4096, dtype=torch.bfloat16, device="cuda")
        y, z = torch.randn(1 << 27, dtype=torch.bfloat16, device="cuda"), torch.empty(1 << 27, dtype=torch.bfloat16,
                                                                                   device="cuda")
        yield ("layernorm 16384x4096 bf16", {"bytes": 2 * x.numel() * 2},
               lambda: torch.nn.functional.layer_norm(x, (4096,), w, w))
        # y + y: each element read once (both operands are one load) and written once.
        yield ("add 2 x 128 Mi bf16", {"bytes": 2 * y.numel() * 2}, lambda: torch.add(y, y, out=z))
        return
    # (tokens, in, out): a dense layer's QKV and FC1 at 16 k tokens, an expert's FC1 at the
    # tokens one of 16 local experts gets, a GEMM of about one wave.
    for m, k_dim, n in [(16384, 4096, 12288), (16384, 4096, 4096), (8192, 4096, 3072), (2048, 4096, 2048)]:
        a = torch.randn(m, k_dim, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(k_dim, n, dtype=torch.bfloat16, device="cuda")
        yield ("gemm", {"gemm": [m, k_dim, n], "flops": 2 * m * k_dim * n}, lambda a=a, b=b: torch.mm(a, b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="overlap_interference.jsonl")
    ap.add_argument("--ctas", default="8,16,24,32")
    ap.add_argument("--memory-bound", action="store_true",
                    help="time memory-bound kernels (LayerNorm, add) instead of GEMMs")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    name = torch.cuda.get_device_name(0)
    with open(args.out, "w") as out:
        for label, fields, fn in works(args.memory_bound):
            one = gpu_ms(fn, 10)
            reps = max(10, int(200 / one))  # ~200 ms of work

            def loop(fn=fn, reps=reps):
                for _ in range(reps):
                    fn()
            alone = min(gpu_ms(loop, 3), gpu_ms(loop, 3))
            for kind in ("spin", "copy"):
                for ctas in (int(x) for x in args.ctas.split(",")):
                    side = Side(kind, ctas)
                    side.size_to(3 * alone * 1e-3 + 0.01)
                    runs = [beside(side, loop) for _ in range(3)]
                    g_ms = sorted(r[0] for r in runs)[1]
                    s_ms = sorted(r[1] for r in runs)[1]
                    row = {"gpu": name, "sms": sms, "work": label}
                    if "flops" in fields:
                        row.update({"gemm": fields["gemm"], "gemm_tflops_alone":
                                    round(fields["flops"] * reps / (alone * 1e-3) / 1e12, 1)})
                    else:
                        row["gbytes_per_s_alone"] = round(fields["bytes"] * reps / (alone * 1e-3) / 1e9, 1)
                    row.update({"kind": kind, "ctas": ctas, "sm_share": round(ctas / sms, 4),
                                "ms_alone": round(alone, 3), "ms_beside": round(g_ms, 3),
                                "slowdown": round(g_ms / alone - 1, 4), "side_ms": round(s_ms, 3)})
                    if kind == "copy":
                        moved = 2 * 4 * side.src.numel() * side.units
                        row["side_gbytes_per_s"] = round(moved / (s_ms * 1e-3) / 1e9, 1)
                    print(json.dumps(row), flush=True)
                    out.write(json.dumps(row) + "\n")
                    del side
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
