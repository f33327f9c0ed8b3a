#include "ditto/ops/detail/conv/geometry.h"

namespace ditto::detail::conv {
namespace {

IntList pair_of(const IntList& v, const char* what, const char* op) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == 2,
      ValueError,
      op,
      what,
      " must have 1 or 2 values, got ",
      v.size());
  return v.size() == 1 ? IntList{v[0], v[0]} : v;
}

} // namespace

std::pair<Tensor, Tensor> conv_operands(
    const Tensor& a,
    const char* a_name,
    const Tensor& b,
    const char* b_name,
    const char* op) {
  DITTO_CHECK(a.defined(), ValueError, op, "undefined ", a_name);
  DITTO_CHECK(b.defined(), ValueError, op, "undefined ", b_name);
  DITTO_CHECK(
      a.dtype() == b.dtype(),
      TypeError,
      op,
      "expected tensors of one dtype, got ",
      a.dtype(),
      " and ",
      b.dtype());
  return {a.contiguous(), b.contiguous()};
}

Geom make_geom(
    const Shape& input,
    const Shape& weight,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op) {
  DITTO_CHECK(
      input.size() == 4 && weight.size() == 4,
      ValueError,
      op,
      "expected a 4-d input [N, C, H, W] and a 4-d weight [O, C / groups, "
      "KH, KW], got ",
      shape_str(input),
      " and ",
      shape_str(weight));
  DITTO_CHECK(
      is_floating(dtype),
      TypeError,
      op,
      "expected float32 or float64, got ",
      dtype);
  IntList s = pair_of(stride, "stride", op),
          p = pair_of(padding, "padding", op),
          d = pair_of(dilation, "dilation", op);
  DITTO_CHECK(
      s[0] > 0 && s[1] > 0 && d[0] > 0 && d[1] > 0 && p[0] >= 0 && p[1] >= 0,
      ValueError,
      op,
      "stride and dilation must be positive and padding non-negative, got "
      "stride ",
      shape_str(s),
      ", padding ",
      shape_str(p),
      ", dilation ",
      shape_str(d));
  DITTO_CHECK(
      groups > 0, ValueError, op, "groups must be positive, got ", groups);
  Geom g{};
  g.n = input[0];
  g.c = input[1];
  g.h = input[2];
  g.w = input[3];
  g.o = weight[0];
  g.kh = weight[2];
  g.kw = weight[3];
  g.sh = s[0];
  g.sw = s[1];
  g.ph = p[0];
  g.pw = p[1];
  g.dh = d[0];
  g.dw = d[1];
  g.groups = groups;
  g.dtype = dtype;
  for (int64_t v : input) {
    DITTO_CHECK(
        v >= 0, ValueError, op, "negative input size ", shape_str(input));
  }
  DITTO_CHECK(
      g.o > 0 && g.kh > 0 && g.kw > 0 && weight[1] > 0,
      ValueError,
      op,
      "weight sizes must be positive, got ",
      shape_str(weight));
  DITTO_CHECK(
      g.c % groups == 0 && g.o % groups == 0,
      ValueError,
      op,
      "input channels (",
      g.c,
      ") and output channels (",
      g.o,
      ") must be divisible by groups (",
      groups,
      ")");
  g.cg = g.c / groups;
  g.og = g.o / groups;
  DITTO_CHECK(
      weight[1] == g.cg,
      ValueError,
      op,
      "weight ",
      shape_str(weight),
      " expects ",
      weight[1] * groups,
      " input channels with groups = ",
      groups,
      ", but the input has ",
      g.c);
  // Every size the algorithms compute, checked (a huge stride, padding or
  // dilation must not wrap around into a plausible shape).
  const int64_t eh = checked_add(
      checked_mul(g.dh, g.kh - 1, op, "the dilated kernel height"),
      1,
      op,
      "the dilated kernel height");
  const int64_t ew = checked_add(
      checked_mul(g.dw, g.kw - 1, op, "the dilated kernel width"),
      1,
      op,
      "the dilated kernel width");
  const int64_t hp = checked_add(
      g.h,
      checked_mul(2, g.ph, op, "the padded height"),
      op,
      "the padded height");
  const int64_t wp = checked_add(
      g.w,
      checked_mul(2, g.pw, op, "the padded width"),
      op,
      "the padded width");
  DITTO_CHECK(
      hp >= eh && wp >= ew,
      ValueError,
      op,
      "the padded input (",
      hp,
      " x ",
      wp,
      ") is smaller than the dilated kernel (",
      eh,
      " x ",
      ew,
      ")");
  g.oh = (hp - eh) / g.sh + 1;
  g.ow = (wp - ew) / g.sw + 1;
  // The output, the padded planes and the im2col matrix must be countable.
  checked_numel({g.n, g.o, g.oh, g.ow}, op);
  checked_numel({g.n, g.c, hp, wp}, op);
  checked_mul(
      checked_numel({g.cg, g.kh, g.kw}, op),
      checked_mul(g.oh, g.ow, op, "the output plane"),
      op,
      "the im2col matrix");
  return g;
}

} // namespace ditto::detail::conv
