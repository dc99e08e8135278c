#!/usr/bin/env python3
"""Fits a profile's fused-attention parameters to measured causal attention kernels.

usage: fit_attention.py FILE [FILE ...] [--check]

FILE: the JSON lines long_attention.py prints (backend flash | cudnn, s, fwd_/bwd_share_of_peak;
rows with "mla" or "error" are left out), or a CSV with the columns of
shared/data/h100_microbench/attention.csv (batch, heads, seq, head_dim, causal, pass, seconds,
tflops: FlashAttention-2 through SDPA, causal rows of head dimension 128 are used; the peak is
PEAK TFLOP/s, --peak to change).

The model (docs/model.md, hardware.h): a fused attention call whose queries see K keys on
average (s / 2 causal) runs at e x K / (K + half) of the 16-bit peak, half the keys' worth of
fixed work per query tile. Fits one `half` per direction shared by every kernel given (the
profile has one pair) and one long-sequence efficiency `e` per kernel and direction, by least
squares on the relative error over a grid of `half`. Prints, per kernel and direction, every
point's measured and modelled share, and the calibration fields to state:
attention_efficiency_fwd / _bwd (FlashAttention-2), cudnn_attention_efficiency_fwd / _bwd,
attention_half_keys_fwd / _bwd. From rows of head dimension 64 beside 128 at the same
sequence (2 k tokens and more: a CSV's causal rows, FlashAttention-2; long_attention.py
--head-dims lines, either kernel), also the softmax's work per score in head-dimension units
d0, per kernel and direction (attention_softmax_head_dim_fwd / _bwd, FlashAttention-2's;
cudnn_attention_softmax_head_dim_fwd / _bwd): a kernel at head dimension d runs at
(128 + d0) / 128 x d / (d + d0) of its rate at 128, so the rate ratio r = rate(128) /
rate(64) gives d0 = (r - 1) / (1/64 - r/128); the median over the sequences of every file.
The efficiencies are the rates of the runs given: where the
longest runs last long enough to settle at the GPU's power cap, `e` from them alone is the
sustained one (long_attention.py's 128 k run on an H100 does, ~4 s; its shorter runs do not).

--check: exit 1 unless every point is within 15 % of the model and the fitted halves (and
softmax units, where the files have head dimension 64) are within a factor of 1.5 of the
built-in defaults (280 / 700 keys; 22 / 22 and 70 / 37 units): the defaults' provenance, re-derived from
the files.
"""
import argparse
import csv
import json
import statistics
import sys

PEAK = 989.0  # H100 SXM dense BF16, TFLOP/s
DEFAULT_HALF = {'fwd': 280.0, 'bwd': 700.0}
DEFAULT_SOFTMAX = {('flash', 'fwd'): 22.0, ('flash', 'bwd'): 22.0, ('cudnn', 'fwd'): 70.0, ('cudnn', 'bwd'): 37.0}
FIELDS = {'flash': 'attention_efficiency', 'cudnn': 'cudnn_attention_efficiency'}


def read(path, peak):
    """Points (backend, direction, sequence, share of peak)."""
    out = []
    with open(path) as f:
        text = f.read()
    if path.endswith('.csv'):
        for r in csv.DictReader(text.splitlines()):
            if r['causal'] != 'True' or int(r['head_dim']) != 128:
                continue
            out.append(('flash', r['pass'], int(r['seq']), float(r['tflops']) / peak))
        return out
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    # A --head-dims sweep (some head dimension other than 128) feeds the softmax fit only;
    # a plain run's lines name head dimension 128 (or, written before it did, none).
    if any(r.get('head_dim') not in (None, 128) for r in rows if not r.get('mla')):
        return out
    for r in rows:
        if 'error' in r or r.get('mla'):
            continue
        for d in ('fwd', 'bwd'):
            out.append((r['backend'], d, int(r['s']), float(r['%s_share_of_peak' % d])))
    return out


