#include "estimator/system/placement.h"

#include <algorithm>

namespace paraplan {

JobLayout::JobLayout(int64_t job_gpus, int gpus_per_node, int64_t cluster_nodes, Placement placement)
    : job_gpus_(std::max<int64_t>(1, job_gpus)), gpus_per_node_(std::max(1, gpus_per_node)) {
  const int64_t job_nodes = (job_gpus_ + gpus_per_node_ - 1) / gpus_per_node_;
  if (placement == Placement::kScattered && cluster_nodes > job_nodes) spread_ = cluster_nodes / job_nodes;
}

int64_t JobLayout::ClusterGpu(int64_t rank) const {
  return (rank / gpus_per_node_) * spread_ * gpus_per_node_ + rank % gpus_per_node_;
}

int64_t JobLayout::GpusInDomain(int64_t domain_gpus) const {
  if (domain_gpus <= 0) return job_gpus_;
  if (domain_gpus <= gpus_per_node_) return std::min(job_gpus_, domain_gpus);
  // Cluster nodes per domain, and job nodes among them (every spread-th node).
  const int64_t domain_nodes = domain_gpus / gpus_per_node_;
  const int64_t job_nodes_in = (domain_nodes + spread_ - 1) / spread_;
  return std::min(job_gpus_, job_nodes_in * gpus_per_node_);
}

}  // namespace paraplan
