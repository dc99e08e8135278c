#!/usr/bin/env python3
"""Metamorphic checks of the estimator over random requests, through the real CLI.

usage: property_sweep.py --cli PATH/TO/paraplan --server HOST:PORT [--requests N] [--seed S]
                         [--wide] [--check] [-v]

Draws N random EstimateRequests (seeded: the same N and seed give the same requests) over
the model presets and the built-in GPU profiles -- degrees, micro-batches, ZeRO stages,
recompute and its modules, schedules, dispatchers, offloading, FP8, frameworks -- and keeps
those the server answers. For each it sends variants that must not change the answer the
wrong way, and counts the pairs that do:
  switches that hide work (overlap_grad_reduce, overlap_param_gather, tp_comm_overlap,
    cuda_graphs, moe_a2a_overlap, flash_attention) never slow an iteration (tp_comm_overlap
    by no more than the 16 SMs its reduce-scatter takes from the compute), nor does
    gathering FP8 parameters, which never needs more memory either;
  recomputing more, sequence parallelism, flash attention and a higher ZeRO stage (over
    2+ replicas) never hold more memory, and recomputing more never runs faster;
  twice the global batch takes between once and twice the time;
  a faster part (network bandwidth, each level's alone, latency, tensor cores, HBM, PCIe,
    host cores, a host that launches kernels twice as fast) never slows it, a power
    limit, a spread of the GPUs' speed, a collective call twice as costly or ring
    collectives pinned never speed it, twice the GPU or host memory changes nothing;
  more work (twice the sequence, the layers, the width, the vocabulary, the experts' width,
    MLA's latent or the sliding window, one more expert per token, MTP layer or offloaded
    module, a busier expert, a shared expert) never runs faster; twice the vocabulary and
    a shared expert never need less memory, half the key / value heads never more memory
    nor more time, one more module's activations offloaded never more memory;
  twice the replicas at the same per-replica batch never run faster (without a sharded
    optimizer step) nor need more memory (from 2 replicas: one has no data-parallel
    buffers);
  stating a default (head_dim, num_kv_heads, expert_tensor_parallel, the all-to-all
    dispatcher, the rank order, load_imbalance 1, one routing group, the even stage
    split, the default FP8 recipe, packed placement, no TP overlap outside NeMo, the
    other rank order at one stage) changes nothing;
  routing a token within fewer expert groups never runs slower.
Known exemptions, each a documented limit of the model (docs/model.md): zero-bubble
schedules (their fill on a host-bound stage), NeMo's BF16 Adam going from ZeRO 1 to 2 (the
distributed optimizer's master remainders, which Megatron-FSDP does not keep), torchtitan's
op-level checkpointing under
FP8 or FP4 (what torchao's linears save), twice the replicas under scattered placement
(denser nodes), a higher ZeRO stage beside offloaded weights (its gather buffers),
recompute beside any activation offloading (recompute
shrinks what is moved, so it may run faster), DeepSpeed ZeRO-3 going from selective to
full recompute (its reuse distance keeps the last layer's tensors gathered into the
recomputed forward: fewer gathers, which a gather-bound step feels), flash attention beside selective recompute
under DeepSpeed, torchtitan or PyTorch FSDP (they checkpoint the unfused core whole but
keep the fused core's log-sum-exp), fewer key / value heads beside core_attn's fine-grained
offloading (Megatron-Core keeps tensors under 2^20 elements on the GPU), more recompute's
memory beside activation offloading (what a backward re-materialises stays on the GPU).
All estimates go through one
`paraplan estimate --batch` per variant kind. Prints one line per property and the worst
pairs; --check exits 1 when any property fails outside the exemptions. A known failure
left in the model (docs/model.md, "Concurrent traffic"): the last micro-batch's overlapped
gradient reduction can outlast a shorter window, so a faster GPU or an overlap switch can
lengthen such an iteration (up to 0.18 %); and others of at most 0.02 % (seeds 1-8: 7 pairs
in all, docs/development.md). (A MoE layer's host-bound stretch before its dispatch no longer
adds to the attention's exposed collectives: +0.5 % with 2x tensor cores at seed 31.)
"""
import argparse, copy, json, os, random, subprocess, sys

from paraplan_batch import estimate_batch

PROFILES = ['dgx-a100-80gb', 'dgx-h100-80gb', 'dgx-h200-141gb', 'dgx-b200-180gb', 'dgx-b300-288gb',
            'gb200-nvl72', 'gb300-nvl72']
FRAMEWORKS = ['FRAMEWORK_UNSPECIFIED', 'FRAMEWORK_MEGATRON', 'FRAMEWORK_NEMO', 'FRAMEWORK_DEEPSPEED',
              'FRAMEWORK_TORCHTITAN', 'FRAMEWORK_PYTORCH_FSDP']
TOL = 1e-9


