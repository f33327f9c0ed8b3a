// The records of the masked ops of masked.cpp (Note [Op records] in
// record.cpp): masked_select, the in-place masked_fill_ and its
// out-of-place form.

#include "ditto/ops/detail/index_samples.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using s::inplace;
using s::out_of_place;
using s::values;

using ::ditto::detail::samples::kFloatingAndInt64;

// ---- masked_fill_: inputs self, mask (broadcast to self).

std::vector<Sample> masked_fill_samples(const SampleSpec& spec, s::Call call) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
  Tensor self = values({r, c}, dt, 1);
  std::vector<Sample> out = {
      {"same_shape", {self, s::varied({r, c}, kBool, 2.0, 2)}, call},
      {"broadcast_row", {self, s::varied({c}, kBool, 2.0, 3)}, call},
      {"broadcast_col", {self, s::varied({r, 1}, kBool, 2.0, 4)}, call},
      {"strided",
       {s::strided(self), s::strided(s::varied({r, c}, kBool, 2.0, 5))},
       call},
      {"empty", {values({0, c}, dt, 6), s::varied({c}, kBool, 2.0, 7)}, call},
  };
  if (!spec.small) {
    out.push_back(
        {"long",
         {values({70001}, dt, 8), s::varied({70001}, kBool, 2.0, 9)},
         call});
  }
  return out;
}

} // namespace

DITTO_OP_RECORDS(masked) {
  register_op({
      .name = "masked_select",
      .family = "index",
      .callables = s::callables(
          "ditto::masked_select(self, mask)", "Tensor::masked_select(mask)"),
      .deterministic_because =
          "counts per fixed chunk of 16384 elements, then each chunk copies "
          "its elements to its own prefix offset",
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2([](const Tensor& a, const Tensor& m) {
              return masked_select(a, m);
            });
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            Tensor self = values({r, c}, dt, 1);
            Tensor mask = s::varied({r, c}, kBool, 2.0, 2);
            return std::vector<Sample>{
                {"same_shape", {self, mask}, call},
                {"broadcast_mask", {self, s::varied({c}, kBool, 2.0, 3)}, call},
                {"broadcast_self", {values({c}, dt, 4), mask}, call},
                {"strided", {s::strided(self), s::strided(mask)}, call},
                {"empty",
                 {values({0, c}, dt, 5), s::varied({c}, kBool, 2.0, 6)},
                 call},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& a, const Tensor& m) {
              return masked_select(a, m);
            });
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"float_mask",
                 {self, s::varied({3, 4}, kFloat32, 2.0, 2)},
                 call},
                {"not_broadcastable",
                 {self, s::varied({3}, kBool, 2.0, 2)},
                 call},
                s::undefined_input(call, 2),
            };
          },
  });

  // ---- masked_fill_ / masked_fill

  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "masked_fill_",
        .family = "index",
        .callables = {"Tensor::masked_fill_(mask, value)"},
        .deterministic_because =
            "each element is written once, from its own mask element",
        .dtypes = kFloatingAndInt64,
        .samples =
            [](const SampleSpec& spec) {
              return masked_fill_samples(
                  spec,
                  inplace([](Tensor& self, const std::vector<Tensor>& in) {
                    self.masked_fill_(in[1], 2);
                  }));
            },
        .bad_samples =
            [] {
              auto call =
                  inplace([](Tensor& self, const std::vector<Tensor>& in) {
                    self.masked_fill_(in[1], 2);
                  });
              Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
              return std::vector<Sample>{
                  {"float_mask",
                   {self, s::varied({3, 4}, kFloat32, 2.0, 2)},
                   call},
                  {"mask_not_broadcastable",
                   {self, s::varied({3}, kBool, 2.0, 2)},
                   call},
                  {"mask_larger_than_self",
                   {s::varied({4}, kFloat32, 2.0, 1),
                    s::varied({3, 4}, kBool, 2.0, 2)},
                   call},
                  {"expanded_self",
                   {s::varied({1, 4}, kFloat32, 2.0, 1).expand({3, 4}),
                    s::varied({3, 4}, kBool, 2.0, 2)},
                   call},
              };
            },
        .inplace = true,
    });
  }
  register_op({
      .name = "masked_fill",
      .family = "index",
      .callables =
          {"ditto::masked_fill(self, mask, value)",
           "Tensor::masked_fill(mask, value)"},
      .deterministic_because =
          "masked_fill_ on a copy: each element is written once, from its own "
          "mask element",
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            return out_of_place(
                masked_fill_samples(spec, [](const std::vector<Tensor>& in) {
                  return std::vector<Tensor>{in[0].masked_fill(in[1], 2)};
                }));
          },
      .bad_samples =
          [] {
            auto call = [](const std::vector<Tensor>& in) {
              return std::vector<Tensor>{masked_fill(in[0], in[1], 2)};
            };
            auto tensor_value = [](const std::vector<Tensor>& in) {
              return std::vector<Tensor>{
                  masked_fill(in[0], in[1], full({2}, 1.0))};
            };
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            Tensor mask = gt(self, 0);
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"float_mask",
                 {self, s::varied({3, 4}, kFloat32, 2.0, 2)},
                 call},
                {"mask_not_broadcastable",
                 {self, s::varied({3}, kBool, 2.0, 2)},
                 call},
                {"value_not_0_dim", {self, mask}, tensor_value},
            };
          },
  });
}

} // namespace ditto
