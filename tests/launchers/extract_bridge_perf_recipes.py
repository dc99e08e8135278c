#!/usr/bin/env python3
"""Megatron-Bridge's performance recipes (src/megatron/bridge/perf_recipes), as launched.

usage: extract_bridge_perf_recipes.py BRIDGE_GIT_DIR [COMMIT] > bench/data/megatron_bridge_perf_recipes.jsonl

Newer Megatron-Bridge commits replaced the workload base configs that
extract_bridge_perf_configs.py reads with one Python function per run,
`<model>_pretrain_<N>gpu_<gpu>_<dtype>[_variant]_config()`, which builds the model's
recipe and then sets fields on it. This runs each such function of a model paraplan has a
preset for, on a GPU it has a built-in profile for, against a recorder: the files under
perf_recipes/ are executed from COMMIT (default: HEAD) of a bare clone, every
other import (Megatron-Bridge's recipes and training config, torch) is a stub whose calls
return a fresh recorder, and what a function writes on `cfg` is read back. A field the
perf recipe does not set keeps the base recipe's value, which is not known here; the
fields below are the ones the perf recipes set. Rows have the shape of
megatron_bridge_perf_configs.jsonl (bench/bridge_configs_check.py --file reads either);
they carry no measured time.

What is read: cfg.model's tensor / pipeline / virtual / context / expert / expert-tensor
parallel sizes, sequence_parallel, seq_length, recompute_granularity / recompute_method /
recompute_num_layers / recompute_modules, cpu_offloading(_num_layers),
fine_grained_activation_offloading with offload_modules, moe_token_dispatcher_type with
moe_flex_dispatcher_backend (deepep, hybridep -> DeepEP), moe_a2a overlap
(comm_overlap.overlap_moe_expert_parallel_comm), cuda_graph_impl / cuda_graph_scope,
pipeline_model_parallel_layout; cfg.train's batch sizes; cfg.ddp.use_megatron_fsdp;
cfg.optimizer's use_precision_aware_optimizer with exp_avg(_sq)_dtype (2-byte moments) and its
optimizer (muon / dist_muon: Muon, with cfg.ddp.overlap_param_gather); at TP > 1
cfg.comm_overlap.tp_comm_overlap;
cfg.mixed_precision: which Bridge constructor made it (bf16_mixed,
bf16_with_fp8_current_scaling_mixed, ..._delayed_scaling_, ..._mxfp8_, ..._nvfp4_mixed)
and the recipe's later fp8_recipe / fp8_param_gather writes.
"""
import importlib.abc, importlib.machinery, importlib.util, json, os, re, subprocess, sys, types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract_bridge_perf_configs import FAMILIES, PROFILES, apply_layout  # noqa: E402

ROOT = 'src/megatron/bridge/perf_recipes'
SERVED = ('megatron.bridge.perf_recipes', 'megatron.bridge.recipes')  # executed from the commit
MODELS = {family.lower(): family for family in FAMILIES}  # function prefix -> FAMILIES key
GPUS = {gpu.lower(): gpu for gpu in PROFILES}
DTYPES = {'bf16': 'BF16', 'fp8cs': 'FP8_CS', 'fp8mx': 'FP8_MX', 'fp8sc': 'FP8_SC', 'fp8ds': 'FP8_DS',
          'nvfp4': 'NVFP4'}
CONSTRUCTORS = {  # Bridge mixed_precision constructor -> (precision, quant recipe, FP8/FP4 parameter gather)
    'bf16_mixed': ('PRECISION_BF16', None, False),
    'bf16_with_fp8_current_scaling_mixed': ('PRECISION_FP8', 'QUANT_RECIPE_CURRENT_SCALING', True),
    'bf16_with_fp8_delayed_scaling_mixed': ('PRECISION_FP8', 'QUANT_RECIPE_DELAYED_SCALING', True),
    'bf16_with_mxfp8_mixed': ('PRECISION_FP8', 'QUANT_RECIPE_MXFP8', True),
    'bf16_with_fp8_subchannel_scaling_mixed': ('PRECISION_FP8', 'QUANT_RECIPE_BLOCKWISE', False),
    'bf16_with_nvfp4_mixed': ('PRECISION_FP4', 'QUANT_RECIPE_NVFP4', True),
}
FP8_RECIPES = {'tensorwise': 'QUANT_RECIPE_CURRENT_SCALING', 'delayed': 'QUANT_RECIPE_DELAYED_SCALING',
               'mxfp8': 'QUANT_RECIPE_MXFP8', 'blockwise': 'QUANT_RECIPE_BLOCKWISE'}