def random_request(rng, presets):
    pick = rng.choice
    w = copy.deepcopy(presets[pick(sorted(presets))])
    t = w['transformer']
    if rng.random() < 0.4:
        w['precision'] = pick(['PRECISION_FP8', 'PRECISION_BF16'])
    if rng.random() < 0.15:
        w['optimizer'] = 'OPTIMIZER_MUON'  # refused outside ZeRO 0 / 1 and Megatron-Core's stacks
    if rng.random() < 0.3:
        t['seq_length'] = pick([2048, 4096, 8192, 16384, 32768])
    moe = bool(t.get('moe', {}).get('num_experts'))
    tp, pp, dp, mbs = pick([1, 1, 2, 4, 8]), pick([1, 1, 2, 4, 8]), pick([1, 2, 4, 8, 16, 32, 64]), pick([1, 1, 2, 4])
    vpp = pick([1, 1, 2, 3, 4]) if pp > 1 else 1
    c = {'tensor_parallel': tp, 'pipeline_parallel': pp, 'data_parallel': dp,
         'context_parallel': pick([1, 1, 1, 2, 4]), 'expert_parallel': pick([1, 2, 4, 8]) if moe else 1,
         'micro_batch_size': mbs, 'global_batch_size': mbs * dp * pick([1, 2, 4, 8, 16]),
         'zero_stage': pick([0, 1, 2, 3]),
         'recompute': pick(['RECOMPUTE_NONE', 'RECOMPUTE_SELECTIVE', 'RECOMPUTE_FULL']),
         'sequence_parallel': tp > 1 and rng.random() < 0.8, 'overlap_grad_reduce': rng.random() < 0.6,
         'overlap_param_gather': rng.random() < 0.5, 'virtual_pipeline_stages': vpp,
         'flash_attention': rng.random() < 0.9}
    if pp > 1:
        c['pipeline_schedule'] = pick(['1f1b', 'interleaved_1f1b' if vpp > 1 else '1f1b', 'zero_bubble', 'gpipe'])
    if moe and rng.random() < 0.3:
        c['moe_dispatcher'] = pick(['MOE_DISPATCHER_ALLTOALL', 'MOE_DISPATCHER_DEEPEP', 'MOE_DISPATCHER_ALLGATHER'])
    if rng.random() < 0.2:
        c['cuda_graphs'] = True
    if tp > 1 and rng.random() < 0.5:  # else unset: the framework's default
        c['tp_comm_overlap'] = rng.random() < 0.6
    if c['recompute'] == 'RECOMPUTE_SELECTIVE' and rng.random() < 0.4:
        c['recompute_modules'] = rng.sample(['core_attn', 'mlp', 'moe', 'moe_act', 'layernorm', 'shared_experts'],
                                            rng.randint(1, 3))
    if rng.random() < 0.1:
        c['cpu_offload_layers'] = rng.randint(1, 4)
    if rng.random() < 0.15:
        c['fp8_param_gather'] = True
    return {'profile': pick(PROFILES), 'workload': w, 'config': c, 'framework': pick(FRAMEWORKS)}


BLACKWELL = ('dgx-b200-180gb', 'dgx-b300-288gb', 'gb200-nvl72', 'gb300-nvl72')


def widen(r, rng):
    """--wide: what random_request leaves at its defaults, drawn from `rng` (its own, so
    that the base requests of a seed stay those of earlier sweeps): quantisation recipes
    and NVFP4, offloading of every kind, the combined 1F1B, DeepEP, uneven end stages,
    the other rank order, scattered placement, routing imbalance."""
    pick = rng.choice
    w, c, t = r['workload'], r['config'], r['workload']['transformer']
    moe = bool(t.get('moe', {}).get('num_experts'))
    if r['profile'] in BLACKWELL and rng.random() < 0.3:
        w['precision'], w['quant_recipe'] = pick([('PRECISION_FP8', 'QUANT_RECIPE_MXFP8'),
                                                  ('PRECISION_FP4', 'QUANT_RECIPE_NVFP4'),
                                                  ('PRECISION_FP8', 'QUANT_RECIPE_CURRENT_SCALING')])
    elif w.get('precision') == 'PRECISION_FP8' and rng.random() < 0.5:
        w['quant_recipe'] = pick(['QUANT_RECIPE_DELAYED_SCALING', 'QUANT_RECIPE_CURRENT_SCALING',
                                  'QUANT_RECIPE_BLOCKWISE'])
    if rng.random() < 0.15:
        c['offload'] = {k: rng.random() < 0.5 for k in ('optimizer', 'weights', 'activations')}
    if rng.random() < 0.15:
        c['offload_modules'] = rng.sample(['attn_norm', 'qkv_linear', 'core_attn', 'attn_proj', 'mlp_norm'] +
                                          (['expert_fc1', 'moe_act'] if moe else []), rng.randint(1, 3))
    if moe and rng.random() < 0.3:
        c['moe_a2a_overlap'] = True
    if moe and rng.random() < 0.3:
        c['moe_dispatcher'] = 'MOE_DISPATCHER_DEEPEP'
    if moe and rng.random() < 0.3:
        t['moe']['load_imbalance'] = pick([1.2, 1.5])
    pp, v = c['pipeline_parallel'], c.get('virtual_pipeline_stages', 1)
    if pp > 1 and rng.random() < 0.3:
        per = t['num_layers'] // (pp * v)
        if per >= 2:
            c['first_pipeline_stage_layers'] = v * per - 1
            c['last_pipeline_stage_layers'] = v * per - 1
    if rng.random() < 0.2:
        c['rank_order'] = 'tp-cp-ep-pp-dp'
    if rng.random() < 0.15:
        c['placement'] = 'PLACEMENT_SCATTERED'
    return r


