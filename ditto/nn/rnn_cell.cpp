// The recurrent cells: RNNCell, LSTMCell and GRUCell (one step each).

#include "ditto/nn/rnn.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/determinism/context.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/detail/rnn_ops.h"
#include "ditto/nn/functional.h"
#include "ditto/nn/init.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn {

RNNCellBase::RNNCellBase(
    const char* name,
    const RNNCellOptions& o,
    int64_t gates)
    : Module(name), options(o), name_(name) {
  DITTO_CHECK(
      o.hidden_size() > 0 && o.input_size() >= 0,
      ValueError,
      name,
      "hidden_size must be positive and input_size non-negative, got ",
      o.hidden_size(),
      " and ",
      o.input_size());
  const int64_t G = gates * o.hidden_size();
  weight_ih =
      register_parameter("weight_ih", uninitialized({G, o.input_size()}));
  weight_hh =
      register_parameter("weight_hh", uninitialized({G, o.hidden_size()}));
  std::vector<Tensor> all{weight_ih, weight_hh};
  if (o.bias()) {
    bias_ih = register_parameter("bias_ih", uninitialized({G}));
    bias_hh = register_parameter("bias_hh", uninitialized({G}));
    all.push_back(bias_ih);
    all.push_back(bias_hh);
  }
  defer_reset([all, H = o.hidden_size()] { reset_uniform(all, H); });
}

void RNNCellBase::reset_parameters() {
  detail::run_deferred();
  reset_uniform(parameters(), options.hidden_size());
}

std::string RNNCellBase::extra_repr() const {
  std::string s = std::to_string(options.input_size()) + ", " +
      std::to_string(options.hidden_size());
  if (!options.bias()) {
    s += ", bias=False";
  }
  if (std::string(name_) == "RNNCell" &&
      options.nonlinearity() == RNNNonlinearity::ReLU) {
    s += ", nonlinearity=relu";
  }
  return s;
}

std::pair<Tensor, bool> RNNCellBase::batched_input(const Tensor& x) const {
  DITTO_CHECK(x.defined(), ValueError, name_, "undefined input");
  DITTO_CHECK(
      x.dim() == 1 || x.dim() == 2,
      ValueError,
      name_,
      "Expected input to be 1D or 2D, got ",
      x.dim(),
      "D instead");
  DITTO_CHECK(
      x.size(-1) == options.input_size(),
      ValueError,
      name_,
      "input has inconsistent input_size: got ",
      x.size(-1),
      " expected ",
      options.input_size());
  DITTO_CHECK(
      x.dtype() == weight_ih.dtype(),
      TypeError,
      name_,
      "input has dtype ",
      dtype_name(x.dtype()),
      " but the parameters have dtype ",
      dtype_name(weight_ih.dtype()));
  const bool unbatched = x.dim() == 1;
  return {unbatched ? x.unsqueeze(0) : x, unbatched};
}

Tensor RNNCellBase::batched_state(
    const Tensor& h,
    const Tensor& x,
    bool unbatched) const {
  if (!h.defined()) {
    return zeros({x.size(0), options.hidden_size()}, x.dtype());
  }
  const Tensor hb = unbatched && h.dim() == 1 ? h.unsqueeze(0) : h;
  const Shape want{x.size(0), options.hidden_size()};
  DITTO_CHECK(
      hb.sizes() == want && h.dim() == (unbatched ? 1 : 2),
      ValueError,
      name_,
      "hidden state must have sizes ",
      shape_str(unbatched ? Shape{options.hidden_size()} : want),
      ", got ",
      shape_str(h.sizes()));
  DITTO_CHECK(
      h.dtype() == x.dtype(),
      TypeError,
      name_,
      "hidden state has dtype ",
      dtype_name(h.dtype()),
      ", the input ",
      dtype_name(x.dtype()));
  return hb;
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellBase("RNNCell", o, 1) {}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& h0) const {
  ForwardScope scope(*this);
  auto [x, unbatched] = batched_input(input);
  const Tensor h = batched_state(h0, x, unbatched);
  Tensor pre = bias_ih.defined()
      ? add(addmm(bias_ih, x, weight_ih.t()), addmm(bias_hh, h, weight_hh.t()))
      : add(mm(x, weight_ih.t()), mm(h, weight_hh.t()));
  Tensor out =
      options.nonlinearity() == RNNNonlinearity::Tanh ? tanh(pre) : relu(pre);
  return unbatched ? out.squeeze(0) : out;
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellBase("LSTMCell", o, 4) {}

LSTMCellImpl::State LSTMCellImpl::forward(
    const Tensor& input,
    const std::optional<State>& hx) const {
  ForwardScope scope(*this);
  auto [x, unbatched] = batched_input(input);
  const Tensor h =
      batched_state(hx ? std::get<0>(*hx) : Tensor(), x, unbatched);
  const Tensor c =
      batched_state(hx ? std::get<1>(*hx) : Tensor(), x, unbatched);
  Tensor gates = bias_ih.defined()
      ? add(addmm(bias_ih, x, weight_ih.t()), addmm(bias_hh, h, weight_hh.t()))
      : add(mm(x, weight_ih.t()), mm(h, weight_hh.t()));
  auto [h2, c2] = functional::lstm_cell_gates(gates, c);
  if (unbatched) {
    return {h2.squeeze(0), c2.squeeze(0)};
  }
  return {h2, c2};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellBase("GRUCell", o, 3) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& h0) const {
  ForwardScope scope(*this);
  auto [x, unbatched] = batched_input(input);
  const Tensor h = batched_state(h0, x, unbatched);
  Tensor gi = bias_ih.defined() ? addmm(bias_ih, x, weight_ih.t())
                                : mm(x, weight_ih.t());
  Tensor gh = bias_hh.defined() ? addmm(bias_hh, h, weight_hh.t())
                                : mm(h, weight_hh.t());
  Tensor out = functional::gru_cell_gates(gi, gh, h);
  return unbatched ? out.squeeze(0) : out;
}

} // namespace ditto::nn
