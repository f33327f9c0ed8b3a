#include "ditto/ops/custom.h"

#include "ditto/autograd/graph.h"
#include "ditto/determinism/context.h"
#include "ditto/ops/detail/op_util.h"

namespace ditto {

struct CustomOpContext::State {
  detail::OpScope* scope = nullptr; // during the forward
  std::vector<autograd::SavedTensor> saved;
  std::shared_ptr<void> data;
};

void CustomOpContext::save_for_backward(const std::vector<Tensor>& tensors) {
  DITTO_CHECK(
      state_ && state_->scope != nullptr,
      ValueError,
      "save_for_backward",
      "called outside the op's forward");
  state_->saved.clear();
  for (const Tensor& t : tensors) {
    state_->saved.push_back(state_->scope->save(t));
  }
}

std::vector<Tensor> CustomOpContext::saved_tensors() const {
  std::vector<Tensor> out;
  if (state_) {
    for (const autograd::SavedTensor& s : state_->saved) {
      out.push_back(s.unpack());
    }
  }
  return out;
}

bool CustomOpContext::deterministic() const {
  return determinism::current_policy().deterministic;
}

const std::shared_ptr<void>& CustomOpContext::data() const {
  static const std::shared_ptr<void> none;
  return state_ ? state_->data : none;
}

namespace {

// The first path without a deterministic variant whose entry is (or is
// not) a backward's.
const NondeterministicPath* alerting_path(const OpRecord& r, bool backward) {
  for (const NondeterministicPath& p : r.nondeterministic) {
    if (!p.has_deterministic_variant &&
        std::string_view(p.entry).ends_with("_backward") == backward) {
      return &p;
    }
  }
  return nullptr;
}

} // namespace

CustomOp::CustomOp(OpRecord record, Forward forward, Backward backward)
    : forward_(std::move(forward)), backward_(std::move(backward)) {
  DITTO_CHECK(
      static_cast<bool>(forward_),
      ValueError,
      "CustomOp",
      "op '",
      record.name,
      "' needs a forward");
  const std::string name = record.name;
  if (!backward_ && record.not_differentiable.empty()) {
    record.not_differentiable = "a custom op without a backward";
  }
  register_op(std::move(record));
  record_ = find_op_record(name);
}

std::vector<Tensor> CustomOp::operator()(
    const std::vector<Tensor>& inputs,
    std::shared_ptr<void> data) const {
  const OpRecord& r = *record_;
  // The record owns the name for the process: the frame may keep it.
  detail::OpScope scope(r.name.c_str(), inputs);
  if (const NondeterministicPath* p = alerting_path(r, false)) {
    alert_not_deterministic(p->entry);
  }
  CustomOpContext ctx;
  ctx.state_ = std::make_shared<CustomOpContext::State>();
  ctx.state_->scope = &scope;
  ctx.state_->data = std::move(data);
  std::vector<Tensor> outs = forward_(ctx, inputs);
  ctx.state_->scope = nullptr;
  if (!backward_) {
    scope.done(outs);
    return outs;
  }
  const NondeterministicPath* backward_alert = alerting_path(r, true);
  scope.done(
      outs,
      [ctx,
       backward = backward_,
       backward_alert,
       n = inputs.size(),
       name = &r.name](const autograd::GradList& g) mutable {
        if (backward_alert != nullptr) {
          alert_not_deterministic(backward_alert->entry);
        }
        autograd::GradList grads = backward(ctx, g);
        DITTO_CHECK(
            grads.size() == n,
            ValueError,
            name->c_str(),
            "the backward returned ",
            grads.size(),
            " gradients for ",
            n,
            " inputs");
        return grads;
      });
  // An output on an input's storage (a view of it, or the input returned
  // as is) is a view whose in-place change would bypass the Function's
  // backward and change the input behind autograd's back (a leaf's data
  // too): refused, as torch refuses it ("clone the output"). An input
  // marked dirty and returned is the input itself, not marked.
  for (const Tensor& o : outs) {
    if (!o.defined() || o.is_sparse() || !autograd::requires_grad(o)) {
      continue;
    }
    for (const Tensor& in : inputs) {
      if (in.defined() && !in.is_sparse() && in.impl() != o.impl() &&
          in.storage() == o.storage()) {
        autograd::AutogradMeta& m = autograd::ensure_meta(o);
        m.is_view = true;
        m.view_version = o.storage()->version();
        break;
      }
    }
  }
  return outs;
}

} // namespace ditto
