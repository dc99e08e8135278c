#!/usr/bin/env python3
"""Megatron-Bridge's shipped performance configurations through the real CLI: stated,
accepted, and predicted to fit?

usage: bridge_configs_check.py --cli PATH/TO/paraplan --server HOST:PORT [--file ROWS.jsonl]
                               [--framework NAME] [--check] [-v]

The rows (bench/data/megatron_bridge_perf_configs.jsonl, written by
tests/launchers/extract_bridge_perf_configs.py from the workload base configs of
Megatron-Bridge 406d3be775; bench/data/megatron_bridge_perf_recipes.jsonl, written by
tests/launchers/extract_bridge_perf_recipes.py from its perf_recipes at 067f987) are the
configurations NVIDIA ran for Megatron-Bridge's performance tables: Llama 3 / 3.1,
DeepSeek-V3, Kimi-K2, Qwen3 MoE and GPT-OSS on H100, B200, B300, GB200 and GB300. They carry no measured time. Each becomes
an EstimateRequest on the preset (`paraplan models`) with the run's sequence length and
precision, under FRAMEWORK_NEMO (whose defaults are these recipes': 16-bit gradient
reduction, the fused cross-entropy; --framework FRAMEWORK_MEGATRON or '' to compare),
sent in one `paraplan estimate --batch`. Prints one line per row that is rejected or
predicted not to fit (every row with -v), then the counts.

Full-iteration CUDA graphs, graphs of every whole layer (scope `full`), and a MoE
model's graphs of attn, moe_router and moe_preprocess (what `cuda_graphs` means for a
dropless MoE layer: docs/model.md) are sent as `cuda_graphs`. Two launch settings the API
has no field for are sent as their nearest statement: graphs of moe_router and
moe_preprocess without attn as none, and full recompute of some layers
(recompute_num_layers) as full recompute of every layer.

Where a row states Transformer Engine's TP overlap (the perf recipes at TP > 1), it is also
sent without it, and the script counts the rows whose framework default (the estimate's
echoed tp_comm_overlap) is what the recipe set: FRAMEWORK_NEMO's rule (dense models at
TP > 1 but NVFP4, no MoE model; docs/model.md) agrees with all 50 today.

bench/data/mlperf_training_configs.jsonl (tests/launchers/extract_mlperf_configs.py) holds
MLPerf Training's GPT-3 175B and Llama 3.1 405B runs (v3.1-v5.1) in the same form; their
implementation's yaml has its own defaults, so they are checked with --no-default-check.

--check: exit 1 unless every row is accepted and predicted to fit, KNOWN_NOT_FIT and
KNOWN_UNRUNNABLE aside, and the framework default agrees with every row that states it.
"""
import argparse, collections, copy, json, os, subprocess, sys

from paraplan_batch import estimate_batch

HERE = os.path.dirname(os.path.abspath(__file__))
# Llama 3.1 405B on 128 B300s at TP 2, PP 8, v 8 with 8 micro-batches a replica (global
# batch 64): Megatron-Core's interleaved schedule then runs every forward before any
# backward (schedules.py get_pp_rank_microbatches: warm-up (8 - 1) x 2 + 7 x 8 = 70 >= 64
# chunks), so the first rank holds its 16 layers' activations for all 8 micro-batches,
# ~2.1 GB each (8,192 tokens, hidden 16,384 over TP 2): ~270 GB beside 128 GiB of
# weights, gradients and optimizer shards, on a 270 GiB GPU. Reported, not counted.
KNOWN_NOT_FIT = {'LLAMA31_405B_PRETRAIN_CONFIG_B300_%s_V1' % p for p in ('BF16', 'FP8_CS', 'FP8_MX')}
# Llama 3.1 405B on 128 B200 / GB200 at TP 4, PP 16, v 8, DP 2 without recompute (perf_recipes
# at 067f987; their docstrings say TP 4, PP 8, CP 2, the layout the V1 tables ran): 7
# layers on each end stage and one a chunk, so Megatron-Core's warm-up keeps 2 x 14 +
# 7 x 16 + 1 = 141 one-layer chunks on the second rank, ~1.07 GB each (8,192 tokens,
# hidden 16,384 over TP 4), ~150 GB beside ~64 GB of weights, gradients and optimizer
# shards over DP 2: 180.6-203.9 GiB. The same layout over DP 4 on 256 GB200s (the V2
# table's run) fits, 185.9 of 186 GiB.
KNOWN_NOT_FIT |= {'llama31_405b_pretrain_128gpu_b200_bf16_config', 'llama31_405b_pretrain_128gpu_b200_fp8cs_config',
                  'llama31_405b_pretrain_128gpu_gb200_bf16_config'}
