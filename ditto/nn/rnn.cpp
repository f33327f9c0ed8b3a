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
namespace {

int64_t num_gates(RNNMode mode) {
  switch (mode) {
    case RNNMode::LSTMImpl:
      return 4;
    case RNNMode::GRUImpl:
      return 3;
    default:
      return 1;
  }
}

// One layer's weights for one direction.
struct Weights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

// h (and c) after one step on the rows xt of the input projection (and,
// for the GRU, the rows bt of b_hh). W_hh enters detached: its gradient is
// the carrier's one GEMM over all steps (run_direction).
struct Step {
  RNNMode mode;
  Tensor w_hh_t, w_hr_t;

  void operator()(const Tensor& xt, const Tensor& bt, Tensor& h, Tensor& c)
      const {
    switch (mode) {
      case RNNMode::RNN_TANH:
        h = tanh(detail::recurrent_step(xt, h, w_hh_t));
        return;
      case RNNMode::RNN_RELU:
        h = relu(detail::recurrent_step(xt, h, w_hh_t));
        return;
      case RNNMode::LSTMImpl: {
        auto [hh, cc] = functional::lstm_cell_gates(
            detail::recurrent_step(xt, h, w_hh_t), c);
        h = w_hr_t.defined() ? mm(hh, w_hr_t) : hh;
        c = cc;
        return;
      }
      case RNNMode::GRUImpl:
        h = functional::gru_cell_gates(
            xt, detail::recurrent_step(bt, h, w_hh_t), h);
        return;
    }
  }
};

// The input projection of every step: one GEMM, biases folded in (GRU
// keeps b_hh for the r product).
Tensor project_input(RNNMode mode, const Weights& w, const Tensor& x) {
  Tensor wt = w.w_ih.t();
  if (!w.b_ih.defined()) {
    return mm(x, wt);
  }
  Tensor b = mode == RNNMode::GRUImpl ? w.b_ih : add(w.b_ih, w.b_hh);
  return addmm(b, x, wt);
}

// One direction of one layer over packed rows x (time-major, batch_sizes
// bs): returns (output rows, h_n, c_n). The forward direction drops the
// sequences that ended (keeping their final state); the reverse one starts
// with those running at the last step and adds each sequence's initial
// state when it starts.
std::tuple<Tensor, Tensor, Tensor> run_direction(
    RNNMode mode,
    const Weights& w,
    const Tensor& x,
    const std::vector<int64_t>& bs,
    const Tensor& h0,
    const Tensor& c0,
    bool reverse) {
  const int64_t T = int64_t(bs.size());
  const bool gru = mode == RNNMode::GRUImpl;
  const Step step{
      mode, w.w_hh.detach().t(), w.w_hr.defined() ? w.w_hr.t() : Tensor()};
  // W_hh's gradient: g^T (the states every step used), one GEMM, where g
  // is the gradient of what W_hh h is added to: the input projection, or
  // for the GRU b_hh broadcast over the rows.
  auto used = std::make_shared<Tensor>();
  // Only a backward reads them.
  const bool keep = autograd::GradMode::is_enabled() && w.w_hh.requires_grad();
  Tensor xp = project_input(mode, w, x);
  Tensor bh;
  if (gru) {
    const Shape rows{x.size(0), w.w_hh.size(0)};
    bh = detail::recurrent_weight_carrier(
        w.b_hh.defined() ? w.b_hh.expand(rows) : zeros(rows, x.dtype()),
        w.w_hh,
        used);
  } else {
    xp = detail::recurrent_weight_carrier(xp, w.w_hh, used);
  }
  // Each step's rows (one op: its backward is one cat).
  auto blocks = [&](const Tensor& t) {
    return T == 1 ? std::vector<Tensor>{t} : functional::split_rows(t, bs);
  };
  const std::vector<Tensor> xs = blocks(xp);
  const std::vector<Tensor> bhs =
      gru ? blocks(bh) : std::vector<Tensor>(xs.size());
  std::vector<Tensor> states(static_cast<size_t>(T));
  std::vector<Tensor> outs(static_cast<size_t>(T));
  const bool lstm = mode == RNNMode::LSTMImpl;
  Tensor h = h0, c = c0;
  if (!reverse) {
    std::vector<Tensor> done_h, done_c;
    int64_t cur = bs[0];
    for (int64_t t = 0; t < T; ++t) {
      const int64_t bt = bs[t];
      if (bt < cur) {
        done_h.push_back(h.narrow(0, bt, cur - bt));
        h = h.narrow(0, 0, bt);
        if (lstm) {
          done_c.push_back(c.narrow(0, bt, cur - bt));
          c = c.narrow(0, 0, bt);
        }
        cur = bt;
      }
      if (keep) {
        states[t] = h.detach();
      }
      step(xs[t], bhs[t], h, c);
      outs[t] = h;
    }
    if (!done_h.empty()) {
      std::reverse(done_h.begin(), done_h.end());
      done_h.insert(done_h.begin(), h);
      h = cat(done_h, 0);
      if (lstm) {
        std::reverse(done_c.begin(), done_c.end());
        done_c.insert(done_c.begin(), c);
        c = cat(done_c, 0);
      }
    }
  } else {
    int64_t cur = bs[T - 1];
    if (cur < bs[0]) {
      h = h0.narrow(0, 0, cur);
      c = lstm ? c0.narrow(0, 0, cur) : Tensor();
    }
    for (int64_t t = T - 1; t >= 0; --t) {
      const int64_t bt = bs[t];
      if (bt > cur) {
        h = cat({h, h0.narrow(0, cur, bt - cur)}, 0);
        if (lstm) {
          c = cat({c, c0.narrow(0, cur, bt - cur)}, 0);
        }
        cur = bt;
      }
      if (keep) {
        states[t] = h.detach();
      }
      step(xs[t], bhs[t], h, c);
      outs[t] = h;
    }
  }
  if (keep) {
    *used = T == 1 ? states[0] : cat(states, 0);
  }
  return {T == 1 ? outs[0] : cat(outs, 0), h, c};
}

} // namespace

