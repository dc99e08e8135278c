#include "client/launcher.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/launcher_plan.h"
#include "estimator/inputs/cp_exchange.h"
#include "estimator/inputs/workload.h"  // kDefaultDropout: the contract's unstated dropout

namespace paraplan::cli {

namespace launcher {

const char* RecomputeName(v1::Recompute r) {
  return r == v1::RECOMPUTE_FULL ? "full" : r == v1::RECOMPUTE_SELECTIVE ? "selective" : "none";
}

const char* ScheduleName(v1::PipelineSchedule s) {
  switch (s) {
    case v1::SCHEDULE_GPIPE:
      return "gpipe";
    case v1::SCHEDULE_INTERLEAVED_1F1B:
      return "interleaved 1f1b";
    case v1::SCHEDULE_ZERO_BUBBLE:
      return "zero-bubble";
    default:
      return "1f1b";
  }
}

const char* Bool(bool b) { return b ? "true" : "false"; }

namespace {

const char* PrecisionName(v1::Precision p) {
  switch (p) {
    case v1::PRECISION_FP16:
      return "fp16";
    case v1::PRECISION_FP8:
      return "fp8";
    case v1::PRECISION_FP4:
      return "fp4";
    case v1::PRECISION_FP32:
      return "fp32";
    default:
      return "bf16";
  }
}

int Deg(int v) { return v > 0 ? v : 1; }

}  // namespace

std::vector<int> MoeLayers(const v1::TransformerSpec& t) {
  std::vector<int> bits(std::max(0, t.num_layers()), 0);
  if (!t.has_moe() || t.moe().num_experts() <= 1) return bits;
  const int interval = std::max(1, t.moe().moe_layer_interval());
  for (int i = t.moe().first_dense_layers(); i < t.num_layers(); ++i) bits[i] = (i + 1) % interval == 0 ? 1 : 0;
  return bits;
}

std::vector<int> WindowLayers(const v1::TransformerSpec& t) {
  std::vector<int> bits(std::max(0, t.num_layers()), 0);
  const v1::SlidingWindow& w = t.sliding_window();
  if (w.tokens() <= 0 || w.tokens() >= t.seq_length()) return bits;
  const int interval = std::max(1, w.layer_interval());
  for (int i = 0; i < t.num_layers(); i += interval) bits[i] = 1;
  return bits;
}

std::vector<std::string> CpCommTypes(const Plan& p) {
  const std::vector<int> windows = WindowLayers(*p.t);
  const int heads = p.t->num_attention_heads();
  const CpExchange e = WindowCpExchange(heads, p.t->has_mla() ? heads : p.kv_heads, p.tp, p.cp, true);
  if (e == CpExchange::kRing || std::find(windows.begin(), windows.end(), 1) == windows.end()) return {};
  std::vector<std::string> types;
  types.reserve(windows.size());
  for (int w : windows) types.push_back(w == 1 ? CpExchangeName(e) : CpExchangeName(CpExchange::kRing));
  return types;
}

int64_t SharedExpertWidth(const v1::MoeSpec& m) {
  const int64_t each =
      m.shared_expert_ffn_hidden_size() > 0 ? m.shared_expert_ffn_hidden_size() : m.expert_ffn_hidden_size();
  return int64_t{m.num_shared_experts()} * each;
}

std::string LayerPatternExpression(const std::vector<int>& bits) {
  const size_t n = bits.size();
  std::string best = absl::StrCat("[", absl::StrJoin(bits, ","), "]");
  // A leading run (dense first layers), then the rest as the shortest period that
  // repeats to its end.
  size_t lead = 0;
  while (lead < n && bits[lead] == bits[0]) ++lead;
  for (size_t k : {size_t{0}, lead}) {
    if (k >= n) continue;
    const size_t rest = n - k;
    for (size_t period = 1; period <= rest; ++period) {
      if (rest % period != 0) continue;
      bool repeats = true;
      for (size_t i = k; i < n && repeats; ++i) repeats = bits[i] == bits[k + (i - k) % period];
      if (!repeats) continue;
      const std::vector<int> unit(bits.begin() + k, bits.begin() + k + period);
      std::string e = absl::StrCat("[", absl::StrJoin(unit, ","), "]*", rest / period);
      if (k > 0) e = absl::StrCat("[", bits[0], "]*", k, "+", e);
      if (e.size() < best.size()) best = e;
      break;
    }
  }
  return best;
}

std::string UnrunModulesNote(const Plan& p, const std::string& framework, const std::string& instead) {
  if (p.recompute != v1::RECOMPUTE_SELECTIVE) return "";
  std::vector<std::string> modules;
  for (const std::string& m : p.c->recompute_modules()) {
    if (m != "core_attn") modules.push_back(m);
  }
  if (modules.empty()) return "";
  return absl::StrCat("the plan recomputes Megatron-Core's modules (", absl::StrJoin(modules, ", "), "); ", framework,
                      " has none: its selective recompute ", instead, ", not what was planned");
}

double Dropout(const v1::TransformerSpec& t) { return t.has_dropout() ? t.dropout() : kDefaultDropout; }

CudaGraphLaunch MegatronCudaGraphs(const Plan& p) {
  if (!p.c->cuda_graphs()) return {};
  const char* estimated = "the estimate took every launch as replayed from a graph";
  if (p.recompute == v1::RECOMPUTE_FULL) {
    if (!p.moe()) return {"full_iteration", {}, ""};
    return {"", {}, absl::StrCat("CUDA graphs are not emitted: Megatron-Core graphs full recompute only as one "
                                 "full-iteration graph, which a dropless MoE layer cannot be captured in; ", estimated)};
  }
  // Selective recompute (core_attn unless the plan names its modules) inside a graph
  // refuses dropout: "attention dropout is not supported with graphed attention
  // recomputation", likewise hidden dropout with a graphed MLP / MoE recomputed.
  std::vector<std::string> recomputed;
  if (p.recompute == v1::RECOMPUTE_SELECTIVE) {
    recomputed.assign(p.c->recompute_modules().begin(), p.c->recompute_modules().end());
    if (recomputed.empty()) recomputed = {"core_attn"};
  }
  const auto has = [&](const char* m) { return std::find(recomputed.begin(), recomputed.end(), m) != recomputed.end(); };
  const bool dropout = Dropout(*p.t) > 0;
  std::vector<std::string> modules;
  if (!p.moe()) {
    if (!(dropout && has("core_attn"))) return {"local", {}, ""};  // whole layers
    if (!(dropout && has("mlp"))) modules = {"mlp"};
  } else {
    if (!(dropout && has("core_attn"))) modules.push_back("attn");
    // "moe recompute is not supported with moe_router CUDA graph" (transformer_engine).
    if (!has("moe")) modules.insert(modules.end(), {"moe_router", "moe_preprocess"});
  }
  if (modules.empty()) {
    return {"", {}, absl::StrCat("CUDA graphs are not emitted: what Megatron-Core could graph here it recomputes "
                                 "with dropout; ", estimated)};
  }
  return {p.moe() ? "transformer_engine" : "local", modules,
          absl::StrCat("CUDA graphs cover the layers' ", absl::StrJoin(modules, ", "),
                       p.moe() ? " (Megatron-Core graphs no dropless experts)" : " (dropout beside the recomputed attention)",
                       "; ", estimated, ", so where the host sets the pace the run is slower")};
}

std::string Header(const std::string& title, const Plan& p) {
  std::string plan = absl::StrCat("TP", p.tp, " PP", p.pp, " DP", p.dp, " CP", p.cp, " EP", p.ep);
  if (p.pp > 1) absl::StrAppend(&plan, ", schedule ", ScheduleName(p.schedule), p.v > 1 ? absl::StrCat(" v", p.v) : "");
  absl::StrAppend(&plan, ", micro-batch ", p.mbs, ", global batch ", p.gbs, ", recompute ", RecomputeName(p.recompute));
  if (p.recompute == v1::RECOMPUTE_SELECTIVE && p.c->recompute_modules_size() > 0) {
    absl::StrAppend(&plan, " (", absl::StrJoin(p.c->recompute_modules(), ", "), ")");
  }
  if (p.c->sequence_parallel()) absl::StrAppend(&plan, ", sequence parallel");
  absl::StrAppend(&plan, ", ZeRO-", p.zero, ", ", PrecisionName(p.precision));
  return absl::StrCat("# ", title, " for ", p.model, p.profile.empty() ? "" : absl::StrCat(" on ", p.profile), ": ",
                      p.gpus, " GPUs (", p.nodes, " node", p.nodes == 1 ? "" : "s", " x ", p.per_node,
                      ")\n# plan: ", plan, "\n");
}

namespace {

absl::StatusOr<Plan> Resolve(const LaunchInput& in) {
  const v1::ParallelConfig& c = in.config;
  if (!in.workload.has_transformer()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--emit needs a transformer workload; \"", in.workload.name(),
                     "\" is a layer graph (CNN), which Megatron-LM, NeMo, DeepSpeed and torchtitan do not split"));
  }
  if (Deg(c.spatial_parallel()) * Deg(c.filter_parallel()) * Deg(c.channel_parallel()) > 1) {
    return absl::FailedPreconditionError(
        "--emit: the plan uses spatial / filter / channel parallelism, which none of the frameworks expresses");
  }
  Plan p;
  p.c = &c;
  p.t = &in.workload.transformer();
  p.model = in.workload.name().empty() ? "the workload" : in.workload.name();
  p.profile = in.profile;
  p.tp = Deg(c.tensor_parallel());
  p.pp = Deg(c.pipeline_parallel());
  p.dp = Deg(c.data_parallel());
  p.cp = Deg(c.context_parallel());
  p.ep = Deg(c.expert_parallel());
  p.etp = c.expert_tensor_parallel() > 0 ? c.expert_tensor_parallel() : p.tp;
  p.v = p.pp > 1 ? Deg(c.virtual_pipeline_stages()) : 1;
  p.mbs = Deg(c.micro_batch_size());
  p.gbs = std::max(1, c.global_batch_size());
  p.zero = std::clamp(c.zero_stage(), 0, 3);
  p.micro_batches = std::max(1, p.gbs / (p.mbs * p.dp));
  p.gpus = in.num_gpus > 0 ? in.num_gpus : p.tp * p.pp * p.dp * p.cp;
  p.per_node = in.gpus_per_node > 0 ? std::min(in.gpus_per_node, p.gpus) : p.gpus;
  p.nodes = (p.gpus + p.per_node - 1) / p.per_node;
  p.nvlink_domain = in.nvlink_domain;
  p.ffn = p.t->ffn_hidden_size() > 0 ? p.t->ffn_hidden_size() : 4 * p.t->hidden_size();
  p.kv_heads = p.t->num_kv_heads() > 0 ? p.t->num_kv_heads() : p.t->num_attention_heads();
  p.recompute = c.recompute() == v1::RECOMPUTE_UNSPECIFIED ? v1::RECOMPUTE_NONE : c.recompute();
  p.schedule = c.pipeline_schedule();
  if (p.schedule == v1::SCHEDULE_UNSPECIFIED) p.schedule = p.v > 1 ? v1::SCHEDULE_INTERLEAVED_1F1B : v1::SCHEDULE_1F1B;
  p.precision = in.workload.precision() == v1::PRECISION_UNSPECIFIED ? v1::PRECISION_BF16 : in.workload.precision();
  p.recipe = in.workload.quant_recipe();
  // As the estimator resolves it (ResolvedMixedPrecision): stated, or NeMo's default for
  // its bf16-based recipes.
  p.grads_16bit = p.precision != v1::PRECISION_FP32 &&
                  (in.workload.mixed_precision() == v1::MIXED_PRECISION_BF16_GRADS ||
                   (in.workload.mixed_precision() == v1::MIXED_PRECISION_UNSPECIFIED &&
                    in.framework == v1::FRAMEWORK_NEMO && p.precision != v1::PRECISION_FP16));
  if (in.workload.optimizer_moments() == v1::PRECISION_BF16) p.moments_16bit = "bf16";
  if (in.workload.optimizer_moments() == v1::PRECISION_FP16) p.moments_16bit = "fp16";
  p.muon = in.workload.optimizer() == v1::OPTIMIZER_MUON;
  const bool adam =
      in.workload.optimizer() == v1::OPTIMIZER_UNSPECIFIED || in.workload.optimizer() == v1::OPTIMIZER_ADAM;
  p.precision_aware_optimizer =
      !p.moments_16bit.empty() || (in.framework == v1::FRAMEWORK_NEMO && p.precision == v1::PRECISION_BF16 && adam &&
                                   in.workload.mixed_precision() != v1::MIXED_PRECISION_FP32_PARAMS);
  // As the estimator's LayerDims resolve it: fused under NeMo (Megatron-Core's) and PyTorch
  // FSDP (flash-attn's).
  p.fused_cross_entropy = in.framework == v1::FRAMEWORK_NEMO || in.framework == v1::FRAMEWORK_PYTORCH_FSDP;
  return p;
}

}  // namespace

