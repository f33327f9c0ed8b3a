#include "ditto/nn/layers.h"

#include <charconv>
#include <cmath>

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/init.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"

namespace ditto::nn {
namespace {

// Python's repr of a float: the shortest digits that read back, with ".0"
// on integral values.
std::string py_float(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".en") == std::string::npos) {
    s += ".0";
  }
  return s;
}

std::string py_bool(bool b) {
  return b ? "True" : "False";
}

// "(3, 3)" for a tuple of n dims from one or n values; "(3,)" for n = 1.
std::string py_tuple(const IntList& v, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) {
    s += (i ? ", " : "") + std::to_string(v.size() == 1 ? v[0] : v[i]);
  }
  return s + (n == 1 ? ",)" : ")");
}

// What PyTorch prints for a pooling argument: the int as given, or the
// tuple.
std::string py_int_or_tuple(const IntList& v) {
  return v.size() == 1 ? std::to_string(v[0]) : py_tuple(v, v.size());
}

IntList two(const IntList& v, const char* layer, const char* what) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == 2,
      ValueError,
      layer,
      what,
      " must be one int or two ints, got ",
      v.size(),
      " values");
  return v.size() == 2 ? v : IntList{v[0], v[0]};
}

// weight kaiming_uniform_(a = sqrt(5)), then bias uniform(+-1/sqrt(fan_in))
// (skipped when fan_in is 0): PyTorch's Linear and Conv reset_parameters.
void reset_weight_and_bias(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    if (fan_in > 0) {
      const double bound = 1 / std::sqrt(double(fan_in));
      init::uniform_(bias, -bound, bound);
    }
  }
}

// A parameter's storage before its initial draws: allocated outside any
// op frame, which would run the draws already queued (deferred.h).
Tensor uninitialized(const Shape& sizes) {
  return detail::new_tensor(sizes, kFloat32);
}

// The normalization layers' initial values: weight and running_var 1, the
// rest 0 (undefined tensors skipped). Queued like the draws of the other
// layers: a constructor that touched tensor data would run the queue in the
// middle of a container's arguments (deferred.h).
void fill_ones_zeros(
    const Tensor& one,
    const Tensor& zero,
    const Tensor& zero2 = {},
    const Tensor& one2 = {},
    const Tensor& count = {}) {
  autograd::NoGradGuard no_grad;
  for (const Tensor* t : {&one, &one2}) {
    if (t->defined()) {
      Tensor(*t).fill_(1.0);
    }
  }
  for (const Tensor* t : {&zero, &zero2, &count}) {
    if (t->defined()) {
      Tensor(*t).zero_();
    }
  }
}

void check_positive(int64_t v, const char* layer, const char* what) {
  DITTO_CHECK(v > 0, ValueError, layer, what, " must be positive, got ", v);
}

void check_groups(int64_t in, int64_t out, int64_t groups, const char* layer) {
  DITTO_CHECK(
      groups > 0, ValueError, layer, "groups must be a positive integer");
  DITTO_CHECK(
      in % groups == 0,
      ValueError,
      layer,
      "in_channels must be divisible by groups");
  DITTO_CHECK(
      out % groups == 0,
      ValueError,
      layer,
      "out_channels must be divisible by groups");
}

// The rank and channel count a conv layer takes, checked with the layer's
// own words before the op runs.
void check_conv_input(
    const Tensor& x,
    int64_t spatial,
    int64_t in_channels,
    const char* layer) {
  DITTO_CHECK(x.defined(), ValueError, layer, "undefined input");
  const int64_t batched = spatial + 2;
  DITTO_CHECK(
      x.dim() == batched || x.dim() == batched - 1,
      ValueError,
      layer,
      "Expected ",
      batched - 1,
      "D (unbatched) or ",
      batched,
      "D (batched) input, but got input of size: ",
      shape_str(x.sizes()));
  const int64_t c = x.size(x.dim() == batched ? 1 : 0);
  DITTO_CHECK(
      c == in_channels,
      ValueError,
      layer,
      "expected input of size ",
      shape_str(x.sizes()),
      " to have ",
      in_channels,
      " channels, but got ",
      c,
      " channels instead");
}

} // namespace