def seconds(o):
    return o['iteration_time_s']


def gib(o):
    return o['memory']['total_bytes']


def zero_bubble(r):
    return r['config'].get('pipeline_schedule') == 'zero_bubble'


def offloads(r):
    # Activations moved to the host (CPU-offloaded layers, named modules, offload.activations):
    # recompute shrinks what is moved, so it may run faster.
    c = r['config']
    return c.get('cpu_offload_layers', 0) > 0 or bool(c.get('offload_modules')) or \
        bool(c.get('offload', {}).get('activations'))


def offloads_weights(r):
    # ZeRO-Infinity-style weights on the host: a higher stage adds gather buffers beside
    # weights that already left the GPU.
    return bool(r['config'].get('offload', {}).get('weights'))


def recompute_exempt(r):
    """Recompute beside CPU offloading, and DeepSpeed ZeRO-3 going to full recompute: its
    reuse distance keeps the last layer's tensors gathered from forward into the
    recomputed forward, fewer gathers than into the backward, which a step bound by them
    can feel (docs/model.md)."""
    c = r['config']
    deepspeed_zero3 = r.get('framework') == 'FRAMEWORK_DEEPSPEED' and c.get('zero_stage', 0) == 3
    return offloads(r) or (deepspeed_zero3 and c['recompute'] == 'RECOMPUTE_SELECTIVE')


def mixes_sm_shares(r):
    """A MoE model's overlapped data-parallel reductions: the dense and the expert groups'
    collectives hold different shares of the SMs, and where the contention they cause
    outweighs what outlasts the backward, a longer expert reduction (lower share) fills
    more of the window (docs/model.md, data parallelism): weak scaling's longer rings may
    then cost a few microseconds less."""
    moe = r['workload']['transformer'].get('moe') or {}
    return moe.get('num_experts', 0) > 1 and r['config'].get('overlap_grad_reduce', False)


def leaves_remainders(r):
    """NeMo's BF16 Adam from ZeRO 1 to 2: the distributed optimizer keeps its master weights
    as 16-bit remainders (precision-aware), Megatron-FSDP keeps fp32 main parameters, so
    where ZeRO-2 shards little (one expert-DP rank) it holds 2 bytes a parameter more
    (docs/model.md, mixed precision)."""
    w = r['workload']
    return (r.get('framework') == 'FRAMEWORK_NEMO' and r['config'].get('zero_stage', 0) == 1 and
            w.get('precision', 'PRECISION_BF16') == 'PRECISION_BF16' and
            w.get('optimizer', 'OPTIMIZER_ADAM') in ('OPTIMIZER_ADAM', 'OPTIMIZER_UNSPECIFIED'))


def offloads_core_attn(r):
    """Fine-grained offloading of core_attn: Megatron-Core offloads only tensors of at least
    min_offloaded_tensor_size elements (2^20, fine_grained_activation_offload.py), so fewer
    key / value heads can leave K and V under it, kept on the GPU (docs/model.md)."""
    return 'core_attn' in (r['config'].get('offload_modules') or [])


# Each property: name, variant(request) -> request or None (not applicable), check(base, variant
# answers) -> bool, exempt(request) -> bool.
def set_config(**kv):
    def f(r):
        c = r['config']
        if all(c.get(k) == v for k, v in kv.items()):
            return None
        n = copy.deepcopy(r)
        n['config'].update(kv)
        return n
    return f


def when(cond, f):
    # f's variant where cond(r) holds, else none; f a request variant or a profile one.
    if f.__code__.co_argcount == 2:
        return lambda r, profiles: f(r, profiles) if cond(r) else None
    return lambda r: f(r) if cond(r) else None


def next_recompute(r):
    levels = ['RECOMPUTE_NONE', 'RECOMPUTE_SELECTIVE', 'RECOMPUTE_FULL']
    c = r['config']
    if c['recompute'] == levels[-1] or c.get('recompute_modules'):
        return None
    n = copy.deepcopy(r)
    n['config']['recompute'] = levels[levels.index(c['recompute']) + 1]
    return n


def scaled(path, factor, key='profile_override'):
    def f(r, profiles):
        n = copy.deepcopy(r)
        p = copy.deepcopy(profiles[r['profile']])
        path(p, factor)
        n[key] = p
        return n
    return f