// ---- RNNBase

RNNBase::RNNBase(
    const char* name,
    RNNMode mode,
    const RNNOptionsBase& o,
    int64_t proj_size)
    : Module(name), name_(name), mode_(mode), base_(o), proj_size_(proj_size) {
  DITTO_CHECK(
      o.dropout() >= 0 && o.dropout() <= 1,
      ValueError,
      name,
      "dropout should be a number in range [0, 1] representing the "
      "probability of an element being zeroed, got ",
      o.dropout());
  DITTO_CHECK(
      o.hidden_size() > 0,
      ValueError,
      name,
      "hidden_size must be greater than zero, got ",
      o.hidden_size());
  DITTO_CHECK(
      o.num_layers() > 0,
      ValueError,
      name,
      "num_layers must be greater than zero, got ",
      o.num_layers());
  DITTO_CHECK(
      o.input_size() >= 0,
      ValueError,
      name,
      "input_size must be non-negative, got ",
      o.input_size());
  DITTO_CHECK(
      proj_size >= 0,
      ValueError,
      name,
      "proj_size should be a positive integer or zero to disable "
      "projections, got ",
      proj_size);
  DITTO_CHECK(
      proj_size < o.hidden_size(),
      ValueError,
      name,
      "proj_size has to be smaller than hidden_size, got proj_size=",
      proj_size,
      " and hidden_size=",
      o.hidden_size());
  if (o.dropout() > 0 && o.num_layers() == 1) {
    // PyTorch's UserWarning, word for word.
    determinism::warn(
        name,
        "dropout option adds dropout after all but last recurrent layer, so "
        "non-zero dropout expects num_layers greater than 1, but got "
        "dropout=" +
            py_float(o.dropout()) + " and num_layers=1");
  }
  const int64_t G = num_gates(mode) * o.hidden_size();
  const int64_t H = o.hidden_size();
  const int64_t R = proj_size > 0 ? proj_size : H;
  const int64_t D = o.bidirectional() ? 2 : 1;
  std::vector<Tensor> all;
  for (int64_t l = 0; l < o.num_layers(); ++l) {
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx =
          "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      const int64_t in = l == 0 ? o.input_size() : R * D;
      std::vector<Tensor> w(5);
      w[0] = register_parameter("weight_ih" + sfx, uninitialized({G, in}));
      w[1] = register_parameter("weight_hh" + sfx, uninitialized({G, R}));
      if (o.bias()) {
        w[2] = register_parameter("bias_ih" + sfx, uninitialized({G}));
        w[3] = register_parameter("bias_hh" + sfx, uninitialized({G}));
      }
      if (proj_size > 0) {
        w[4] = register_parameter("weight_hr" + sfx, uninitialized({R, H}));
      }
      for (const Tensor& t : w) {
        if (t.defined()) {
          all.push_back(t);
        }
      }
      weights_.push_back(std::move(w));
    }
  }
  defer_reset([all, H] { reset_uniform(all, H); });
}

