#include "ditto/ops/random.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/random_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {

using detail::resolve;
using detail::uniform01;

Tensor multinomial(
    const Tensor& probs,
    int64_t n,
    bool replacement,
    const std::optional<Generator>& gen) {
  detail::OpScope op("multinomial", {probs});
  const char* name = "multinomial";
  DITTO_CHECK(probs.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      probs.dim() == 1 || probs.dim() == 2,
      ValueError,
      name,
      "prob_dist must be 1 or 2 dim, got ",
      probs.dim());
  DITTO_CHECK(
      is_floating(probs.dtype()),
      TypeError,
      name,
      "prob_dist must be a floating point tensor, got ",
      probs.dtype());
  const int64_t cats = probs.size(-1);
  DITTO_CHECK(cats > 0, ValueError, name, "prob_dist has no categories");
  DITTO_CHECK(
      n > 0, ValueError, name, "cannot sample n_sample <= 0 samples (", n, ")");
  DITTO_CHECK(
      replacement || n <= cats,
      ValueError,
      name,
      "cannot sample n_sample > prob_dist.size(-1) samples without "
      "replacement (",
      n,
      " > ",
      cats,
      ")");
  DITTO_CHECK(
      cats <= (int64_t(1) << 24),
      ValueError,
      name,
      "number of categories cannot exceed 2^24, got ",
      cats);
  const int64_t rows = probs.dim() == 2 ? probs.size(0) : 1;
  Tensor p = probs.reshape({rows, cats}).contiguous();
  // Every weight checked before anything is drawn.
  DITTO_CHECK(
      max(p).item<double>() < INFINITY && min(p).item<double>() >= 0.0,
      ValueError,
      name,
      "probability tensor contains either `inf`, `nan` or element < 0");
  DITTO_CHECK(
      min(sum(p, {1})).item<double>() > 0.0,
      ValueError,
      name,
      "invalid multinomial distribution (sum of probabilities <= 0)");
  Shape out_shape = probs.dim() == 2 ? Shape{rows, n} : Shape{n};
  if (!replacement || n == 1) {
    // s = argmax(p / q), q ~ Exp(1): a Gumbel race, as PyTorch does.
    Tensor q = detail::new_tensor(p.sizes(), p.dtype());
    q.exponential_(1.0, gen);
    Tensor r = div(p, q);
    Tensor idx = n == 1 ? argmax(r, -1, true)
                        : sort(r, -1, true).second.narrow(-1, 0, n);
    return op.done(idx.contiguous().reshape(out_shape));
  }
  Tensor out = detail::new_tensor({rows, n}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  dispatch_dtype(p.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pp = p.data_ptr<T>();
      std::vector<T> cum(static_cast<size_t>(cats));
      for (int64_t i = 0; i < rows; ++i) {
        // The cumulative weights in T, normalized, the last one set to 1.
        T total = 0;
        for (int64_t j = 0; j < cats; ++j) {
          total += pp[i * cats + j];
          cum[size_t(j)] = total;
        }
        for (int64_t j = 0; j < cats; ++j) {
          cum[size_t(j)] /= total;
        }
        cum[size_t(cats - 1)] = 1;
        for (int64_t k = 0; k < n; ++k) {
          double u = uniform01<double>(g);
          int64_t lo = 0, hi = cats;
          while (hi - lo > 0) {
            int64_t mid = lo + (hi - lo) / 2;
            if (cum[size_t(mid)] < u) {
              lo = mid + 1;
            } else {
              hi = mid;
            }
          }
          o[i * n + k] = lo;
        }
      }
    }
  });
  return op.done(out.reshape(out_shape));
}

} // namespace ditto
