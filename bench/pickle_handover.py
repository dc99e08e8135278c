#!/usr/bin/env python3
"""How fast a spatial group's root can hand its decoded batch to the other ranks through
Python: the source of sample_handover_gbytes_per_s's default (estimator/system/hardware.h).

usage: pickle_handover.py [--images N] [--side PX] [--repeats R]

ChainerMN's multi-node iterator (chainermn/iterators/multi_node_iterator.py), which
ParaDL's spatial and hybrid runs use, has rank 0 of the group load the batch and send it
with mpi4py's lowercase bcast: the list of (image, label) tuples is pickled (mpi4py's
default protocol, pickle.HIGHEST_PROTOCOL), broadcast, unpickled by every receiver, and
stacked into one array by Chainer's concat_examples. This times the serial part, dumps +
loads + stacking, for N float32 images of 3 x PX x PX, and prints GB/s of samples. The MPI
copy itself is charged apart (host_staging_efficiency). Numpy is not needed: an image
is a bytes object of the same size, which pickle and the join copy as they would the
array's buffer.

Prints one line: `handover: N images of B bytes: dumps X GB/s, loads Y GB/s, stack Z
GB/s, all W GB/s` (the best of R repeats).
"""
import argparse
import os
import pickle
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--images', type=int, default=64)
    ap.add_argument('--side', type=int, default=224)
    ap.add_argument('--repeats', type=int, default=5)
    args = ap.parse_args()
    if args.images < 1 or args.side < 1 or args.repeats < 1:
        raise SystemExit('pickle_handover: --images, --side and --repeats must be positive')
    image_bytes = 3 * args.side * args.side * 4
    batch = [(os.urandom(image_bytes), i % 1000) for i in range(args.images)]
    total = image_bytes * args.images
    best = None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        wire = pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)
        t1 = time.perf_counter()
        got = pickle.loads(wire)
        t2 = time.perf_counter()
        stacked = b''.join(image for image, _ in got)
        t3 = time.perf_counter()
        assert len(stacked) == total
        rates = tuple(total / max(d, 1e-9) / 1e9 for d in (t1 - t0, t2 - t1, t3 - t2, t3 - t0))
        if best is None or rates[3] > best[3]:
            best = rates
    print('handover: %d images of %d bytes: dumps %.2f GB/s, loads %.2f GB/s, stack %.2f GB/s, all %.2f GB/s'
          % ((args.images, image_bytes) + best))


if __name__ == '__main__':
    main()