def softmax_units(paths):
    """Per (kernel, direction), d0 from each file's head-dimension-64 and -128 rates at a sequence."""
    out = {}
    for path in paths:
        rates = {}
        with open(path) as f:
            if path.endswith('.csv'):
                for r in csv.DictReader(f):
                    if r['causal'] == 'True' and r['head_dim'] in ('64', '128'):
                        rates[('flash', r['pass'], int(r['seq']), int(r['head_dim']))] = float(r['tflops'])
            else:
                for line in f:
                    r = json.loads(line) if line.strip() else {}
                    if r.get('head_dim') in (64, 128) and 'error' not in r:
                        for d in ('fwd', 'bwd'):
                            rates[(r['backend'], d, int(r['s']), r['head_dim'])] = r['%s_share_of_peak' % d]
        for (kernel, direction, s, d), rate in rates.items():
            if d == 128 and s >= 2048 and (kernel, direction, s, 64) in rates:
                ratio = rate / rates[(kernel, direction, s, 64)]
                out.setdefault((kernel, direction), []).append((s, (ratio - 1) / (1 / 64 - ratio / 128)))
    return out


def best_e(points, half):
    """The efficiency minimising the squared relative error, and that error."""
    xs = [(s / 2) / (s / 2 + half) for s, _ in points]
    ys = [y for _, y in points]
    e = sum(x / y for x, y in zip(xs, ys)) / sum(x * x / (y * y) for x, y in zip(xs, ys))
    return e, sum((e * x / y - 1) ** 2 for x, y in zip(xs, ys))


def fit(points, direction):
    kernels = sorted({b for b, d, _, _ in points if d == direction})
    series = {k: [(s, y) for b, d, s, y in points if b == k and d == direction] for k in kernels}
    best = None
    for half in range(10, 3001, 2):
        err = sum(best_e(series[k], half)[1] for k in kernels)
        if best is None or err < best[0]:
            best = (err, half)
    half = float(best[1])
    return half, {k: best_e(series[k], half)[0] for k in kernels}, series


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('files', nargs='+')
    ap.add_argument('--peak', type=float, default=PEAK, help='16-bit dense peak, TFLOP/s (default %(default)s)')
    ap.add_argument('--check', action='store_true')
    a = ap.parse_args()
    points = [p for f in a.files for p in read(f, a.peak)]
    if not points:
        sys.exit('no causal head-dimension-128 points in %s' % ', '.join(a.files))
    calibration, bad = {}, []
    for direction in ('fwd', 'bwd'):
        half, effs, series = fit(points, direction)
        calibration['attention_half_keys_%s' % direction] = half
        for k, e in effs.items():
            calibration['%s_%s' % (FIELDS[k], direction)] = round(e, 3)
            print('%s %s: long-sequence efficiency %.3f, half at %d keys' % (k, direction, e, half))
            for s, y in sorted(series[k]):
                model = e * (s / 2) / (s / 2 + half)
                print('  %7d tokens  measured %.3f  model %.3f  %+5.1f %%' % (s, y, model, 100 * (model / y - 1)))
                if abs(model / y - 1) > 0.15:
                    bad.append('%s %s at %d tokens: %+.1f %%' % (k, direction, s, 100 * (model / y - 1)))
        ratio = half / DEFAULT_HALF[direction]
        if not 1 / 1.5 <= ratio <= 1.5:
            bad.append('%s half %d keys against the default %d' % (direction, half, DEFAULT_HALF[direction]))
    for (kernel, direction), per_seq in sorted(softmax_units(a.files).items()):
        d0 = statistics.median(v for _, v in per_seq)
        name = ('cudnn_' if kernel == 'cudnn' else '') + 'attention_softmax_head_dim_' + direction
        calibration[name] = round(d0, 1)
        print('%s softmax %s: %.1f head-dimension units (median of %s)' % (
            kernel, direction, d0, ', '.join('%d tokens %.1f' % sv for sv in sorted(per_seq))))
        if not 1 / 1.5 <= d0 / DEFAULT_SOFTMAX[(kernel, direction)] <= 1.5:
            bad.append('%s %s softmax %.1f units against the default %d' % (
                kernel, direction, d0, DEFAULT_SOFTMAX[(kernel, direction)]))
    print(json.dumps({'calibration': calibration}))
    if a.check and bad:
        print('check failed: ' + '; '.join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
