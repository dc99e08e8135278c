#!/usr/bin/env python3
"""What PyTorch's caching allocator reserves beyond what a training step allocates: the
profile's memory_overhead_fraction. Eight torchtitan Llama 3 8B blocks (autograd_memory.py's),
bf16, fused AdamW, trained for 8 steps at 4,096 tokens a sequence with a micro-batch of
1 or 2 (fixed, or alternating: the varying shapes that fragment a cache), under the
default allocator and with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.

Prints one JSON line per case: peak allocated and peak reserved GiB, reserved / allocated
- 1 (the overhead share), and the allocator's retries (cudaMalloc failures it recovered
from by freeing its cache). Each case runs in its own process (the allocator is
configured when CUDA starts). Not in CI: needs a CUDA GPU with ~40 GB.
"""
import json
import os
import subprocess
import sys

CASES = [("fixed", "1,1,1,1,1,1,1,1"), ("alternating", "1,2,1,2,2,1,2,1")]
CONFS = ["", "expandable_segments:True"]


def child(batches):
    import torch
    from autograd_memory import BF, Llama
    dev = torch.device("cuda")
    h, s = 4096, 4096
    blocks = torch.nn.ModuleList(Llama(h, 32, 8, 14336, s, dev) for _ in range(8)).to(dev, BF)
    opt = torch.optim.AdamW(blocks.parameters(), lr=1e-5, fused=True)
    for b in batches:
        y = torch.randn(b, s, h, device=dev, dtype=BF)
        for blk in blocks:
            y = blk(y)
        y.float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del y
    torch.cuda.synchronize()
    st = torch.cuda.memory_stats()
    alloc, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    return {"peak_allocated_gib": round(alloc / 2**30, 2), "peak_reserved_gib": round(reserved / 2**30, 2),
            "overhead_share": round(reserved / alloc - 1, 4), "alloc_retries": st.get("num_alloc_retries", 0)}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child([int(b) for b in sys.argv[2].split(",")])))
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for conf in CONFS:
        for name, batches in CASES:
            env = dict(os.environ)
            if conf:
                env["PYTORCH_CUDA_ALLOC_CONF"] = conf
            else:
                env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            r = subprocess.run([sys.executable, os.path.join(here, "allocator_overhead.py"), "--child", batches],
                               capture_output=True, text=True, env=env, cwd=here)
            line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else json.dumps({"error": r.stderr[-300:]})
            out = {"allocator": conf or "default", "shapes": name, "micro_batches": batches}
            out.update(json.loads(line))
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
