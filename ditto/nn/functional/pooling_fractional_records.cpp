// The records of fractional max pooling over two and three dims
// (pooling_fractional.cpp) (Note [Op records] in ditto/ops/record.cpp).

#include <cmath>

#include "ditto/nn/functional/pooling.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::nd_bad_samples;
using detail::nd_inputs;
using detail::NdInputs;
using ::ditto::detail::samples::kFloating;

// Samples in [0, 1) for fractional pooling of x over n dims (spread, away
// from the windows' edges: not a draw, so the suite's runs agree).
Tensor fractional_samples(const Tensor& x, int n) {
  const int64_t batch = x.dim() == n + 1 ? 1 : x.size(0);
  const int64_t c = x.size(x.dim() - n - 1);
  std::vector<double> v(size_t(batch * c * n));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = std::fmod(0.137 + 0.618034 * double(i), 1.0);
  }
  return tensor(v, {batch, c, int64_t(n)}).to(x.dtype());
}

void register_fractional(int n) {
  const std::string d = std::to_string(n) + "d";
  const std::string name = "fractional_max_pool" + d;
  const std::string f = "ditto::nn::functional::";
  using FracFn = decltype(&fractional_max_pool2d_with_indices);
  const FracFn fn = n == 2 ? &fractional_max_pool2d_with_indices
                           : &fractional_max_pool3d_with_indices;
  const std::string backward =
      n == 3 ? "max_pool3d_backward" : "max_pool2d_backward";
  register_op({
      .name = name,
      .family = "pooling",
      .callables =
          {f + name +
               "(x, kernel_size, output_size, output_ratio, random_samples)",
           f + name +
               "_with_indices(x, kernel_size, output_size, "
               "output_ratio, random_samples)",
           "ditto::" + name +
               "(self, kernel_size, output_size, random_samples)"},
      .deterministic_because = {},
      .nondeterministic = {detail::max_pool_backward_path(n)},
      .dtypes = kFloating,
      .samples =
          [n, fn](const SampleSpec& spec) {
            NdInputs p = nd_inputs(spec, n);
            auto given = [fn](IntList k, IntList size) -> s::Call {
              return [=](const std::vector<Tensor>& in) {
                auto [o, i] = fn(in[0], k, size, {}, in[1]);
                return std::vector<Tensor>{o, i};
              };
            };
            // Kernel sizes up to kmax and outputs a fraction of the room
            // (num / den of the In - k + 1 starts), per dim of x.
            auto geometry =
                [n](const Tensor& x, int64_t kmax, int num, int den) {
                  IntList k, size;
                  for (int i = 0; i < n; ++i) {
                    const int64_t in = x.size(x.dim() - n + i);
                    k.push_back(std::min<int64_t>(kmax - i % 2, in));
                    size.push_back(
                        std::max<int64_t>(1, (in - k.back() + 1) * num / den));
                  }
                  return std::pair{k, size};
                };
            auto [k, size] = geometry(p.x, 3, 2, 3);
            auto [k2, size2] = geometry(p.x, 3, 1, 1);
            auto [k3, size3] = geometry(p.unbatched, 2, 1, 2);
            std::vector<Sample> out = {
                {"output_size",
                 {p.x, fractional_samples(p.x, n)},
                 given(k, size),
                 {1}},
                {"overlapping",
                 {p.x, fractional_samples(p.x, n)},
                 given(k2, size2),
                 {1}},
                {"unbatched",
                 {p.unbatched, fractional_samples(p.unbatched, n)},
                 given(k3, size3),
                 {1}},
                {"ratio_drawn",
                 {p.x},
                 [fn](const std::vector<Tensor>& in) {
                   auto [o, i] = fn(in[0], {2}, {}, {0.5}, {});
                   return std::vector<Tensor>{o, i};
                 }},
            };
            return out;
          },
      .bad_samples =
          [n, fn] {
            Shape ok(size_t(n + 2), 5);
            auto call = [fn](IntList k, IntList size) -> s::Call {
              return [=](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{std::get<0>(
                    fn(in[0], k, size, {}, in.size() > 1 ? in[1] : Tensor()))};
              };
            };
            Tensor x = s::varied(ok, kFloat32, 2.0, 1);
            Tensor u = fractional_samples(x, n);
            std::vector<Sample> out = nd_bad_samples(n, [fn](const Tensor& t) {
              return std::get<0>(fn(t, {2}, {2}, {}, {}));
            });
            out.push_back({"pool_too_large", {x, u}, call({3}, {4})});
            out.push_back({"no_output_size", {x, u}, call({2}, {})});
            out.push_back({"zero_kernel", {x, u}, call({0}, {2})});
            out.push_back(
                {"samples_shape",
                 {x, u.narrow(0, 0, 1).narrow(2, 0, 1)},
                 call({2}, {2})});
            out.push_back({"samples_range", {x, u.add(1.0)}, call({2}, {2})});
            out.push_back(
                {"samples_dtype", {x, u.to(kFloat64)}, call({2}, {2})});
            return out;
          },
      .random = true,
  });
}

} // namespace

DITTO_OP_RECORDS(pool_fractional) {
  register_fractional(2);
  register_fractional(3);
}

} // namespace ditto::nn::functional