void RNNBase::reset_parameters() {
  detail::run_deferred();
  reset_uniform(parameters(), base_.hidden_size());
}

std::string RNNBase::extra_repr() const {
  std::string s = std::to_string(base_.input_size()) + ", " +
      std::to_string(base_.hidden_size());
  if (proj_size_ != 0) {
    s += ", proj_size=" + std::to_string(proj_size_);
  }
  if (base_.num_layers() != 1) {
    s += ", num_layers=" + std::to_string(base_.num_layers());
  }
  if (!base_.bias()) {
    s += ", bias=False";
  }
  if (base_.batch_first()) {
    s += ", batch_first=True";
  }
  if (base_.dropout() != 0) {
    s += ", dropout=" + py_float(base_.dropout());
  }
  if (base_.bidirectional()) {
    s += ", bidirectional=True";
  }
  return s;
}

void RNNBase::check_input(const Tensor& x, bool packed) const {
  DITTO_CHECK(x.defined(), ValueError, name_, "undefined input");
  const int64_t want = packed ? 2 : 3;
  DITTO_CHECK(
      x.dim() == want,
      ValueError,
      name_,
      "input must have ",
      want,
      " dimensions, got ",
      x.dim(),
      " (sizes ",
      shape_str(x.sizes()),
      ")");
  DITTO_CHECK(
      x.size(-1) == base_.input_size(),
      ValueError,
      name_,
      "input.size(-1) must be equal to input_size. Expected ",
      base_.input_size(),
      ", got ",
      x.size(-1));
  const Tensor& w = weights_[0][0];
  DITTO_CHECK(
      x.dtype() == w.dtype(),
      TypeError,
      name_,
      "input has dtype ",
      dtype_name(x.dtype()),
      " but the parameters have dtype ",
      dtype_name(w.dtype()));
}