// ---- Linear

Linear::Linear(const LinearOptions& o) : Module("Linear"), options(o) {
  DITTO_CHECK(
      o.in_features() >= 0 && o.out_features() >= 0,
      ValueError,
      "Linear",
      "in_features and out_features must be non-negative, got ",
      o.in_features(),
      " and ",
      o.out_features());
  weight = register_parameter(
      "weight", uninitialized({o.out_features(), o.in_features()}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_features()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void Linear::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Linear::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(x.defined(), ValueError, "Linear", "undefined input");
  DITTO_CHECK(
      x.dim() >= 1 && x.size(-1) == options.in_features(),
      ValueError,
      "Linear",
      "mat1 and mat2 shapes cannot be multiplied: input of size ",
      shape_str(x.sizes()),
      " for in_features=",
      options.in_features());
  return functional::linear(x, weight, bias);
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) +
      ", out_features=" + std::to_string(options.out_features()) +
      ", bias=" + py_bool(bias.defined());
}

// ---- Conv2d

Conv2d::Conv2d(const Conv2dOptions& o) : Module("Conv2d"), options(o) {
  check_positive(o.in_channels(), "Conv2d", "in_channels");
  check_positive(o.out_channels(), "Conv2d", "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), "Conv2d");
  const IntList k = two(o.kernel_size(), "Conv2d", "kernel_size");
  two(o.stride(), "Conv2d", "stride");
  two(o.padding(), "Conv2d", "padding");
  two(o.dilation(), "Conv2d", "dilation");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.out_channels(), o.in_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void Conv2d::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 2, options.in_channels(), "Conv2d");
  const bool batched = x.dim() == 4;
  Tensor y = conv2d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      two(options.stride(), "Conv2d", "stride"),
      two(options.padding(), "Conv2d", "padding"),
      two(options.dilation(), "Conv2d", "dilation"),
      options.groups());
  return batched ? y : y.squeeze(0);
}

std::string Conv2d::extra_repr() const {
  const auto& o = options;
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) +
      ", kernel_size=" + py_tuple(o.kernel_size(), 2) +
      ", stride=" + py_tuple(o.stride(), 2);
  if (two(o.padding(), "Conv2d", "padding") != IntList{0, 0}) {
    s += ", padding=" + py_tuple(o.padding(), 2);
  }
  if (two(o.dilation(), "Conv2d", "dilation") != IntList{1, 1}) {
    s += ", dilation=" + py_tuple(o.dilation(), 2);
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias.defined()) {
    s += ", bias=False";
  }
  return s;
}

// ---- Conv1d

Conv1d::Conv1d(const Conv1dOptions& o) : Module("Conv1d"), options(o) {
  check_positive(o.in_channels(), "Conv1d", "in_channels");
  check_positive(o.out_channels(), "Conv1d", "out_channels");
  check_positive(o.kernel_size(), "Conv1d", "kernel_size");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), "Conv1d");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void Conv1d::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv1d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 1, options.in_channels(), "Conv1d");
  const bool batched = x.dim() == 3;
  Tensor y = conv1d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      {options.stride()},
      {options.padding()},
      {options.dilation()},
      options.groups());
  return batched ? y : y.squeeze(0);
}

std::string Conv1d::extra_repr() const {
  const auto& o = options;
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) + ", kernel_size=(" +
      std::to_string(o.kernel_size()) + ",), stride=(" +
      std::to_string(o.stride()) + ",)";
  if (o.padding() != 0) {
    s += ", padding=(" + std::to_string(o.padding()) + ",)";
  }
  if (o.dilation() != 1) {
    s += ", dilation=(" + std::to_string(o.dilation()) + ",)";
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias.defined()) {
    s += ", bias=False";
  }
  return s;
}