NAME = re.compile(r'^(%s)_pretrain_(\d+)gpu_(%s)_(%s)(_[a-z0-9_]+)?_config$' % (
    '|'.join(sorted(MODELS, key=len, reverse=True)), '|'.join(GPUS), '|'.join(DTYPES)))


class Rec:
    """Records attribute writes; an attribute never written reads as a fresh Rec (the base
    recipe's value, unknown here). Calls return a fresh Rec that remembers the call."""

    def __init__(self, path, call=None):
        object.__setattr__(self, '_path', path)
        object.__setattr__(self, '_set', {})
        object.__setattr__(self, '_call', call)

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        d = object.__getattribute__(self, '_set')
        if name not in d:
            d[name] = Rec(object.__getattribute__(self, '_path') + '.' + name)
        return d[name]

    def __setattr__(self, name, value):
        object.__getattribute__(self, '_set')[name] = value

    def __call__(self, *args, **kwargs):
        r = Rec(self._path + '()', (self._path, args, kwargs))
        object.__getattribute__(r, '_set').update(kwargs)  # a dataclass built with these fields
        return r

    def __iter__(self):
        return iter(())

    def __getitem__(self, key):
        return Rec('%s[%r]' % (self._path, key))

    # Enough of an object for module-level code: type unions in annotations, base classes.
    def __or__(self, other):
        return self

    __ror__ = __or__

    def __mro_entries__(self, bases):
        return (object,)


def known(rec, name, default=None):
    """The value a recipe wrote, or `default` when it wrote none."""
    v = object.__getattribute__(rec, '_set').get(name) if isinstance(rec, Rec) else None
    return default if v is None or isinstance(v, Rec) else v


def dtype_of(rec, name):
    """The torch dtype a recipe wrote ('bfloat16' for torch.bfloat16), or None."""
    v = object.__getattribute__(rec, '_set').get(name) if isinstance(rec, Rec) else None
    return object.__getattribute__(v, '_path').rsplit('.', 1)[-1] if isinstance(v, Rec) else None


class Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """perf_recipes and recipes modules from the commit; every other megatron.* module, torch
    and any package not installed here a stub."""

    def __init__(self, git_dir, commit, files):
        self.git_dir, self.commit, self.files = git_dir, commit, files

    def _path(self, name):
        if not name.startswith(SERVED):
            return None
        rel = 'src/' + name.replace('.', '/')
        for candidate in (rel + '.py', rel + '/__init__.py'):
            if candidate in self.files:
                return candidate
        return None

    def find_spec(self, name, path=None, target=None):
        top = name.split('.')[0]
        if top not in ('megatron', 'torch') and (top in sys.builtin_module_names or
                                                 importlib.machinery.PathFinder.find_spec(top) is not None):
            return None  # the standard library (and what else is installed) imports as usual
        source = self._path(name)
        package = source is None or source.endswith('__init__.py')
        return importlib.util.spec_from_loader(name, self, is_package=package)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = self._path(module.__name__)
        if source is None:  # a stub: any attribute is a recorder named after it
            module.__getattr__ = lambda attr, _m=module.__name__: SPECIAL.get(attr) or (
                set_layout if attr.endswith('pipeline_model_parallel_layout') else Rec('%s.%s' % (_m, attr)))
            return
        text = subprocess.check_output(['git', '-C', self.git_dir, 'show', '%s:%s' % (self.commit, source)],
                                       text=True)
        module.__file__ = source
        exec(compile(text, source, 'exec'), module.__dict__)


def set_layout(model, layout=None, *args, **kwargs):
    """set_deepseek_v3_pipeline_model_parallel_layout and its kin: the string given, or the
    recipe's default table (marked 'default')."""
    model.pipeline_model_parallel_layout = layout if isinstance(layout, str) else 'default'


