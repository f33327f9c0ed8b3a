// conv_transpose2d and conv_transpose3d: the gradient of conv2d / conv3d
// with respect to its input, run forward; the backward is the convolution
// (input) and its weight gradient (weight).

#include "ditto/nn/functional/conv.h"

#include "ditto/ops/conv.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto::nn::functional {
namespace {

// One value per spatial dim (a single value repeated).
IntList per_dim(
    const IntList& v,
    int64_t spatial,
    const char* op,
    const char* what) {
  DITTO_CHECK(
      v.size() == 1 || int64_t(v.size()) == spatial,
      ValueError,
      op,
      what,
      " must be one int or ",
      spatial,
      " ints, got ",
      v.size(),
      " values");
  return v.size() == 1 ? IntList(size_t(spatial), v[0]) : v;
}

// The checked arguments and the output shape of a transposed convolution.
struct Transposed {
  IntList stride, padding, dilation;
  Shape out;
};

Transposed transposed_geometry(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_padding,
    int64_t groups,
    const IntArg& dilation,
    int64_t spatial,
    const char* op) {
  DITTO_CHECK(
      x.defined() && weight.defined(),
      ValueError,
      op,
      "undefined input or weight");
  DITTO_CHECK(
      x.dim() == spatial + 2 && weight.dim() == spatial + 2,
      ValueError,
      op,
      "expected a ",
      spatial + 2,
      "-D input and a ",
      spatial + 2,
      "-D weight, got sizes ",
      shape_str(x.sizes()),
      " and ",
      shape_str(weight.sizes()));
  DITTO_CHECK(
      groups > 0 && weight.size(0) % groups == 0,
      ValueError,
      op,
      "weight's first dim ",
      weight.size(0),
      " must be divisible by groups ",
      groups);
  DITTO_CHECK(
      x.size(1) == weight.size(0),
      ValueError,
      op,
      "expected input with ",
      weight.size(0),
      " channels, got ",
      x.size(1));
  Transposed t{
      per_dim(stride, spatial, op, "stride"),
      per_dim(padding, spatial, op, "padding"),
      per_dim(dilation, spatial, op, "dilation"),
      {}};
  const IntList opad = per_dim(output_padding, spatial, op, "output_padding");
  for (int64_t i = 0; i < spatial; ++i) {
    DITTO_CHECK(
        t.stride[i] > 0 && t.dilation[i] > 0 && t.padding[i] >= 0,
        ValueError,
        op,
        "stride and dilation must be positive and padding non-negative");
    DITTO_CHECK(
        opad[i] >= 0 && (opad[i] < t.stride[i] || opad[i] < t.dilation[i]),
        ValueError,
        op,
        "output padding must be smaller than either stride or dilation, got "
        "output_padding=",
        shape_str(opad));
  }
  const int64_t cout = weight.size(1) * groups;
  t.out = {x.size(0), cout};
  for (int64_t i = 0; i < spatial; ++i) {
    // (in - 1) s - 2 p + d (k - 1) + output_padding + 1.
    int64_t v =
        checked_mul(x.size(2 + i) - 1, t.stride[i], op, "the output size");
    v = checked_add(
        v,
        checked_mul(-2, t.padding[i], op, "the output size"),
        op,
        "the output size");
    v = checked_add(
        v,
        checked_mul(
            t.dilation[i], weight.size(2 + i) - 1, op, "the output size"),
        op,
        "the output size");
    v = checked_add(v, opad[i] + 1, op, "the output size");
    t.out.push_back(v);
  }
  for (int64_t i = 0; i < spatial; ++i) {
    DITTO_CHECK(
        t.out[size_t(2 + i)] > 0,
        ValueError,
        op,
        "the output size ",
        shape_str(Shape(t.out.begin() + 2, t.out.end())),
        " is too small");
  }
  DITTO_CHECK(
      !bias.defined() || (bias.dim() == 1 && bias.size(0) == cout),
      ValueError,
      op,
      "expected a bias of size {",
      cout,
      "}");
  return t;
}

// The convolution's three directions for one rank.
struct ConvOps {
  decltype(&ditto::conv2d) forward;
  decltype(&ditto::conv2d_backward_input) backward_input;
  decltype(&ditto::conv2d_backward_weight) backward_weight;
};

Tensor conv_transpose(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_padding,
    int64_t groups,
    const IntArg& dilation,
    int64_t spatial,
    ConvOps ops,
    const char* op) {
  if (detail::is_storage(x) && detail::is_storage(weight) &&
      is_floating(x.dtype())) {
    // Note [Storage dtypes]: in float32, rounded once.
    return conv_transpose(
               detail::upcast(x),
               detail::upcast(weight),
               detail::upcast(bias),
               stride,
               padding,
               output_padding,
               groups,
               dilation,
               spatial,
               ops,
               op)
        .to(x.dtype());
  }
  detail::OpScope scope(op, {x, weight, bias});
  const Transposed t = transposed_geometry(
      x,
      weight,
      bias,
      stride,
      padding,
      output_padding,
      groups,
      dilation,
      spatial,
      op);
  Tensor y = ops.backward_input(
      x, weight, t.out, t.stride, t.padding, t.dilation, groups);
  if (bias.defined()) {
    Shape bs(size_t(spatial + 2), 1);
    bs[1] = t.out[1];
    y.add_(bias.reshape(bs));
  }
  IntList reduce_dims{0};
  for (int64_t i = 0; i < spatial; ++i) {
    reduce_dims.push_back(2 + i);
  }
  return scope.done(
      y,
      [t,
       ops,
       reduce_dims,
       groups,
       has_b = bias.defined(),
       sx = scope.save(x),
       sw_ = scope.save(weight)](const autograd::GradList& g) {
        Tensor go = g[0];
        Tensor xv = sx.unpack(), wv = sw_.unpack();
        Tensor gx =
            ops.forward(go, wv, {}, t.stride, t.padding, t.dilation, groups);
        Tensor gw = ops.backward_weight(
            xv, go, wv.sizes(), t.stride, t.padding, t.dilation, groups);
        Tensor gb = has_b ? go.sum(reduce_dims) : Tensor();
        return autograd::GradList{gx, gw, gb};
      });
}

} // namespace
} // namespace ditto::nn::functional

