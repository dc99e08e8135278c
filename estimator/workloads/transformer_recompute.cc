#include "estimator/workloads/transformer_recompute.h"

namespace paraplan::transformer {

double SeparateNorms(const Part* mla_up, const MlpExtras& extras) {
  return (mla_up != nullptr ? 1 : 0) + (extras.moe ? 1 : 0);
}

Recomputed SelectiveRecompute(const Dims& x, const Hardware& hw, unsigned modules, const Part& core,
                              const Part* mla_up, const Part& mlp, const MlpExtras& extras, const RerunComm& comm) {
  if (modules == 0) modules = kRecomputeCoreAttn;
  Recomputed r;
  const double bw = hw.hbm_bytes_per_s();
  auto rerun = [&](const Part& p, double saved) {
    r.saved_bytes += saved;
    r.seconds += p.matmul_fwd_s + p.mem_fwd_bytes / bw;
    r.kernels += p.kernels_fwd;
    r.regions += 1;
  };
  const double e = x.T * x.h * x.r * x.p;  // one token-hidden tensor of this GPU
  if (RecomputesCore(x, modules)) {
    rerun(core, core.act_bytes);
    r.seconds += comm.cp_fwd_s;  // context parallelism's exchange again
    r.kernels += comm.cp_calls_fwd;
  }
  if ((modules & kRecomputeMlaUpProj) && mla_up != nullptr) rerun(*mla_up, mla_up->act_bytes);
  const double norms = SeparateNorms(mla_up, extras);
  if ((modules & kRecomputeLayernorm) && norms > 0) {
    Part part;
    MemoryBound(2 * norms * e, norms, &part);
    rerun(part, norms * e);
  }
  const bool whole_mlp = extras.moe ? (modules & kRecomputeMoe) : (modules & kRecomputeMlp);
  if (whole_mlp) {
    rerun(mlp, mlp.act_bytes - e);
    r.seconds += comm.ep_s / 2;  // the forward's dispatch and combine again
    r.kernels += comm.ep_calls;
    return r;
  }
  if (extras.moe && (modules & kRecomputeMoeAct)) {
    Part act;
    MemoryBound(extras.act_fwd_bytes, 1, &act);
    rerun(act, extras.act_out_bytes);
  }
  if (extras.moe && (modules & kRecomputeSharedExperts) && extras.shared.kernels_fwd > 0) {
    rerun(extras.shared, extras.shared.act_bytes);
  }
  return r;
}

double LightRecomputeBytes(const Dims& x, unsigned modules, const Part* mla_up, const MlpExtras& extras) {
  const double e = x.T * x.h * x.r * x.p;
  double bytes = 0;
  if (!(modules & kRecomputeLayernorm)) bytes += SeparateNorms(mla_up, extras) * e;
  if (mla_up != nullptr && !(modules & kRecomputeMlaUpProj)) bytes += mla_up->act_bytes;
  if (extras.moe && !(modules & (kRecomputeMoe | kRecomputeMoeAct))) bytes += extras.act_out_bytes;
  return bytes;
}

Recomputed OpLevelSac(const Dims& x, const Hardware& hw, const Part& core, const Part& attn, const Part& resid,
                      const Part& mlp) {
  const double e = x.T * x.h * x.r * x.p;  // the block's input
  const double heads = x.a * x.d / x.t, kv = x.g * x.d / x.t;
  const double kept = e + x.T * (heads + kv) * x.p + x.T * heads * x.p + core.act_bytes +  // wq, wv, attention
                      x.T * x.f / x.t * x.p +                                             // w1
                      (x.gated ? x.T * x.h * x.p : 0);                                    // w2
  Recomputed r;
  r.saved_bytes = core.act_bytes + attn.act_bytes + resid.act_bytes + mlp.act_bytes - kept;
  const double mlp_share = x.gated ? 1.0 / 3 : 1.0 / 2;
  r.seconds = attn.matmul_fwd_s / 2 + mlp.matmul_fwd_s * mlp_share +
              (attn.mem_fwd_bytes + resid.mem_fwd_bytes + mlp.mem_fwd_bytes) / hw.hbm_bytes_per_s();
  r.kernels = attn.kernels_fwd + resid.kernels_fwd + mlp.kernels_fwd - 1;
  r.regions = 1;
  return r;
}

}  // namespace paraplan::transformer
