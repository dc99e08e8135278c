// Layer-graph (CNN) geometry, independent of costs: which layers a layer reads (a DAG
// given by names; the previous layer by default), which tensors backward keeps, how a
// spatial split factors over axes, and the halo a windowed layer (conv, overlapping
// pool) needs from its neighbours on each split axis.
//
// Conventions: shapes are per sample, channels first, then the spatial axes; a spatial
// split cuts the first `axes` spatial axes into blocks aligned with the layer's stride.
// Pure functions of their arguments; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_LAYER_GRAPH_H_
#define PARAPLAN_ESTIMATOR_INPUTS_LAYER_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

// Index of the sample (the graph's input) among a layer's inputs.
inline constexpr int kSampleInput = -1;

// inputs[i]: the layers layer i reads, by index (kSampleInput for the sample). A named
// input must be an earlier layer; INVALID_ARGUMENT names the layer and the input.
absl::StatusOr<std::vector<std::vector<int>>> ResolveInputs(const LayerGraphSpec& g);

// Which tensors backward needs (PyTorch autograd / cuDNN): conv, fc, batch norm and
// pool keep their input (pool its output too), relu / activation / softmax their
// output. kept[0] is the sample, kept[i + 1] the output of layer i; a tensor several
// layers keep is stored once.
std::vector<bool> KeptTensors(const LayerGraphSpec& g, const std::vector<std::vector<int>>& inputs);

// Spatial extent of axis `axis` (0 = first spatial axis) of a shape; 1 if absent.
int64_t SpatialExtent(const std::vector<int64_t>& shape, int axis);
int SpatialAxes(const std::vector<int64_t>& shape);

// Splits `degree` ranks over `axes` spatial axes as evenly as possible, the largest
// factor first (8 over 2 axes: {4, 2}; 8 over 3: {2, 2, 2}; 6 over 2: {3, 2}).
std::vector<int> SpatialFactors(int degree, int axes);

// Input rows beyond a rank's own block that a window needs on each side: kernel k,
// stride s, padding pad (per side), dilation d. Output rows [o0, o1) read input rows
// [o0 s - pad, (o1 - 1) s - pad + d (k - 1)] against the owned [o0 s, o1 s): `pad`
// before and d (k - 1) - pad - s + 1 after (e.g. 3x3 / 1 / pad 1: 1 and 1; 7x7 / 2 /
// pad 3: 3 and 2; 2x2 / 2: none).
struct HaloWidth {
  int64_t before = 0;
  int64_t after = 0;
};
HaloWidth WindowHalo(int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);

// Elements of input (per sample) one interior rank receives for a windowed layer whose
// first spatial axes are split by `factors`: axis by axis, a slab of the halo rows times
// the rank's extent on the other axes (channels included), the extents of axes already
// exchanged grown by their halos (so corners arrive with the second axis). With a
// factor of 2 a rank has one neighbour on that axis (the larger side counts); above 2 an
// interior rank has two. `exchanges` gets the number of axes with a halo (each axis's
// two neighbour messages travel at once).
double HaloElementsPerSample(const LayerSpec& l, const std::vector<int>& factors, int* exchanges);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_LAYER_GRAPH_H_
