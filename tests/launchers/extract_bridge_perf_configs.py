#!/usr/bin/env python3
"""Megatron-Bridge's shipped performance configurations, as the runs were launched.

usage: extract_bridge_perf_configs.py BRIDGE_GIT_DIR [COMMIT] > bench/data/megatron_bridge_perf_configs.jsonl

Reads scripts/performance/configs/*/*_workload_base_configs.py at COMMIT (default: the
newest ref) from a bare Megatron-Bridge clone and writes one JSON line per pretraining
configuration of a model paraplan has a preset for, on a GPU it has a built-in profile
for. Only the configurations go in, never a measured time: they are what NVIDIA ran for
its published performance tables, so each one ran and must be stated, accepted and
predicted to fit (issue 22's bar), which bench/bridge_configs_check.py asks of the real
server.

What each row carries, and where it comes from in that commit:
- the workload base config's fields (WorkloadBaseConfig in scripts/performance/utils/utils.py);
- what scripts/performance/utils/overrides.py's set_workload_base_configs makes of them:
  recompute_num_layers -> full recompute of that many layers (method "block"),
  recompute_modules -> selective recompute of those modules, neither -> no recompute;
  cpu_offloading_num_layers -> activations only (cpu_offloading_weights = False);
  use_megatron_fsdp -> Megatron-FSDP optim_grads_params (ZeRO 3), else the distributed
  optimizer; moe_flex_dispatcher_backend (deepep, hybridep) -> the flex dispatcher, else
  all-to-all;
- the model family's script (scripts/performance/configs/<family>/*_llm_pretrain.py):
  sequence length 8,192 for Llama 3 and 3.1, 4,096 for the rest;
- the precision (utils/precision.py, training/mixed_precision.py): fp8_cs is tensorwise
  current scaling with FP8 parameter gather and no BF16 first and last layers, fp8_mx
  MXFP8 with FP8 parameter gather, fp8_sc blockwise (subchannel) without, nvfp4 NVFP4
  with its FP4 parameter gather (sent as fp8_param_gather);
- the pipeline layout: the config's pp_layout string, the recipe's layout table for
  DeepSeek-V3 and Kimi-K2 (recipes/deepseek/deepseek_v3.py, recipes/kimi/kimi_k2.py:
  embedding on the first stage, MTP and loss on the last), or Megatron's
  account_for_embedding/loss_in_pipeline_split for Qwen3-235B and Llama 3.1 405B
  (recipes/qwen/qwen3_moe.py, recipes/llama/llama3.py) -- as the decoder layers the first
  and the last pipeline rank hold over all their virtual stages;
- the optimizer's moments from the family's recipe (RECIPES): BF16 where every
  cfg.optimizer.exp_avg(_sq)_dtype it sets is torch.bfloat16 beside
  use_precision_aware_optimizer = True (DeepSeek-V3's), except under Megatron-FSDP, where
  overrides.py's _set_megatron_fsdp_overrides turns the precision-aware optimizer off;
- the optimizer: Muon where the recipe's pretraining config defaults to it
  (kimi_k2_pretrain_config(optimizer_type="muon"): distributed Muon, whose DDP config keeps
  overlap_param_gather off), else Adam.
"""
import dataclasses, json, re, subprocess, sys, types
from dataclasses import dataclass
from typing import List, Optional

FAMILIES = {  # config-name prefix -> (preset, sequence length, layers, layout rule)
    'LLAMA3_8B': ('llama3-8b', 8192, 32, None),
    'LLAMA3_70B': ('llama3-70b', 8192, 80, None),
    'LLAMA31_405B': ('llama3.1-405b', 8192, 126, 'account'),
    'DEEPSEEK_V3': ('deepseek-v3', 4096, 61, 'deepseek'),
    'KIMI_K2': ('kimi-k2', 4096, 61, 'kimi'),
    'QWEN3_235B_A22B': ('qwen3-235b-a22b', 4096, 94, 'account'),
    'QWEN3_30B_A3B': ('qwen3-30b-a3b', 4096, 48, None),
    'GPT_OSS_120B': ('gpt-oss-120b', 4096, 36, None),
}
RECIPES = {  # config-name prefix -> the recipe module its *_llm_pretrain.py builds on
    'LLAMA3_8B': 'src/megatron/bridge/recipes/llama/llama3.py',
    'LLAMA3_70B': 'src/megatron/bridge/recipes/llama/llama3.py',
    'LLAMA31_405B': 'src/megatron/bridge/recipes/llama/llama3.py',
    'DEEPSEEK_V3': 'src/megatron/bridge/recipes/deepseek/deepseek_v3.py',
    'KIMI_K2': 'src/megatron/bridge/recipes/kimi/kimi_k2.py',
    'QWEN3_235B_A22B': 'src/megatron/bridge/recipes/qwen/qwen3_moe.py',
    'QWEN3_30B_A3B': 'src/megatron/bridge/recipes/qwen/qwen3_moe.py',
    'GPT_OSS_120B': 'src/megatron/bridge/recipes/gpt_oss/gpt_oss.py',
}
PROFILES = {'H100': 'dgx-h100-80gb', 'B200': 'dgx-b200-180gb', 'B300': 'dgx-b300-288gb',
            'GB200': 'gb200-nvl72', 'GB300': 'gb300-nvl72'}
