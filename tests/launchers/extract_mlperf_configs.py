#!/usr/bin/env python3
"""MLPerf Training's large-language-model submissions, as their config scripts launch them.

usage: extract_mlperf_configs.py RESULTS_GIT_DIR... > bench/data/mlperf_training_configs.jsonl

Each RESULTS_GIT_DIR is a bare clone of one round of mlcommons/training_results_vX.Y
(v3.1, v4.0, v4.1, v5.0, v5.1). For every submitter's GPT-3 175B (`benchmarks/gpt3`) and
Llama 3.1 405B (`benchmarks/llama31_405b`) implementation built on NVIDIA's NeMo
reference, it sources each `config_<SYSTEM>_<N>x<G>x....sh` in a clean bash (with its
sibling config_common*.sh, as run.sub does; one a submission left out is taken from
another folder of the same benchmark and round) and turns the variables it exports into one
JSON line per distinct configuration on a system paraplan has a built-in profile for
(the folders that repeat it are listed in `also`). Only the
configurations go in, never a result: each ran in a published round, so each must be
stated, accepted and predicted to fit (issue 22's bar), which
bench/bridge_configs_check.py --file asks of the real server.

What each row carries, and where NeMo's config (the implementation's conf/custom.yaml or
megatron_gpt_config_custom.yaml) takes it from:
- GPUs: DGXNNODES x DGXNGPU (default 8); TP, PP, CP (CONTEXT_PARALLEL, default 4 in the
  405B yaml, none in GPT-3's), v (INTERLEAVED_PIPELINE, default 12, 0 = none);
  global batch = MINIBS x DP, DP = GPUs / (TP x PP x CP); MICRO_BATCH_SIZE;
- sequence parallelism (SEQ_PARALLEL, default True), the distributed optimizer
  (USE_DIST_OPTIMIZER: ZeRO 1), gradient-reduce and parameter-gather overlap
  (OVERLAP_GRAD_REDUCE / OVERLAP_PARAM_GATHER, default True);
- precision: FP4 (FP4_RECIPE nvfp4) or FP8 with FP8_RECIPE (tensorwise = current
  scaling, mxfp8, blockwise; default delayed); FP8 weights without a 16-bit copy
  (FP8_PARAMS, FP8_PARAM or FP8_PARAM_GATHER; stated off where none is set, the yaml's
  default, since NeMo's own recipes default it on);
- recompute (ACT_CKPT_GRANULARITY: selective, full; none when unset);
- Transformer Engine's TP overlap (TP_COMM_OVERLAP, default False);
- CUDA graphs: per-layer (LAYER_CUDA_GRAPH, MCORE_CUDA_GRAPH) or the whole iteration
  (FULL_CUDA_GRAPH), sent as cuda_graphs;
- Megatron's account_for_embedding / loss_in_pipeline_split (ASYM_PP_EMBED,
  ASYM_PP_LOSS) as the decoder layers on the first and last pipeline rank.
What the API has no field for is listed in the row's `unstated` (NVFP4 with its random
Hadamard transform or stochastic rounding turned off, FP8 attention).
"""
import json, os, re, subprocess, sys, tarfile, tempfile, io

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract_bridge_perf_configs import apply_layout  # noqa: E402

MODELS = {  # benchmark folder -> (preset, sequence length, decoder layers, the yaml's CP default)
    'gpt3': ('gpt3-175b', 2048, 96, 1),
    'llama31_405b': ('llama3.1-405b', 8192, 126, 4),
}
SYSTEMS = {  # the config name's system -> (built-in profile, GPUs a node)
    'DGXH100': ('dgx-h100-80gb', 8), 'SMCH100': ('dgx-h100-80gb', 8),
    'DGXH200': ('dgx-h200-141gb', 8), 'DGXB200': ('dgx-b200-180gb', 8),
    'GB200': ('gb200-nvl72', 4), 'GB300': ('gb300-nvl72', 4),
}
RECIPES = {'tensorwise': 'QUANT_RECIPE_CURRENT_SCALING', 'delayed': 'QUANT_RECIPE_DELAYED_SCALING',
           'mxfp8': 'QUANT_RECIPE_MXFP8', 'blockwise': 'QUANT_RECIPE_BLOCKWISE'}