def apply_flex_dispatcher_backend(model, backend=None, *args, **kwargs):
    """training/flex_dispatcher_backend.py: a deepep or hybridep backend makes the dispatcher
    flex (DeepEP is refused on GB200 / GB300: row_of falls back to all-to-all there)."""
    if backend in ('deepep', 'hybridep'):  # anything else is left as it is
        model.moe_token_dispatcher_type = 'flex'
        model.moe_flex_dispatcher_backend = backend


SPECIAL = {'apply_flex_dispatcher_backend': apply_flex_dispatcher_backend}


def layout_of(model):
    """The layout a recipe set through set_*_pipeline_model_parallel_layout (its own string,
    or None: the recipe's default table) or wrote as pipeline_model_parallel_layout."""
    direct = known(model, 'pipeline_model_parallel_layout')
    return direct if isinstance(direct, str) and direct != 'default' else None


def precision_of(cfg):
    mp = object.__getattribute__(cfg, '_set').get('mixed_precision')
    if isinstance(mp, str):
        name = mp
    elif isinstance(mp, Rec) and mp._call:
        name = mp._call[0].rsplit('.', 1)[-1]
    else:
        return None
    precision, recipe, gather = CONSTRUCTORS.get(name, (None, None, False))
    if precision is None or not isinstance(mp, Rec):
        return precision, recipe, gather
    recipe = FP8_RECIPES.get(known(mp, 'fp8_recipe'), recipe)
    gather = bool(known(mp, 'fp8_param_gather', known(mp, 'fp4_param_gather', gather)))
    return precision, recipe, gather


def row_of(name, cfg, family, gpus, gpu, source):
    preset, seq_default, layers, layout_rule = FAMILIES[family]
    m, t = cfg.model, cfg.train
    tp, pp = known(m, 'tensor_model_parallel_size', 1), known(m, 'pipeline_model_parallel_size', 1)
    cp, ep = known(m, 'context_parallel_size', 1), known(m, 'expert_model_parallel_size', 1)
    v = known(m, 'virtual_pipeline_model_parallel_size') or 1
    prec = precision_of(cfg)
    if prec is None or prec[0] is None:
        raise ValueError('no mixed precision this script knows')
    precision, recipe, gather = prec
    c = {'tensor_parallel': tp, 'pipeline_parallel': pp, 'data_parallel': gpus // (tp * pp * cp),
         'context_parallel': cp, 'expert_parallel': ep, 'sequence_parallel': bool(known(m, 'sequence_parallel', tp > 1)),
         'micro_batch_size': known(t, 'micro_batch_size', 1), 'global_batch_size': known(t, 'global_batch_size'),
         'flash_attention': True, 'zero_stage': 3 if known(cfg.ddp, 'use_megatron_fsdp') else 1,
         'overlap_grad_reduce': bool(known(cfg.ddp, 'overlap_grad_reduce', True)), 'overlap_param_gather': True}
    if c['global_batch_size'] is None:
        raise ValueError('no global batch size')
    if ep > 1:
        c['expert_tensor_parallel'] = known(m, 'expert_tensor_parallel_size') or tp
        backend = known(m, 'moe_flex_dispatcher_backend')
        flex = known(m, 'moe_token_dispatcher_type') == 'flex' and backend in ('deepep', 'hybridep') and not (
            backend == 'deepep' and gpu in ('GB200', 'GB300'))
        c['moe_dispatcher'] = 'MOE_DISPATCHER_DEEPEP' if flex else 'MOE_DISPATCHER_ALLTOALL'
        c['moe_a2a_overlap'] = bool(known(cfg.comm_overlap, 'overlap_moe_expert_parallel_comm', False))
    if v > 1:
        c['virtual_pipeline_stages'] = v
    if gather:
        c['fp8_param_gather'] = True
    granularity, modules = known(m, 'recompute_granularity'), known(m, 'recompute_modules')
    if granularity == 'full' or known(m, 'recompute_num_layers') is not None:
        c['recompute'] = 'RECOMPUTE_FULL'
        if known(m, 'recompute_num_layers') is not None:
            c['recompute_layers'] = known(m, 'recompute_num_layers')
    elif modules:
        c['recompute'] = 'RECOMPUTE_SELECTIVE'
        c['recompute_modules'] = list(modules)
    else:
        c['recompute'] = 'RECOMPUTE_NONE'
    if known(m, 'cpu_offloading') and known(m, 'cpu_offloading_num_layers'):
        c['cpu_offload_layers'] = known(m, 'cpu_offloading_num_layers')
    if known(m, 'fine_grained_activation_offloading') and known(m, 'offload_modules'):
        c['offload_modules'] = list(known(m, 'offload_modules'))
    impl = known(m, 'cuda_graph_impl')
    scope = known(m, 'cuda_graph_scope')
    if isinstance(scope, str):  # Megatron-Core takes one scope name or a list of them
        scope = [scope]
    if impl not in (None, 'none') or (isinstance(scope, (list, tuple)) and 'full_iteration' in scope):
        c['cuda_graph_scope'] = ['full_iteration'] if impl == 'full_iteration' else list(scope or [])
    layout = apply_layout(c, layout_of(m), pp, v, layers, layout_rule)
    row = {'id': name, 'model': preset, 'profile': PROFILES[gpu], 'num_gpus': gpus,
           'seq_length': known(m, 'seq_length', seq_default), 'precision': precision, 'config': c}
    if recipe:
        row['quant_recipe'] = recipe
    # Megatron-Core's precision-aware optimizer with 2-byte moments (both the same dtype).
    moments = {'bfloat16': 'PRECISION_BF16', 'float16': 'PRECISION_FP16'}.get(dtype_of(cfg.optimizer, 'exp_avg_dtype'))
    if known(cfg.optimizer, 'use_precision_aware_optimizer') and moments and \
            dtype_of(cfg.optimizer, 'exp_avg_sq_dtype') == dtype_of(cfg.optimizer, 'exp_avg_dtype'):
        row['optimizer_moments'] = moments
    # Muon (optimizer "muon", or "dist_muon": the layer-wise distributed one; Kimi-K2's
    # recipes), whose DDP config keeps overlap_param_gather off.
    # Transformer Engine's TP overlap as the recipe sets it (CommOverlapConfig.tp_comm_overlap;
    # Megatron-Bridge turns it off below TP 2 or without sequence parallelism).
    if tp > 1 and known(cfg.comm_overlap, 'tp_comm_overlap') is not None:
        c['tp_comm_overlap'] = bool(known(cfg.comm_overlap, 'tp_comm_overlap'))
    if known(cfg.optimizer, 'optimizer') in ('muon', 'dist_muon'):
        row['optimizer'] = 'OPTIMIZER_MUON'
        c['overlap_param_gather'] = bool(known(cfg.ddp, 'overlap_param_gather', False))
    if layout:
        row['pp_layout'] = layout
    row['source'] = source
    return row