void RNNBase::check_state(
    const Tensor& h,
    int64_t batch,
    int64_t size,
    const char* what) const {
  if (!h.defined()) {
    return;
  }
  const int64_t D = base_.bidirectional() ? 2 : 1;
  const Shape want{base_.num_layers() * D, batch, size};
  DITTO_CHECK(
      h.sizes() == want,
      ValueError,
      name_,
      "Expected ",
      what,
      " size ",
      shape_str(want),
      ", got ",
      shape_str(h.sizes()));
  DITTO_CHECK(
      h.dtype() == weights_[0][0].dtype(),
      TypeError,
      name_,
      what,
      " has dtype ",
      dtype_name(h.dtype()),
      " but the parameters have dtype ",
      dtype_name(weights_[0][0].dtype()));
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::run(
    const Tensor& x,
    const std::vector<int64_t>& bs,
    const Tensor& h0,
    const Tensor& c0) const {
  const int64_t B = bs[0];
  const int64_t H = base_.hidden_size();
  const int64_t R = proj_size_ > 0 ? proj_size_ : H;
  const int64_t D = base_.bidirectional() ? 2 : 1;
  const int64_t L = base_.num_layers();
  const bool lstm = mode_ == RNNMode::LSTMImpl;
  Tensor layer_in = x;
  std::vector<Tensor> hn, cn;
  for (int64_t l = 0; l < L; ++l) {
    std::vector<Tensor> dir_out;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t k = l * D + d;
      const std::vector<Tensor>& w = weights_[size_t(k)];
      const Weights ws{w[0], w[1], w[2], w[3], w[4]};
      Tensor h = h0.defined() ? h0.select(0, k) : zeros({B, R}, x.dtype());
      Tensor c = !lstm   ? Tensor()
          : c0.defined() ? c0.select(0, k)
                         : zeros({B, H}, x.dtype());
      auto [out, hl, cl] = run_direction(mode_, ws, layer_in, bs, h, c, d == 1);
      dir_out.push_back(out);
      hn.push_back(hl);
      cn.push_back(cl);
    }
    layer_in = D == 1 ? dir_out[0] : cat(dir_out, 1);
    if (l + 1 < L && base_.dropout() > 0 && is_training()) {
      layer_in = functional::dropout(
          layer_in, base_.dropout(), true, base_.generator());
    }
  }
  return {layer_in, stack(hn, 0), lstm ? stack(cn, 0) : Tensor()};
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::forward_padded(
    const Tensor& input,
    const Tensor& h0,
    const Tensor& c0) const {
  ForwardScope scope(*this);
  DITTO_CHECK(input.defined(), ValueError, name_, "undefined input");
  DITTO_CHECK(
      input.dim() == 2 || input.dim() == 3,
      ValueError,
      name_,
      "Expected input to be 2D or 3D, got ",
      input.dim(),
      "D tensor instead (sizes ",
      shape_str(input.sizes()),
      ")");
  const bool unbatched = input.dim() == 2;
  Tensor x = unbatched      ? input.unsqueeze(1)
      : base_.batch_first() ? input.transpose(0, 1)
                            : input;
  check_input(x, false);
  const int64_t T = x.size(0), B = x.size(1);
  const int64_t H = base_.hidden_size();
  const int64_t R = proj_size_ > 0 ? proj_size_ : H;
  auto batched = [&](const Tensor& s, int64_t size, const char* what) {
    if (!s.defined() || !unbatched) {
      return s;
    }
    DITTO_CHECK(
        s.dim() == 2,
        ValueError,
        name_,
        "For unbatched 2-D input, ",
        what,
        " should also be 2-D but got ",
        s.dim(),
        "-D tensor");
    (void)size;
    return s.unsqueeze(1);
  };
  const Tensor h = batched(h0, R, "hx");
  const Tensor c = batched(c0, H, "cx");
  check_state(h, B, R, mode_ == RNNMode::LSTMImpl ? "hidden[0]" : "hidden");
  check_state(c, B, H, "hidden[1]");
  DITTO_CHECK(
      T > 0 && B > 0,
      ValueError,
      name_,
      "empty input of sizes ",
      shape_str(input.sizes()));
  auto [out, hn, cn] =
      run(x.contiguous().reshape({T * B, x.size(2)}),
          std::vector<int64_t>(size_t(T), B),
          h,
          c);
  Tensor o = out.reshape({T, B, out.size(1)});
  if (unbatched) {
    return {o.squeeze(1), hn.squeeze(1), cn.defined() ? cn.squeeze(1) : cn};
  }
  return {base_.batch_first() ? o.transpose(0, 1) : o, hn, cn};
}

std::tuple<PackedSequence, Tensor, Tensor> RNNBase::forward_packed(
    const PackedSequence& x,
    const Tensor& h0,
    const Tensor& c0) const {
  ForwardScope scope(*this);
  DITTO_CHECK(x.defined(), ValueError, name_, "undefined PackedSequence");
  check_input(x.data(), true);
  const std::vector<int64_t> bs =
      detail::int_values(x.batch_sizes(), name_, "batch_sizes");
  DITTO_CHECK(!bs.empty(), ValueError, name_, "empty batch_sizes");
  const int64_t B = bs[0];
  const int64_t H = base_.hidden_size();
  const int64_t R = proj_size_ > 0 ? proj_size_ : H;
  check_state(h0, B, R, mode_ == RNNMode::LSTMImpl ? "hidden[0]" : "hidden");
  check_state(c0, B, H, "hidden[1]");
  DITTO_CHECK(
      std::accumulate(bs.begin(), bs.end(), int64_t(0)) == x.data().size(0),
      ValueError,
      name_,
      "batch_sizes sum to ",
      std::accumulate(bs.begin(), bs.end(), int64_t(0)),
      " but the packed data has ",
      x.data().size(0),
      " rows");
  // Initial states come in the original order, the packed batch is sorted.
  const Tensor& si = x.sorted_indices();
  const Tensor h = h0.defined() && si.defined() ? index_select(h0, 1, si) : h0;
  const Tensor c = c0.defined() && si.defined() ? index_select(c0, 1, si) : c0;
  auto [out, hn, cn] = run(x.data(), bs, h, c);
  const Tensor& ui = x.unsorted_indices();
  if (ui.defined()) {
    hn = index_select(hn, 1, ui);
    cn = cn.defined() ? index_select(cn, 1, ui) : cn;
  }
  return {
      PackedSequence(out, x.batch_sizes(), si, x.unsorted_indices()), hn, cn};
}

// ---- RNN, LSTM, GRU

RNNImpl::RNNImpl(const RNNOptions& o)
    : RNNBase(
          "RNN",
          o.nonlinearity() == RNNNonlinearity::Tanh ? RNNMode::RNN_TANH
                                                    : RNNMode::RNN_RELU,
          o,
          0),
      options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& x, const Tensor& h0)
    const {
  auto [o, h, c] = forward_padded(x, h0, {});
  return {o, h};
}

