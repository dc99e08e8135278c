#include "estimator/inputs/layer_graph.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "estimator/inputs/echo.h"

namespace paraplan {

namespace {

int64_t At(const std::vector<int64_t>& v, int axis, int64_t fallback) {
  return axis < static_cast<int>(v.size()) && v[axis] > 0 ? v[axis] : fallback;
}

bool Windowed(const LayerSpec& l) { return l.kind == LayerKind::kConv || l.kind == LayerKind::kPool; }

}  // namespace

absl::StatusOr<std::vector<std::vector<int>>> ResolveInputs(const LayerGraphSpec& g) {
  std::unordered_map<std::string, int> index;
  std::vector<std::vector<int>> inputs(g.layers.size());
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const LayerSpec& l = g.layers[i];
    if (l.inputs.empty()) {
      inputs[i].push_back(static_cast<int>(i) - 1);  // the previous layer, or the sample
    }
    for (const std::string& name : l.inputs) {
      const auto it = index.find(name);
      if (it == index.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "workload.layer_graph.layers[", i, "].inputs: \"", Abbreviated(name),
            "\" is not the name of an earlier layer"));
      }
      inputs[i].push_back(it->second);
    }
    if (!l.name.empty()) index[l.name] = static_cast<int>(i);
  }
  return inputs;
}

std::vector<bool> KeptTensors(const LayerGraphSpec& g, const std::vector<std::vector<int>>& inputs) {
  std::vector<bool> kept(g.layers.size() + 1, false);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const LayerKind k = g.layers[i].kind;
    if (k == LayerKind::kConv || k == LayerKind::kFc || k == LayerKind::kNorm || k == LayerKind::kPool) {
      for (int in : inputs[i]) kept[in + 1] = true;
    }
    if (k == LayerKind::kPool || k == LayerKind::kRelu || k == LayerKind::kActivation || k == LayerKind::kSoftmax) {
      kept[i + 1] = true;
    }
  }
  return kept;
}

int SpatialAxes(const std::vector<int64_t>& shape) {
  return std::max(0, static_cast<int>(shape.size()) - 1);
}

int64_t SpatialExtent(const std::vector<int64_t>& shape, int axis) {
  return axis + 1 < static_cast<int>(shape.size()) ? shape[axis + 1] : 1;
}

std::vector<int> SpatialFactors(int degree, int axes) {
  std::vector<int> f(std::max(1, axes), 1);
  int rest = std::max(1, degree);
  for (int a = 0; a < static_cast<int>(f.size()); ++a) {
    const int left = static_cast<int>(f.size()) - a;
    // The smallest divisor of `rest` not below its left-th root goes to this axis.
    const double root = std::pow(rest, 1.0 / left);
    int pick = rest;
    for (int d = 1; d <= rest; ++d) {
      if (rest % d == 0 && d >= root - 1e-9) {
        pick = d;
        break;
      }
    }
    f[a] = pick;
    rest /= pick;
  }
  std::sort(f.begin(), f.end(), std::greater<int>());
  return f;
}

HaloWidth WindowHalo(int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  HaloWidth h;
  const int64_t reach = dilation * (kernel - 1);
  h.before = std::clamp<int64_t>(padding, 0, reach);
  h.after = std::max<int64_t>(0, reach - padding - stride + 1);
  return h;
}

double HaloElementsPerSample(const LayerSpec& l, const std::vector<int>& factors, int* exchanges) {
  *exchanges = 0;
  if (!Windowed(l)) return 0;
  const int axes = SpatialAxes(l.input_shape);
  std::vector<double> extent(axes);
  for (int a = 0; a < axes; ++a) {
    const int f = a < static_cast<int>(factors.size()) ? factors[a] : 1;
    extent[a] = static_cast<double>(SpatialExtent(l.input_shape, a)) / f;
  }
  const double channels = l.input_shape.empty() ? 1 : static_cast<double>(l.input_shape[0]);
  double total = 0;
  for (int a = 0; a < axes && a < static_cast<int>(factors.size()); ++a) {
    if (factors[a] <= 1) continue;
    const int64_t k = At(l.kernel_shape, a, 1);
    const int64_t s = At(l.stride, a, l.kind == LayerKind::kPool ? k : 1);
    const HaloWidth h = WindowHalo(k, s, At(l.padding, a, 0), At(l.dilation, a, 1));
    const double rows = factors[a] == 2 ? std::max(h.before, h.after) : h.before + h.after;
    if (rows <= 0) continue;
    double slab = channels * rows;
    for (int o = 0; o < axes; ++o) {
      if (o != a) slab *= extent[o];
    }
    total += slab;
    extent[a] += rows;
    ++*exchanges;
  }
  return total;
}

}  // namespace paraplan
