// CNN presets as layer graphs, from the architectures' published definitions:
// torchvision's resnet50 (He et al. 2016, v1.5: stride in the 3x3 conv), vgg16
// (Simonyan & Zisserman 2015, configuration D) and alexnet (the single-tower variant of
// Krizhevsky 2014) at 224 x 224; CosmoFlow as the MLPerf HPC reference builds it
// (mlcommons/hpc cosmoflow: conv_size 32, kernel 2 'same', MaxPool3D 2, LeakyReLU,
// fc 128 / 64, dropout 0.5, 4 targets) on 4 x 128^3 crops (5 conv blocks) and on
// 4 x 512^3 volumes (7 blocks, the reference's n_conv_layers raised until the last
// block again sees 8^3).
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "estimator/catalog/presets.h"

namespace paraplan {

namespace {

// Appends layers and tracks their output shapes (C, then spatial axes).
class GraphBuilder {
 public:
  explicit GraphBuilder(std::vector<int64_t> sample) : last_shape_(std::move(sample)) {}

  // Convolution: output per axis floor((in + 2 pad - (k - 1) - 1) / s) + 1; `same`
  // keeps the extent (Keras 'same' with an even kernel pads after only).
  void Conv(const std::string& name, int64_t out, int64_t k, int64_t s, int64_t pad, bool bias,
            const std::string& from = "", bool same = false) {
    LayerSpec l = Windowed(name, LayerKind::kConv, k, s, pad, from, same);
    l.output_shape[0] = out;
    l.bias = bias;
    Push(std::move(l));
  }
  void Pool(const std::string& name, int64_t k, int64_t s, int64_t pad, const std::string& from = "") {
    Push(Windowed(name, LayerKind::kPool, k, s, pad, from, false));
  }
  // Global average pool: a window over the whole extent.
  void GlobalPool(const std::string& name) {
    const int64_t k = last_shape_.size() > 1 ? last_shape_[1] : 1;
    Pool(name, k, k, 0);
  }
  void Pointwise(const std::string& name, LayerKind kind, const std::string& from = "") {
    LayerSpec l = Base(name, kind, from);
    l.output_shape = l.input_shape;
    Push(std::move(l));
  }
  void Add(const std::string& name, const std::string& a, const std::string& b) {
    LayerSpec l = Base(name, LayerKind::kAdd, a);
    l.inputs = {a, b};
    l.output_shape = l.input_shape;
    Push(std::move(l));
  }
  void Flatten(const std::string& name) {
    LayerSpec l = Base(name, LayerKind::kFlatten, "");
    double n = 1;
    for (int64_t v : l.input_shape) n *= static_cast<double>(v);
    l.output_shape = {static_cast<int64_t>(n)};
    Push(std::move(l));
  }
  void Fc(const std::string& name, int64_t out) {
    LayerSpec l = Base(name, LayerKind::kFc, "");
    l.output_shape = {out};
    Push(std::move(l));
  }
  // A hidden fully connected layer of a classifier head: fc<n>, its activation and
  // dropout (<act><n>, drop<n>).
  void HiddenFc(const std::string& n, int64_t out, LayerKind act_kind, const std::string& act) {
    Fc("fc" + n, out);
    Pointwise(act + n, act_kind);
    Pointwise("drop" + n, LayerKind::kDropout);
  }
  const std::string& last() const { return last_name_; }

  LayerGraphSpec Build(std::vector<int64_t> sample) {
    graph_.sample_shape = std::move(sample);
    return graph_;
  }

 private:
  LayerSpec Base(const std::string& name, LayerKind kind, const std::string& from) {
    LayerSpec l;
    l.name = name;
    l.kind = kind;
    l.input_shape = last_shape_;
    if (!from.empty()) {
      l.inputs = {from};
      l.input_shape = shapes_.at(from);
    }
    return l;
  }
  LayerSpec Windowed(const std::string& name, LayerKind kind, int64_t k, int64_t s, int64_t pad,
                     const std::string& from, bool same) {
    LayerSpec l = Base(name, kind, from);
    l.output_shape = l.input_shape;
    for (size_t a = 1; a < l.input_shape.size(); ++a) {
      l.kernel_shape.push_back(k);
      l.stride.push_back(s);
      l.padding.push_back(pad);
      l.output_shape[a] = same ? l.input_shape[a] : (l.input_shape[a] + 2 * pad - (k - 1) - 1) / s + 1;
    }
    return l;
  }
  void Push(LayerSpec l) {
    last_shape_ = l.output_shape;
    last_name_ = l.name;
    shapes_[l.name] = l.output_shape;
    graph_.layers.push_back(std::move(l));
  }

