#include "ditto/nn/detail/module_util.h"

#include <charconv>
#include <cmath>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/nn/init.h"

namespace ditto::nn {

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

IntList per_dim(
    const IntList& v,
    size_t n,
    const char* layer,
    const char* what) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == n,
      ValueError,
      layer,
      what,
      n == 1 ? " must be one int" : " must be one int or ",
      n == 1       ? ""
          : n == 2 ? "two ints"
                   : "three ints",
      ", got ",
      v.size(),
      " values");
  return v.size() == n ? v : IntList(n, v[0]);
}

IntList two(const IntList& v, const char* layer, const char* what) {
  return per_dim(v, 2, layer, what);
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
    const Tensor& zero2,
    const Tensor& one2,
    const Tensor& count) {
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

// PyTorch's reset_parameters of the recurrent layers and cells: every
// parameter, in order, uniform(+-1/sqrt(hidden_size)).
void reset_uniform(const std::vector<Tensor>& params, int64_t hidden) {
  const double stdv = hidden > 0 ? 1.0 / std::sqrt(double(hidden)) : 0.0;
  for (const Tensor& p : params) {
    init::uniform_(p, -stdv, stdv);
  }
}

} // namespace ditto::nn
