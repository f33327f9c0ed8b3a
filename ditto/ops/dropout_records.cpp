// The records of dropout (dropout.cpp) (Note [Op records] in record.cpp).

#include "ditto/ops/detail/random_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using detail::kStream;

const std::vector<Dtype> kFloating = {kFloat32, kFloat64};

} // namespace

DITTO_OP_RECORDS(dropout) {
  register_op({
      .name = "dropout",
      .family = "random",
      .callables =
          {"ditto::dropout(x, p, train, generator)",
           "ditto::nn::functional::dropout(x, p, train)"},
      .deterministic_because = kStream,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            // (An empty input is returned as it is, as PyTorch does.)
            auto out = s::unary(
                spec, [](const Tensor& x) { return dropout(x, 0.25); });
            std::erase_if(
                out, [](const Sample& sm) { return sm.label == "empty"; });
            return out;
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"p_above_one",
                 {s::varied({3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) { return dropout(x, 1.5); })}};
          },
      .random = true,
  });
}

} // namespace ditto
