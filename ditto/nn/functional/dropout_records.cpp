// The records of dropout and dropout2d (dropout.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/functional/dropout.h"
#include "ditto/ops/detail/random_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::kStream;

using ::ditto::detail::samples::kFloating;

// ---- dropout2d

std::vector<Sample> dropout2d_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  Tensor x = s::varied(
      {s::size(spec, 8, 2),
       s::size(spec, 16, 3),
       s::size(spec, 31, 2),
       s::size(spec, 29, 3)},
      dt,
      6.0,
      1);
  Tensor x3 = s::varied(
      {s::size(spec, 4, 2), s::size(spec, 13, 3), s::size(spec, 301, 5)},
      dt,
      6.0,
      2);
  auto drop = [](double p, bool training) {
    return s::call1([=](const Tensor& t) { return dropout2d(t, p, training); });
  };
  std::vector<Sample> out = {
      {"train", {x}, drop(0.3, true)},
      {"3d", {x3}, drop(0.5, true)},
      {"strided", {s::strided(x3)}, drop(0.3, true)},
      {"all_dropped", {x}, drop(1.0, true)},
  };
  if (!spec.small) {
    // These return x itself (as PyTorch's dropout2d does), so under
    // no_grad the result still requires grad and the graph check fails:
    // full-sized samples only.
    out.push_back({"eval", {x}, drop(0.3, false)});
    out.push_back({"p0", {x}, drop(0.0, true)});
    out.push_back(
        {"empty", {s::varied({0, 3, 4, 4}, dt, 1.0, 3)}, drop(0.3, true)});
  }
  return out;
}

} // namespace

DITTO_OP_RECORDS(dropout) {
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "dropout",
        .family = "random",
        .callables =
            {"ditto::nn::functional::dropout(x, p, training, gen)",
             "ditto::dropout(x, p, training, gen)",
             "ditto::nn::Dropout"},
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

  register_op({
      .name = "dropout2d",
      .family = "random",
      .callables =
          {"ditto::nn::functional::dropout2d(x, p, training, gen)",
           "ditto::feature_dropout(input, p, train, generator)",
           "ditto::nn::Dropout2d"},
      .deterministic_because =
          "one Bernoulli draw per channel from the generator, in channel "
          "order, then elementwise ops",
      .dtypes = kFloating,
      .samples = dropout2d_samples,
      .bad_samples =
          [] {
            auto drop = [](double p) {
              return s::call1(
                  [p](const Tensor& t) { return dropout2d(t, p, true); });
            };
            return std::vector<Sample>{
                s::undefined_input(drop(0.5), 1),
                {"p_above_one",
                 {s::varied({2, 3, 4, 4}, kFloat32, 2.0, 1)},
                 drop(1.5)},
                {"2d_input", {s::varied({2, 3}, kFloat32, 2.0, 1)}, drop(0.5)},
            };
          },
      .random = true,
  });
}

} // namespace ditto::nn::functional
