#!/usr/bin/python3
"""How fast one host core turns an ImageNet JPEG into a training sample the way ParaDL's
runs did: the source of jpeg_decode_mpixels_per_core_s's default
(estimator/system/hardware.h).

usage: /usr/bin/python3 bench/jpeg_pipeline.py [--images N] [--side PX] [--crop PX]
                                               [--kbytes KB] [--threads T,...] [--batch B]
                                               [--jsonl PATH]

Needs Pillow and numpy (Debian: python3-pil python3-numpy, hence /usr/bin/python3).
ParaDL's train_imagenet.py (ankahira/paraDL, data/) reads ImageNet pre-resized to
PX x PX JPEGs through Chainer's LabeledImageDataset (PIL open + decode,
numpy.asarray(..., float32), HWC -> CHW) and its PreprocessedDataset (random CROP x CROP
crop, random flip, mean subtraction, scaling by 1/255), batched by concat_examples
(numpy stack) from a MultithreadIterator of 20 threads. This writes N synthetic JPEGs of
about KB kilobytes each (smooth colour fields with texture, quality searched for the size)
into a temporary folder, then times that path for every image, single-threaded and in
pools of T threads (batches of B), after one warm pass that brings the files into the
page cache (file-system reads are charged apart).

Prints, per thread count: core-ms per image (single thread), images/s, and the speed-up
over one thread (how much of the work leaves the interpreter lock), then the Mpixel/s of
crop pixels per core: what paraplan's jpeg_decode_mpixels_per_core_s states (per input
pixel of the network, as the model counts them). --jsonl PATH appends one JSON line per
thread count (docs/microbench/epyc_jpeg_pipeline.jsonl holds the measurement the default
cites).
"""
import argparse
import io
import json
import os
import platform
import random
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image


def synthetic_jpeg(side, target_bytes, rng):
    """A JPEG of side x side whose size is near target_bytes: a low-resolution random
    colour field upsampled (smooth regions, edges) plus fine noise (texture)."""
    coarse = rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    base = np.asarray(Image.fromarray(coarse).resize((side, side), Image.BICUBIC), dtype=np.float32)
    noise = rng.normal(0, 1, size=(side, side, 3)).astype(np.float32)
    best = None
    for amplitude in (4, 8, 12, 16, 24, 32):
        img = Image.fromarray(np.clip(base + amplitude * noise, 0, 255).astype(np.uint8))
        for quality in (75, 85, 90):
            buf = io.BytesIO()
            img.save(buf, format='JPEG', quality=quality)
            data = buf.getvalue()
            if best is None or abs(len(data) - target_bytes) < abs(len(best) - target_bytes):
                best = data
    return best


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), else the machine type."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def load_sample(path, mean, crop):
    """Chainer's LabeledImageDataset._read_image_as_array + ParaDL's get_example."""
    with Image.open(path) as f:
        image = np.asarray(f, dtype=np.float32)
    image = image.transpose(2, 0, 1)
    _, h, w = image.shape
    top = random.randint(0, h - crop - 1)
    left = random.randint(0, w - crop - 1)
    if random.randint(0, 1):
        image = image[:, :, ::-1]
    image = image[:, top:top + crop, left:left + crop]
    image -= mean[:, top:top + crop, left:left + crop]
    image *= (1.0 / 255.0)
    return image


def run(paths, mean, crop, threads, batch):
    """Seconds to load every path in batches of `batch`, each batch mapped over a pool
    of `threads` threads and stacked (concat_examples); 1 thread runs inline."""
    t0 = time.perf_counter()
    if threads == 1:
        for i in range(0, len(paths), batch):
            np.stack([load_sample(p, mean, crop) for p in paths[i:i + batch]])
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for i in range(0, len(paths), batch):
                np.stack(list(pool.map(lambda p: load_sample(p, mean, crop), paths[i:i + batch])))
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--images', type=int, default=512)
    ap.add_argument('--side', type=int, default=256)
    ap.add_argument('--crop', type=int, default=227)
    ap.add_argument('--kbytes', type=float, default=25)
    ap.add_argument('--threads', default='1,2,20')
    ap.add_argument('--batch', type=int, default=128)
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--jsonl', default=None, help='append one JSON line per thread count here')
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(',')]
    if args.images < 1 or args.crop >= args.side or args.batch < 1 or min(threads) < 1:
        raise SystemExit('jpeg_pipeline: needs --images >= 1, --crop < --side, --batch >= 1, threads >= 1')
    rng = np.random.default_rng(0)
    random.seed(0)
    with tempfile.TemporaryDirectory() as folder:
        variants = [synthetic_jpeg(args.side, args.kbytes * 1000, rng) for _ in range(16)]
        paths = []
        for i in range(args.images):
            path = os.path.join(folder, '%06d.jpg' % i)
            with open(path, 'wb') as f:
                f.write(variants[i % len(variants)])
            paths.append(path)
        size = sum(len(v) for v in variants) / len(variants)
        mean = rng.uniform(90, 130, size=(3, args.side, args.side)).astype(np.float32)
        run(paths, mean, args.crop, 1, args.batch)  # page cache, allocator, imports
        print('jpeg_pipeline: %d JPEGs of %d x %d (%.1f KB), crop %d, batches of %d, %d cores here'
              % (args.images, args.side, args.side, size / 1000, args.crop, args.batch, os.cpu_count()))
        single = None
        for t in threads:
            best = min(run(paths, mean, args.crop, t, args.batch) for _ in range(args.repeats))
            rate = args.images / best
            if single is None and t == 1:
                single = rate
            if args.jsonl:
                with open(args.jsonl, 'a') as out:
                    out.write(json.dumps({
                        'cpu': cpu_name(), 'cores_here': os.cpu_count(),
                        'pillow': Image.__version__, 'numpy': np.__version__, 'images': args.images,
                        'side': args.side, 'crop': args.crop, 'jpeg_kbytes': round(size / 1000, 1),
                        'batch': args.batch, 'threads': t, 'images_per_s': round(rate, 1),
                        'core_ms_per_image': round(1e3 / rate, 3) if t == 1 else None}) + '\n')
            line = '  %2d thread%s: %7.1f images/s' % (t, ' ' if t == 1 else 's', rate)
            if t == 1:
                line += ', %.3f core-ms per image' % (1e3 / rate)
            elif single:
                line += ', %.2fx one thread' % (rate / single)
            print(line)
        if single:
            print('per core: %.1f Mpixel/s of %d x %d crops (jpeg_decode_mpixels_per_core_s), %.1f of stored pixels'
                  % (single * args.crop ** 2 / 1e6, args.crop, args.crop, single * args.side ** 2 / 1e6))


if __name__ == '__main__':
    main()
