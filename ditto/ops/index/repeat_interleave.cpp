// repeat_interleave (shape_ops.h): each element copied repeats[i] times
// along a dim. PyTorch builds it as index_select with the repeated indices,
// so its gradient is index_add_'s (the reproducibility note lists it among
// the ops with a deterministic variant). Here the copies of one element are
// adjacent, so the backward sums each run of copies into its own input
// element: one writer per element, in the copies' order (index_add_'s
// serial order, so PyTorch's CPU bits), on any number of threads.

#include <cstring>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {
namespace {

const char* kOp = "repeat_interleave";

// repeats as n int64 counts (one broadcast to n), checked with PyTorch's
// messages; their start offsets in starts (n + 1 entries).
std::vector<int64_t> checked_counts(
    const Tensor& repeats,
    int64_t n,
    std::vector<int64_t>& starts) {
  DITTO_CHECK(repeats.defined(), ValueError, kOp, "undefined repeats");
  DITTO_CHECK(
      repeats.dim() <= 1,
      ValueError,
      kOp,
      "repeat_interleave only accept 1D vector as repeat, got ",
      repeats.dim(),
      " dims");
  DITTO_CHECK(
      repeats.dtype() == kInt64 || repeats.dtype() == kInt32,
      TypeError,
      kOp,
      "repeats has to be Long or Int tensor, got ",
      dtype_name(repeats.dtype()));
  const Tensor r = repeats.to(kInt64).contiguous().reshape({-1});
  DITTO_CHECK(
      r.numel() == n || r.numel() == 1,
      ValueError,
      kOp,
      "repeats must have the same size as input along dim, but got "
      "repeats.size(0) = ",
      r.numel(),
      " and input.size(dim) = ",
      n);
  std::vector<int64_t> counts(static_cast<size_t>(n));
  const int64_t* rp = r.data_ptr<int64_t>();
  starts.assign(size_t(n + 1), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = rp[r.numel() == 1 ? 0 : i];
    DITTO_CHECK(c >= 0, ValueError, kOp, "repeats can not be negative: ", c);
    counts[size_t(i)] = c;
    starts[size_t(i + 1)] = checked_add(starts[size_t(i)], c, kOp, "the size");
  }
  return counts;
}

void check_output_size(std::optional<int64_t> output_size, int64_t total) {
  DITTO_CHECK(
      !output_size.has_value() || *output_size == total,
      ValueError,
      kOp,
      "allocated size does not match required size: output_size=",
      output_size.value_or(0),
      ", the repeats sum to ",
      total);
}

// Calls copy(ob, i, k) for every copy k of input element i in outer block
// ob, each (ob, i) one task (its copies are adjacent): the forward's
// writes and the backward's sums alike.
template <class Copy>
void each_copy(
    int64_t outer,
    int64_t n,
    int64_t inner,
    const std::vector<int64_t>& starts,
    const Copy& copy) {
  parallel_for(
      0,
      outer * n,
      std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)),
      [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t ob = t / n, i = t % n;
          for (int64_t k = starts[size_t(i)]; k < starts[size_t(i + 1)]; ++k) {
            copy(ob, i, k);
          }
        }
      });
}

Tensor repeat_rows(
    const Tensor& a,
    const Tensor& repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size) {
  detail::OpScope scope(kOp, {a, repeats});
  DITTO_CHECK(a.defined(), ValueError, kOp, "undefined tensor");
  const Tensor x = dim.has_value() ? a : a.reshape({-1});
  const int64_t d =
      dim.has_value() ? wrap_dim(*dim, std::max<int64_t>(x.dim(), 1), kOp) : 0;
  const Tensor src =
      x.dim() == 0 ? x.reshape({1}).contiguous() : x.contiguous();
  const int64_t n = src.size(d);
  std::vector<int64_t> starts;
  checked_counts(repeats, n, starts);
  const int64_t total = starts.back();
  check_output_size(output_size, total);
  Shape out_sizes = src.sizes();
  out_sizes[size_t(d)] = total;
  checked_numel(out_sizes, kOp);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < src.dim(); ++i) {
    if (i < d) {
      outer *= src.size(i);
    } else if (i > d) {
      inner *= src.size(i);
    }
  }
  Tensor out = detail::new_tensor(out_sizes, a.dtype());
  const size_t row = size_t(inner) * a.element_size();
  const char* in = static_cast<const char*>(src.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  each_copy(outer, n, inner, starts, [&](int64_t ob, int64_t i, int64_t k) {
    std::memcpy(
        o + size_t(ob * total + k) * row, in + size_t(ob * n + i) * row, row);
  });
  return scope.done(
      out,
      [starts, outer, inner, n, d, in_sizes = a.sizes()](
          const autograd::GradList& g) {
        // Each input element sums its run of copies, in order, from zero.
        const Tensor go = g[0].contiguous();
        const int64_t total = starts.back();
        Shape src_sizes = go.sizes();
        src_sizes[size_t(d)] = n;
        Tensor gi = zeros(src_sizes, go.dtype());
        dispatch_dtype(
            go.dtype(), "repeat_interleave backward", [&]<typename T>() {
              if constexpr (std::is_floating_point_v<T>) {
                const T* gp = go.data_ptr<T>();
                T* out = gi.data_ptr<T>();
                // In index order within each run: from zero, as
                // index_add_ adds.
                each_copy(
                    outer,
                    n,
                    inner,
                    starts,
                    [&](int64_t ob, int64_t i, int64_t k) {
                      T* dst = out + (ob * n + i) * inner;
                      const T* from = gp + (ob * total + k) * inner;
                      for (int64_t j = 0; j < inner; ++j) {
                        dst[j] += from[j];
                      }
                    });
              }
            });
        return autograd::GradList{gi.reshape(in_sizes), Tensor()};
      });
}

} // namespace

Tensor repeat_interleave(
    const Tensor& a,
    const Tensor& repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size) {
  return repeat_rows(a, repeats, dim, output_size);
}

Tensor repeat_interleave(
    const Tensor& a,
    int64_t repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size) {
  DITTO_CHECK(
      repeats >= 0, ValueError, kOp, "repeats can not be negative: ", repeats);
  return repeat_rows(a, full({}, repeats, kInt64), dim, output_size);
}

Tensor repeat_interleave(
    const Tensor& repeats,
    std::optional<int64_t> output_size) {
  detail::OpScope scope(kOp, {repeats});
  DITTO_CHECK(repeats.defined(), ValueError, kOp, "undefined repeats");
  DITTO_CHECK(
      repeats.dim() == 1,
      ValueError,
      kOp,
      "repeat_interleave only accept 1D vector as repeat, got ",
      repeats.dim(),
      " dims");
  std::vector<int64_t> starts;
  const int64_t n = repeats.numel();
  checked_counts(repeats, n, starts);
  check_output_size(output_size, starts.back());
  Tensor out = detail::new_tensor({starts.back()}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = starts[size_t(i)]; k < starts[size_t(i + 1)]; ++k) {
      o[k] = i;
    }
  }
  return scope.done(out);
}

} // namespace ditto
