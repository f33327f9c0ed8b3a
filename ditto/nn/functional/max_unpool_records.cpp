// The records of max unpooling over one, two and three dims (pooling.cpp)
// (Note [Op records] in ditto/ops/record.cpp).

#include "ditto/nn/functional/pooling.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::nd_inputs;
using detail::NdInputs;

using ::ditto::detail::samples::kFloating;

// Max unpooling of a max pooling's output: (values, indices) from pooling
// x with kernel 2 (indices unique in each plane), and with overlapping
// windows, whose duplicate indices keep the last value (a kink that
// finite differences cannot see through).
std::vector<Sample> unpool_samples(
    const SampleSpec& spec,
    int n,
    const std::function<
        std::tuple<Tensor, Tensor>(const Tensor&, IntList, IntList)>& pool,
    const std::function<
        Tensor(const Tensor&, const Tensor&, IntList, IntList, IntList)>&
        unpool) {
  NdInputs p = nd_inputs(spec, n);
  std::vector<Sample> out;
  auto add = [&](const char* label,
                 const Tensor& x,
                 IntList k,
                 IntList st,
                 bool unique) {
    auto [v, idx] = pool(x, k, st);
    Tensor vals = s::varied(v.sizes(), spec.dtype, 8.0, 7);
    Sample smp{
        label, {vals, idx}, s::call2([=](const Tensor& a, const Tensor& i) {
          // The pooled input's size (odd sizes lose a cell otherwise).
          return unpool(
              a, i, k, st, IntList(x.sizes().end() - n, x.sizes().end()));
        })};
    smp.gradcheck = unique;
    out.push_back(smp);
  };
  add("k2", p.x, {2}, {}, true);
  add("unbatched", p.unbatched, {2}, {}, true);
  add("one_plane", p.plane, {2}, {}, true);
  add("overlapping_duplicates", p.x, {3}, {2}, false);
  return out;
}

// The calls max unpooling must refuse (fn(x, indices)).
std::vector<Sample> unpool_bad_samples(int n, s::Fn2 fn) {
  Shape sizes(size_t(n + 2), 2);
  Tensor x = s::varied(sizes, kFloat32, 2.0, 1);
  const int64_t plane = int64_t(1) << (2 * n); // kernel 2: 4^n per plane
  std::vector<int64_t> v(size_t(x.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = int64_t(i * 5) % plane;
  }
  v[3] = plane; // one past the plane
  Tensor bad = tensor(v).reshape(sizes);
  return {
      {"index_out_of_range", {x, bad}, s::call2(fn)},
      {"negative_index", {x, bad.neg()}, s::call2(fn)},
      {"int32_indices", {x, bad.to(kInt32)}, s::call2(fn)},
      {"indices_shape", {x, bad.reshape({-1})}, s::call2(fn)},
      {"integer_input", {x.to(kInt64), bad}, s::call2(fn)},
  };
}

const char* kUnpoolBecause =
    "each plane is written serially in input order (of duplicate indices "
    "the last one wins) for any thread count, as PyTorch's CPU kernel "
    "writes it; the gradient gathers";

// Max unpooling's callables: nn::functional's, and ATen's for 2 and 3 dims
// (composite/pooling.ops.toml).
std::vector<std::string> unpool_callables(int n) {
  const std::string name = "max_unpool" + std::to_string(n) + "d";
  std::vector<std::string> out = {
      "ditto::nn::functional::" + name +
      "(x, indices, kernel_size, stride, padding, output_size)"};
  if (n == 2) {
    out.push_back("ditto::max_unpool2d(self, indices, output_size)");
  } else if (n == 3) {
    out.push_back(
        "ditto::max_unpool3d(self, indices, output_size, stride, padding)");
  }
  return out;
}

// The records of max unpooling (n dims).
void register_max_unpool(int n) {
  const std::string d = std::to_string(n) + "d";
  const std::string unpool = "max_unpool" + d;
  using UnpoolFn = decltype(&max_unpool1d);
  static const UnpoolFn kUnpool[] = {
      nullptr, &max_unpool1d, &max_unpool2d, &max_unpool3d};
  using MaxFn = decltype(&max_pool1d_with_indices);
  static const MaxFn kMax[] = {
      nullptr,
      &max_pool1d_with_indices,
      &max_pool2d_with_indices,
      &max_pool3d_with_indices};
  const UnpoolFn unpool_fn = kUnpool[n];
  const MaxFn max_fn = kMax[n];
  register_op({
      .name = unpool,
      .family = "pooling",
      .callables = unpool_callables(n),
      .deterministic_because = kUnpoolBecause,
      .nondeterministic = {},
      .dtypes = kFloating,
      .samples =
          [n, unpool_fn, max_fn](const SampleSpec& spec) {
            return unpool_samples(
                spec,
                n,
                [max_fn](const Tensor& x, IntList k, IntList st) {
                  return max_fn(x, k, st, {0}, {1}, false);
                },
                [unpool_fn](
                    const Tensor& x,
                    const Tensor& i,
                    IntList k,
                    IntList st,
                    IntList size) {
                  return unpool_fn(x, i, k, st, {0}, size);
                });
          },
      .bad_samples =
          [n, unpool_fn] {
            auto out = unpool_bad_samples(
                n, [unpool_fn](const Tensor& x, const Tensor& i) {
                  return unpool_fn(x, i, {2}, {}, {0}, {});
                });
            Tensor x = s::varied(Shape(size_t(n + 2), 2), kFloat32, 2.0, 1);
            Tensor i = zeros(x.sizes(), kInt64);
            out.push_back(
                {"output_size_out_of_range",
                 {x, i},
                 s::call2([unpool_fn, n](const Tensor& a, const Tensor& b) {
                   return unpool_fn(a, b, {2}, {}, {0}, IntList(size_t(n), 6));
                 })});
            out.push_back(
                {"output_size_length",
                 {x, i},
                 s::call2([unpool_fn, n](const Tensor& a, const Tensor& b) {
                   return unpool_fn(
                       a, b, {2}, {}, {0}, IntList(size_t(n + 1), 4));
                 })});
            return out;
          },
  });
}

} // namespace

DITTO_OP_RECORDS(max_unpool) {
  for (int n : {1, 2, 3}) {
    register_max_unpool(n);
  }
}

} // namespace ditto::nn::functional
