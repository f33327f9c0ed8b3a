// The records of the recurrent layers' ops: the fused cell gates, split_rows
// and the recurrent step (rnn.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/detail/rnn_ops.h"
#include "ditto/nn/functional/rnn.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

// ---- recurrent

std::vector<Sample> lstm_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t b = s::size(spec, 64, 3), h = s::size(spec, 300, 2);
  Tensor gates = s::varied({b, 4 * h}, dt, 6.0, 1);
  Tensor c = s::varied({b, h}, dt, 4.0, 2);
  s::Call call = [](const std::vector<Tensor>& in) {
    auto [h2, c2] = lstm_cell_gates(in[0], in[1]);
    return std::vector<Tensor>{h2, c2};
  };
  return {
      {"rows", {gates, c}, call},
      {"strided", {s::strided(gates), s::strided(c)}, call},
      {"empty",
       {s::varied({0, 4 * h}, dt, 1.0, 3), s::varied({0, h}, dt, 1.0, 4)},
       call},
  };
}

std::vector<Sample> gru_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t b = s::size(spec, 64, 3), h = s::size(spec, 300, 2);
  Tensor gi = s::varied({b, 3 * h}, dt, 6.0, 1);
  Tensor gh = s::varied({b, 3 * h}, dt, 6.0, 2);
  Tensor hh = s::varied({b, h}, dt, 2.0, 3);
  auto call = s::call3(
      [](auto& a, auto& g, auto& x) { return gru_cell_gates(a, g, x); });
  return {
      {"rows", {gi, gh, hh}, call},
      {"strided", {s::strided(gi), gh, s::strided(hh)}, call},
      {"empty",
       {s::varied({0, 3 * h}, dt, 1.0, 4),
        s::varied({0, 3 * h}, dt, 1.0, 5),
        s::varied({0, h}, dt, 1.0, 6)},
       call},
  };
}

std::vector<Sample> split_rows_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t a = s::size(spec, 300, 2), b = s::size(spec, 701, 5);
  Tensor x = s::varied({a + b, s::size(spec, 37, 3)}, dt, 8.0, 1);
  auto split = [](std::vector<int64_t> rows) {
    return [rows](const std::vector<Tensor>& in) {
      return split_rows(in[0], rows);
    };
  };
  return {
      {"blocks", {x}, split({a, 0, b})},
      {"strided", {s::strided(x)}, split({b, a})},
      {"one_block", {x}, split({a + b})},
      {"empty", {s::varied({0, 3}, dt, 1.0, 2)}, split({0, 0})},
  };
}

} // namespace

DITTO_OP_RECORDS(rnn_ops) {
  const char* kRows =
      "each row is computed from its own inputs by one task, whatever the "
      "thread that runs it";
  register_op({
      .name = "lstm_cell_gates",
      .family = "rnn",
      .callables =
          {"ditto::nn::functional::lstm_cell_gates(gates, c)",
           "ditto::nn::LSTM, LSTMCell (each step)"},
      .deterministic_because = kRows,
      .dtypes = kFloating,
      .samples = lstm_samples,
      .bad_samples =
          [] {
            s::Call call = [](const std::vector<Tensor>& in) {
              auto [h, c] = lstm_cell_gates(in[0], in[1]);
              return std::vector<Tensor>{h, c};
            };
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"gates_not_4h",
                 {s::varied({2, 6}, kFloat32, 2.0, 1),
                  s::varied({2, 2}, kFloat32, 2.0, 2)},
                 call},
                {"c_shape",
                 {s::varied({2, 8}, kFloat32, 2.0, 1),
                  s::varied({3, 2}, kFloat32, 2.0, 2)},
                 call},
            };
          },
  });
  register_op({
      .name = "gru_cell_gates",
      .family = "rnn",
      .callables =
          {"ditto::nn::functional::gru_cell_gates(gi, gh, h)",
           "ditto::nn::GRU, GRUCell (each step)"},
      .deterministic_because = kRows,
      .dtypes = kFloating,
      .samples = gru_samples,
      .bad_samples =
          [] {
            auto call = s::call3([](auto& a, auto& g, auto& x) {
              return gru_cell_gates(a, g, x);
            });
            return std::vector<Sample>{
                s::undefined_input(call, 3),
                {"gh_shape",
                 {s::varied({2, 6}, kFloat32, 2.0, 1),
                  s::varied({2, 3}, kFloat32, 2.0, 2),
                  s::varied({2, 2}, kFloat32, 2.0, 3)},
                 call},
            };
          },
  });
  register_op({
      .name = "split_rows",
      .family = "rnn",
      .callables =
          {"ditto::nn::functional::split_rows(x, rows)",
           "ditto::nn::RNN, LSTM, GRU (the steps' rows)"},
      .deterministic_because = "each output element is copied from one input "
                               "element",
      .dtypes = {kFloat32, kFloat64, kInt64},
      .samples = split_rows_samples,
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"rows_do_not_sum",
                 {s::varied({5, 2}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& in) {
                   return split_rows(in[0], {2, 2});
                 }},
                {"negative_rows",
                 {s::varied({5, 2}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& in) {
                   return split_rows(in[0], {7, -2});
                 }},
            };
          },
  });
  register_op({
      .name = "recurrent_step",
      .family = "rnn",
      .callables = {"ditto::nn::RNN, LSTM, GRU (each step: "
                    "detail::recurrent_step(input, h, w_t))"},
      .deterministic_because =
          "one addmm whose blocking depends on the shapes only (k is the "
          "hidden size, never split)",
      .dtypes = kFloating,
      // w_t is not differentiated (the carrier gives its gradient): it is
      // built here.
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t b = s::size(spec, 64, 3), r = s::size(spec, 100, 4),
                          g = s::size(spec, 400, 5);
            Tensor in = s::varied({b, g}, dt, 4.0, 1);
            Tensor h = s::varied({b, r}, dt, 2.0, 2);
            Tensor wt = s::varied({r, g}, dt, 1.0, 3);
            auto call = s::call2([wt](const Tensor& x, const Tensor& hh) {
              return detail::recurrent_step(x, hh, wt);
            });
            return std::vector<Sample>{
                {"step", {in, h}, call},
                {"strided", {s::strided(in), s::strided(h)}, call},
            };
          },
  });
  register_op({
      .name = "recurrent_weight_carrier",
      .family = "rnn",
      .callables = {"ditto::nn::RNN, LSTM, GRU (W_hh's gradient: "
                    "detail::recurrent_weight_carrier(base, weight, rows))"},
      .deterministic_because = "a copy of base",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t b = s::size(spec, 320, 3), g = s::size(spec, 400, 4),
                          r = s::size(spec, 100, 2);
            Tensor base = s::varied({b, g}, dt, 4.0, 1);
            Tensor w = s::varied({g, r}, dt, 1.0, 2);
            // weight's gradient is g^T *rows by design, not the derivative
            // of the copy: gradcheck leaves weight alone.
            s::Call call = [](const std::vector<Tensor>& in) {
              return std::vector<Tensor>{detail::recurrent_weight_carrier(
                  in[0], in[1], std::make_shared<Tensor>())};
            };
            return std::vector<Sample>{
                {"carrier", {base, w}, call, {1}},
                {"strided", {s::strided(base), w}, call, {1}},
            };
          },
  });
}

} // namespace ditto::nn::functional
