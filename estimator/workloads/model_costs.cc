#include "estimator/workloads/model_costs.h"

#include <algorithm>
#include <cmath>

namespace paraplan {

MixedPrecision ResolvedMixedPrecision(const Workload& w, Framework f) {
  if (w.mixed_precision != MixedPrecision::kDefault) return w.mixed_precision;
  if (f == Framework::kTorchtitan || f == Framework::kPytorchFsdp) return MixedPrecision::kFp32Params;
  // NeMo's performance recipes reduce gradients in 16 bits: Megatron-Bridge's
  // scripts/performance/configs/*/*_llm_pretrain.py (every family's common settings) and
  // NeMo 2's scripts/performance set grad_reduce_in_fp32 = False on their bf16-based
  // recipes (BF16, FP8, FP4); fp16 keeps fp32 main gradients.
  // Muon's too: the Kimi-K2 recipe keeps them in fp32 under Muon (recipes/kimi/kimi_k2.py
  // grad_reduce_in_fp32 = optimizer_type != "adam"), but both performance paths set them
  // back to 16 bits (406d3be set_kimi_k2_common_configs, 067f987 _benchmark_common).
  if (f == Framework::kNemo && w.precision != Precision::kFp16 && w.precision != Precision::kFp32) {
    return MixedPrecision::kBf16Grads;
  }
  // Megatron-LM keeps fp32 main gradients only for bf16 (megatron/training/arguments.py:
  // `if args.bf16:` sets accumulate_allreduce_grads_in_fp32 unless --grad-reduce-in-bf16);
  // an fp16 run's gradient buffer and its reduction are in fp16 (param dtype).
  if ((f == Framework::kAny || f == Framework::kMegatron) && w.precision == Precision::kFp16) {
    return MixedPrecision::kBf16Grads;
  }
  return MixedPrecision::kMasterInOptimizer;
}

bool ResolvedTpCommOverlap(const Workload& w, const ParallelConfig& c) {
  if (c.tp_comm_overlap.has_value()) return *c.tp_comm_overlap;
  return c.framework == Framework::kNemo && c.tensor_parallel > 1 && c.sequence_parallel &&
         w.kind == Workload::Kind::kTransformer && !w.transformer.is_moe() && w.precision != Precision::kFp4;
}

QuantRecipe ResolvedRecipe(const Workload& w, Framework f) {
  if (w.quant_recipe == QuantRecipe::kDefault && w.precision == Precision::kFp8 && f == Framework::kTorchtitan) {
    return QuantRecipe::kCurrentScaling;
  }
  return ResolvedRecipe(w);
}

double QuantisedSpGatherBytes(const Workload& w, Framework f) {
  return LowPrecisionLinears(w.precision) && RunsMegatronCore(f) ? QuantisedBytesPerElement(ResolvedRecipe(w, f)) : 0;
}

ModelShape ModelShape::Of(const ParallelConfig& c) {
  ModelShape s;
  s.tensor_parallel = c.tensor_parallel;
  s.context_parallel = c.context_parallel;
  s.expert_parallel = c.expert_parallel;
  s.expert_tensor_parallel = c.ExpertTensorParallel();
  s.moe_dispatcher = c.moe_dispatcher;
  s.moe_a2a_overlap = c.moe_a2a_overlap;
  s.spatial_parallel = c.spatial_parallel;
  s.filter_parallel = c.filter_parallel;
  s.channel_parallel = c.channel_parallel;
  s.spatial_layers = c.spatial_layers;
  s.spatial_axes = c.spatial_axes;
  s.micro_batch_size = c.micro_batch_size;
  s.recompute = c.recompute;
  s.recompute_modules = c.recompute == Recompute::kSelective ? c.recompute_modules : 0;
  s.offload_modules = c.offload_modules;
  s.sequence_parallel = c.sequence_parallel && c.tensor_parallel > 1;
  s.flash_attention = RunsFusedAttention(c);
  s.cuda_graphs = c.cuda_graphs;
  s.tp_comm_overlap = c.tp_comm_overlap.value_or(false) && c.tensor_parallel > 1;
  s.tp_algorithm = c.tp_algorithm;
  s.framework = c.framework;
  return s;
}

BlockCosts BlockCosts::Between(const BlockCosts& from, const BlockCosts& to) {
  BlockCosts d;
  d.fwd_s = to.fwd_s - from.fwd_s;
  d.bwd_s = to.bwd_s - from.bwd_s;
  d.recompute_s = to.recompute_s - from.recompute_s;
  d.tp_fwd_s = to.tp_fwd_s - from.tp_fwd_s;
  d.tp_bwd_s = to.tp_bwd_s - from.tp_bwd_s;
  d.spatial_fwd_s = to.spatial_fwd_s - from.spatial_fwd_s;
  d.spatial_bwd_s = to.spatial_bwd_s - from.spatial_bwd_s;
  d.cp_s = to.cp_s - from.cp_s;
  d.cp_fwd_s = to.cp_fwd_s - from.cp_fwd_s;
  d.ep_s = to.ep_s - from.ep_s;
  d.ep_paired_saving_s = to.ep_paired_saving_s - from.ep_paired_saving_s;
  d.host_paired_saving_s = to.host_paired_saving_s - from.host_paired_saving_s;
  d.host_paired_saving_fwd_s = to.host_paired_saving_fwd_s - from.host_paired_saving_fwd_s;
  d.host_s = to.host_s - from.host_s;
  d.host_fwd_s = to.host_fwd_s - from.host_fwd_s;
  d.wgrad_s = to.wgrad_s - from.wgrad_s;
  d.kernels = to.kernels - from.kernels;
  d.activation_bytes = to.activation_bytes - from.activation_bytes;
  d.offloaded_bytes = to.offloaded_bytes - from.offloaded_bytes;
  d.expert_offloadable_bytes = to.expert_offloadable_bytes - from.expert_offloadable_bytes;
  d.light_recompute_bytes = to.light_recompute_bytes - from.light_recompute_bytes;
  d.params = to.params - from.params;
  d.tensors = to.tensors - from.tensors;
  d.weight_tensors = to.weight_tensors - from.weight_tensors;
  d.expert_params = to.expert_params - from.expert_params;
  d.expert_weight_tensors = to.expert_weight_tensors - from.expert_weight_tensors;
  d.model_flops = to.model_flops - from.model_flops;
  return d;
}

void SetPrecisionBytes(Precision precision, QuantRecipe recipe, Optimizer optimizer, MixedPrecision mixed,
                       Precision moments, bool fp8_any_layout, ModelCosts* costs) {
  if (precision != Precision::kFp32 && mixed == MixedPrecision::kFp32Params) {
    // PyTorch autocast / FSDP MixedPrecision: fp32 parameters and gradients, Adam's two
    // fp32 moments (PyTorch AdamW state); gathers in the 16-bit param dtype, gradients
    // reduced in fp32 (FSDP reduce_dtype, torchtitan's default; DDP's fp32 buckets).
    costs->weight_bytes_per_param = 4;
    costs->grad_bytes_per_param = 4;
    costs->optimizer.state_bytes_per_param = 8;
    costs->grad_reduce_bytes_per_param = 4;
    costs->param_gather_bytes_per_param = 2;
    costs->fp32_params = true;
    // Gradient norm for clipping (read 4) and the fused AdamW step (read param, grad, m,
    // v; write param, m, v: 28); FP16 adds GradScaler's unscale + inf check (read 4,
    // write 4). Gradients are freed (set_to_none), not zeroed.
    costs->optimizer.bytes_per_param = 4 + 28 + (precision == Precision::kFp16 ? 8 : 0);
    costs->optimizer.passes = precision == Precision::kFp16 ? 3 : 2;
  } else if (precision == Precision::kFp32) {
    costs->weight_bytes_per_param = 4;
    costs->grad_bytes_per_param = 4;
    costs->optimizer.state_bytes_per_param = 8;  // Adam m, v
    costs->grad_reduce_bytes_per_param = 4;
    costs->param_gather_bytes_per_param = 4;
    // Adam step: read grad, read/write param, m, v (Kingma & Ba update, fused).
    costs->optimizer.bytes_per_param = 4 + 8 + 8 + 8;
    costs->optimizer.passes = 3;  // gradient norm, Adam, zeroing the gradients
  } else {
    // FP8 / FP4 (Transformer Engine) keep a quantised copy of each linear weight and of
    // its transpose beside the 16-bit weight: 2 + 1 + 1 bytes for FP8 (2 + 1 where FP8
    // GEMMs take any layout), MXFP8 2 + 2 x (1 + 1/32), NVFP4 2 + 2 x (1/2 + 1/16).
    costs->weight_bytes_per_param =
        LowPrecisionLinears(precision)
            ? 2 + QuantisedOrientations(recipe, fp8_any_layout) * QuantisedBytesPerElement(recipe)
            : 2;
    costs->grad_bytes_per_param = 4;              // fp32 main_grad (Megatron-LM)
    costs->optimizer.state_bytes_per_param = 12;  // fp32 master + m + v
    costs->grad_reduce_bytes_per_param = 4;       // gradients reduced in fp32 (Megatron-LM)
    costs->param_gather_bytes_per_param = 2;
    costs->fp32_main_grads = true;
    costs->fp16 = precision == Precision::kFp16;
    // Megatron-LM's mixed-precision step, one pass each over the shard: gradient-norm for
    // clipping (read 4), Adam (read grad, master, m, v; write master, m, v: 28), copy of
    // the master weights to 2-byte weights (read 4, write 2), zeroing the gradient buffer
    // (write 4); FP16 adds the loss-scale unscale + inf/nan check (read 4, write 4).
    costs->optimizer.bytes_per_param = 4 + 28 + 6 + 4 + (precision == Precision::kFp16 ? 8 : 0);
    // The same passes as launches: norm, Adam, copy, zeroing (+ unscale check in FP16).
    costs->optimizer.passes = precision == Precision::kFp16 ? 5 : 4;
    if (mixed == MixedPrecision::kBf16Grads) {
      // The gradient buffer and its reduction in the 16-bit type (Megatron-Core DDP:
      // main_grad in param dtype without grad_reduce_in_fp32). The optimizer casts its
      // shard to fp32 before the step (Float16OptimizerWithFloat16Params and
      // DistributedOptimizer._copy_model_grads_to_main_grads: main_param.grad =
      // main_grad.float(), a new tensor unless main_grad is fp32): kGradCastBytesPerParam
      // and a launch per tensor (Assemble); the norm and Adam read that copy; zeroing the
      // buffer writes 2, not 4.
      costs->grad_bytes_per_param = 2;
      costs->grad_reduce_bytes_per_param = 2;
      costs->fp32_main_grads = false;
      costs->optimizer.fp32_grad_copy_at_step = true;
      costs->optimizer.bytes_per_param += kGradCastBytesPerParam - 2;
    }
  }
  if (optimizer == Optimizer::kSgdMomentum || optimizer == Optimizer::kMuon) {
    // One fp32 moment instead of two (PyTorch SGD momentum buffer; Muon's momentum,
    // OrthogonalizedOptimizer's momentum_buffer): 4 bytes less state, and the step reads
    // and writes it once (8 bytes less traffic).
    costs->optimizer.state_bytes_per_param -= 4;
    costs->optimizer.bytes_per_param -= 8;
  }
  if (moments == Precision::kBf16 || moments == Precision::kFp16) {
    // Megatron-Core's precision-aware optimizer (optimizer_config.py exp_avg_dtype /
    // exp_avg_sq_dtype; Transformer Engine's FusedAdam): each moment 2 bytes, stored and
    // read and written so (8 bytes less state traffic a step).
    costs->optimizer.state_bytes_per_param -= 4;
    costs->optimizer.bytes_per_param -= 8;
    const bool master_in_optimizer = mixed != MixedPrecision::kFp32Params && precision != Precision::kFp32;
    // (FP8 and FP16 runs keep a whole fp32 master: Megatron-Core manages it outside the
    // kernel for FP8 recipes but delayed scaling, and the remainder needs BF16 weights.)
    if (master_in_optimizer && precision == Precision::kBf16) StoreParamRemainders(&costs->optimizer);
  }
}

void DecoupleGrads(OptimizerCosts* o) {
  if (!o->fp32_grad_copy_at_step) return;
  o->fp32_grad_copy_at_step = false;
  o->bytes_per_param -= kGradCastBytesPerParam + 4;
}

void StoreParamRemainders(OptimizerCosts* o) {
  o->state_bytes_per_param -= 2;
  o->bytes_per_param -= 6;
  o->passes -= 1;
  DecoupleGrads(o);
}

double MuonStepS(const ModelCosts& model, const ParallelConfig& c, int layers) {
  const MuonStepTimes& m = model.muon;
  if (m.dense_s_per_layer <= 0 && m.experts_s_per_layer <= 0) return 0;
  const bool layer_wise = c.zero_stage >= 1;
  const double dense_ranks = layer_wise ? static_cast<double>(c.data_parallel) * c.context_parallel : 1;
  const double expert_ranks = c.expert_parallel * (layer_wise ? static_cast<double>(c.ExpertDataParallel()) : 1);
  const double dense_share = 1 / dense_ranks, expert_share = 1 / expert_ranks;
  return layers * (m.dense_s_per_layer * dense_share + m.experts_s_per_layer * expert_share);
}

OptimizerCosts OptimizerCostsOf(const ModelCosts& model, const ParallelConfig& c) {
  OptimizerCosts o = model.optimizer;
  if (model.precision_aware_by_default) {
    if (RunsMegatronFsdp(c)) {
      DecoupleGrads(&o);
    } else {
      StoreParamRemainders(&o);
    }
  }
  return o;
}

GradientBytes GradientBytesOf(const ModelCosts& model, const ParallelConfig& c) {
  GradientBytes g{model.grad_bytes_per_param, model.grad_reduce_bytes_per_param};
  if (model.fp32_main_grads && (c.framework == Framework::kDeepSpeed || RunsMegatronFsdp(c))) {
    g.reduced = 2;
    if (!DeepSpeedBf16Optimizer(model, c)) g.held = 2;  // its fp32 accumulation buffers stay
  }
  return g;
}

bool QuantisedParamGather(const ModelCosts& model, const ParallelConfig& c) {
  return model.quantised_gather_bytes_per_param > 0 && c.zero_stage >= 1 &&
         c.fp8_param_gather.value_or(model.quantised_gather_by_default);
}

void EchoResolvedDefaults(const ModelCosts& model, ParallelConfig* c) {
  c->flash_attention = RunsFusedAttention(*c);
  if (model.quantised_gather_bytes_per_param > 0) c->fp8_param_gather = QuantisedParamGather(model, *c);
}

WeightBytes WeightBytesOf(const ModelCosts& model, const ParallelConfig& c) {
  if (!QuantisedParamGather(model, c)) return {model.weight_bytes_per_param, model.param_gather_bytes_per_param};
  // Under fp32 parameters (torchtitan's float8 FSDP all-gather) the fp32 weights stay the
  // parameters and only the gathers shrink; else the 16-bit copy goes.
  return {model.fp32_params ? model.weight_bytes_per_param : model.weight_bytes_per_param - 2,
          model.quantised_gather_bytes_per_param};
}

bool DeepSpeedBf16Optimizer(const ModelCosts& model, const ParallelConfig& c) {
  return c.framework == Framework::kDeepSpeed && c.zero_stage == 0 && model.fp32_main_grads && !model.fp16;
}

ModelCosts WithExpertOffload(ModelCosts costs) {
  for (BlockCosts& l : costs.layers) {
    l.offloaded_bytes = l.expert_offloadable_bytes;
    l.activation_bytes -= l.offloaded_bytes;
    l.expert_offloadable_bytes = std::min(l.expert_offloadable_bytes, l.activation_bytes);
    l.light_recompute_bytes = std::min(l.light_recompute_bytes, l.activation_bytes);
  }
  IndexLayers(&costs);
  return costs;
}

void IndexLayers(ModelCosts* costs) {
  const size_t n = costs->layers.size();
  std::vector<BlockCosts>& prefix = costs->prefix;
  prefix.clear();
  prefix.reserve(n + 1);  // each sum written once (no zeroed copies first)
  prefix.emplace_back();
  costs->prefix_total_s.assign(n + 1, 0.0);
  costs->transient_bytes.resize(n);
  costs->max_layer_transient_bytes = 0;
  costs->max_layer_dense_params = costs->max_layer_expert_params = 0;
  for (size_t i = 0; i < n; ++i) {
    const BlockCosts& l = costs->layers[i];
    costs->transient_bytes[i] = l.transient_bytes;
    costs->max_layer_transient_bytes = std::max(costs->max_layer_transient_bytes, l.transient_bytes);
    if (l.params > costs->max_layer_dense_params + costs->max_layer_expert_params) {
      costs->max_layer_dense_params = l.params - l.expert_params;
      costs->max_layer_expert_params = l.expert_params;
    }
    costs->prefix_total_s[i + 1] = costs->prefix_total_s[i] + l.TotalS();
    prefix.push_back(prefix.back());
    prefix.back().AddSums(l);
  }
}

double OptimizerKernelsPerPass(double tensors, double elements) {
  constexpr double kMaxTensors = 36;              // depth_to_max_tensors[3]
  constexpr double kMaxElements = 320 * 65536.0;  // depth_to_max_blocks x chunk_size
  return std::max({1.0, CeilCount(tensors / kMaxTensors), CeilCount(elements / kMaxElements)});
}

absl::StatusOr<ModelCosts> ComputeModelCosts(const Workload& workload, const ModelShape& shape,
                                             const Hardware& hw, const Collectives& coll, const Interrupt& stop,
                                             TransformerMemo* memo) {
  absl::StatusOr<ModelCosts> costs = workload.kind == Workload::Kind::kTransformer
                                         ? TransformerCosts(workload, shape, hw, coll, memo)
                                         : LayerGraphCosts(workload, shape, hw, coll, stop);
  if (costs.ok()) {
    costs->host_copy_s_per_byte = hw.pcie_bytes_per_s() > 0 ? 1 / hw.pcie_bytes_per_s() : 0;
    costs->copy_overlap = hw.overlap_efficiency();
    IndexLayers(&*costs);
    const MixedPrecision mixed = ResolvedMixedPrecision(workload, shape.framework);
    SetPrecisionBytes(workload.precision, ResolvedRecipe(workload, shape.framework), workload.optimizer, mixed,
                      workload.optimizer_moments, hw.fp8_any_layout(), &*costs);
    if (workload.optimizer == Optimizer::kMuon && workload.kind == Workload::Kind::kTransformer) {
      costs->muon = MuonStepTimesOf(workload.transformer.Resolved(), hw);
      costs->embedding_extra_state_bytes_per_param = 4;
    }
    costs->precision_aware_by_default = shape.framework == Framework::kNemo &&
                                        workload.precision == Precision::kBf16 &&
                                        workload.optimizer == Optimizer::kAdam &&
                                        workload.optimizer_moments == Precision::kFp32 &&
                                        mixed != MixedPrecision::kFp32Params;
    if (LowPrecisionLinears(workload.precision)) {
      const QuantRecipe recipe = ResolvedRecipe(workload, shape.framework);
      costs->quantised_gather_bytes_per_param = QuantisedBytesPerElement(recipe);
      // NeMo's mixed-precision presets gather the quantised weights (Megatron-Bridge
      // training/mixed_precision.py: fp8_param_gather = True in bf16_with_fp8_delayed_,
      // _current_scaling_ and _mxfp8_mixed, fp4_param_gather in _nvfp4_mixed; False for
      // the blockwise _subchannel_scaling_mixed). Megatron-LM's --fp8-param-gather is off
      // unless given.
      costs->quantised_gather_by_default =
          shape.framework == Framework::kNemo && recipe != QuantRecipe::kBlockwise && recipe != QuantRecipe::kDefault;
    }
  }
  return costs;
}

}  // namespace paraplan