  LayerGraphSpec graph_;
  std::vector<int64_t> last_shape_;
  std::string last_name_;
  std::map<std::string, std::vector<int64_t>> shapes_;
};

Workload CnnWorkload(const std::string& name, LayerGraphSpec graph, int64_t sample_bytes, int64_t samples) {
  Workload w;
  w.name = name;
  w.kind = Workload::Kind::kLayerGraph;
  w.layer_graph = std::move(graph);
  // ParaDL's runs train in single precision; SGD with momentum (the architectures'
  // published training recipes).
  w.precision = Precision::kFp32;
  w.optimizer = Optimizer::kSgdMomentum;
  w.dataset.sample_bytes = sample_bytes;
  w.dataset.num_samples = samples;
  return w;
}

// ImageNet-1k training set: 1,281,167 JPEGs, ~110 KB on average (~140 GB).
constexpr int64_t kImageNetSamples = 1281167;
constexpr int64_t kImageNetSampleBytes = 110000;

Workload ResNet50() {
  GraphBuilder g({3, 224, 224});
  g.Conv("conv1", 64, 7, 2, 3, false);
  g.Pointwise("bn1", LayerKind::kNorm);
  g.Pointwise("relu1", LayerKind::kRelu);
  g.Pool("maxpool", 3, 2, 1);
  const int blocks[] = {3, 4, 6, 3};
  int64_t width = 64;
  for (int stage = 0; stage < 4; ++stage, width *= 2) {
    for (int i = 0; i < blocks[stage]; ++i) {
      const std::string p = absl::StrCat("layer", stage + 1, ".", i, ".");
      const std::string in = g.last();
      const int64_t stride = stage > 0 && i == 0 ? 2 : 1;
      g.Conv(p + "conv1", width, 1, 1, 0, false, in);
      g.Pointwise(p + "bn1", LayerKind::kNorm);
      g.Pointwise(p + "relu1", LayerKind::kRelu);
      g.Conv(p + "conv2", width, 3, stride, 1, false);
      g.Pointwise(p + "bn2", LayerKind::kNorm);
      g.Pointwise(p + "relu2", LayerKind::kRelu);
      g.Conv(p + "conv3", 4 * width, 1, 1, 0, false);
      g.Pointwise(p + "bn3", LayerKind::kNorm);
      std::string shortcut = in;
      if (i == 0) {
        g.Conv(p + "downsample.0", 4 * width, 1, stride, 0, false, in);
        g.Pointwise(p + "downsample.1", LayerKind::kNorm);
        shortcut = g.last();
      }
      g.Add(p + "add", p + "bn3", shortcut);
      g.Pointwise(p + "relu3", LayerKind::kRelu);
    }
  }
  g.GlobalPool("avgpool");
  g.Flatten("flatten");
  g.Fc("fc", 1000);
  g.Pointwise("loss", LayerKind::kSoftmax);
  return CnnWorkload("resnet50", g.Build({3, 224, 224}), kImageNetSampleBytes, kImageNetSamples);
}

Workload Vgg16() {
  GraphBuilder g({3, 224, 224});
  const int64_t cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  int conv = 0, pool = 0;
  for (int64_t c : cfg) {
    if (c == 0) {
      g.Pool(absl::StrCat("pool", ++pool), 2, 2, 0);
    } else {
      ++conv;
      g.Conv(absl::StrCat("conv", conv), c, 3, 1, 1, true);
      g.Pointwise(absl::StrCat("relu", conv), LayerKind::kRelu);
    }
  }
  g.Flatten("flatten");
  g.HiddenFc("6", 4096, LayerKind::kRelu, "relu");
  g.HiddenFc("7", 4096, LayerKind::kRelu, "relu");
  g.Fc("fc8", 1000);
  g.Pointwise("loss", LayerKind::kSoftmax);
  return CnnWorkload("vgg16", g.Build({3, 224, 224}), kImageNetSampleBytes, kImageNetSamples);
}

Workload AlexNet() {
  GraphBuilder g({3, 224, 224});
  g.Conv("conv1", 64, 11, 4, 2, true);
  g.Pointwise("relu1", LayerKind::kRelu);
  g.Pool("pool1", 3, 2, 0);
  g.Conv("conv2", 192, 5, 1, 2, true);
  g.Pointwise("relu2", LayerKind::kRelu);
  g.Pool("pool2", 3, 2, 0);
  g.Conv("conv3", 384, 3, 1, 1, true);
  g.Pointwise("relu3", LayerKind::kRelu);
  g.Conv("conv4", 256, 3, 1, 1, true);
  g.Pointwise("relu4", LayerKind::kRelu);
  g.Conv("conv5", 256, 3, 1, 1, true);
  g.Pointwise("relu5", LayerKind::kRelu);
  g.Pool("pool5", 3, 2, 0);
  g.Flatten("flatten");
  g.Pointwise("drop6", LayerKind::kDropout);
  g.Fc("fc6", 4096);
  g.Pointwise("relu6", LayerKind::kRelu);
  g.Pointwise("drop7", LayerKind::kDropout);
  g.Fc("fc7", 4096);
  g.Pointwise("relu7", LayerKind::kRelu);
  g.Fc("fc8", 1000);
  g.Pointwise("loss", LayerKind::kSoftmax);
  return CnnWorkload("alexnet", g.Build({3, 224, 224}), kImageNetSampleBytes, kImageNetSamples);
}

Workload CosmoFlow(const std::string& name, int64_t extent, int conv_blocks) {
  const std::vector<int64_t> sample = {4, extent, extent, extent};
  GraphBuilder g(sample);
  int64_t filters = 32;
  for (int i = 1; i <= conv_blocks; ++i, filters *= 2) {
    g.Conv(absl::StrCat("conv", i), filters, 2, 1, 0, true, "", /*same=*/true);
    g.Pointwise(absl::StrCat("act", i), LayerKind::kActivation);  // LeakyReLU
    g.Pool(absl::StrCat("pool", i), 2, 2, 0);
  }
  g.Flatten("flatten");
  g.HiddenFc("1", 128, LayerKind::kActivation, "act_fc");  // LeakyReLU
  g.HiddenFc("2", 64, LayerKind::kActivation, "act_fc");
  g.Fc("fc3", 4);
  // Samples stored as int16 (the MLPerf HPC v1.0 dataset: 524,288 training crops of
  // 4 x 128^3; 512^3 volumes hold 64 crops' worth of voxels).
  const int64_t voxels = 4 * extent * extent * extent;
  return CnnWorkload(name, g.Build(sample), 2 * voxels, extent == 128 ? 524288 : 8192);
}

}  // namespace

std::vector<Workload> CnnPresets() {
  return {ResNet50(), Vgg16(), AlexNet(), CosmoFlow("cosmoflow", 128, 5), CosmoFlow("cosmoflow-512", 512, 7)};
}

}  // namespace paraplan
