// The records of erfinv (erfinv.cpp) (Note [Op records] in record.cpp).

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;

using ::ditto::detail::samples::kFloating;

} // namespace

DITTO_OP_RECORDS(erfinv) {
  register_op({
      .name = "erfinv",
      .family = "elementwise",
      .callables = {"ditto::erfinv(x)", "Tensor::erfinv()"},
      .deterministic_because =
          "each output element is computed from its own input by one call, "
          "whatever the thread that runs it",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            return s::unary(
                spec,
                [](const Tensor& x) { return erfinv(x); },
                s::Domain::kUnit);
          },
      .bad_samples =
          [] {
            return std::vector{s::undefined_input(
                s::call1([](const Tensor& x) { return erfinv(x); }), 1)};
          },
  });
}

} // namespace ditto
