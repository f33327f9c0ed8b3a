// The public convolution ops: validate, choose and run an algorithm
// (ditto/ops/conv/), add the bias, record the backward.

#include "ditto/ops/conv.h"

#include "ditto/determinism/context.h"
#include "ditto/ops/detail/conv/algorithms.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/reduce.h"

namespace ditto {
namespace {

using detail::conv::dispatch;
using detail::conv::Geom;
using detail::conv::kBackwardInput;
using detail::conv::kBackwardWeight;
using detail::conv::kForward;
using detail::conv::make_geom;

void add_bias(Tensor& out, const Tensor& bias, const Geom& g, const char* op) {
  DITTO_CHECK(
      bias.dtype() == g.dtype && bias.dim() == 1 && bias.size(0) == g.o,
      ValueError,
      op,
      "bias must be [",
      g.o,
      "] of dtype ",
      g.dtype,
      ", got ",
      shape_str(bias.sizes()),
      " ",
      bias.dtype());
  if (!out.is_cpu()) {
    // One add per element, as below.
    out.add_(bias.reshape({1, g.o, 1, 1}));
    return;
  }
  Tensor bc = bias.contiguous();
  dispatch_dtype(g.dtype, op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* o = out.data_ptr<T>();
      const T* bp = bc.data_ptr<T>();
      parallel_for(0, g.n * g.o, 16, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const T v = bp[p % g.o];
          for (int64_t k = 0; k < g.ohw(); ++k) {
            o[p * g.ohw() + k] = T(o[p * g.ohw() + k] + v);
          }
        }
      });
    }
  });
}

// grad_out must have the forward output's shape.
void check_grad_out(const Tensor& go, const Geom& g, const char* op) {
  const Shape want{g.n, g.o, g.oh, g.ow};
  DITTO_CHECK(
      go.sizes() == want,
      ValueError,
      op,
      "grad_out ",
      shape_str(go.sizes()),
      " is not the output shape ",
      shape_str(want));
}

} // namespace

Tensor conv2d(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias_arg,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const Tensor bias = bias_arg.value_or(Tensor());
  const char* op_name = "conv2d";
  if (detail::is_storage(input) && detail::is_storage(weight) &&
      is_floating(input.dtype())) {
    return conv2d(
               detail::upcast(input),
               detail::upcast(weight),
               detail::upcast(bias),
               stride,
               padding,
               dilation,
               groups)
        .to(input.dtype());
  }
  detail::OpScope op(op_name, {input, weight, bias});
  const auto operands =
      detail::conv::conv_operands(input, "input", weight, "weight", op_name);
  Tensor x = operands.first, w = operands.second;
  Geom g = make_geom(
      x.sizes(),
      w.sizes(),
      stride,
      padding,
      dilation,
      groups,
      x.dtype(),
      op_name);
  Tensor out = detail::new_tensor({g.n, g.o, g.oh, g.ow}, g.dtype, x.device());
  if (out.numel() > 0) {
    dispatch(kForward, g, x, w, out, op_name);
  }
  if (bias.defined()) {
    add_bias(out, bias, g, op_name);
  }
  // The backward directions go through the same algorithm selection (and
  // tuning cache) as the forward, under the node's determinism policy.
  return op.done(
      out,
      [sx = op.save(x),
       sw = op.save(w),
       has_bias = bias.defined(),
       stride,
       padding,
       dilation,
       groups](const autograd::GradList& grads) {
        Tensor x = sx.unpack(), w = sw.unpack();
        Tensor go = grads[0];
        return autograd::GradList{
            conv2d_backward_input(
                go, w, x.sizes(), stride, padding, dilation, groups),
            conv2d_backward_weight(
                go, x, w.sizes(), stride, padding, dilation, groups),
            has_bias ? sum(go, {0, 2, 3}) : Tensor()};
      });
}

Tensor conv2d_backward_input(
    const Tensor& grad_out,
    const Tensor& weight,
    const IntArg& input_sizes,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const char* op_name = "conv2d_backward_input";
  detail::OpScope op(op_name, {grad_out, weight});
  const auto operands = detail::conv::conv_operands(
      grad_out, "grad_out", weight, "weight", op_name);
  Tensor go = operands.first, w = operands.second;
  Geom g = make_geom(
      input_sizes,
      w.sizes(),
      stride,
      padding,
      dilation,
      groups,
      go.dtype(),
      op_name);
  check_grad_out(go, g, op_name);
  Tensor out = detail::new_tensor(input_sizes, g.dtype, go.device());
  if (out.numel() > 0) {
    dispatch(kBackwardInput, g, go, w, out, op_name);
  }
  return op.done(out);
}