# Recipes that cannot start on the GPUs their names give (perf_recipes at 067f987):
# Megatron-Core's initialize_model_parallel needs expert-TP x EP x PP to divide the world
# size, and these reuse a larger run's layout -- DeepSeek-V3's 1,024-GPU TP 2, PP 8, EP 64
# on 64 H100s ("1024-GPU layout with legacy-scaled GBS"), Qwen3-235B's EP 32 with PP 4 or
# 8 on 64 GB200 / GB300s. Their rejection is the right answer.
KNOWN_UNRUNNABLE = {'deepseek_v3_pretrain_64gpu_h100_%s_config' % p for p in ('bf16', 'fp8cs')} | {
    'qwen3_235b_a22b_pretrain_64gpu_%s_%s_config' % (g, p)
    for g, ps in (('gb200', ('fp8cs', 'fp8mx', 'nvfp4')), ('gb300', ('bf16', 'fp8cs', 'fp8mx', 'nvfp4')))
    for p in ps}


def request_of(row, presets, framework='FRAMEWORK_NEMO'):
    w = copy.deepcopy(presets[row['model']])
    w['transformer']['seq_length'] = row['seq_length']
    w['precision'] = row['precision']
    if 'quant_recipe' in row:
        w['quant_recipe'] = row['quant_recipe']
    if 'optimizer_moments' in row:  # Megatron-Core's precision-aware optimizer
        w['optimizer_moments'] = row['optimizer_moments']
    if 'optimizer' in row:  # Muon (Kimi-K2's recipe)
        w['optimizer'] = row['optimizer']
    c = dict(row['config'])
    scope = c.pop('cuda_graph_scope', None)
    if scope is not None and ('full_iteration' in scope or 'full' in scope or
                              {'attn', 'moe_router', 'moe_preprocess'} <= set(scope)):
        c['cuda_graphs'] = True
    c.pop('recompute_layers', None)
    r = {'profile': row['profile'], 'workload': w, 'config': c}
    if framework:
        r['framework'] = framework
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', required=True)
    ap.add_argument('--server', default='127.0.0.1:50051')
    ap.add_argument('--file', default=os.path.join(HERE, 'data', 'megatron_bridge_perf_configs.jsonl'))
    ap.add_argument('--check', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    ap.add_argument('--framework', default='FRAMEWORK_NEMO', help="'' states none (the API's default)")
    ap.add_argument('--no-default-check', action='store_true',
                    help="rows launched with their own defaults (MLPerf's NeMo yaml leaves TP overlap off): "
                         "do not compare the framework's default TP overlap with theirs")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.file) if l.strip()]
    models = subprocess.run([a.cli, '--server', a.server, '-o', 'json', 'models'], capture_output=True, text=True)
    if models.returncode != 0:
        print('paraplan models: exit %d\n%s' % (models.returncode, models.stderr[-500:]))
        return 1
    presets = {m['name']: m for m in json.loads(models.stdout)['models']}
    try:
        outs = estimate_batch(a.cli, a.server, [request_of(r, presets, a.framework) for r in rows])
    except RuntimeError as err:
        print(err)
        return 1
    counts = collections.Counter()
    for r, o in zip(rows, outs):
        name = r['id'].replace('_PRETRAIN_CONFIG', '')
        if 'error' in o:
            unrunnable = r['id'] in KNOWN_UNRUNNABLE
            counts['unrunnable' if unrunnable else 'rejected'] += 1
            print('%-46s rejected%s: %s' % (name, ' (cannot run as named)' if unrunnable else '',
                                            o['error'].get('message', o['error'])[:150]))
            continue
        e = o.get('estimate', o)
        mem = e.get('memory', {})
        gib = (mem.get('total_bytes') or 0) / 2**30
        fits = mem.get('fits', True)
        known = not fits and r['id'] in KNOWN_NOT_FIT
        counts['fits' if fits else 'known' if known else 'does not fit'] += 1
        if a.verbose or not fits:
            print('%-46s %7.1f GiB %s %8.2f s%s' % (name, gib, 'fits        ' if fits else 'does not fit',
                                                     e.get('iteration_time_s', 0), ' (known)' if known else ''))
    # Where a row states Transformer Engine's TP overlap (the recipes at TP > 1), what NeMo's
    # default resolves to without it (the estimate's echoed config).
    stated = [(r, o) for r, o in zip(rows, outs) if 'tp_comm_overlap' in r['config'] and 'error' not in o]
    disagree = 0
    if stated and a.framework and not a.no_default_check:
        bare = []
        for r, _ in stated:
            q = request_of(r, presets, a.framework)
            q['config'].pop('tp_comm_overlap')
            bare.append(q)
        resolved = estimate_batch(a.cli, a.server, bare)
        agree = sum(1 for (r, _), x in zip(stated, resolved)
                    if 'error' not in x and bool(x['config'].get('tp_comm_overlap')) == r['config']['tp_comm_overlap'])
        disagree = len(stated) - agree
        print('%s\'s default TP overlap agrees with %d of the %d configurations that state it' % (
            a.framework, agree, len(stated)))
    print('%d configurations: %d accepted and predicted to fit, %d predicted not to fit (%d of them known), '
          '%d rejected (%d of them cannot run as named)' % (
              len(rows), counts['fits'], counts['does not fit'] + counts['known'], counts['known'],
              counts['rejected'] + counts['unrunnable'], counts['unrunnable']))
    return 1 if a.check and (counts['does not fit'] or counts['rejected'] or disagree) else 0


if __name__ == '__main__':
    sys.exit(main())
