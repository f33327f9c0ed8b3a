// Node::name(): PyTorch's class names for backward nodes.
//
// PyTorch names a backward node after the ATen function whose derivative it
// is, in camel case with the overload's number ("mul.Tensor" gives
// MulBackward0, "mul.Scalar" MulBackward1). ditto records one op per
// function, so the name comes from the op's record (its grad_fn field, for
// ops that PyTorch runs under another function's name: conv2d runs
// convolution) or from the op's name, and the overload's number from the
// node's shape (how many inputs, how many outputs, what it reduced). The
// names were checked against LibTorch 1.13 (tests/libtorch/gen_behaviour.cpp
// writes them into behaviour.json).
#include <cctype>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "ditto/autograd/graph.h"

namespace ditto::autograd {
namespace {

// The names the op registry declared (detail::declare_grad_fn_name).
struct GradFnNames {
  std::shared_mutex mu;
  std::map<std::string, std::string, std::less<>> by_forward;
};
GradFnNames& grad_fn_names() {
  static GradFnNames* names = new GradFnNames; // never destroyed: read at exit
  return *names;
}

// A copy, taken under the lock (a node's name is derived once).
std::optional<std::string> declared_name(std::string_view forward) {
  GradFnNames& n = grad_fn_names();
  std::shared_lock lock(n.mu);
  auto it = n.by_forward.find(forward);
  return it == n.by_forward.end() ? std::nullopt
                                  : std::optional<std::string>(it->second);
}

// Python's str.title() over '_'-separated words, joined: "max_pool2d" ->
// "MaxPool2D", "log1p" -> "Log1P" (torchgen's camel case). A trailing '_'
// (an in-place op) is dropped: add_ is AddBackward as add is.
std::string camel_case(std::string_view op) {
  std::string out;
  bool after_letter = false;
  for (char c : op) {
    if (c == '_') {
      after_letter = false;
      continue;
    }
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (letter) {
      out += after_letter
          ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
          : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
    after_letter = letter;
  }
  return out;
}

std::string_view without_inplace(std::string_view op) {
  return op.ends_with('_') ? op.substr(0, op.size() - 1) : op;
}

// The overload number PyTorch gives the node, from what the node saw.
int overload(const Node& node, std::string_view op) {
  const auto& next = node.next_functions();
  const auto& in = node.input_metas();
  const auto& out = node.output_metas();
  // A tensor and a number (add.Scalar, mul.Scalar, clamp(min, max)): ditto
  // passes the number as a 0-dim tensor that takes no gradient, so a 0-dim
  // tensor without grad in its place reads as a number too (PyTorch would
  // say MulBackward0 for x * torch::tensor(2.0)).
  const bool number = next.size() == 1 ||
      (next.size() == 2 && in.size() == 2 && in[1].sizes.empty() &&
       !next[1].valid());
  if (op == "add" || op == "sub" || op == "mul" || op == "div" ||
      op == "clamp") {
    return number ? 1 : 0;
  }
  // pow.Tensor_Scalar is PowBackward0, pow.Tensor_Tensor PowBackward1.
  if (op == "pow") {
    return number ? 0 : 1;
  }
  // sum() and mean() of everything are 0, over dims 1.
  if ((op == "sum" || op == "mean") && !in.empty() && out.size() == 1) {
    const bool everything = out[0].sizes.empty() && !in[0].sizes.empty();
    return everything ? 0 : 1;
  }
  // max(dim) and min(dim) (values and indices) are 0, max() 1.
  if (op == "max" || op == "min") {
    return out.size() == 1 ? 1 : 0;
  }
  return 0;
}

std::string derive(const Node& node) {
  const std::string& forward = node.forward_name();
  if (forward.empty()) {
    return "torch::autograd::AccumulateGrad";
  }
  if (std::optional<std::string> declared = declared_name(forward)) {
    return *declared;
  }
  const std::string_view op = without_inplace(forward);
  // matmul runs dot, mv or mm for the shapes it takes.
  if (op == "matmul" && node.input_metas().size() == 2) {
    const size_t a = node.input_metas()[0].sizes.size();
    const size_t b = node.input_metas()[1].sizes.size();
    if (a == 1 && b == 1) {
      return "DotBackward0";
    }
    if (a == 2 && b == 1) {
      return "MvBackward0";
    }
    if (a == 2 && b == 2) {
      return "MmBackward0";
    }
  }
  return camel_case(op) + "Backward" + std::to_string(overload(node, op));
}

} // namespace

const std::string& Node::name() const {
  std::call_once(name_once_, [this] { name_ = derive(*this); });
  return name_;
}

} // namespace ditto::autograd

namespace ditto::detail {
void declare_grad_fn_name(std::string forward, std::string grad_fn) {
  autograd::GradFnNames& n = autograd::grad_fn_names();
  std::unique_lock lock(n.mu);
  n.by_forward.insert_or_assign(std::move(forward), std::move(grad_fn));
}
} // namespace ditto::detail
