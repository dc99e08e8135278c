// JobLayout: where a job's ranks sit on the cluster's GPUs, and how many of the job's
// GPUs share each network domain.
//
// Ranks fill a node's GPUs first (local rank = rank % gpus_per_node). Packed placement
// puts job node j on cluster node j; scattered spreads the job's nodes evenly over the
// cluster (node j on cluster node j * floor(num_nodes / job_nodes)), as a busy scheduler
// leaves them. Value type; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_SYSTEM_PLACEMENT_H_
#define PARAPLAN_ESTIMATOR_SYSTEM_PLACEMENT_H_

#include <cstdint>

#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"

namespace paraplan {

class JobLayout {
 public:
  JobLayout() = default;
  // `gpus_per_node` and `cluster_nodes` from the profile (cluster_nodes 0 = unbounded:
  // scattered then equals packed).
  JobLayout(int64_t job_gpus, int gpus_per_node, int64_t cluster_nodes, Placement placement);

  // Cluster GPU index (cluster node * gpus_per_node + local rank) of job rank `rank`.
  int64_t ClusterGpu(int64_t rank) const;
  // Cluster nodes between consecutive job nodes (1 when packed).
  int64_t node_spread() const { return spread_; }
  int64_t job_gpus() const { return job_gpus_; }
  // Job GPUs inside one domain of `domain_gpus` cluster GPUs (the busiest such domain).
  int64_t GpusInDomain(int64_t domain_gpus) const;

 private:
  int64_t job_gpus_ = 1;
  int gpus_per_node_ = 1;
  int64_t spread_ = 1;
};

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_SYSTEM_PLACEMENT_H_
