// The records of the random ops (random.cpp): Note [Op records] in
// record.cpp. Every sample draws twice: from the default generator (the
// suite reseeds it) and from a Philox generator made in the call.

#include "ditto/ops/detail/random_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/record.h"
#include "ditto/random/generator.h"

namespace ditto {
namespace {

namespace s = detail::samples;

using detail::kDraw;
using detail::kStream;

using ::ditto::detail::samples::kFloating;

// A draw into a fresh tensor of n elements (no tensor input), from the
// default generator and from a Philox one.
void draw(
    const char* name,
    const std::string& callable,
    std::function<Tensor(Dtype, int64_t, const std::optional<Generator>&)> make,
    std::vector<Dtype> dtypes) {
  register_op({
      .name = name,
      .family = "random",
      .callables = s::split_callables("ditto::" + callable),
      .deterministic_because = kStream,
      .dtypes = dtypes,
      .samples =
          [make](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t n = s::size(spec, 40007, 13);
            return std::vector<Sample>{
                {"default_generator",
                 {},
                 [make, dt, n](const std::vector<Tensor>&) {
                   return std::vector{make(dt, n, std::nullopt)};
                 }},
                {"philox",
                 {},
                 [make, dt, n](const std::vector<Tensor>&) {
                   return std::vector{make(dt, n, Generator::philox(11))};
                 }},
                {"small",
                 {},
                 [make, dt](const std::vector<Tensor>&) {
                   return std::vector{make(dt, 7, std::nullopt)};
                 }},
            };
          },
      .bad_samples =
          [make] {
            return std::vector<Sample>{
                {"negative_size", {}, [make](const std::vector<Tensor>&) {
                   return std::vector{make(kFloat32, -1, std::nullopt)};
                 }}};
          },
      .not_differentiable = kDraw,
      .random = true,
  });
}

using Fill = std::function<void(Tensor&, const std::optional<Generator>&)>;

// A draw written into self (inputs[0]): fn, and the other forms that draw
// something else (random_(to), random_()); bad writes what fn's arguments
// refuse.
void fill(
    const char* name,
    const std::string& callable,
    Fill fn,
    std::vector<Dtype> dtypes,
    std::function<void(Tensor&)> bad,
    std::vector<std::pair<std::string, Fill>> more = {}) {
  register_op({
      .name = name,
      .family = "random",
      .callables = {"Tensor::" + callable},
      .deterministic_because = kStream,
      .dtypes = dtypes,
      .samples =
          [fn, more](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 131, 3), c = s::size(spec, 307, 5);
            Tensor self = s::varied({r, c}, spec.dtype, 2.0, 1);
            auto call = [](Fill f, bool philox) {
              return [f, philox](const std::vector<Tensor>& in) {
                Tensor t = in[0];
                f(t,
                  philox ? std::optional<Generator>(Generator::philox(11))
                         : std::nullopt);
                return std::vector{t};
              };
            };
            std::vector<Sample> out{
                {"default_generator", {self}, call(fn, false)},
                {"philox", {self}, call(fn, true)},
                {"strided", {s::strided(self)}, call(fn, false)},
            };
            for (const auto& [label, f] : more) {
              out.push_back({label, {self}, call(f, false)});
            }
            return out;
          },
      .bad_samples =
          [bad] {
            return std::vector<Sample>{
                {"bad_arguments",
                 {full({3, 4}, 0.5, kFloat32)},
                 [bad](const std::vector<Tensor>& in) {
                   Tensor t = in[0];
                   bad(t);
                   return std::vector{t};
                 }}};
          },
      .not_differentiable = kDraw,
      .inplace = true,
      .random = true,
  });
}

} // namespace

DITTO_OP_RECORDS(random) {
  draw(
      "rand",
      "rand(shape, dtype, generator), ditto::rand_like(t)",
      [](Dtype dt, int64_t n, const auto& g) { return rand({n}, dt, g); },
      kFloating);
  draw(
      "randn",
      "randn(shape, dtype, generator), ditto::randn_like(t)",
      [](Dtype dt, int64_t n, const auto& g) { return randn({n}, dt, g); },
      kFloating);
  draw(
      "randint",
      "randint(low, high, shape, dtype, generator), "
      "ditto::randint_like(t, low, high)",
      [](Dtype dt, int64_t n, const auto& g) {
        return randint(-50, 1000, {n}, dt, g);
      },
      {kInt64, kInt32, kFloat32});
  draw(
      "randperm",
      "randperm(n, dtype, generator)",
      [](Dtype dt, int64_t n, const auto& g) { return randperm(n, dt, g); },
      {kInt64});
  // The fills run on the device too (their declarations, random.ops.toml).
  fill(
      "uniform_",
      "uniform_(from, to, generator)",
      [](Tensor& t, const auto& g) { t.uniform_(-2.0, 3.0, g); },
      kFloating,
      [](Tensor& t) { t.uniform_(3.0, -2.0); });
  fill(
      "normal_",
      "normal_(mean, std, generator)",
      [](Tensor& t, const auto& g) { t.normal_(0.5, 2.0, g); },
      kFloating,
      [](Tensor& t) { t.normal_(0.0, -1.0); });
  fill(
      "random_",
      "random_(from, to, generator), Tensor::random_(to, generator), "
      "Tensor::random_(generator)",
      [](Tensor& t, const auto& g) { t.random_(-7, 100, g); },
      {kFloat32, kInt64},
      [](Tensor& t) { t.random_(5, 2); },
      {{"to", [](Tensor& t, const auto& g) { t.random_(1000, g); }},
       {"dtype_range", [](Tensor& t, const auto& g) { t.random_(g); }},
       {"from_to_none",
        [](Tensor& t, const auto& g) { t.random_(-3, std::nullopt, g); }}});
  fill(
      "exponential_",
      "exponential_(lambd, generator)",
      [](Tensor& t, const auto& g) { t.exponential_(2.0, g); },
      kFloating,
      [](Tensor& t) { t.exponential_(-1.0); });
  fill(
      "bernoulli_",
      "bernoulli_(p, generator), Tensor::bernoulli_(p_tensor, generator)",
      [](Tensor& t, const auto& g) { t.bernoulli_(0.3, g); },
      kFloating,
      [](Tensor& t) { t.bernoulli_(1.5); });
  register_op({
      .name = "bernoulli",
      .family = "random",
      .callables =
          {"ditto::bernoulli(self, generator)",
           "Tensor::bernoulli(generator)",
           "ditto::bernoulli(self, p, generator)",
           "Tensor::bernoulli(p, generator)"},
      .deterministic_because = kStream,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            Tensor p =
                s::varied({s::size(spec, 5003, 7)}, spec.dtype, 1.0, 1, 0.5);
            return std::vector<Sample>{
                {"default_generator", {p}, s::call1([](const Tensor& q) {
                   return bernoulli(q);
                 })},
                {"philox", {p}, s::call1([](const Tensor& q) {
                   return bernoulli(q, Generator::philox(11));
                 })},
                {"scalar_p", {p}, s::call1([](const Tensor& q) {
                   return bernoulli(q, 0.25);
                 })},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"p_above_one",
                 {full({3}, 1.5, kFloat32)},
                 s::call1([](const Tensor& q) { return bernoulli(q); })}};
          },
      .not_differentiable = kDraw,
      .random = true,
  });
}

} // namespace ditto