// ---- ConvTranspose2d

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions& o)
    : Module("ConvTranspose2d"), options(o) {
  const char* name = "ConvTranspose2d";
  check_positive(o.in_channels(), name, "in_channels");
  check_positive(o.out_channels(), name, "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), name);
  const IntList k = two(o.kernel_size(), name, "kernel_size");
  two(o.stride(), name, "stride");
  two(o.padding(), name, "padding");
  two(o.output_padding(), name, "output_padding");
  two(o.dilation(), name, "dilation");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.in_channels(), o.out_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void ConvTranspose2d::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor ConvTranspose2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 2, options.in_channels(), "ConvTranspose2d");
  const bool batched = x.dim() == 4;
  Tensor y = conv_transpose2d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      options.stride(),
      options.padding(),
      options.output_padding(),
      options.groups(),
      options.dilation());
  return batched ? y : y.squeeze(0);
}

std::string ConvTranspose2d::extra_repr() const {
  const auto& o = options;
  const char* name = "ConvTranspose2d";
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) +
      ", kernel_size=" + py_tuple(o.kernel_size(), 2) +
      ", stride=" + py_tuple(o.stride(), 2);
  if (two(o.padding(), name, "padding") != IntList{0, 0}) {
    s += ", padding=" + py_tuple(o.padding(), 2);
  }
  if (two(o.dilation(), name, "dilation") != IntList{1, 1}) {
    s += ", dilation=" + py_tuple(o.dilation(), 2);
  }
  if (two(o.output_padding(), name, "output_padding") != IntList{0, 0}) {
    s += ", output_padding=" + py_tuple(o.output_padding(), 2);
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias.defined()) {
    s += ", bias=False";
  }
  return s;
}

// ---- MaxPool2d

MaxPool2d::MaxPool2d(const MaxPool2dOptions& o)
    : Module("MaxPool2d"), options(o) {
  two(o.kernel_size(), "MaxPool2d", "kernel_size");
}

std::pair<Tensor, Tensor> MaxPool2d::forward_with_indices(
    const Tensor& x) const {
  ForwardScope scope(*this);
  return max_pool2d_with_indices(
      x,
      options.kernel_size(),
      options.stride(),
      options.padding(),
      options.dilation(),
      options.ceil_mode());
}

Tensor MaxPool2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::max_pool2d(
      x,
      options.kernel_size(),
      options.stride(),
      options.padding(),
      options.dilation(),
      options.ceil_mode());
}

std::string MaxPool2d::extra_repr() const {
  const auto& o = options;
  return "kernel_size=" + py_int_or_tuple(o.kernel_size()) + ", stride=" +
      py_int_or_tuple(o.stride().empty() ? o.kernel_size() : o.stride()) +
      ", padding=" + py_int_or_tuple(o.padding()) +
      ", dilation=" + py_int_or_tuple(o.dilation()) +
      ", ceil_mode=" + py_bool(o.ceil_mode());
}

// ---- normalization