NAME = re.compile(r'^config_(%s)_(\d+)x(\d+)x.*\.sh$' % '|'.join(SYSTEMS))
VARS = ('DGXNNODES DGXNGPU MINIBS TENSOR_MODEL_PARALLEL PIPELINE_MODEL_PARALLEL CONTEXT_PARALLEL '
        'INTERLEAVED_PIPELINE MICRO_BATCH_SIZE SEQ_PARALLEL USE_DIST_OPTIMIZER OVERLAP_GRAD_REDUCE '
        'OVERLAP_PARAM_GATHER FP8 FP4 FP8_RECIPE FP4_RECIPE FP8_PARAMS FP8_PARAM FP8_PARAM_GATHER '
        'ACT_CKPT_GRANULARITY ACT_CKPT_NUM_LAYERS TP_COMM_OVERLAP LAYER_CUDA_GRAPH MCORE_CUDA_GRAPH '
        'FULL_CUDA_GRAPH ASYM_PP_EMBED ASYM_PP_LOSS MODEL_SIZE FP8_DPA NVTE_NVFP4_DISABLE_RHT '
        'NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING').split()


def truthy(value, default=False):
    if value is None or value == '':
        return default
    return value.strip().lower() in ('1', 'true', 'yes', 'on')


def sourced(folder, script):
    """The variables `script` leaves set when sourced from `folder` in a clean shell."""
    probe = 'source %s >/dev/null 2>&1; for v in %s; do printf "%%s=%%s\\0" "$v" "${!v-}"; done' % (
        script, ' '.join(VARS))
    out = subprocess.run(['env', '-i', 'PATH=/usr/bin:/bin', 'bash', '-c', probe], cwd=folder,
                         capture_output=True, text=True, timeout=30).stdout
    return {k: v for k, v in (item.split('=', 1) for item in out.split('\0') if '=' in item) if v != ''}


def row_of(env, bench, system, source):
    preset, seq, layers, cp_default = MODELS[bench]
    if bench == 'llama31_405b' and env.get('MODEL_SIZE', '405b') != '405b':
        return None  # the 8B configurations some submitters keep in the same folder
    profile, per_node = SYSTEMS[system]
    gpus = int(env['DGXNNODES']) * int(env.get('DGXNGPU', per_node))
    tp, pp = int(env['TENSOR_MODEL_PARALLEL']), int(env['PIPELINE_MODEL_PARALLEL'])
    cp = int(env.get('CONTEXT_PARALLEL', cp_default))
    v = int(env.get('INTERLEAVED_PIPELINE', 12)) if pp > 1 else 1
    v = max(v, 1)
    dp = gpus // (tp * pp * cp)
    c = {'tensor_parallel': tp, 'pipeline_parallel': pp, 'data_parallel': dp, 'context_parallel': cp,
         'sequence_parallel': tp > 1 and truthy(env.get('SEQ_PARALLEL'), True),
         'micro_batch_size': int(env.get('MICRO_BATCH_SIZE', 1)),
         'global_batch_size': int(env['MINIBS']) * dp, 'flash_attention': True,
         'zero_stage': 1 if truthy(env.get('USE_DIST_OPTIMIZER')) else 0,
         'overlap_grad_reduce': truthy(env.get('OVERLAP_GRAD_REDUCE'), True),
         'overlap_param_gather': truthy(env.get('OVERLAP_PARAM_GATHER'), True)}
    if v > 1:
        c['virtual_pipeline_stages'] = v
    granularity = env.get('ACT_CKPT_GRANULARITY', '').lower()
    c['recompute'] = {'selective': 'RECOMPUTE_SELECTIVE', 'full': 'RECOMPUTE_FULL'}.get(granularity, 'RECOMPUTE_NONE')
    c['tp_comm_overlap'] = tp > 1 and truthy(env.get('TP_COMM_OVERLAP'))
    if any(truthy(env.get(k)) for k in ('LAYER_CUDA_GRAPH', 'MCORE_CUDA_GRAPH', 'FULL_CUDA_GRAPH')):
        c['cuda_graphs'] = True
    unstated = []
    if truthy(env.get('FP4')):
        precision, recipe = 'PRECISION_FP4', 'QUANT_RECIPE_NVFP4'
        for knob, what in (('NVTE_NVFP4_DISABLE_RHT', 'random Hadamard transform off'),
                           ('NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING', 'stochastic rounding off')):
            if truthy(env.get(knob)):
                unstated.append(what)
    elif truthy(env.get('FP8')):
        precision, recipe = 'PRECISION_FP8', RECIPES[env.get('FP8_RECIPE', 'delayed').lower()]
    else:
        precision, recipe = 'PRECISION_BF16', None
    if precision != 'PRECISION_BF16':  # stated either way: NeMo's perf recipes default it on
        c['fp8_param_gather'] = any(truthy(env.get(k)) for k in ('FP8_PARAMS', 'FP8_PARAM', 'FP8_PARAM_GATHER'))
    if truthy(env.get('FP8_DPA')):
        unstated.append('FP8 attention')
    embed, loss = truthy(env.get('ASYM_PP_EMBED')), truthy(env.get('ASYM_PP_LOSS'))
    if embed and loss:
        apply_layout(c, None, pp, v, layers, 'account')
    elif embed or loss:
        unstated.append('embedding or loss alone in the pipeline split')
    row = {'id': re.sub(r'/(benchmarks|implementations)/', '/', source.split('training_results_')[-1]).replace(' ', '/')[:-3],
           'model': preset, 'profile': profile, 'num_gpus': gpus,
           'seq_length': seq, 'precision': precision, 'config': c}
    if recipe:
        row['quant_recipe'] = recipe
    if unstated:
        row['unstated'] = unstated
    row['source'] = source
    return row


