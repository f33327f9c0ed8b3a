#pragma once

// Recurrent layers as PyTorch 1.13's: RNN (tanh, relu), LSTM (with
// proj_size) and GRU, their cells, PackedSequence and the
// nn::utils::rnn helpers. The same parameter names, shapes, gate order and
// initial draws (so the same bits after the same seed). See docs/nn.md.
//
// The input projection of all steps is one GEMM per layer and direction,
// each step's recurrent product one GEMM on the batch, and the LSTM and GRU
// gates one fused elementwise op with its own backward. Everything runs
// through ditto's deterministic ops: the same bits for any thread count and
// CPU capability.

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"
#include "ditto/random/generator.h"

namespace ditto::nn {

// ---- PackedSequence

// Variable-length sequences packed time-major (torch.nn.utils.rnn.
// PackedSequence): data holds step 0 of every sequence, then step 1 of
// those still running, ... in the sorted (decreasing length) order;
// batch_sizes[t] (int64) is the number of sequences longer than t;
// sorted_indices maps sorted to original batch positions and
// unsorted_indices is its inverse (both undefined when the batch was
// already sorted).
class DITTO_API PackedSequence {
 public:
  PackedSequence() = default;
  PackedSequence(
      Tensor data,
      Tensor batch_sizes,
      Tensor sorted_indices = {},
      Tensor unsorted_indices = {});
  const Tensor& data() const {
    return data_;
  }
  const Tensor& batch_sizes() const {
    return batch_sizes_;
  }
  const Tensor& sorted_indices() const {
    return sorted_indices_;
  }
  const Tensor& unsorted_indices() const {
    return unsorted_indices_;
  }
  bool defined() const {
    return data_.defined();
  }

 private:
  Tensor data_;
  Tensor batch_sizes_;
  Tensor sorted_indices_;
  Tensor unsorted_indices_;
};

namespace utils::rnn {

// Packs x (T, B, *) or, with batch_first, (B, T, *) whose sequence b has
// lengths[b] steps (int64, 1-D, each in [1, T]). With enforce_sorted the
// lengths must not increase; without, the batch is sorted by decreasing
// length (ties keep their order) and the permutation recorded.
DITTO_API PackedSequence pack_padded_sequence(
    const Tensor& input,
    const Tensor& lengths,
    bool batch_first = false,
    bool enforce_sorted = true);
DITTO_API PackedSequence pack_padded_sequence(
    const Tensor& input,
    const std::vector<int64_t>& lengths,
    bool batch_first = false,
    bool enforce_sorted = true);
// The inverse: (padded (T, B, *) or (B, T, *) in the original batch order,
// padded with padding_value to total_length steps if given; the int64
// lengths in original order).
DITTO_API std::tuple<Tensor, Tensor> pad_packed_sequence(
    const PackedSequence& sequence,
    bool batch_first = false,
    double padding_value = 0.0,
    std::optional<int64_t> total_length = std::nullopt);
// Stacks sequences (L_i, *) into (max L, B, *) (or (B, max L, *)), padding
// with padding_value.
DITTO_API Tensor pad_sequence(
    const std::vector<Tensor>& sequences,
    bool batch_first = false,
    double padding_value = 0.0);
// pack_padded_sequence(pad_sequence(sequences), their lengths).
DITTO_API PackedSequence
pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

} // namespace utils::rnn

// ---- options

enum class RNNNonlinearity { Tanh, ReLU };

struct DITTO_API RNNOptionsBase {
  RNNOptionsBase(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  DITTO_NN_ARG(int64_t, input_size);
  DITTO_NN_ARG(int64_t, hidden_size);
  DITTO_NN_ARG(int64_t, num_layers) = 1;
  DITTO_NN_ARG(bool, bias) = true;
  // Input and output (batch, time, feature); states stay (L*D, batch, H).
  DITTO_NN_ARG(bool, batch_first) = false;
  // Dropout on the output of every layer but the last, in training.
  DITTO_NN_ARG(double, dropout) = 0.0;
  DITTO_NN_ARG(bool, bidirectional) = false;
  // Draw the dropout masks from this generator (e.g.
  // ditto::stream("dropout")) instead of the default one.
  DITTO_NN_ARG(std::optional<Generator>, generator);
};

struct DITTO_API RNNOptions : RNNOptionsBase {
  using RNNOptionsBase::RNNOptionsBase;
  DITTO_NN_ARG(RNNNonlinearity, nonlinearity) = RNNNonlinearity::Tanh;
#define DITTO_RNN_CHAIN(Opt)                           \
  auto& num_layers(const int64_t& v) {                 \
    RNNOptionsBase::num_layers(v);                     \
    return *this;                                      \
  }                                                    \
  auto& bias(const bool& v) {                          \
    RNNOptionsBase::bias(v);                           \
    return *this;                                      \
  }                                                    \
  auto& batch_first(const bool& v) {                   \
    RNNOptionsBase::batch_first(v);                    \
    return *this;                                      \
  }                                                    \
  auto& dropout(const double& v) {                     \
    RNNOptionsBase::dropout(v);                        \
    return *this;                                      \
  }                                                    \
  auto& bidirectional(const bool& v) {                 \
    RNNOptionsBase::bidirectional(v);                  \
    return *this;                                      \
  }                                                    \
  auto& generator(const std::optional<Generator>& v) { \
    RNNOptionsBase::generator(v);                      \
    return *this;                                      \
  }                                                    \
  using RNNOptionsBase::num_layers;                    \
  using RNNOptionsBase::bias;                          \
  using RNNOptionsBase::batch_first;                   \
  using RNNOptionsBase::dropout;                       \
  using RNNOptionsBase::bidirectional;                 \
  using RNNOptionsBase::generator

