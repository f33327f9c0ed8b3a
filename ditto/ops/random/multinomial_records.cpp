// The records of multinomial (multinomial.cpp) (Note [Op records] in
// record.cpp).

#include "ditto/ops/detail/random_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using detail::kDraw;
using detail::kStream;

using ::ditto::detail::samples::kFloating;

} // namespace

DITTO_OP_RECORDS(multinomial) {
  register_op({
      .name = "multinomial",
      .family = "random",
      .callables =
          {"ditto::multinomial(probs, n, replacement, generator)",
           "Tensor::multinomial(n, replacement, generator)"},
      .deterministic_because = kStream,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            Tensor w = s::positive({3, 8}, spec.dtype, 1);
            const int64_t n = s::size(spec, 500, 5);
            return std::vector<Sample>{
                {"replacement", {w}, s::call1([n](const Tensor& p) {
                   return multinomial(p, n, true);
                 })},
                {"without", {w}, s::call1([](const Tensor& p) {
                   return multinomial(p, 8);
                 })},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"too_many_without_replacement",
                 {full({4}, 1.0, kFloat32)},
                 s::call1([](const Tensor& p) { return multinomial(p, 5); })},
                {"negative_weight",
                 {s::varied({4}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& p) { return multinomial(p, 2); })}};
          },
      .not_differentiable = kDraw,
      .random = true,
  });
}

} // namespace ditto