def main():
    git_dir = sys.argv[1]
    commit = subprocess.check_output(['git', '-C', git_dir, 'rev-parse', sys.argv[2] if len(sys.argv) > 2 else 'HEAD'],
                                     text=True).strip()
    files = set(subprocess.check_output(['git', '-C', git_dir, 'ls-tree', '-r', '--name-only', commit,
                                         'src/megatron/bridge'], text=True).split())
    sys.meta_path.insert(0, Stubs(git_dir, commit, files))
    rows, skipped = [], []
    for f in sorted(x for x in files if x.startswith(ROOT + '/')):
        parts = f[len(ROOT) + 1:].split('/')
        if len(parts) != 3 or parts[1] not in GPUS or not parts[2].endswith('.py') or parts[2] == '__init__.py':
            continue
        module = importlib.import_module('megatron.bridge.perf_recipes.%s.%s.%s' % (parts[0], parts[1], parts[2][:-3]))
        for name, fn in sorted(vars(module).items()):
            match = NAME.match(name)
            if not match or not callable(fn) or getattr(fn, '__module__', None) != module.__name__:
                continue
            family, gpus, gpu = MODELS[match.group(1)], int(match.group(2)), GPUS[match.group(3)]
            try:
                rows.append(row_of(name, fn(), family, gpus, gpu,
                                   'NVIDIA-NeMo/Megatron-Bridge %s %s' % (commit[:10], f)))
            except Exception as e:  # noqa: BLE001 -- a recipe this script cannot read is reported
                skipped.append('%s: %s' % (name, e))
    for row in sorted(rows, key=lambda r: r['id']):
        print(json.dumps(row))
    print('%d configurations, %d skipped' % (len(rows), len(skipped)), file=sys.stderr)
    for s in skipped:
        print('  skipped ' + s, file=sys.stderr)


if __name__ == '__main__':
    main()