// The ATen forms (ops/conv/conv.ops.toml); nn::functional names them.
namespace ditto {

Tensor conv_transpose2d(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_padding,
    int64_t groups,
    const IntArg& dilation) {
  return nn::functional::conv_transpose(
      input,
      weight,
      bias.value_or(Tensor()),
      stride,
      padding,
      output_padding,
      groups,
      dilation,
      2,
      {conv2d, conv2d_backward_input, conv2d_backward_weight},
      "conv_transpose2d");
}

// conv_transpose2d over a height of 1, under its own name.
Tensor conv_transpose1d(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_padding,
    int64_t groups,
    const IntArg& dilation) {
  const char* name = "conv_transpose1d";
  const Tensor b = bias.value_or(Tensor());
  // The trace shows the op's own inputs and result (a composite frame
  // around the 2-d one, which runs under this name too).
  detail::OpScope scope(name, {input, weight, b}, detail::OpScope::kComposite);
  DITTO_CHECK(
      input.defined() && weight.defined(),
      ValueError,
      name,
      "undefined input or weight");
  DITTO_CHECK(
      input.dim() == 3 && weight.dim() == 3,
      ValueError,
      name,
      "expected a 3-d input (N, C, L) and a 3-d weight, got ",
      input.dim(),
      "-d and ",
      weight.dim(),
      "-d");
  const auto one = [&](const IntArg& v, const char* what) {
    DITTO_CHECK(
        v.size() == 1,
        ValueError,
        name,
        what,
        " must be one int, got ",
        v.size(),
        " values");
    return v[0];
  };
  Tensor y = nn::functional::conv_transpose(
      input.unsqueeze(2),
      weight.unsqueeze(2),
      b,
      {1, one(stride, "stride")},
      {0, one(padding, "padding")},
      {0, one(output_padding, "output_padding")},
      groups,
      {1, one(dilation, "dilation")},
      2,
      {conv2d, conv2d_backward_input, conv2d_backward_weight},
      name);
  return scope.done(y.squeeze(2));
}

Tensor conv_transpose3d(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_padding,
    int64_t groups,
    const IntArg& dilation) {
  return nn::functional::conv_transpose(
      input,
      weight,
      bias.value_or(Tensor()),
      stride,
      padding,
      output_padding,
      groups,
      dilation,
      3,
      {conv3d, conv3d_backward_input, conv3d_backward_weight},
      "conv_transpose3d");
}

} // namespace ditto