 public:
  DITTO_RNN_CHAIN(RNNOptions);
};

struct DITTO_API LSTMOptions : RNNOptionsBase {
  using RNNOptionsBase::RNNOptionsBase;
  // > 0: h = W_hr (o * tanh(c)), h of size proj_size (< hidden_size).
  DITTO_NN_ARG(int64_t, proj_size) = 0;

 public:
  DITTO_RNN_CHAIN(LSTMOptions);
};

struct DITTO_API GRUOptions : RNNOptionsBase {
  using RNNOptionsBase::RNNOptionsBase;
  DITTO_RNN_CHAIN(GRUOptions);
};
#undef DITTO_RNN_CHAIN

struct DITTO_API RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  DITTO_NN_ARG(int64_t, input_size);
  DITTO_NN_ARG(int64_t, hidden_size);
  DITTO_NN_ARG(bool, bias) = true;
  DITTO_NN_ARG(RNNNonlinearity, nonlinearity) = RNNNonlinearity::Tanh;
};
using LSTMCellOptions = RNNCellOptions; // nonlinearity unused
using GRUCellOptions = RNNCellOptions; // nonlinearity unused

// ---- layers

enum class RNNMode { RNN_TANH, RNN_RELU, LSTMImpl, GRUImpl };

// What RNN, LSTM and GRU share: the parameters (weight_ih_l{k}{_reverse},
// weight_hh_..., bias_ih_..., bias_hh_..., weight_hr_... with proj_size),
// layer-major, forward before reverse, each drawn uniform(+-1/sqrt(H)) in
// that order.
class DITTO_API RNNBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;
  // Per layer and direction: {w_ih, w_hh, b_ih, b_hh, w_hr} (undefined
  // when absent), layer-major, forward before reverse.
  const std::vector<std::vector<Tensor>>& all_weights() const {
    return weights_;
  }

 protected:
  RNNBase(
      const char* name,
      RNNMode mode,
      const RNNOptionsBase& options,
      int64_t proj_size);
  // Runs every layer on x (padded or packed data) with the initial states
  // (already in sorted order). Returns (output, h_n, c_n).
  std::tuple<Tensor, Tensor, Tensor> run(
      const Tensor& x,
      const std::vector<int64_t>& batch_sizes,
      const Tensor& h0,
      const Tensor& c0) const;
  void check_input(const Tensor& x, bool packed) const;
  void check_state(
      const Tensor& h,
      int64_t batch,
      int64_t size,
      const char* what) const;

