#include "ditto/ops/detail/conv/geometry.h"

namespace ditto::detail::conv {
namespace {

// One value per spatial dim (a single value serves them all).
IntList per_dim(const IntList& v, int n, const char* what, const char* op) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == size_t(n),
      ValueError,
      op,
      what,
      " must have 1 or ",
      n,
      " values, got ",
      v.size());
  return v.size() == 1 ? IntList(size_t(n), v[0]) : v;
}

} // namespace

template <int N>
ConvArgs<N> check_conv_args(
    const Shape& input,
    const Shape& weight,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op) {
  static_assert(N == 2 || N == 3);
  const char* in_dims = N == 2 ? "[N, C, H, W]" : "[N, C, D, H, W]";
  const char* w_dims =
      N == 2 ? "[O, C / groups, KH, KW]" : "[O, C / groups, KD, KH, KW]";
  DITTO_CHECK(
      input.size() == N + 2 && weight.size() == N + 2,
      ValueError,
      op,
      "expected a ",
      N + 2,
      "-d input ",
      in_dims,
      " and a ",
      N + 2,
      "-d weight ",
      w_dims,
      ", got ",
      shape_str(input),
      " and ",
      shape_str(weight));
  DITTO_CHECK(
      is_floating(dtype),
      TypeError,
      op,
      "expected float32 or float64, got ",
      dtype);
  const IntList s = per_dim(stride, N, "stride", op),
                p = per_dim(padding, N, "padding", op),
                d = per_dim(dilation, N, "dilation", op);
  for (int i = 0; i < N; ++i) {
    DITTO_CHECK(
        s[i] > 0 && d[i] > 0 && p[i] >= 0,
        ValueError,
        op,
        "stride and dilation must be positive and padding non-negative, got "
        "stride ",
        shape_str(s),
        ", padding ",
        shape_str(p),
        ", dilation ",
        shape_str(d));
  }
  DITTO_CHECK(
      groups > 0, ValueError, op, "groups must be positive, got ", groups);
  for (int64_t v : input) {
    DITTO_CHECK(
        v >= 0, ValueError, op, "negative input size ", shape_str(input));
  }
  for (int64_t v : weight) {
    DITTO_CHECK(
        v > 0,
        ValueError,
        op,
        "weight sizes must be positive, got ",
        shape_str(weight));
  }
  ConvArgs<N> a{};
  a.n = input[0];
  a.c = input[1];
  a.o = weight[0];
  a.groups = groups;
  DITTO_CHECK(
      a.c % groups == 0 && a.o % groups == 0,
      ValueError,
      op,
      "input channels (",
      a.c,
      ") and output channels (",
      a.o,
      ") must be divisible by groups (",
      groups,
      ")");
  a.cg = a.c / groups;
  a.og = a.o / groups;
  DITTO_CHECK(
      weight[1] == a.cg,
      ValueError,
      op,
      "weight ",
      shape_str(weight),
      " expects ",
      weight[1] * groups,
      " input channels with groups = ",
      groups,
      ", but the input has ",
      a.c);
  bool fits = true;
  for (int i = 0; i < N; ++i) {
    a.in[i] = input[size_t(2 + i)];
    a.k[i] = weight[size_t(2 + i)];
    a.s[i] = s[size_t(i)];
    a.p[i] = p[size_t(i)];
    a.d[i] = d[size_t(i)];
    // Every size the algorithms compute, checked (a huge stride, padding or
    // dilation must not wrap around into a plausible shape).
    a.reach[i] = checked_add(
        checked_mul(a.d[i], a.k[i] - 1, op, "the dilated kernel"),
        1,
        op,
        "the dilated kernel");
    a.padded[i] = checked_add(
        a.in[i],
        checked_mul(2, a.p[i], op, "the padded input"),
        op,
        "the padded input");
    fits = fits && a.padded[i] >= a.reach[i];
  }
  DITTO_CHECK(
      fits,
      ValueError,
      op,
      "the padded input ",
      shape_str(IntList(a.padded, a.padded + N)),
      " is smaller than the dilated kernel ",
      shape_str(IntList(a.reach, a.reach + N)));
  Shape out{a.n, a.o};
  for (int i = 0; i < N; ++i) {
    a.out[i] = (a.padded[i] - a.reach[i]) / a.s[i] + 1;
    out.push_back(a.out[i]);
  }
  checked_numel(out, op); // the output must be countable
  return a;
}

template ConvArgs<2> check_conv_args<2>(
    const Shape&,
    const Shape&,
    const IntArg&,
    const IntArg&,
    const IntArg&,
    int64_t,
    Dtype,
    const char*);
template ConvArgs<3> check_conv_args<3>(
    const Shape&,
    const Shape&,
    const IntArg&,
    const IntArg&,
    const IntArg&,
    int64_t,
    Dtype,
    const char*);

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
  const ConvArgs<2> a = check_conv_args<2>(
      input, weight, stride, padding, dilation, groups, dtype, op);
  Geom g{};
  g.n = a.n;
  g.c = a.c;
  g.h = a.in[0];
  g.w = a.in[1];
  g.o = a.o;
  g.kh = a.k[0];
  g.kw = a.k[1];
  g.sh = a.s[0];
  g.sw = a.s[1];
  g.ph = a.p[0];
  g.pw = a.p[1];
  g.dh = a.d[0];
  g.dw = a.d[1];
  g.groups = groups;
  g.dtype = dtype;
  g.cg = a.cg;
  g.og = a.og;
  g.oh = a.out[0];
  g.ow = a.out[1];
  // The padded planes and the im2col matrix must be countable.
  checked_numel({g.n, g.c, a.padded[0], a.padded[1]}, op);
  checked_mul(
      checked_numel({g.cg, g.kh, g.kw}, op),
      checked_mul(g.oh, g.ow, op, "the output plane"),
      op,
      "the im2col matrix");
  return g;
}

} // namespace ditto::detail::conv
