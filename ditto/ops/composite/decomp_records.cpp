// The records of the decompositions (decomp.cpp) (Note [Op records] in
// record.cpp).

#include "ditto/ops/decomp.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/record.h"
#include "ditto/random/generator.h"

namespace ditto {
namespace {

namespace s = detail::samples;

using ::ditto::detail::samples::kFloating;

Tensor decomp_values(const Shape& shape, Dtype dt, uint64_t seed) {
  return s::varied(shape, dt, 2.0, seed);
}

} // namespace

DITTO_OP_RECORDS(decomp) {
  const char* kNone = "no derivative is implemented for the decompositions";
  const char* kSerial =
      "one thread runs the factorization's loops in a fixed order";
  auto check_bad = [](s::Call call) {
    return std::vector<Sample>{
        {"3d", {s::varied({2, 3, 3}, kFloat32, 2.0, 1)}, call},
        {"int", {s::varied({3, 3}, kInt64, 20.0, 1)}, call},
        s::undefined_input(call, 1),
    };
  };
  register_op({
      .name = "linalg::qr",
      .family = "linalg",
      .callables = {"ditto::linalg::qr(a)"},
      .deterministic_because = kSerial,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            auto call = [](const std::vector<Tensor>& in) {
              auto [q, r] = linalg::qr(in[0]);
              return std::vector<Tensor>{q, r};
            };
            const Dtype dt = spec.dtype;
            return std::vector<Sample>{
                {"tall",
                 {decomp_values(
                     {s::size(spec, 301, 5), s::size(spec, 37, 3)}, dt, 1)},
                 call},
                {"square",
                 {decomp_values(
                     {s::size(spec, 45, 4), s::size(spec, 45, 4)}, dt, 2)},
                 call},
                {"strided",
                 {s::strided(decomp_values(
                     {s::size(spec, 97, 6), s::size(spec, 29, 4)}, dt, 3))},
                 call},
            };
          },
      .bad_samples =
          [check_bad] {
            s::Call call = [](const std::vector<Tensor>& in) {
              auto [q, r] = linalg::qr(in[0]);
              return std::vector<Tensor>{q, r};
            };
            std::vector<Sample> out = check_bad(call);
            out.push_back(
                {"wide", {s::varied({3, 5}, kFloat32, 2.0, 1)}, call});
            return out;
          },
      .not_differentiable = kNone,
  });
  auto svd_call = [](const std::vector<Tensor>& in) {
    linalg::SVD r = linalg::svd(in[0]);
    return std::vector<Tensor>{r.U, r.S, r.V};
  };
  register_op({
      .name = "linalg::svd",
      .family = "linalg",
      .callables = {"ditto::linalg::svd(a)"},
      .deterministic_because = kSerial,
      .dtypes = kFloating,
      .samples =
          [svd_call](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            return std::vector<Sample>{
                {"tall",
                 {decomp_values(
                     {s::size(spec, 203, 5), s::size(spec, 29, 3)}, dt, 1)},
                 svd_call},
                {"wide",
                 {decomp_values(
                     {s::size(spec, 23, 3), s::size(spec, 151, 5)}, dt, 2)},
                 svd_call},
                {"strided",
                 {s::strided(decomp_values(
                     {s::size(spec, 61, 4), s::size(spec, 17, 4)}, dt, 3))},
                 svd_call},
            };
          },
      .bad_samples = [svd_call, check_bad] { return check_bad(svd_call); },
      .not_differentiable = kNone,
  });
  auto lowrank = [](int64_t q, int64_t niter) -> s::Call {
    return [q, niter](const std::vector<Tensor>& in) {
      linalg::SVD r =
          linalg::svd_lowrank(in[0], q, niter, Generator::philox(13));
      return std::vector<Tensor>{r.U, r.S, r.V};
    };
  };
  register_op({
      .name = "linalg::svd_lowrank",
      .family = "linalg",
      .callables = {"ditto::linalg::svd_lowrank(a, q, niter, generator)"},
      .deterministic_because =
          "its draws come from the given generator and its products, QR and "
          "SVD are deterministic",
      .dtypes = kFloating,
      .samples =
          [lowrank](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            return std::vector<Sample>{
                {"tall",
                 {decomp_values(
                     {s::size(spec, 211, 6), s::size(spec, 47, 4)}, dt, 1)},
                 lowrank(3, 2)},
                {"wide",
                 {decomp_values(
                     {s::size(spec, 37, 4), s::size(spec, 173, 6)}, dt, 2)},
                 lowrank(3, 1)},
                {"strided",
                 {s::strided(decomp_values(
                     {s::size(spec, 67, 5), s::size(spec, 31, 5)}, dt, 3))},
                 lowrank(2, 0)},
            };
          },
      .bad_samples =
          [lowrank, check_bad] {
            std::vector<Sample> out = check_bad(lowrank(1, 1));
            out.push_back(
                {"q_too_large",
                 {s::varied({5, 3}, kFloat32, 2.0, 1)},
                 lowrank(4, 1)});
            out.push_back(
                {"q_zero",
                 {s::varied({5, 3}, kFloat32, 2.0, 1)},
                 lowrank(0, 1)});
            out.push_back(
                {"negative_niter",
                 {s::varied({5, 3}, kFloat32, 2.0, 1)},
                 lowrank(2, -1)});
            return out;
          },
      .not_differentiable = kNone,
  });
}

} // namespace ditto