def workload(fn):
    def f(r):
        n = copy.deepcopy(r)
        return n if fn(n['workload']['transformer'], n['config']) is not False else None
    return f


def stated(field, value_of, where='transformer'):
    def f(r):
        t = r['workload']['transformer']
        holder = t if where == 'transformer' else r['config'] if where == 'config' else t.get('moe')
        if holder is None or holder.get(field):
            return None
        v = value_of(r)
        if v is None:
            return None
        n = copy.deepcopy(r)
        nh = n['workload']['transformer'] if where == 'transformer' else n['config'] if where == 'config' \
            else n['workload']['transformer']['moe']
        nh[field] = v
        return n
    return f


def is_moe(r):
    return bool(r['workload']['transformer'].get('moe', {}).get('num_experts'))


def limit_groups(r):
    """Half the groups a token may reach, of 4 (or of the groups it has): its copies touch
    no more nodes or ranks than before."""
    moe = r['workload']['transformer']['moe']
    groups, picked = moe.get('router_num_groups', 0), moe.get('router_group_topk', 0)
    if not groups:
        groups, picked = 4, 4
    if picked < 2 or moe['num_experts'] % groups or moe.get('top_k', 1) < picked // 2:
        return None
    n = copy.deepcopy(r)
    n['workload']['transformer']['moe'].update(router_num_groups=groups, router_group_topk=picked // 2)
    return n


def levels(p, f):
    for level in p['network_levels']:
        level['bandwidth_gbytes_per_s'] *= f


def latency(p, f):
    for level in p['network_levels']:
        level['latency_us'] *= f


def tensor_cores(p, f):
    for k in ('peak_tflops_bf16', 'peak_tflops_fp16', 'peak_tflops_fp8', 'peak_tflops_fp4'):
        p['accelerator'][k] *= f


def hbm(p, f):
    p['accelerator']['memory_bandwidth_gbytes_per_s'] *= f


def pcie(p, f):
    p['host']['pcie_gbytes_per_s'] *= f


def ep_kernels(p, f):
    # DeepEP's / HybridEP's kernel rate (0, the link's, stays the link's).
    cal = p.setdefault('calibration', {})
    cal['ep_dispatch_gbytes_per_s'] = cal.get('ep_dispatch_gbytes_per_s', 0) * f


def power_limit(p, f):
    p['accelerator']['power_limit_w'] = f * p['accelerator']['busy_power_w']


def capacity(p, f):
    p['accelerator']['memory_gib'] *= f


def host_cores(p, f):
    p['host']['cpu_cores'] = int(p['host']['cpu_cores'] * f)


def host_speed(p, f):
    # The host's time a kernel (0: the built-in 35 us, CalibrationDefaults::kKernelOverheadUs).
    cal = p.setdefault('calibration', {})
    cal['kernel_overhead_us'] = (cal.get('kernel_overhead_us') or 35.0) * f


def collective_call(p, f):
    # A collective call's fixed cost (0: the built-in 35 us, kCollectiveOverheadUs).
    cal = p.setdefault('calibration', {})
    cal['collective_overhead_us'] = (cal.get('collective_overhead_us') or 35.0) * f


def inner_level(p, f):
    p['network_levels'][0]['bandwidth_gbytes_per_s'] *= f


def outer_levels(p, f):
    for level in p['network_levels'][1:]:
        level['bandwidth_gbytes_per_s'] *= f


def host_memory(p, f):
    p['host']['memory_gib'] *= f


def spread(p, f):
    # The GPUs' speed spread (0: none): f of a GPU's speed as sigma.
    p.setdefault('calibration', {})['rank_speed_spread'] = f


def weak_dp(r):
    c = r['config']
    n = copy.deepcopy(r)
    n['config'].update(data_parallel=2 * c['data_parallel'], global_batch_size=2 * c['global_batch_size'])
    return n


def titan_fp8_sac(r):
    # torchtitan's op-level checkpointing keeps its matmuls' 16-bit outputs where the FP8
    # (or FP4) linears keep their quantised inputs (docs/model.md, torchao's saved input: a
    # lead for a GPU).
    return r['framework'] == 'FRAMEWORK_TORCHTITAN' and r['workload'].get('precision') in ('PRECISION_FP8',
                                                                                         'PRECISION_FP4')


def recompute_memory_exempt(r):
    """torchtitan's FP8 op-level checkpointing (titan_fp8_sac), and activations on the host
    (offload.activations, CPU-offloaded layers, offloaded modules): the GPU keeps what a
    layer's backward re-materialises, so recomputing more re-materialises more beside the
    little it kept (docs/model.md)."""
    return titan_fp8_sac(r) or offloads(r)


def scattered(r):
    # Scattered placement spreads a job's nodes evenly over the cluster: twice the replicas
    # sit twice as densely, so groups that left a domain may stay in one.
    return r['config'].get('placement') == 'PLACEMENT_SCATTERED'


def unsharded_step(r):
    # ZeRO's sharded optimizer step (and DeepSpeed's BF16_Optimizer without ZeRO) shrinks
    # with the replicas: weak scaling may then run faster.
    return r['config'].get('zero_stage', 0) == 0 and r['framework'] != 'FRAMEWORK_DEEPSPEED'


def keeps_fused_core(r):
    # Selective recompute beside flash attention under DeepSpeed, torchtitan or PyTorch
    # FSDP: no checkpoint around the fused core, whose log-sum-exp stays, where the
    # unfused core is checkpointed whole.
    return r['config']['recompute'] == 'RECOMPUTE_SELECTIVE' and r['framework'] in (
        'FRAMEWORK_DEEPSPEED', 'FRAMEWORK_TORCHTITAN', 'FRAMEWORK_PYTORCH_FSDP')


def higher_zero(r):
    if r['config'].get('zero_stage', 0) >= 3:
        return None
    n = copy.deepcopy(r)
    n['config']['zero_stage'] = r['config'].get('zero_stage', 0) + 1
    return n


def fp8_sharded(r):
    return r['workload'].get('precision') == 'PRECISION_FP8' and r['config'].get('zero_stage', 0) >= 1


def more_offload(r):
    n = copy.deepcopy(r)
    n['config']['cpu_offload_layers'] = r['config'].get('cpu_offload_layers', 0) + 1
    return n


MODULES = ['core_attn', 'mlp', 'moe', 'moe_act', 'layernorm', 'shared_experts']


def more_modules(r):
    c = r['config']
    if c['recompute'] != 'RECOMPUTE_SELECTIVE':
        return None
    have = c.get('recompute_modules') or ['core_attn']
    missing = [m for m in MODULES if m not in have]
    if not missing:
        return None
    n = copy.deepcopy(r)
    n['config']['recompute_modules'] = have + [missing[len(have) % len(missing)]]
    return n


OFFLOAD_MODULES = ['attn_norm', 'qkv_linear', 'core_attn', 'attn_proj', 'mlp_norm', 'expert_fc1', 'moe_act']


def more_offload_modules(r):
    have = r['config'].get('offload_modules') or []
    missing = [m for m in OFFLOAD_MODULES if m not in have and (is_moe(r) or m not in ('expert_fc1', 'moe_act'))]
    if not missing:
        return None
    n = copy.deepcopy(r)
    n['config']['offload_modules'] = have + [missing[len(have) % len(missing)]]
    return n


def fewer_kv_heads(t, c):
    # Half the key / value heads (grouped-query attention), where the tensor-parallel ranks
    # still divide them; MLA has no separate key / value heads.
    kv = t.get('num_kv_heads') or t['num_attention_heads']
    if t.get('mla', {}).get('kv_lora_rank') or kv % 2 or (kv // 2) % c['tensor_parallel']:
        return False
    t['num_kv_heads'] = kv // 2


def one_shared_expert(t, c):
    if t['moe'].get('num_shared_experts'):
        return False
    t['moe']['num_shared_experts'] = 1


def even_stage_layers(r):
    # First and last stage stated as the even split they default to (one chunk a rank,
    # layers a multiple of the stages).
    c, t = r['config'], r['workload']['transformer']
    pp = c['pipeline_parallel']
    if pp < 2 or c.get('virtual_pipeline_stages', 1) > 1 or t['num_layers'] % pp or c.get('first_pipeline_stage_layers'):
        return None
    n = copy.deepcopy(r)
    n['config'].update(first_pipeline_stage_layers=t['num_layers'] // pp, last_pipeline_stage_layers=t['num_layers'] // pp)
    return n


def default_recipe(r):
    # FP8 unstated is delayed scaling, current scaling under torchtitan (docs/model.md).
    w = r['workload']
    if w.get('precision') != 'PRECISION_FP8' or w.get('quant_recipe', 'QUANT_RECIPE_UNSPECIFIED') != 'QUANT_RECIPE_UNSPECIFIED':
        return None
    n = copy.deepcopy(r)
    n['workload']['quant_recipe'] = ('QUANT_RECIPE_CURRENT_SCALING' if r['framework'] == 'FRAMEWORK_TORCHTITAN'
                                     else 'QUANT_RECIPE_DELAYED_SCALING')
    return n


def never_less_memory(a, b):
    return gib(b) >= gib(a) * (1 - TOL)


def never_more_memory(a, b):
    return gib(b) <= gib(a) * (1 + TOL)


def never_slower(a, b):
    return seconds(b) <= seconds(a) * (1 + TOL)


SMS = {}  # profile name -> SMs (main fills it)


def tp_overlap_never_slower(a, b):
    """Transformer Engine's TP overlap runs its reduce-scatter on 16 SMs beside the row
    linear's GEMM (docs/model.md): where little was exposed it may cost up to that share of
    the compute, its recompute, and the pipeline's fill and drain, which run the same
    stages' forwards."""
    sms = SMS.get(a.get('profile_name'), 0)
    t = a['time']
    work = t['compute_s'] + t.get('recompute_s', 0) + t.get('pipeline_bubble_s', 0)
    slack = 16 / (sms - 16) * work if sms > 32 else 0
    return seconds(b) <= seconds(a) * (1 + TOL) + slack


def never_faster(a, b):
    return seconds(b) >= seconds(a) * (1 - TOL)


def same(a, b):
    return abs(seconds(b) / seconds(a) - 1) <= 1e-12 and abs(gib(b) / gib(a) - 1) <= 1e-12


PROPERTIES = [
    ('overlap_grad_reduce never slower', set_config(overlap_grad_reduce=True), never_slower, zero_bubble),
    ('tp_comm_overlap never slower (but its SMs)',
     when(lambda r: r['config']['tensor_parallel'] > 1, set_config(tp_comm_overlap=True)), tp_overlap_never_slower, None),
    ('cuda_graphs never slower', set_config(cuda_graphs=True), never_slower, None),
    ('moe_a2a_overlap never slower', when(lambda r: r['config'].get('expert_parallel', 1) > 1,
                                          set_config(moe_a2a_overlap=True)), never_slower, None),
    ('more recompute never more memory', next_recompute, lambda a, b: gib(b) <= gib(a) * (1 + TOL), recompute_memory_exempt),
    ('more recompute never faster', next_recompute, never_faster, recompute_exempt),
    ('twice the batch: once to twice the time',
     lambda r: set_config(global_batch_size=2 * r['config']['global_batch_size'])(r),
     lambda a, b: seconds(a) * (1 - TOL) <= seconds(b) <= 2 * seconds(a) * (1 + TOL), None),
    ('twice the sequence never faster', workload(lambda t, c: t.update(seq_length=2 * t['seq_length'])),
     never_faster, zero_bubble),
    ('twice the layers never faster', workload(lambda t, c: t.update(num_layers=2 * t['num_layers'])),
     never_faster, zero_bubble),
    ('2x network bandwidth never slower', scaled(levels, 2), never_slower, zero_bubble),
    ('half the latency never slower', scaled(latency, 0.5), never_slower, zero_bubble),
    ('2x tensor cores never slower', scaled(tensor_cores, 2), never_slower, zero_bubble),
    ('2x HBM bandwidth never slower', scaled(hbm, 2), never_slower, zero_bubble),
    ('2x PCIe never slower', scaled(pcie, 2), never_slower, zero_bubble),
    ('2x DeepEP kernel rate never slower',
     when(lambda r: r['config'].get('moe_dispatcher') == 'MOE_DISPATCHER_DEEPEP', scaled(ep_kernels, 2)),
     never_slower, zero_bubble),
    ('a power limit never faster', scaled(power_limit, 0.7), never_faster, zero_bubble),
    ('2x GPU memory changes nothing', scaled(capacity, 2), same, None),
    ('2x host cores never slower', scaled(host_cores, 2), never_slower, None),
    ('twice the data parallel (weak) never faster', when(unsharded_step, weak_dp), never_faster,
     lambda r: mixes_sm_shares(r) or scattered(r)),
    ('twice the data parallel (weak) never more memory',
     when(lambda r: r['config']['data_parallel'] > 1, weak_dp), never_more_memory, None),
    ('sequence_parallel never more memory', when(lambda r: r['config']['tensor_parallel'] > 1,
                                                 set_config(sequence_parallel=True)), never_more_memory, None),
    ('flash_attention never more memory', set_config(flash_attention=True), never_more_memory,
     keeps_fused_core),
    ('flash_attention never slower', set_config(flash_attention=True), never_slower, None),
    ('overlap_param_gather never slower', set_config(overlap_param_gather=True), never_slower, None),
    ('more load imbalance never faster', when(is_moe, workload(lambda t, c: t['moe'].update(load_imbalance=2.0))),
     never_faster, zero_bubble),
    ('one more expert per token never faster',
     when(is_moe, workload(lambda t, c: t['moe'].update(top_k=t['moe'].get('top_k', 1) + 1)
                           if t['moe'].get('top_k', 1) < t['moe']['num_experts'] else False)), never_faster, zero_bubble),
    ('twice the sliding window never faster',
     workload(lambda t, c: t['sliding_window'].update(tokens=2 * t['sliding_window']['tokens'])
              if 0 < 2 * t.get('sliding_window', {}).get('tokens', 0) < t['seq_length'] else False),
     never_faster, zero_bubble),
    ('twice the hidden size never faster', workload(lambda t, c: t.update(hidden_size=2 * t['hidden_size'],
                                                                          ffn_hidden_size=2 * t.get('ffn_hidden_size', 4 * t['hidden_size']))),
     never_faster, zero_bubble),
    ('a higher ZeRO stage never more memory', when(lambda r: r['config']['data_parallel'] > 1, higher_zero),
     never_more_memory, lambda r: leaves_remainders(r) or offloads_weights(r)),
    ('fp8_param_gather never more memory', when(fp8_sharded, set_config(fp8_param_gather=True)), never_more_memory,
     None),
    ('fp8_param_gather never slower', when(fp8_sharded, set_config(fp8_param_gather=True)), never_slower, None),
    ('one more offloaded layer never more memory', more_offload, never_more_memory, None),
    ('one more offloaded layer never faster', more_offload, never_faster, None),
    ('one more recompute module never more memory', more_modules, never_more_memory, None),
    ('one more recompute module never faster', more_modules, never_faster, offloads),
    ('twice the sequence never less memory', workload(lambda t, c: t.update(seq_length=2 * t['seq_length'])),
     never_less_memory, None),
    ('twice the layers never less memory', workload(lambda t, c: t.update(num_layers=2 * t['num_layers'])),
     never_less_memory, None),
    ('more load imbalance never less memory', when(is_moe, workload(lambda t, c: t['moe'].update(load_imbalance=2.0))),
     never_less_memory, None),
    ('stating head_dim changes nothing',
     stated('head_dim', lambda r: None if r['workload']['transformer'].get('mla', {}).get('kv_lora_rank') else
            r['workload']['transformer']['hidden_size'] // r['workload']['transformer']['num_attention_heads']),
     same, None),
    ('stating num_kv_heads changes nothing',
     stated('num_kv_heads', lambda r: r['workload']['transformer']['num_attention_heads']), same, None),
    ('stating expert_tensor_parallel changes nothing',
     stated('expert_tensor_parallel', lambda r: r['config']['tensor_parallel'] if is_moe(r) else None, 'config'),
     same, None),
    ('stating the all-to-all dispatcher changes nothing',
     stated('moe_dispatcher', lambda r: 'MOE_DISPATCHER_ALLTOALL' if is_moe(r) else None, 'config'), same, None),
    ('stating the rank order changes nothing', stated('rank_order', lambda r: 'tp-cp-ep-dp-pp', 'config'), same,
     None),
    ('stating load_imbalance 1 changes nothing', stated('load_imbalance', lambda r: 1.0, 'moe'), same, None),
    ('stating one routing group changes nothing', when(lambda r: is_moe(r) and not
                                                       r['workload']['transformer']['moe'].get('router_num_groups'),
                                                       workload(lambda t, c: t['moe'].update(router_num_groups=1,
                                                                                             router_group_topk=1))),
     same, None),
    ('routing within fewer groups never slower', when(is_moe, limit_groups), never_slower, None),
    ('a 2x faster host never slower', scaled(host_speed, 0.5), never_slower, zero_bubble),
    ('2x a collective call\'s cost never faster', scaled(collective_call, 2), never_faster, zero_bubble),
    ('one more offloaded module never more memory', more_offload_modules, never_more_memory, None),
    ('twice the vocabulary never faster', workload(lambda t, c: t.update(vocab_size=2 * t['vocab_size'])),
     never_faster, zero_bubble),
    ('twice the vocabulary never less memory', workload(lambda t, c: t.update(vocab_size=2 * t['vocab_size'])),
     never_less_memory, None),
    ('half the key / value heads never slower', workload(fewer_kv_heads), never_slower, zero_bubble),
    ('half the key / value heads never more memory', workload(fewer_kv_heads), never_more_memory, offloads_core_attn),
    ('a shared expert never faster', when(is_moe, workload(one_shared_expert)), never_faster, zero_bubble),
    ('a shared expert never less memory', when(is_moe, workload(one_shared_expert)), never_less_memory, None),
    ('one more offloaded module never faster', more_offload_modules, never_faster, zero_bubble),
    ('2x the innermost link never slower', scaled(inner_level, 2), never_slower, zero_bubble),
    ('2x the outer network never slower', scaled(outer_levels, 2), never_slower, zero_bubble),
    ('2x host memory changes nothing', scaled(host_memory, 2), same, None),
    ('a spread of the GPUs\' speed never faster', scaled(spread, 0.05), never_faster, zero_bubble),
    ('stating the even stage split changes nothing', even_stage_layers, same, None),
    ('stating the default FP8 recipe changes nothing', default_recipe, same, None),
    ('one more MTP layer never faster',
     workload(lambda t, c: t.update(mtp_num_layers=t.get('mtp_num_layers', 0) + 1)), never_faster, zero_bubble),
    ('twice the MLA latent never faster',
     workload(lambda t, c: t['mla'].update(kv_lora_rank=2 * t['mla']['kv_lora_rank'])
              if t.get('mla', {}).get('kv_lora_rank') else False), never_faster, zero_bubble),
    ('ring collectives never faster than the cheapest',
     set_config(dp_algorithm='ALGORITHM_RING', tp_algorithm='ALGORITHM_RING'), never_faster, zero_bubble),
    ('stating packed placement changes nothing', stated('placement', lambda r: 'PLACEMENT_PACKED', 'config'), same,
     None),
    ('stating stages outermost at one stage changes nothing',
     when(lambda r: r['config']['pipeline_parallel'] == 1, set_config(rank_order='tp-cp-ep-pp-dp')), same, None),
    ('stating no TP overlap outside NeMo changes nothing',
     when(lambda r: r['framework'] != 'FRAMEWORK_NEMO' and 'tp_comm_overlap' not in r['config'],
          set_config(tp_comm_overlap=False)), same, None),
    ('twice the expert width never faster',
     when(is_moe, workload(lambda t, c: t['moe'].update(
         expert_ffn_hidden_size=2 * (t['moe'].get('expert_ffn_hidden_size') or t.get('ffn_hidden_size') or
                                     4 * t['hidden_size'])))), never_faster, zero_bubble),
]


def describe(r):
    c, w = r['config'], r['workload']
    text = '%s %s %s seq %d %s TP%d PP%d v%d DP%d CP%d EP%d mbs %d gbs %d ZeRO %d %s %s' % (
        r['profile'], w['name'], r['framework'][10:], w['transformer']['seq_length'], w['precision'][10:],
        c['tensor_parallel'], c['pipeline_parallel'], c.get('virtual_pipeline_stages', 1), c['data_parallel'],
        c.get('context_parallel', 1), c.get('expert_parallel', 1), c['micro_batch_size'], c['global_batch_size'],
        c.get('zero_stage', 0), c['recompute'][10:], c.get('pipeline_schedule', ''))
    # What --wide (or a variant) set beyond that.
    extra = [k + '=' + str(c[k]) for k in ('offload', 'offload_modules', 'cpu_offload_layers', 'moe_a2a_overlap',
                                             'moe_dispatcher', 'first_pipeline_stage_layers', 'rank_order',
                                             'placement', 'recompute_modules', 'cuda_graphs') if c.get(k)]
    extra += ['%s=%s' % (k, w[k]) for k in ('quant_recipe',) if w.get(k)]
    extra += ['load_imbalance=%s' % w['transformer']['moe']['load_imbalance']
              for _ in [0] if w['transformer'].get('moe', {}).get('load_imbalance')]
    return text + (' [' + ' '.join(extra) + ']' if extra else '')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', required=True)
    ap.add_argument('--server', default='127.0.0.1:50051')
    ap.add_argument('--requests', type=int, default=8000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--check', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    ap.add_argument('--wide', action='store_true', help='widen each request (widen(); a seed\'s own draws)')
    a = ap.parse_args()
    run = lambda *args: subprocess.run([a.cli, '--server', a.server, '-o', 'json', *args], capture_output=True,
                                       text=True)
    models = run('models')
    if models.returncode != 0:
        print('paraplan models: exit %d\n%s' % (models.returncode, models.stderr[-500:]))
        return 1
    presets = {m['name']: m for m in json.loads(models.stdout)['models'] if 'transformer' in m}
    profiles = {}
    for name in PROFILES:
        p = json.loads(run('profiles', 'show', name).stdout)
        for k in ('version', 'origin', 'promoted', 'is_default', 'created_at'):
            p.pop(k, None)
        profiles[name] = p
        SMS[name] = p.get('accelerator', {}).get('sm_count', 0)
    rng = random.Random(a.seed)
    requests = [random_request(rng, presets) for _ in range(a.requests)]
    if a.wide:
        extra = random.Random(a.seed * 7919 + 1)
        requests = [widen(r, extra) for r in requests]
    try:
        answers = estimate_batch(a.cli, a.server, requests)
        base = [(r, o) for r, o in zip(requests, answers) if 'error' not in o]
        print('%d of %d random requests answered' % (len(base), len(requests)))
        failed = 0
        for name, variant, holds, exempt in PROPERTIES:
            pairs = []
            for r, o in base:
                n = variant(r, profiles) if variant.__code__.co_argcount == 2 else variant(r)
                if n is not None:
                    pairs.append((r, o, n))
            outs = estimate_batch(a.cli, a.server, [n for _, _, n in pairs])
            tried, bad, exempted = 0, [], 0
            for (r, o, n), x in zip(pairs, outs):
                if 'error' in x:
                    continue
                tried += 1
                if not holds(o, x):
                    if exempt is not None and exempt(r):
                        exempted += 1
                    else:
                        bad.append((r, o, x))
            failed += bool(bad)
            print('%-50s %5d pairs  %3d fail  %3d exempt' % (name, tried, len(bad), exempted))
            for r, o, x in bad[:None if a.verbose else 3]:
                print('    %.6g -> %.6g s, %.4g -> %.4g GiB: %s' % (seconds(o), seconds(x), gib(o) / 2**30,
                                                                    gib(x) / 2**30, describe(r)))
    except RuntimeError as err:
        print(err)
        return 1
    print('%d of %d properties fail' % (failed, len(PROPERTIES)))
    return 1 if a.check and failed else 0


if __name__ == '__main__':
    sys.exit(main())