Tensor conv2d_backward_weight(
    const Tensor& grad_out,
    const Tensor& input,
    const IntArg& weight_sizes,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const char* op_name = "conv2d_backward_weight";
  detail::OpScope op(op_name, {grad_out, input});
  const auto operands = detail::conv::conv_operands(
      grad_out, "grad_out", input, "input", op_name);
  Tensor go = operands.first, x = operands.second;
  Geom g = make_geom(
      x.sizes(),
      weight_sizes,
      stride,
      padding,
      dilation,
      groups,
      x.dtype(),
      op_name);
  check_grad_out(go, g, op_name);
  Tensor out = detail::new_tensor(weight_sizes, g.dtype, go.device());
  dispatch(kBackwardWeight, g, go, x, out, op_name);
  return op.done(out);
}

namespace {

// conv1d as conv2d over [N, C, 1, L]: stride, padding and dilation gain a
// leading 1, 0, 1 for the height.
struct Lifted {
  IntList stride, padding, dilation;
};

Lifted lift(
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    const char* op) {
  for (const IntList* v : {&stride, &padding, &dilation}) {
    DITTO_CHECK(
        v->size() == 1,
        ValueError,
        op,
        "stride, padding and dilation must have 1 value each, got ",
        stride.size(),
        ", ",
        padding.size(),
        " and ",
        dilation.size());
  }
  return {{1, stride[0]}, {0, padding[0]}, {1, dilation[0]}};
}

Tensor as_2d(const Tensor& t, const char* what, const char* op) {
  DITTO_CHECK(
      t.defined() && t.dim() == 3,
      ValueError,
      op,
      "expected a 3-d ",
      what,
      ", got ",
      t.defined() ? shape_str(t.sizes()) : std::string("undefined"));
  return t.unsqueeze(2);
}

Shape sizes_2d(const Shape& s, const char* what, const char* op) {
  DITTO_CHECK(
      s.size() == 3,
      ValueError,
      op,
      "expected 3 ",
      what,
      " sizes, got ",
      shape_str(s));
  return {s[0], s[1], 1, s[2]};
}

} // namespace

Tensor conv1d(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias_arg,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const Tensor bias = bias_arg.value_or(Tensor());
  const char* op = "conv1d";
  // Composite: its own frame (the trace shows conv1d), the lifted conv2d
  // and the views record the gradient.
  detail::OpScope scope(op, {input, weight, bias}, detail::OpScope::kComposite);
  const Lifted l = lift(stride, padding, dilation, op);
  return scope.done(conv2d(
                        as_2d(input, "input", op),
                        as_2d(weight, "weight", op),
                        bias,
                        l.stride,
                        l.padding,
                        l.dilation,
                        groups)
                        .squeeze(2));
}

Tensor conv1d_backward_input(
    const Tensor& grad_out,
    const Tensor& weight,
    const IntArg& input_sizes,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const char* op = "conv1d_backward_input";
  detail::OpScope scope(op, {grad_out, weight});
  const Lifted l = lift(stride, padding, dilation, op);
  return scope.done(conv2d_backward_input(
                        as_2d(grad_out, "grad_out", op),
                        as_2d(weight, "weight", op),
                        sizes_2d(input_sizes, "input", op),
                        l.stride,
                        l.padding,
                        l.dilation,
                        groups)
                        .squeeze(2));
}

Tensor conv1d_backward_weight(
    const Tensor& grad_out,
    const Tensor& input,
    const IntArg& weight_sizes,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const char* op = "conv1d_backward_weight";
  detail::OpScope scope(op, {grad_out, input});
  const Lifted l = lift(stride, padding, dilation, op);
  return scope.done(conv2d_backward_weight(
                        as_2d(grad_out, "grad_out", op),
                        as_2d(input, "input", op),
                        sizes_2d(weight_sizes, "weight", op),
                        l.stride,
                        l.padding,
                        l.dilation,
                        groups)
                        .squeeze(2));
}

} // namespace ditto
