// DeepSpeed ZeRO-3's parameter-fetch and gradient-bucket settings as the model assumes
// them: DeepSpeed's defaults (deepspeed/runtime/zero/config.py, DeepSpeedZeroConfig), in
// parameter elements. The estimator's ZeRO-3 costs (iteration/data_parallel.cc) follow
// them, and `--emit deepspeed` writes them into ds_config.json so a plan runs with the
// settings it was estimated under whatever a DeepSpeed release defaults to.
// Constants only; no dependencies.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_DEEPSPEED_ZERO3_H_
#define PARAPLAN_ESTIMATOR_INPUTS_DEEPSPEED_ZERO3_H_

#include <cstdint>

namespace paraplan::deepspeed {

// stage3_param_persistence_threshold: tensors smaller than this stay whole on every rank.
inline constexpr int64_t kPersistenceThreshold = 100'000;
// stage3_max_live_parameters: what the coordinator holds gathered before it stops prefetching.
inline constexpr int64_t kMaxLiveParameters = 1'000'000'000;
// stage3_max_reuse_distance: a tensor used again within this many elements stays gathered.
inline constexpr int64_t kMaxReuseDistance = 1'000'000'000;
// stage3_prefetch_bucket_size: elements fetched ahead (at least the next tensor).
inline constexpr int64_t kPrefetchBucket = 50'000'000;
// reduce_bucket_size: gradient elements reduced per bucket.
inline constexpr int64_t kReduceBucket = 500'000'000;

}  // namespace paraplan::deepspeed

#endif  // PARAPLAN_ESTIMATOR_INPUTS_DEEPSPEED_ZERO3_H_
