#include "estimator/iteration/result.h"

namespace paraplan {

double TimeBreakdown::Sum() const {
  return compute_s + recompute_s + tp_comm_s + spatial_comm_s + cp_comm_s + ep_comm_s + pp_comm_s +
         pipeline_bubble_s + dp_comm_s + optimizer_s + data_loading_s + overhead_s + offload_s;
}

}  // namespace paraplan