def missing_siblings(git_dir, commit, folder, scripts, files):
    """config_common*.sh the scripts source but the folder lacks (some submissions left
    them out): taken from another implementation of the same benchmark in the round, the
    same submitter's first. Returns {name: path in the repository}."""
    have = {os.path.basename(f) for f in files if os.path.dirname(f) == folder}
    wanted = set()
    for script in scripts:
        text = subprocess.check_output(['git', '-C', git_dir, 'show', '%s:%s/%s' % (commit, folder, script)], text=True)
        wanted |= set(re.findall(r'source \$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(config_common[\w]*\.sh)', text))
    submitter, bench = folder.split('/')[0], folder.split('/')[2]
    found = {}
    for name in sorted(wanted - have):
        donors = sorted((f.split('/')[0] != submitter, f) for f in files
                        if f.split('/')[2:3] == [bench] and os.path.basename(f) == name)
        if donors:
            found[name] = donors[0][1]
    return found


def rows_of(git_dir):
    commit = subprocess.check_output(['git', '-C', git_dir, 'rev-parse', 'HEAD'], text=True).strip()
    round_name = re.search(r'training_results_(v[\d.]+)', os.path.abspath(git_dir))
    round_name = round_name.group(1) if round_name else commit[:10]
    files = subprocess.check_output(['git', '-C', git_dir, 'ls-tree', '-r', '--name-only', commit],
                                    text=True).split('\n')
    folders = {}
    for f in files:
        parts = f.split('/')
        if len(parts) >= 4 and parts[1] == 'benchmarks' and parts[2] in MODELS and NAME.match(parts[-1]):
            folders.setdefault(os.path.dirname(f), []).append(parts[-1])
    rows = []
    for folder, scripts in sorted(folders.items()):
        bench = folder.split('/')[2]
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.check_output(['git', '-C', git_dir, 'archive', commit, folder],
                                              stderr=subprocess.DEVNULL)
            safe = {'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}  # PEP 706 where present
            tarfile.open(fileobj=io.BytesIO(archive)).extractall(tmp, **safe)
            for name, path in missing_siblings(git_dir, commit, folder, scripts, files).items():
                with open(os.path.join(tmp, folder, name), 'w') as out:
                    out.write(subprocess.check_output(['git', '-C', git_dir, 'show', '%s:%s' % (commit, path)], text=True))
            for script in sorted(scripts):
                env = sourced(os.path.join(tmp, folder), script)
                if 'MINIBS' not in env or 'DGXNNODES' not in env:
                    continue
                system = NAME.match(script).group(1)
                row = row_of(env, bench, system, 'mlcommons/training_results_%s %s/%s' % (round_name, folder, script))
                if row:
                    rows.append(row)
    return rows


def main():
    rows, seen = [], {}
    for row in (r for d in sys.argv[1:] for r in rows_of(d)):
        key = json.dumps({k: v for k, v in row.items() if k not in ('id', 'source')}, sort_keys=True)
        if key in seen:  # the same run configuration in another submitter's or round's folder
            seen[key].setdefault('also', []).append(row['source'])
            continue
        seen[key] = row
        rows.append(row)
    for row in rows:
        print(json.dumps(row))
    print('%d distinct configurations' % len(rows), file=sys.stderr)


if __name__ == '__main__':
    main()