BatchNorm::BatchNorm(const char* name, const BatchNormOptions& o, IntList ranks)
    : Module(name), options(o), ranks_(std::move(ranks)) {
  check_positive(o.num_features(), name, "num_features");
  const int64_t c = o.num_features();
  if (o.affine()) {
    weight = register_parameter("weight", uninitialized({c}));
    bias = register_parameter("bias", uninitialized({c}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", uninitialized({c}));
    running_var = register_buffer("running_var", uninitialized({c}));
    num_batches_tracked =
        register_buffer("num_batches_tracked", detail::new_tensor({}, kInt64));
  }
  defer_reset([w = weight,
               b = bias,
               rm = running_mean,
               rv = running_var,
               n = num_batches_tracked] { fill_ones_zeros(w, b, rm, rv, n); });
}

Tensor BatchNorm::forward(const Tensor& x) {
  ForwardScope scope(*this);
  const char* name = type_name().c_str();
  DITTO_CHECK(x.defined(), ValueError, name, "undefined input");
  bool rank_ok = false;
  for (int64_t r : ranks_) {
    rank_ok = rank_ok || x.dim() == r;
  }
  DITTO_CHECK(
      rank_ok,
      ValueError,
      name,
      "expected ",
      ranks_.size() == 1 ? "4D" : "2D or 3D",
      " input (got ",
      x.dim(),
      "D input)");
  DITTO_CHECK(
      x.size(1) == options.num_features(),
      ValueError,
      name,
      "running_mean should contain ",
      x.size(1),
      " elements not ",
      options.num_features());
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    DITTO_CHECK(
        !(x.numel() / x.size(1) <= 1),
        ValueError,
        name,
        "Expected more than 1 value per channel when training, got input "
        "size ",
        shape_str(x.sizes()));
    autograd::NoGradGuard no_grad;
    num_batches_tracked.add_(int64_t(1));
    if (!options.momentum()) {
      factor = 1.0 / double(num_batches_tracked.item<int64_t>());
    }
  }
  const bool use_running = !is_training() && running_mean.defined();
  return batch_norm(
      x,
      running_mean,
      running_var,
      weight,
      bias,
      !use_running,
      factor,
      options.eps());
}

std::string BatchNorm::extra_repr() const {
  const auto& o = options;
  return std::to_string(o.num_features()) + ", eps=" + py_float(o.eps()) +
      ", momentum=" + (o.momentum() ? py_float(*o.momentum()) : "None") +
      ", affine=" + py_bool(o.affine()) +
      ", track_running_stats=" + py_bool(o.track_running_stats());
}

LayerNorm::LayerNorm(const LayerNormOptions& o)
    : Module("LayerNorm"), options(o) {
  DITTO_CHECK(
      !o.normalized_shape().empty(),
      ValueError,
      "LayerNorm",
      "normalized_shape must have at least one size");
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", uninitialized(o.normalized_shape()));
    bias = register_parameter("bias", uninitialized(o.normalized_shape()));
    defer_reset([w = weight, b = bias] { fill_ones_zeros(w, b); });
  }
}

Tensor LayerNorm::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return layer_norm(x, options.normalized_shape(), weight, bias, options.eps());
}

std::string LayerNorm::extra_repr() const {
  return py_tuple(
             options.normalized_shape(), options.normalized_shape().size()) +
      ", eps=" + py_float(options.eps()) +
      ", elementwise_affine=" + py_bool(options.elementwise_affine());
}

GroupNorm::GroupNorm(const GroupNormOptions& o)
    : Module("GroupNorm"), options(o) {
  DITTO_CHECK(
      o.num_groups() > 0 && o.num_channels() % o.num_groups() == 0,
      ValueError,
      "GroupNorm",
      "num_channels must be divisible by num_groups");
  if (o.affine()) {
    weight = register_parameter("weight", uninitialized({o.num_channels()}));
    bias = register_parameter("bias", uninitialized({o.num_channels()}));
    defer_reset([w = weight, b = bias] { fill_ones_zeros(w, b); });
  }
}

Tensor GroupNorm::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(
      x.defined() && x.dim() >= 2 && x.size(1) == options.num_channels(),
      ValueError,
      "GroupNorm",
      "expected an input (N, ",
      options.num_channels(),
      ", ...), got sizes ",
      shape_str(x.defined() ? x.sizes() : Shape{}));
  return group_norm(x, options.num_groups(), weight, bias, options.eps());
}

std::string GroupNorm::extra_repr() const {
  return std::to_string(options.num_groups()) + ", " +
      std::to_string(options.num_channels()) +
      ", eps=" + py_float(options.eps()) +
      ", affine=" + py_bool(options.affine());
}

// ---- activations and shape layers

Tensor ReLU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::relu(x);
}

Tensor LeakyReLU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::leaky_relu(x, negative_slope);
}

std::string LeakyReLU::extra_repr() const {
  return "negative_slope=" + py_float(negative_slope);
}

GELU::GELU(std::string a) : Module("GELU"), approximate(std::move(a)) {
  DITTO_CHECK(
      approximate == "none" || approximate == "tanh",
      ValueError,
      "GELU",
      "approximate argument must be either none or tanh, got ",
      approximate);
}

Tensor GELU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::gelu(x, approximate);
}

std::string GELU::extra_repr() const {
  return "approximate='" + approximate + "'";
}

Tensor SiLU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::silu(x);
}

Tensor Tanh::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::tanh(x);
}

