#!/usr/bin/env python3
"""The Qwen3-235B-A22B Megatron-Core runs of ../shared/data, stated through the real CLI.

usage: qwen3_moe_dev.py --cli PATH/TO/paraplan --server HOST:PORT [--file ROWS.jsonl] [--check] [--max-step-mape PCT]
                        [--max-step-error PCT] [--framework NAME]

Turns each row (megatron_moe_qwen3_235b.jsonl: the Megatron-MoE model zoo's Qwen3 table)
into an EstimateRequest as the run was launched: TP, PP, CP, folded EP and expert-TP,
virtual stages with the embedding and the loss counted as pipeline layers
(--account-for-embedding/loss-in-pipeline-split: first and last stage hold one layer
fewer), sequence parallelism, the distributed optimizer (ZeRO 1) or FSDP (ZeRO 3),
flash attention, the token dispatcher (DeepEP and HybridEP as MOE_DISPATCHER_DEEPEP) and
the 1F1B all-to-all overlap. Sends them in one `paraplan estimate --batch` and prints,
per row, predicted vs measured step time, the predicted memory and whether it fits. Where
the table gives only model TFLOP/s per GPU, the step time is derived from it with
Megatron-LM's own FLOP counter (training.py num_floating_point_operations: causal
attention counted half, which paraplan's model FLOPs count whole) and marked `~`; the
TFLOP/s columns are both in Megatron's convention.

The recompute modules are sent by Megatron's names (`norm, act` = layernorm, moe_act;
`layernorm moe` = layernorm, moe). Where the zoo's readme gives a row's own command
line (the GB200 and GB300 tables), what it sets beyond the table is sent too (LAUNCHED:
the all-to-all overlap, the recompute modules, the fine-grained activation offloading
of expert_fc1 and moe_act that the MXFP8 row's note calls "activation offloading
required", and the CUDA graphs of the three whose command lines run --cuda-graph-impl
transformer_engine --cuda-graph-scope attn moe_router moe_preprocess: `cuda_graphs`, which
for a dropless MoE model means just those modules, docs/model.md). MXFP8 is PRECISION_FP8
with QUANT_RECIPE_MXFP8. Not stated: dropless routing's real imbalance (sent
force-balanced).

--max-step-mape PCT: exit 1 when the five measured step times are further off than PCT
(ctest runs it at 12: 6.8 % today, so that a change that loses accuracy on them shows).
--max-step-error PCT: exit 1 when any one of them is further off than PCT (issue 22's bar:
15; 14.97 % today).

--framework NAME: state every row under that framework (FRAMEWORK_NEMO: Megatron-Core's
fused cross-entropy, which the zoo's yaml runs, with NeMo's 16-bit gradients beside it);
by default none, which prices Megatron-LM's op-by-op loss (docs/accuracy.md).

--implied-imbalance: for each sequence length run both force-balanced and dropless, the
load_imbalance at which paraplan's dropless / force-balanced time ratio equals the
measured one (bisection through the CLI): the busiest GPU's routed tokens over the mean
that real routing cost those runs. Constant across sequence lengths if the model's MoE
share of the step is right (the attention's share grows with the sequence: the measured
ratio falls from 1.25 at 16 k to 1.09 at 128 k). With --max-spread FRACTION, exit 1 when
the implied values differ by more than that fraction of their mean.

--check: exit 1 unless every row is accepted and predicted to fit (the issue's bar:
none rejected, none that ran predicted not to fit); a row whose recompute settings the
table does not publish (sent as none) is reported but not counted.
"""
import argparse, json, os, statistics, sys

from paraplan_batch import estimate_batch

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILES = {'H100': 'dgx-h100-80gb', 'GB200': 'gb200-nvl72', 'GB300': 'gb300-nvl72'}
DISPATCHERS = {'DeepEP': 'MOE_DISPATCHER_DEEPEP', 'HybridEP': 'MOE_DISPATCHER_DEEPEP', 'A2A': 'MOE_DISPATCHER_ALLTOALL'}


