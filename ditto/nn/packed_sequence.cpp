// PackedSequence and the utilities that pack, pad and unpack sequences
// (ditto::nn::utils::rnn).

#include "ditto/nn/rnn.h"

#include <algorithm>
#include <numeric>

#include "ditto/core/error.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/detail/rnn_ops.h"
#include "ditto/nn/functional/rnn.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn {

// ---- PackedSequence

PackedSequence::PackedSequence(
    Tensor data,
    Tensor batch_sizes,
    Tensor sorted_indices,
    Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (sorted_indices_.defined() && !unsorted_indices_.defined()) {
    // The inverse permutation.
    std::vector<int64_t> s =
        detail::int_values(sorted_indices_, "PackedSequence", "sorted_indices");
    std::vector<int64_t> u(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      DITTO_CHECK(
          s[i] >= 0 && s[i] < int64_t(s.size()),
          IndexError,
          "PackedSequence",
          "sorted_indices holds ",
          s[i],
          ", not a permutation of ",
          s.size(),
          " entries");
      u[size_t(s[i])] = int64_t(i);
    }
    unsorted_indices_ = tensor(u);
  }
}

namespace utils::rnn {

PackedSequence pack_padded_sequence(
    const Tensor& input,
    const std::vector<int64_t>& lengths,
    bool batch_first,
    bool enforce_sorted) {
  const char* op = "pack_padded_sequence";
  DITTO_CHECK(input.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      input.dim() >= 2,
      ValueError,
      op,
      "input must have at least 2 dims (time and batch), got sizes ",
      shape_str(input.sizes()));
  const int64_t B = input.size(batch_first ? 0 : 1);
  const int64_t T = input.size(batch_first ? 1 : 0);
  DITTO_CHECK(
      int64_t(lengths.size()) == B,
      ValueError,
      op,
      "Expected `len(lengths)` to be equal to batch_size, but got ",
      lengths.size(),
      " (batch_size=",
      B,
      ")");
  for (size_t b = 0; b < lengths.size(); ++b) {
    DITTO_CHECK(
        lengths[b] > 0,
        ValueError,
        op,
        "Length of all samples has to be greater than 0, but found an "
        "element in 'lengths' that is <= 0 (sample ",
        b,
        " has length ",
        lengths[b],
        ")");
    DITTO_CHECK(
        lengths[b] <= T,
        ValueError,
        op,
        "length ",
        lengths[b],
        " of sample ",
        b,
        " is longer than the sequence (",
        T,
        " steps)");
  }
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  Tensor sorted_indices;
  Tensor x = batch_first ? input.transpose(0, 1) : input;
  if (enforce_sorted) {
    for (size_t b = 1; b < lengths.size(); ++b) {
      DITTO_CHECK(
          lengths[b] <= lengths[b - 1],
          ValueError,
          op,
          "`lengths` array must be sorted in decreasing order when "
          "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
          "to pack_padded_sequence and/or pack_sequence to sidestep this "
          "requirement if you do not need ONNX exportability. (lengths[",
          b - 1,
          "] = ",
          lengths[b - 1],
          " < lengths[",
          b,
          "] = ",
          lengths[b],
          ")");
    }
  } else {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return lengths[size_t(a)] > lengths[size_t(b)];
    });
    sorted_indices = tensor(order);
    x = index_select(x, 1, sorted_indices);
  }
  // batch_sizes[t] = number of sequences longer than t.
  const int64_t steps = lengths[size_t(order[0])];
  std::vector<int64_t> bs(size_t(steps), 0);
  for (int64_t l : lengths) {
    for (int64_t t = 0; t < l; ++t) {
      ++bs[size_t(t)];
    }
  }
  // x (T, B, *) -> its first `steps` steps, one block per step.
  Shape flat = x.sizes();
  flat.erase(flat.begin());
  flat[0] = steps * B;
  const Tensor xt =
      (steps < T ? x.narrow(0, 0, steps) : x).contiguous().reshape(flat);
  std::vector<Tensor> blocks =
      functional::split_rows(xt, std::vector<int64_t>(size_t(steps), B));
  std::vector<Tensor> rows;
  rows.reserve(size_t(steps));
  for (int64_t t = 0; t < steps; ++t) {
    rows.push_back(
        bs[size_t(t)] < B ? blocks[size_t(t)].narrow(0, 0, bs[size_t(t)])
                          : blocks[size_t(t)]);
  }
  return PackedSequence(cat(rows, 0), tensor(bs), sorted_indices);
}