Tensor Sigmoid::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::sigmoid(x);
}

Tensor Softmax::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::softmax(x, dim);
}

std::string Softmax::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

Tensor LogSoftmax::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::log_softmax(x, dim);
}

std::string LogSoftmax::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

Tensor Flatten::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return x.flatten(start_dim, end_dim);
}

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) +
      ", end_dim=" + std::to_string(end_dim);
}

Tensor Unflatten::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(x.defined(), ValueError, "Unflatten", "undefined input");
  const int64_t d = wrap_dim(dim, x.dim(), "Unflatten");
  Shape s(x.sizes().begin(), x.sizes().begin() + d);
  s.insert(s.end(), sizes.begin(), sizes.end());
  s.insert(s.end(), x.sizes().begin() + d + 1, x.sizes().end());
  return x.reshape(s);
}

std::string Unflatten::extra_repr() const {
  return "dim=" + std::to_string(dim) +
      ", unflattened_size=" + py_tuple(sizes, sizes.size());
}

// ---- Dropout

Dropout::Dropout(const DropoutOptions& o) : Module("Dropout"), options(o) {
  DITTO_CHECK(
      o.p() >= 0 && o.p() <= 1,
      ValueError,
      "Dropout",
      "dropout probability has to be between 0 and 1, but got ",
      o.p());
}

Tensor Dropout::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::dropout(
      x, options.p(), is_training(), options.generator());
}

std::string Dropout::extra_repr() const {
  return "p=" + py_float(options.p()) + ", inplace=False";
}

// ---- more pooling, padding, embeddings

Tensor AvgPool2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  const auto& o = options;
  return functional::avg_pool2d(
      x,
      o.kernel_size(),
      o.stride(),
      o.padding(),
      o.ceil_mode(),
      o.count_include_pad(),
      o.divisor_override());
}

std::string AvgPool2d::extra_repr() const {
  const auto& o = options;
  return "kernel_size=" + py_int_or_tuple(o.kernel_size()) + ", stride=" +
      py_int_or_tuple(o.stride().empty() ? o.kernel_size() : o.stride()) +
      ", padding=" + py_int_or_tuple(o.padding());
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::adaptive_avg_pool2d(x, output_size);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + py_int_or_tuple(output_size);
}

ZeroPad2d::ZeroPad2d(const char* name, const char* mode, IntList p)
    : Module(name), mode_(mode) {
  DITTO_CHECK(
      p.size() == 1 || p.size() == 4,
      ValueError,
      name,
      "padding must be one int or four ints (left, right, top, bottom), got ",
      p.size(),
      " values");
  padding = p.size() == 4 ? p : IntList{p[0], p[0], p[0], p[0]};
}

Tensor ZeroPad2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::pad(x, padding, mode_);
}

std::string ZeroPad2d::extra_repr() const {
  return py_tuple(padding, 4);
}

Dropout2d::Dropout2d(const DropoutOptions& o)
    : Module("Dropout2d"), options(o) {
  DITTO_CHECK(
      o.p() >= 0 && o.p() <= 1,
      ValueError,
      "Dropout2d",
      "dropout probability has to be between 0 and 1, but got ",
      o.p());
}

Tensor Dropout2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::dropout2d(
      x, options.p(), is_training(), options.generator());
}

std::string Dropout2d::extra_repr() const {
  return "p=" + py_float(options.p()) + ", inplace=False";
}

Embedding::Embedding(const EmbeddingOptions& o) : Embedding("Embedding", o) {}

Embedding::Embedding(const char* name, const EmbeddingOptions& o)
    : Module(name), options(o) {
  const int64_t n = o.num_embeddings();
  check_positive(n, name, "num_embeddings");
  check_positive(o.embedding_dim(), name, "embedding_dim");
  if (o.padding_idx()) {
    const int64_t p = *o.padding_idx();
    DITTO_CHECK(
        p < n && p >= -n,
        ValueError,
        name,
        "Padding_idx must be within num_embeddings, got ",
        p);
    options.padding_idx(p < 0 ? p + n : p);
  }
  weight = register_parameter("weight", uninitialized({n, o.embedding_dim()}));
  defer_reset([w = weight, pad = options.padding_idx()] {
    init::normal_(w);
    if (pad) {
      autograd::NoGradGuard no_grad;
      w.select(0, *pad).fill_(0.0);
    }
  });
}