  const char* name_;
  RNNMode mode_;
  RNNOptionsBase base_;
  int64_t proj_size_;
  std::vector<std::vector<Tensor>> weights_;

 public:
  // The forward's shared steps, on (T, B, *) data or a PackedSequence:
  // states (L*D, B, R) and (L*D, B, H), undefined for zeros.
  std::tuple<Tensor, Tensor, Tensor> forward_padded(
      const Tensor& x,
      const Tensor& h0,
      const Tensor& c0) const;
  std::tuple<PackedSequence, Tensor, Tensor> forward_packed(
      const PackedSequence& x,
      const Tensor& h0,
      const Tensor& c0) const;
};

// h' = act(W_ih x + b_ih + W_hh h + b_hh). forward returns (output, h_n):
// output (T, B, D*H) (or (B, T, D*H) with batch_first), h_n (L*D, B, H).
class DITTO_API RNNImpl : public RNNBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size)
      : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& x, const Tensor& h0 = {})
      const;
  std::tuple<PackedSequence, Tensor> forward(
      const PackedSequence& x,
      const Tensor& h0 = {}) const;
  std::tuple<PackedSequence, Tensor> forward_with_packed_input(
      const PackedSequence& x,
      const Tensor& h0 = {}) const {
    return forward(x, h0);
  }
  RNNOptions options;
};
DITTO_MODULE(RNN);

// Gates i, f, g, o: c' = s(f) c + s(i) tanh(g), h' = s(o) tanh(c') (times
// W_hr^T with proj_size). forward returns (output, (h_n, c_n)).
class DITTO_API LSTMImpl : public RNNBase {
 public:
  using State = std::tuple<Tensor, Tensor>;
  LSTMImpl(int64_t input_size, int64_t hidden_size)
      : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  std::tuple<Tensor, State> forward(
      const Tensor& x,
      const std::optional<State>& hx = std::nullopt) const;
  std::tuple<PackedSequence, State> forward(
      const PackedSequence& x,
      const std::optional<State>& hx = std::nullopt) const;
  std::tuple<PackedSequence, State> forward_with_packed_input(
      const PackedSequence& x,
      const std::optional<State>& hx = std::nullopt) const {
    return forward(x, hx);
  }
  LSTMOptions options;
};
DITTO_MODULE(LSTM);

// Gates r, z, n: n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
// h' = (1 - z) n + z h. forward returns (output, h_n).
class DITTO_API GRUImpl : public RNNBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size)
      : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& x, const Tensor& h0 = {})
      const;
  std::tuple<PackedSequence, Tensor> forward(
      const PackedSequence& x,
      const Tensor& h0 = {}) const;
  std::tuple<PackedSequence, Tensor> forward_with_packed_input(
      const PackedSequence& x,
      const Tensor& h0 = {}) const {
    return forward(x, h0);
  }
  GRUOptions options;
};
DITTO_MODULE(GRU);

// ---- cells: one step on x (B, in) or (in); state zeros when undefined.

class DITTO_API RNNCellBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;
  RNNCellOptions options;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RNNCellBase(const char* name, const RNNCellOptions& options, int64_t gates);
  // x as (B, in) and whether it was unbatched; checks its size.
  std::pair<Tensor, bool> batched_input(const Tensor& x) const;
  Tensor batched_state(const Tensor& h, const Tensor& x, bool unbatched) const;
  const char* name_;
};

class DITTO_API RNNCellImpl : public RNNCellBase {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size)
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  Tensor forward(const Tensor& x, const Tensor& h = {}) const;
};
DITTO_MODULE(RNNCell);

class DITTO_API LSTMCellImpl : public RNNCellBase {
 public:
  using State = std::tuple<Tensor, Tensor>;
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  // (h', c').
  State forward(const Tensor& x, const std::optional<State>& hx = std::nullopt)
      const;
};
DITTO_MODULE(LSTMCell);

class DITTO_API GRUCellImpl : public RNNCellBase {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& x, const Tensor& h = {}) const;
};
DITTO_MODULE(GRUCell);

} // namespace ditto::nn