void A2aOverlapNote(const Plan& p, Notes* notes) {
  if (!p.c->moe_a2a_overlap()) return;
  // Megatron-Core MoE README ("Requirements for EP A2A Overlap": CUDA_DEVICE_MAX_CONNECTIONS
  // > 1); Megatron-MoE-ModelZoo sbatch_benchmarking.sh sets 32; arguments.py warns for TP or
  // CP on pre-Blackwell GPUs.
  std::string text =
      "the all-to-all overlap needs CUDA_DEVICE_MAX_CONNECTIONS above 1 (32 in NVIDIA's MoE model zoo)";
  if (p.tp > 1 || p.cp > 1) {
    absl::StrAppend(&text, "; on Hopper and earlier Megatron-LM warns that TP / CP communication then overlaps "
                           "worse (not priced here)");
  }
  notes->Add(text);
}

}  // namespace launcher

bool IsLauncher(absl::string_view name) {
  return std::find(std::begin(kLaunchers), std::end(kLaunchers), name) != std::end(kLaunchers);
}

std::string LauncherList() { return absl::StrJoin(kLaunchers, ", "); }

v1::Framework LauncherFramework(absl::string_view launcher) {
  if (launcher == "megatron" || launcher == "nemo") return v1::FRAMEWORK_MEGATRON;
  if (launcher == "megatron-bridge") return v1::FRAMEWORK_NEMO;
  if (launcher == "deepspeed") return v1::FRAMEWORK_DEEPSPEED;
  if (launcher == "torchtitan") return v1::FRAMEWORK_TORCHTITAN;
  return v1::FRAMEWORK_UNSPECIFIED;
}

absl::StatusOr<std::string> LauncherArguments(absl::string_view framework, const LaunchInput& in) {
  if (!IsLauncher(framework)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--emit: unknown framework \"", framework, "\"; valid: ", LauncherList()));
  }
  absl::StatusOr<launcher::Plan> p = launcher::Resolve(in);
  if (!p.ok()) return p.status();
  if (framework == "megatron") return launcher::Megatron(*p);
  if (framework == "megatron-bridge") return launcher::MegatronBridge(*p);
  if (framework == "nemo") return launcher::Nemo(*p);
  if (framework == "deepspeed") return launcher::DeepSpeed(*p);
  return launcher::Torchtitan(*p);
}

}  // namespace paraplan::cli
