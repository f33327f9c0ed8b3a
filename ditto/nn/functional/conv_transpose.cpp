// conv_transpose2d: the gradient of conv2d with respect to its input, run
// forward; its backward is conv2d and conv2d_backward_weight.

#include "ditto/nn/functional/conv.h"

#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto::nn::functional {

Tensor conv_transpose2d(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias,
    const IntList& stride,
    const IntList& padding,
    const IntList& output_padding,
    int64_t groups,
    const IntList& dilation) {
  const char* op = "conv_transpose2d";
  detail::OpScope scope(op, {x, weight, bias});
  DITTO_CHECK(
      x.defined() && weight.defined(),
      ValueError,
      op,
      "undefined input or weight");
  DITTO_CHECK(
      x.dim() == 4 && weight.dim() == 4,
      ValueError,
      op,
      "expected a 4-D input and a 4-D weight, got sizes ",
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
  auto [sh, sw] = detail::pair_arg(stride, op, "stride");
  auto [ph, pw] = detail::pair_arg(padding, op, "padding");
  auto [oph, opw] = detail::pair_arg(output_padding, op, "output_padding");
  auto [dh, dw] = detail::pair_arg(dilation, op, "dilation");
  DITTO_CHECK(
      sh > 0 && sw > 0 && dh > 0 && dw > 0 && ph >= 0 && pw >= 0,
      ValueError,
      op,
      "stride and dilation must be positive and padding non-negative");
  DITTO_CHECK(
      oph >= 0 && opw >= 0 && (oph < sh || oph < dh) && (opw < sw || opw < dw),
      ValueError,
      op,
      "output padding must be smaller than either stride or dilation, got "
      "output_padding=",
      shape_str({oph, opw}));
  const int64_t cout = weight.size(1) * groups;
  auto out_len = [&](int64_t in,
                     int64_t s,
                     int64_t p,
                     int64_t d,
                     int64_t k,
                     int64_t opad) {
    int64_t v = checked_mul(in - 1, s, op, "the output size");
    v = checked_add(v, -2 * p, op, "the output size");
    v = checked_add(
        v, checked_mul(d, k - 1, op, "the output size"), op, "the output size");
    return checked_add(v, opad + 1, op, "the output size");
  };
  const int64_t ho = out_len(x.size(2), sh, ph, dh, weight.size(2), oph);
  const int64_t wo = out_len(x.size(3), sw, pw, dw, weight.size(3), opw);
  DITTO_CHECK(
      ho > 0 && wo > 0,
      ValueError,
      op,
      "the output size (",
      ho,
      ", ",
      wo,
      ") is too small");
  DITTO_CHECK(
      !bias.defined() || (bias.dim() == 1 && bias.size(0) == cout),
      ValueError,
      op,
      "expected a bias of size {",
      cout,
      "}");
  const IntList st{sh, sw}, pd{ph, pw}, dl{dh, dw};
  Tensor y = conv2d_backward_input(
      x, weight, {x.size(0), cout, ho, wo}, st, pd, dl, groups);
  if (bias.defined()) {
    y.add_(bias.reshape({1, cout, 1, 1}));
  }
  return scope.done(
      y,
      [st,
       pd,
       dl,
       groups,
       has_b = bias.defined(),
       sx = scope.save(x),
       sw_ = scope.save(weight)](const autograd::GradList& g) {
        Tensor go = g[0];
        Tensor xv = sx.unpack(), wv = sw_.unpack();
        Tensor gx = conv2d(go, wv, {}, st, pd, dl, groups);
        Tensor gw =
            conv2d_backward_weight(xv, go, wv.sizes(), st, pd, dl, groups);
        Tensor gb = has_b ? go.sum({0, 2, 3}) : Tensor();
        return autograd::GradList{gx, gw, gb};
      });
}

} // namespace ditto::nn::functional