# best_practice/qwen3/readme.md at the row's commit: the commands under the GB200 table
# ("Command (MXFP8)", "Command (MXFP8, 128k long context)") and the GB300 table.
LAUNCHED = {
    'moezoo_qwen3_235b_GB200_256gpu_BF16_seq4096_tp1pp8ep8': {'cuda_graphs': True},
    'moezoo_qwen3_235b_GB200_256gpu_MXFP8_seq4096_tp1pp4ep64': {
        'moe_a2a_overlap': True, 'recompute': 'RECOMPUTE_SELECTIVE', 'recompute_modules': ['moe_act', 'layernorm'],
        'offload_modules': ['expert_fc1', 'moe_act'], 'cuda_graphs': True},
    'moezoo_qwen3_235b_GB200_128gpu_MXFP8_seq131072_tp4pp4ep32': {
        'recompute': 'RECOMPUTE_SELECTIVE', 'recompute_modules': ['moe_act', 'layernorm']},
    'moezoo_qwen3_235b_GB300_64gpu_MXFP8_seq4096_tp1pp1ep64': {'moe_a2a_overlap': True, 'cuda_graphs': True},
}


def profile_of(gpu):
    for key, name in PROFILES.items():
        if key in gpu:
            return name
    raise SystemExit('no built-in profile for %r' % gpu)


def workload_of(r):
    m = r['model']
    moe = m['moe']
    precision = r['parallel']['precision']
    w = {
        'name': m['name'],
        'precision': 'PRECISION_FP8' if 'FP8' in precision else 'PRECISION_BF16',
        'transformer': {
            'num_layers': m['layers'], 'hidden_size': m['hidden'], 'num_attention_heads': m['heads'],
            'num_kv_heads': m['kv_heads'], 'head_dim': m['head_dim'], 'ffn_hidden_size': m['ffn'],
            'seq_length': m['seq_len'], 'vocab_size': m['vocab'], 'gated_mlp': m['gated_mlp'],
            'normalization': 'NORMALIZATION_RMSNORM', 'dropout': 0.0,
            # The zoo's model_configs/benchmarking/Qwen3-235B-A22B.yaml: --qk-layernorm true.
            'qk_layernorm': m['family'].startswith('Qwen3'),
            'moe': {'num_experts': moe['num_experts'], 'top_k': moe['top_k'],
                    'expert_ffn_hidden_size': moe['expert_ffn'], 'moe_layer_interval': 1},
        },
    }
    if precision == 'MXFP8':
        w['quant_recipe'] = 'QUANT_RECIPE_MXFP8'
    return w


def config_of(r):
    p = r['parallel']
    layers = r['model']['layers']
    pp, v = p['pp'], p.get('virtual_pipeline_stages') or 1
    c = {
        'tensor_parallel': p['tp'], 'pipeline_parallel': pp, 'data_parallel': p['dp'],
        'context_parallel': p['cp'], 'expert_parallel': p['ep'], 'expert_tensor_parallel': p['etp'],
        'sequence_parallel': p['tp'] > 1, 'micro_batch_size': p['micro_batch'],
        'global_batch_size': p['global_batch'], 'flash_attention': True,
        'zero_stage': 3 if p.get('fsdp') else 1, 'overlap_grad_reduce': True, 'overlap_param_gather': True,
        'moe_dispatcher': DISPATCHERS[p['dispatcher']], 'moe_a2a_overlap': bool(p.get('ep_a2a_overlap')),
    }
    if v > 1:
        c['virtual_pipeline_stages'] = v
    # The zoo's launcher adds --tp-comm-overlap to every BF16 run (sbatch_benchmarking.sh,
    # `if [[ ${PR} == "bf16" ]]`); Megatron ignores it at TP 1.
    if p['precision'] == 'BF16' and p['tp'] > 1:
        c['tp_comm_overlap'] = True
    rc = (p.get('recompute') or 'none').lower()
    c['recompute'] = {'full': 'RECOMPUTE_FULL', 'selective': 'RECOMPUTE_SELECTIVE'}.get(rc, 'RECOMPUTE_NONE')
    if rc == 'selective':
        # The table's words for Megatron's --recompute-modules: 'norm, act' and 'layernorm moe'.
        words = (p.get('recompute_detail') or '').replace(',', ' ').split()
        names = {'norm': 'layernorm', 'layernorm': 'layernorm', 'act': 'moe_act', 'moe_act': 'moe_act', 'moe': 'moe'}
        c['recompute_modules'] = [names[w] for w in words]
    launched = LAUNCHED.get(r['id'], {})
    if 'activation offloading' in r.get('notes', '') and 'offload_modules' not in launched:
        c['offload'] = {'activations': True}
    c.update(launched)
    # Embedding and loss each take a layer's slot of the split (the zoo's yaml).
    if pp > 1 and (layers + 2) % (pp * v) == 0:
        slots = (layers + 2) // (pp * v)
        c['first_pipeline_stage_layers'] = v * slots - 1
        c['last_pipeline_stage_layers'] = v * slots - 1
    return c