PRECISIONS = {  # dtype token -> (precision, quant recipe, fp8 parameter gather)
    'BF16': ('PRECISION_BF16', None, False),
    'FP8_CS': ('PRECISION_FP8', 'QUANT_RECIPE_CURRENT_SCALING', True),
    'FP8_MX': ('PRECISION_FP8', 'QUANT_RECIPE_MXFP8', True),
    'FP8_SC': ('PRECISION_FP8', 'QUANT_RECIPE_BLOCKWISE', False),
    'NVFP4': ('PRECISION_FP4', 'QUANT_RECIPE_NVFP4', True),  # fp4_param_gather
}
# recipes/deepseek/deepseek_v3.py set_deepseek_v3_pipeline_model_parallel_layout and
# recipes/kimi/kimi_k2.py _get_kimi_k2_pipeline_layout, as layout strings (m = MTP).
RECIPE_LAYOUTS = {
    (4, 1): 'Et*16|t*16|t*16|t*13{last}',
    (8, 1): 'Et*8|(t*8|)*6t*5{last}', (4, 2): 'Et*8|(t*8|)*6t*5{last}',
    (16, 1): 'Et*4|(t*4|)*14t{last}', (8, 2): 'Et*4|(t*4|)*14t{last}', (4, 4): 'Et*4|(t*4|)*14t{last}',
    (2, 8): 'Et*4|(t*4|)*14t{last}',
}


@dataclass(frozen=True)
class WorkloadBaseConfig:  # scripts/performance/utils/utils.py
    num_gpus: int = 1
    tensor_model_parallel_size: int = 1
    pipeline_model_parallel_size: int = 1
    context_parallel_size: int = 1
    virtual_pipeline_model_parallel_size: Optional[int] = None
    expert_model_parallel_size: int = 1
    expert_tensor_parallel_size: Optional[int] = None
    global_batch_size: int = 1
    micro_batch_size: int = 1
    use_megatron_fsdp: Optional[bool] = None
    nccl_ub: Optional[bool] = None
    cuda_graph_impl: Optional[str] = None
    cuda_graph_scope: Optional[object] = None
    cpu_offloading_num_layers: Optional[int] = None
    recompute_num_layers: Optional[int] = None
    recompute_modules: Optional[List[str]] = None
    moe_flex_dispatcher_backend: Optional[str] = None
    moe_a2a_overlap: Optional[bool] = False
    peft: Optional[str] = None
    pp_layout: Optional[str] = None
    te_precision_config_file: Optional[str] = None


def expand_layout(text):
    """Megatron's pipeline_model_parallel_layout string (E embedding, t decoder layer,
    m MTP, L loss, | between stages, X*n and (...)*n repeats) -> one string per stage."""
    while '(' in text:
        text = re.sub(r'\(([^()]*)\)\*(\d+)', lambda g: g.group(1) * int(g.group(2)), text)
    text = re.sub(r'([EtmL])\*(\d+)', lambda g: g.group(1) * int(g.group(2)), text)
    return text.split('|')


def end_stage_layers(layout, pp, v):
    """Decoder layers of the first and the last pipeline rank over their virtual stages."""
    stages = expand_layout(layout)
    if len(stages) != pp * v:
        raise ValueError('layout %r has %d stages, not %d x %d' % (layout, len(stages), pp, v))
    per_rank = [sum(s.count('t') for s in stages[r::pp]) for r in range(pp)]
    return per_rank[0], per_rank[-1]


def apply_layout(c, layout, pp, v, layers, layout_rule):
    """The first and last stages' decoder layers into `c`: from the layout string (the
    recipe's default table for DeepSeek-V3 and Kimi-K2 when none is given), or from
    Megatron's embedding / loss accounting. Returns the layout used, if any."""
    if pp > 1 and not layout and layout_rule in ('deepseek', 'kimi') and (pp, v) in RECIPE_LAYOUTS:
        layout = RECIPE_LAYOUTS[(pp, v)].format(last='mL' if layout_rule == 'deepseek' else 'L')
    if pp > 1 and layout:
        c['first_pipeline_stage_layers'], c['last_pipeline_stage_layers'] = end_stage_layers(layout, pp, v)
    elif pp > 1 and layout_rule == 'account' and (layers + 2) % (pp * v) == 0:
        slots = (layers + 2) // (pp * v)
        c['first_pipeline_stage_layers'] = c['last_pipeline_stage_layers'] = v * slots - 1
    return layout


def recipe_moments(text):
    """'PRECISION_BF16' where the recipe turns the precision-aware optimizer on and every
    moment dtype it sets is bfloat16; None otherwise (fp32 moments)."""
    dtypes = re.findall(r'cfg\.optimizer\.exp_avg(?:_sq)?_dtype\s*=\s*torch\.(\w+)', text)
    aware = re.search(r'use_precision_aware_optimizer\s*=\s*True', text)
    return 'PRECISION_BF16' if aware and dtypes and set(dtypes) == {'bfloat16'} else None