Tensor Embedding::forward(const Tensor& indices) const {
  ForwardScope scope(*this);
  return functional::embedding(indices, weight, options.padding_idx());
}

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(options.num_embeddings()) + ", " +
      std::to_string(options.embedding_dim());
  if (options.padding_idx()) {
    s += ", padding_idx=" + std::to_string(*options.padding_idx());
  }
  return s;
}

EmbeddingBag::EmbeddingBag(const EmbeddingOptions& o, std::string m)
    : Embedding("EmbeddingBag", o), mode(std::move(m)) {
  DITTO_CHECK(
      mode == "sum" || mode == "mean" || mode == "max",
      ValueError,
      "EmbeddingBag",
      "mode has to be one of sum, mean or max, got ",
      mode);
}

Tensor EmbeddingBag::forward(
    const Tensor& input,
    const Tensor& offsets,
    const Tensor& per_sample_weights) const {
  ForwardScope scope(*this);
  return embedding_bag(
      input,
      weight,
      offsets,
      mode,
      per_sample_weights,
      false,
      options.padding_idx());
}

std::string EmbeddingBag::extra_repr() const {
  return Embedding::extra_repr() + ", mode='" + mode + "'";
}

std::string Upsample::extra_repr() const {
  const auto& o = options;
  std::string s;
  if (!o.size().empty()) {
    s = "size=" + py_int_or_tuple(o.size());
  } else {
    const auto& f = o.scale_factor();
    s = "scale_factor=";
    if (f.size() == 1) {
      s += py_float(f[0]);
    } else {
      s += "(" + py_float(f[0]) + ", " + py_float(f[1]) + ")";
    }
  }
  const char* mode = o.mode() == InterpolateMode::Bilinear ? "bilinear"
      : o.mode() == InterpolateMode::NearestExact          ? "nearest-exact"
                                                           : "nearest";
  return s + ", mode=" + mode;
}

// ---- containers

Tensor Sequential::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  Tensor y = x;
  for (const auto& step : steps_) {
    y = step(y);
  }
  return y;
}

Module& Sequential::operator[](size_t i) const {
  DITTO_CHECK(
      i < steps_.size(),
      IndexError,
      "Sequential",
      "index ",
      i,
      " is out of range for ",
      steps_.size(),
      " modules");
  return *children()[i];
}

Module& ModuleList::operator[](size_t i) const {
  DITTO_CHECK(
      i < items_.size(),
      IndexError,
      "ModuleList",
      "index ",
      i,
      " is out of range for ",
      items_.size(),
      " modules");
  return *items_[i];
}

Module& ModuleDict::operator[](const std::string& name) const {
  for (const auto& [k, m] : items_) {
    if (k == name) {
      return *m;
    }
  }
  detail::throw_error<KeyError>("ModuleDict", "no module named \"", name, "\"");
}

bool ModuleDict::contains(const std::string& name) const {
  for (const auto& item : items_) {
    if (item.first == name) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) {
    out.push_back(item.first);
  }
  return out;
}

// ---- losses

CTCLoss::CTCLoss(const CTCLossOptions& o) : Module("CTCLoss"), options(o) {}

Tensor CTCLoss::forward(
    const Tensor& log_probs,
    const Tensor& targets,
    const Tensor& input_lengths,
    const Tensor& target_lengths) const {
  ForwardScope scope(*this);
  return functional::ctc_loss(
      log_probs,
      targets,
      input_lengths,
      target_lengths,
      options.blank(),
      options.reduction(),
      options.zero_infinity());
}

Tensor CTCLoss::forward(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths) const {
  ForwardScope scope(*this);
  return functional::ctc_loss(
      log_probs,
      targets,
      input_lengths,
      target_lengths,
      options.blank(),
      options.reduction(),
      options.zero_infinity());
}

} // namespace ditto::nn
