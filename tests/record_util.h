// Running an op record's samples (Note [Op records] in
// ditto/ops/record.cpp): what the op suite and the fingerprint sweep share.

#pragma once

#include <algorithm>
#include <vector>

#include "ditto/ditto.h"

namespace ditto::test {

// A copy of t with its layout (strides, offset within a fresh buffer of
// the same span), so in-place samples never write the sample's own tensor
// and non-contiguous samples stay non-contiguous.
inline Tensor same_layout_copy(const Tensor& t) {
  if (!t.defined()) {
    return t;
  }
  if (t.is_contiguous()) {
    return t.clone();
  }
  // Transposed views (the samples' strided form): copy the transposed
  // contiguous base and transpose back.
  if (t.dim() >= 2) {
    return t.transpose(-1, -2).clone().transpose(-1, -2);
  }
  return t.clone();
}

inline std::vector<Tensor> copies(const std::vector<Tensor>& in) {
  std::vector<Tensor> out;
  for (const Tensor& t : in) {
    out.push_back(same_layout_copy(t));
  }
  return out;
}

inline std::vector<uint64_t> prints(const std::vector<Tensor>& ts) {
  std::vector<uint64_t> out;
  for (const Tensor& t : ts) {
    out.push_back(t.defined() ? fingerprint(t) : 0);
  }
  return out;
}

inline std::vector<Tensor> run(const OpRecord& r, const Sample& s) {
  if (r.random) {
    manual_seed(20261126);
  }
  return s.call(copies(s.inputs));
}

// The floating outputs of a call, flattened into one (what gradcheck
// differentiates).
inline Tensor flat_floating(const std::vector<Tensor>& outs) {
  std::vector<Tensor> parts;
  for (const Tensor& t : outs) {
    if (t.defined() && is_floating(t.dtype())) {
      parts.push_back(t.reshape({-1}));
    }
  }
  return parts.size() == 1 ? parts[0] : cat(parts);
}

// The sample's inputs as gradcheck's leaves: floating inputs that are not
// constant become float64 leaves that require grad, in their layout.
inline std::vector<Tensor> leaves(const Sample& s, bool with_grad) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    Tensor t = same_layout_copy(s.inputs[k]);
    const bool constant =
        std::find(s.constant_inputs.begin(), s.constant_inputs.end(), int(k)) !=
        s.constant_inputs.end();
    if (t.defined() && is_floating(t.dtype()) && !constant && with_grad) {
      t.requires_grad_();
    }
    out.push_back(t);
  }
  return out;
}

// In-place ops write a copy of their leaf (autograd refuses to write a
// leaf that requires grad, and gradcheck's finite differences must not
// see an earlier call's write).
inline std::vector<Tensor> call_differentiably(
    const OpRecord& r,
    const Sample& s,
    const std::vector<Tensor>& in) {
  std::vector<Tensor> args = in;
  if (r.inplace) {
    args[0] = args[0].clone();
  }
  if (r.random) {
    manual_seed(20261126);
  }
  return s.call(args);
}

} // namespace ditto::test