def recipe_optimizer(text):
    """'OPTIMIZER_MUON' where the recipe's pretraining config defaults to Muon."""
    return 'OPTIMIZER_MUON' if re.search(r'optimizer_type:\s*str\s*=\s*"muon"', text) else None


def config_of(name, b, family, dtype, moments=None, optimizer=None):
    preset, seq, layers, layout_rule = FAMILIES[family]
    precision, recipe, fp8_gather = PRECISIONS[dtype]
    pp, v = b.pipeline_model_parallel_size, b.virtual_pipeline_model_parallel_size or 1
    tp, cp, ep = b.tensor_model_parallel_size, b.context_parallel_size, b.expert_model_parallel_size
    dp = b.num_gpus // (tp * pp * cp)
    c = {'tensor_parallel': tp, 'pipeline_parallel': pp, 'data_parallel': dp, 'context_parallel': cp,
         'expert_parallel': ep, 'sequence_parallel': tp > 1, 'micro_batch_size': b.micro_batch_size,
         'global_batch_size': b.global_batch_size, 'flash_attention': True,
         'zero_stage': 3 if b.use_megatron_fsdp else 1, 'overlap_grad_reduce': True, 'overlap_param_gather': True}
    if ep > 1:
        c['expert_tensor_parallel'] = b.expert_tensor_parallel_size or tp
        c['moe_dispatcher'] = 'MOE_DISPATCHER_DEEPEP' if b.moe_flex_dispatcher_backend else 'MOE_DISPATCHER_ALLTOALL'
        c['moe_a2a_overlap'] = bool(b.moe_a2a_overlap)
    if v > 1:
        c['virtual_pipeline_stages'] = v
    if fp8_gather:
        c['fp8_param_gather'] = True
    if b.recompute_num_layers is not None:
        c['recompute'] = 'RECOMPUTE_FULL'
        c['recompute_layers'] = b.recompute_num_layers
    elif b.recompute_modules is not None:
        c['recompute'] = 'RECOMPUTE_SELECTIVE'
        c['recompute_modules'] = list(b.recompute_modules)
    else:
        c['recompute'] = 'RECOMPUTE_NONE'
    if b.cpu_offloading_num_layers:
        c['cpu_offload_layers'] = b.cpu_offloading_num_layers
    if b.cuda_graph_impl not in (None, 'none'):
        c['cuda_graph_scope'] = list(b.cuda_graph_scope or []) if not isinstance(b.cuda_graph_scope, str) \
            else [b.cuda_graph_scope]
    layout = apply_layout(c, b.pp_layout, pp, v, layers, layout_rule)
    row = {'id': name, 'model': preset, 'profile': PROFILES[name.split('_CONFIG_')[1].split('_')[0]],
           'num_gpus': b.num_gpus, 'seq_length': seq, 'precision': precision, 'config': c}
    if recipe:
        row['quant_recipe'] = recipe
    if moments and not b.use_megatron_fsdp:
        row['optimizer_moments'] = moments
    if optimizer:
        row['optimizer'] = optimizer
        c['overlap_param_gather'] = False  # "Muon needs this to be False" (the recipe's DDP config)
    if layout:
        row['pp_layout'] = layout
    return row


def main():
    git_dir = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else subprocess.check_output(
        ['git', '-C', git_dir, 'rev-parse', '--all'], text=True).split()[0]
    files = [f for f in subprocess.check_output(['git', '-C', git_dir, 'ls-tree', '-r', '--name-only', commit,
                                                 'scripts/performance/configs'], text=True).split()
             if f.endswith('workload_base_configs.py')]
    utils = types.ModuleType('utils.utils')
    utils.WorkloadBaseConfig = WorkloadBaseConfig
    sys.modules['utils'] = types.ModuleType('utils')
    sys.modules['utils.utils'] = utils
    token = re.compile(r'^(%s)_PRETRAIN_CONFIG_(%s)_(%s)(_V\d+|_LARGE_SCALE)?$' % (
        '|'.join(FAMILIES), '|'.join(PROFILES), '|'.join(PRECISIONS)))
    moments, optimizers = {}, {}
    for family, path in RECIPES.items():
        text = subprocess.check_output(['git', '-C', git_dir, 'show', '%s:%s' % (commit, path)], text=True)
        moments[family], optimizers[family] = recipe_moments(text), recipe_optimizer(text)
    rows = []
    for f in sorted(files):
        ns = {}
        exec(subprocess.check_output(['git', '-C', git_dir, 'show', '%s:%s' % (commit, f)], text=True), ns)
        for name, value in ns.items():
            m = token.match(name)
            if m and isinstance(value, WorkloadBaseConfig):
                row = config_of(name, value, m.group(1), m.group(3), moments[m.group(1)], optimizers[m.group(1)])
                row['source'] = 'NVIDIA-NeMo/Megatron-Bridge %s %s' % (commit[:10], f)
                rows.append(row)
    for row in sorted(rows, key=lambda r: r['id']):
        print(json.dumps(row, sort_keys=False))
    print('%d configurations' % len(rows), file=sys.stderr)


if __name__ == '__main__':
    main()