PackedSequence pack_padded_sequence(
    const Tensor& input,
    const Tensor& lengths,
    bool batch_first,
    bool enforce_sorted) {
  return pack_padded_sequence(
      input,
      detail::int_values(lengths, "pack_padded_sequence", "lengths"),
      batch_first,
      enforce_sorted);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(
    const PackedSequence& sequence,
    bool batch_first,
    double padding_value,
    std::optional<int64_t> total_length) {
  const char* op = "pad_packed_sequence";
  DITTO_CHECK(sequence.defined(), ValueError, op, "undefined sequence");
  const std::vector<int64_t> bs =
      detail::int_values(sequence.batch_sizes(), op, "batch_sizes");
  const Tensor& data = sequence.data();
  DITTO_CHECK(!bs.empty(), ValueError, op, "empty batch_sizes");
  const int64_t T = int64_t(bs.size()), B = bs[0];
  DITTO_CHECK(
      std::accumulate(bs.begin(), bs.end(), int64_t(0)) == data.size(0),
      ValueError,
      op,
      "batch_sizes sum to ",
      std::accumulate(bs.begin(), bs.end(), int64_t(0)),
      " but data has ",
      data.size(0),
      " rows");
  const int64_t out_T = total_length.value_or(T);
  DITTO_CHECK(
      out_T >= T,
      ValueError,
      op,
      "Expected total_length to be at least the length of the longest "
      "sequence in input, but got total_length=",
      out_T,
      " and max sequence length being ",
      T);
  Shape feat(data.sizes().begin() + 1, data.sizes().end());
  auto padding = [&](int64_t rows) {
    Shape s{rows};
    s.insert(s.end(), feat.begin(), feat.end());
    return full(s, padding_value, data.dtype());
  };
  std::vector<Tensor> steps;
  const std::vector<Tensor> blocks = functional::split_rows(data, bs);
  for (int64_t t = 0; t < T; ++t) {
    const Tensor& rows = blocks[size_t(t)];
    steps.push_back(bs[t] < B ? cat({rows, padding(B - bs[t])}, 0) : rows);
  }
  for (int64_t t = T; t < out_T; ++t) {
    steps.push_back(padding(B));
  }
  Tensor out = stack(steps, 0); // (T, B, *) in sorted order
  std::vector<int64_t> len(size_t(B), 0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < bs[t]; ++b) {
      ++len[size_t(b)];
    }
  }
  if (sequence.unsorted_indices().defined()) {
    out = index_select(out, 1, sequence.unsorted_indices());
    std::vector<int64_t> u =
        detail::int_values(sequence.unsorted_indices(), op, "unsorted_indices");
    std::vector<int64_t> l2(len.size());
    for (size_t b = 0; b < u.size(); ++b) {
      l2[b] = len[size_t(u[b])];
    }
    len = l2;
  }
  return {batch_first ? out.transpose(0, 1) : out, tensor(len)};
}

Tensor pad_sequence(
    const std::vector<Tensor>& sequences,
    bool batch_first,
    double padding_value) {
  const char* op = "pad_sequence";
  DITTO_CHECK(
      !sequences.empty(),
      ValueError,
      op,
      "received an empty list of sequences");
  int64_t L = 0;
  for (const Tensor& s : sequences) {
    DITTO_CHECK(
        s.defined() && s.dim() >= 1,
        ValueError,
        op,
        "each sequence needs a time dim");
    DITTO_CHECK(
        Shape(s.sizes().begin() + 1, s.sizes().end()) ==
            Shape(sequences[0].sizes().begin() + 1, sequences[0].sizes().end()),
        ValueError,
        op,
        "sequences must share their trailing sizes, got ",
        shape_str(sequences[0].sizes()),
        " and ",
        shape_str(s.sizes()));
    L = std::max(L, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences) {
    if (s.size(0) == L) {
      padded.push_back(s);
    } else {
      Shape ps = s.sizes();
      ps[0] = L - s.size(0);
      padded.push_back(cat({s, full(ps, padding_value, s.dtype())}, 0));
    }
  }
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(
    const std::vector<Tensor>& sequences,
    bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) {
    DITTO_CHECK(
        s.defined() && s.dim() >= 1,
        ValueError,
        "pack_sequence",
        "each sequence needs a time dim");
    lengths.push_back(s.size(0));
  }
  return pack_padded_sequence(
      pad_sequence(sequences), lengths, false, enforce_sorted);
}

} // namespace utils::rnn
} // namespace ditto::nn