std::tuple<PackedSequence, Tensor> RNNImpl::forward(
    const PackedSequence& x,
    const Tensor& h0) const {
  auto [o, h, c] = forward_packed(x, h0, {});
  return {o, h};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : RNNBase("LSTM", RNNMode::LSTMImpl, o, o.proj_size()), options(o) {}

std::tuple<Tensor, LSTMImpl::State> LSTMImpl::forward(
    const Tensor& x,
    const std::optional<State>& hx) const {
  auto [o, h, c] = hx ? forward_padded(x, std::get<0>(*hx), std::get<1>(*hx))
                      : forward_padded(x, {}, {});
  return {o, State{h, c}};
}

std::tuple<PackedSequence, LSTMImpl::State> LSTMImpl::forward(
    const PackedSequence& x,
    const std::optional<State>& hx) const {
  auto [o, h, c] = hx ? forward_packed(x, std::get<0>(*hx), std::get<1>(*hx))
                      : forward_packed(x, {}, {});
  return {o, State{h, c}};
}

GRUImpl::GRUImpl(const GRUOptions& o)
    : RNNBase("GRU", RNNMode::GRUImpl, o, 0), options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& x, const Tensor& h0)
    const {
  auto [o, h, c] = forward_padded(x, h0, {});
  return {o, h};
}

std::tuple<PackedSequence, Tensor> GRUImpl::forward(
    const PackedSequence& x,
    const Tensor& h0) const {
  auto [o, h, c] = forward_packed(x, h0, {});
  return {o, h};
}

} // namespace ditto::nn