def megatron_flops(r):
    """One iteration's model FLOPs as Megatron-LM counts them (training.py,
    num_floating_point_operations, GQA and MoE without MTP): 3 passes x 2 per FMA over the
    linears, causal attention's L^2 core halved, the logits."""
    m, p = r['model'], r['parallel']
    h, s, d = m['hidden'], m['seq_len'], m['head_dim']
    q, kv = m['heads'] * d, m['kv_heads'] * d
    ffn_factor = 3 if m['gated_mlp'] else 2
    moe = m['moe']
    linear = 6 * (h * (q + 2 * kv) + q * h) + 6 * h * moe['expert_ffn'] * moe['top_k'] * ffn_factor
    core = 6 * q / 2 * 2 * s  # per token: QK^T and PV over s keys, causal halved
    per_token = m['layers'] * (linear + core) + 6 * h * m['vocab']
    return per_token * s * p['global_batch']


def request(r, imbalance=None):
    w = workload_of(r)
    if imbalance is not None:
        w['transformer']['moe']['load_imbalance'] = imbalance
    return {'profile': profile_of(r['hardware']['gpu']), 'workload': w, 'config': config_of(r)}


def implied_imbalance(a, rows):
    """Bisects load_imbalance in [1, 4] per dropless row until paraplan's dropless /
    force-balanced ratio matches the measured ratio of the published TFLOP/s."""
    pairs = []
    for d in rows:
        if 'dropless' not in d['id']:
            continue
        twin = [f for f in rows if f['id'] == d['id'].replace('dropless', 'forcedbalance')]
        if twin and d['measured'].get('tflops_per_gpu') and twin[0]['measured'].get('tflops_per_gpu'):
            pairs.append((twin[0], d, twin[0]['measured']['tflops_per_gpu'] / d['measured']['tflops_per_gpu']))
    if not pairs:
        print('no dropless row with a force-balanced twin')
        return 1
    try:
        base = [o['iteration_time_s'] for o in estimate_batch(a.cli, a.server, [request(f) for f, _, _ in pairs])]
        lo, hi = [1.0] * len(pairs), [4.0] * len(pairs)
        for _ in range(14):
            mid = [(l + h) / 2 for l, h in zip(lo, hi)]
            outs = estimate_batch(a.cli, a.server, [request(d, m) for (_, d, _), m in zip(pairs, mid)])
            for i, ((_, _, ratio), o) in enumerate(zip(pairs, outs)):
                if o['iteration_time_s'] / base[i] < ratio:
                    lo[i] = mid[i]
                else:
                    hi[i] = mid[i]
    except RuntimeError as err:
        print(err)
        return 1
    implied = [(l + h) / 2 for l, h in zip(lo, hi)]
    print('%-44s %16s %17s' % ('dropless run', 'measured ratio', 'load_imbalance'))
    for (_, d, ratio), imb in zip(pairs, implied):
        print('%-44s %16.3f %17.3f' % (d['id'].replace('moezoo_qwen3_235b_', ''), ratio, imb))
    mean = statistics.mean(implied)
    print('implied load_imbalance: mean %.3f, spread %.3f-%.3f over %d sequence lengths' %
          (mean, min(implied), max(implied), len(implied)))
    if a.max_spread is not None and (max(implied) - min(implied)) > a.max_spread * mean:
        print('spread %.1f%% of the mean is above --max-spread %g' % (100 * (max(implied) - min(implied)) / mean,
                                                                      a.max_spread))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', required=True)
    ap.add_argument('--server', default='127.0.0.1:50051')
    ap.add_argument('--file', default=os.path.join(HERE, '..', '..', 'shared', 'data', 'megatron_moe_qwen3_235b.jsonl'))
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--max-step-mape', type=float, default=None, metavar='PCT',
                    help='exit 1 when the measured step times are further off than PCT %% (MAPE)')
    ap.add_argument('--max-step-error', type=float, default=None, metavar='PCT',
                    help='exit 1 when any measured step time is further off than PCT %%')
    ap.add_argument('--framework', default=None, metavar='NAME',
                    help='state every row under this framework (e.g. FRAMEWORK_NEMO); default none')
    ap.add_argument('--implied-imbalance', action='store_true',
                    help='the load_imbalance each dropless run implies against its force-balanced twin')
    ap.add_argument('--max-spread', type=float, default=None, metavar='FRACTION',
                    help='with --implied-imbalance: exit 1 when the implied values spread wider')
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.file) if l.strip()]
    if a.implied_imbalance:
        return implied_imbalance(a, rows)
    try:
        outs = estimate_batch(a.cli, a.server, [dict(request(r), **({'framework': a.framework} if a.framework else {}))
                                                for r in rows])
    except RuntimeError as err:
        print(err)
        return 1
    failed, time_apes, derived_apes = 0, [], []
    print('%-58s %9s %9s %7s %9s %9s %7s %6s' % ('run', 'time', 'predicted', 'error', 'TFLOP/s', 'predicted',
                                                 'error', 'GiB'))
    for r, o in zip(rows, outs):
        name = r['id'].replace('moezoo_qwen3_235b_', '')[:58]
        if 'error' in o:
            failed += 1
            print('%-58s rejected: %s' % (name, o['error'].get('message', o['error'])[:100]))
            continue
        e = o.get('estimate', o)
        t, tf = e.get('iteration_time_s') or e.get('iterationTimeS'), e.get('model_tflops_per_gpu') or e.get('modelTflopsPerGpu')
        mem = e.get('memory', {})
        total = (mem.get('total_bytes') or mem.get('totalBytes') or 0) / 2**30
        fits = mem.get('fits', True)
        mt, mtf = r['measured'].get('iteration_time_s'), r['measured'].get('tflops_per_gpu')
        gpus = r['parallel']['num_gpus']
        derived = not mt and mtf
        if derived:
            mt = megatron_flops(r) / (mtf * 1e12 * gpus)
        tf = megatron_flops(r) / (t * 1e12 * gpus) if t else 0  # predicted, Megatron's FLOPs
        t_err = '%+6.1f%%' % (100 * (t / mt - 1)) if mt else '     -'
        tf_err = '%+6.1f%%' % (100 * (tf / mtf - 1)) if mtf and tf else '     -'
        if mt and not derived:
            time_apes.append(abs(t / mt - 1))
        elif derived and 'forcedbalance' in r['id']:
            derived_apes.append(abs(t / mt - 1))
        unknown = (not r['parallel'].get('recompute') and 'offloading' not in r.get('notes', '')
                   and 'recompute' not in LAUNCHED.get(r['id'], {}))
        if not fits and not unknown:
            failed += 1
        shown = ('~%.2f' if derived else '%.2f') % mt if mt else '-'
        print('%-58s %9s %9.2f %7s %9s %9.0f %7s %6.1f%s' % (name, shown, t, t_err,
                                                         '%.0f' % mtf if mtf else '-', tf or 0, tf_err, total,
                                                         '' if fits else ' does not fit' +
                                                         (' (recompute not published)' if unknown else '')))
    if time_apes:
        print('step time: MAPE %.1f%%, max %.1f%% over %d runs' % (100 * statistics.mean(time_apes),
                                                                  100 * max(time_apes), len(time_apes)))
    if derived_apes:
        print('step time derived from published TFLOP/s (force-balanced rows): MAPE %.1f%%, max %.1f%% over %d runs'
              % (100 * statistics.mean(derived_apes), 100 * max(derived_apes), len(derived_apes)))
    print('%d of %d rows rejected or predicted not to fit as published' % (failed, len(rows)))
    if a.max_step_mape is not None and time_apes and 100 * statistics.mean(time_apes) > a.max_step_mape:
        print('step time MAPE %.1f%% is above --max-step-mape %g%%' % (100 * statistics.mean(time_apes),
                                                                       a.max_step_mape))
        return 1
    if a.max_step_error is not None and time_apes and 100 * max(time_apes) > a.max_step_error:
        print('step time error %.1f%% is above --max-step-error %g%%' % (100 * max(time_apes), a.max_step_error))
        return 1
    return 1 if a.check and failed else 0


if __name__ == '__main__':
    sys.exit(main())
