"""Shared timing for the microbenchmarks: median CUDA-event time of a call, and the rate a
plain device-to-device copy reaches (the reference the estimator's bytes are read against)."""
import statistics

import torch


def gpu_ms(fn, reps):
    """Median GPU time of fn() in ms over `reps` CUDA-event-timed calls, after 3 warm-ups."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_bytes_per_s(reps):
    """Bytes moved per second (read + write) by a 1 GiB device-to-device copy."""
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    other = torch.empty_like(big)
    ms = gpu_ms(lambda: other.copy_(big), reps)
    return 2 * big.numel() / (ms * 1e-3)
