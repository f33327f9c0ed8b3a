#include "ditto/ops/detail/index_samples.h"

#include <numeric>

#include "ditto/ops/factories.h"

namespace ditto::detail::samples {

Tensor distinct(int64_t n, int64_t mod, uint64_t seed) {
  int64_t step = 37;
  while (mod > 0 && std::gcd(step, mod) != 1) {
    ++step;
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[size_t(i)] = (i * step + int64_t(seed) * 11) % mod;
  }
  return tensor(v);
}

Tensor values(const Shape& shape, Dtype dt, uint64_t seed) {
  return varied(shape, dt, is_floating(dt) ? 4.0 : 40.0, seed);
}

Call inplace(std::function<void(Tensor&, const std::vector<Tensor>&)> fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    Tensor self = in[0];
    fn(self, in);
    return std::vector<Tensor>{self};
  };
}

std::vector<Sample> out_of_place(std::vector<Sample> samples) {
  for (Sample& sm : samples) {
    std::vector<Tensor> rest = sm.inputs;
    Call inner = sm.call;
    sm.inputs = {rest[0]};
    sm.call = [inner, rest](const std::vector<Tensor>& in) {
      std::vector<Tensor> args = rest;
      args[0] = in[0];
      return inner(args);
    };
  }
  return samples;
}

} // namespace ditto::detail::samples
