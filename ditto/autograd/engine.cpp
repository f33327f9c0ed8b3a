#include "ditto/autograd/engine.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ditto/trace/trace.h"

namespace ditto::autograd {
namespace {

thread_local bool tls_anomaly = false;
thread_local std::vector<std::function<void()>> tls_callbacks;

// The gradients waiting for one node: one slot per output of its forward.
using Buffer = std::vector<Tensor>;

void add_into(Buffer& buffer, size_t slot, Tensor g) {
  if (buffer.size() <= slot) {
    buffer.resize(slot + 1);
  }
  Tensor& have = buffer[slot];
  if (!have.defined()) {
    have = std::move(g);
  } else if (have.is_sparse() && !g.is_sparse()) {
    have = g.add(have); // dense + sparse: the sparse one second
  } else {
    have = have.add(g);
  }
}

size_t slots_of(const Node& node) {
  return std::max<size_t>(1, node.output_metas().size());
}

bool has_nan(const Tensor& g) {
  return is_floating(g.dtype()) && g.numel() > 0 &&
      g.ne(g).sum().item<int64_t>() > 0;
}

// Adds g to a leaf's .grad: the first gradient is kept (copied unless the
// engine holds the only reference to a contiguous tensor), later ones are
// added in place, as PyTorch's AccumulateGrad. Under the leaf's lock:
// backward passes on other threads may reach the same leaf.
void accumulate_into_leaf(const std::shared_ptr<TensorImpl>& leaf, Tensor g) {
  std::lock_guard<std::mutex> lock(leaf_mutex(leaf.get()));
  Tensor t(leaf);
  AutogradMeta& m = ensure_meta(t);
  if (g.is_sparse() || (m.grad.defined() && m.grad.is_sparse())) {
    // Sparse gradients (Embedding(sparse=True), sparse.mm's values): a
    // sparse .grad gathers later ones as more entries; a dense one takes
    // them in place; a dense gradient after a sparse .grad replaces it with
    // the dense sum, as PyTorch's AccumulateGrad.
    if (!m.grad.defined()) {
      m.grad = g.detach();
    } else if (m.grad.is_sparse() && !g.is_sparse()) {
      m.grad = g.add(m.grad);
    } else {
      m.grad.add_(g);
    }
    return;
  }
  if (!m.grad.defined()) {
    const bool steal = g.impl().use_count() == 1 &&
        g.storage().use_count() == 1 && g.is_contiguous() &&
        g.impl()->autograd_meta() == nullptr;
    m.grad = steal ? std::move(g) : g.clone();
  } else {
    m.grad.add_(g);
  }
}

// Makes g fit the input it flows to: sums a broadcast gradient back to the
// input's shape (fixed order) and converts it to the input's dtype.
Tensor fit_gradient(
    const Node& node,
    size_t index,
    Tensor g,
    const TensorMeta& meta) {
  if (g.sizes() != meta.sizes) {
    DITTO_CHECK(
        expands_to(meta.sizes, g.sizes()),
        ValueError,
        "backward",
        "Function ",
        node.name(),
        " returned an invalid gradient at index ",
        index,
        " - got ",
        shape_str(g.sizes()),
        " but expected shape compatible with ",
        shape_str(meta.sizes));
    g = g.sum_to_size(meta.sizes);
  }
  if (g.dtype() != meta.dtype) {
    g = g.to(meta.dtype);
  }
  if (!(g.device() == meta.device)) {
    // As PyTorch: a 0-dim gradient moves to the input's device; any other
    // on the wrong device is a broken backward.
    DITTO_CHECK(
        g.dim() == 0,
        ValueError,
        "backward",
        "Function ",
        node.name(),
        " returned an invalid gradient at index ",
        index,
        " - expected device ",
        meta.device,
        " but got ",
        g.device());
    g = g.to(meta.device);
  }
  return g;
}

// One backward pass. With captures (autograd::grad), the gradients reaching
// the captured slots are returned and no .grad is touched.
class Engine {
 public:
  Engine(
      const std::vector<Tensor>& outputs,
      const std::vector<Tensor>& grad_outputs,
      bool retain_graph,
      bool create_graph)
      : retain_graph_(retain_graph) {
    DITTO_CHECK(
        !create_graph,
        ValueError,
        "backward",
        "create_graph (double backward) is not supported");
    DITTO_CHECK(
        grad_outputs.empty() || grad_outputs.size() == outputs.size(),
        ValueError,
        "backward",
        "got ",
        grad_outputs.size(),
        " gradients for ",
        outputs.size(),
        " outputs");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& out = outputs[i];
      DITTO_CHECK(
          out.defined() && requires_grad(out),
          Error, // RuntimeError in Python, as torch's
          "backward",
          "element ",
          i,
          " of tensors does not require grad and does not have a grad_fn");
      Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
      if (!g.defined()) {
        DITTO_CHECK(
            out.numel() == 1,
            ValueError,
            "backward",
            "grad can be implicitly created only for scalar outputs");
        // Made in run(), as part of the backward phase.
        implicit_.push_back(roots_.size());
      } else {
        DITTO_CHECK(
            g.sizes() == out.sizes(),
            ValueError,
            "backward",
            "Mismatch in shape: grad_output[",
            i,
            "] has a shape of ",
            shape_str(g.sizes()),
            " and output[",
            i,
            "] has a shape of ",
            shape_str(out.sizes()),
            ".");
      }
      roots_.push_back({gradient_edge(out), g});
      outputs_.push_back(out);
    }
  }

  // For autograd::grad: the gradient reaching edge is returned as input k.
  void capture(const Edge& edge, size_t k) {
    captures_[edge.node.get()].push_back({edge.input_nr, k});
  }

  std::vector<Tensor> run(size_t n_captured) {
    collect();
    captured_.assign(n_captured, Tensor());
    trace::PhaseGuard phase(trace::Phase::kBackward);
    NoGradGuard no_grad;
    for (size_t r : implicit_) {
      roots_[r].second = outputs_[r].new_ones(outputs_[r].sizes());
    }
    for (auto& [edge, g] : roots_) {
      add_into(buffers_[edge.node.get()], edge.input_nr, g);
    }
    for (const auto& node : order_) {
      run_node(*node);
    }
    return captured_;
  }

 private:
  struct Capture {
    uint32_t slot;
    size_t index;
  };

  // Every node reachable from the roots, in decreasing sequence number; with
  // captures, only those that lead to a captured node.
  void collect() {
    std::vector<std::shared_ptr<Node>> stack;
    std::unordered_set<Node*> seen;
    for (auto& [edge, g] : roots_) {
      if (seen.insert(edge.node.get()).second) {
        stack.push_back(edge.node);
      }
    }
    while (!stack.empty()) {
      std::shared_ptr<Node> n = std::move(stack.back());
      stack.pop_back();
      for (const Edge& e : n->next_functions()) {
        if (e.valid() && seen.insert(e.node.get()).second) {
          stack.push_back(e.node);
        }
      }
      order_.push_back(std::move(n));
    }
    std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) {
      return a->sequence_nr() > b->sequence_nr();
    });
    if (!captures_.empty()) {
      // A node runs if one of its edges leads to a captured node, directly
      // or through nodes that do; consumers come first in order_, so walk
      // it backwards.
      std::unordered_set<Node*> reaches;
      for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
        Node* n = it->get();
        bool runs = false;
        for (const Edge& e : n->next_functions()) {
          runs = runs || (e.valid() && reaches.count(e.node.get()) > 0);
        }
        if (runs) {
          needed_.insert(n);
        }
        if (runs || captures_.count(n) > 0) {
          reaches.insert(n);
        }
      }
    }
  }

  void run_node(Node& node) {
    auto found = buffers_.find(&node);
    Buffer grads;
    if (found != buffers_.end()) {
      grads = std::move(found->second);
      buffers_.erase(found);
    }
    grads.resize(slots_of(node));
    const bool any =
        std::any_of(grads.begin(), grads.end(), [](const Tensor& g) {
          return g.defined();
        });
    auto* fn = dynamic_cast<FunctionNode*>(&node);
    if (auto c = captures_.find(&node); c != captures_.end()) {
      for (const Capture& cap : c->second) {
        captured_[cap.index] = grads[cap.slot];
      }
    }
    const bool functional = !captures_.empty();
    if (!any || (functional && needed_.count(&node) == 0)) {
      release(fn);
      return;
    }
    if (auto* acc = dynamic_cast<AccumulateGrad*>(&node)) {
      if (!functional) {
        accumulate_into_leaf(acc->leaf(), std::move(grads[0]));
      }
      return;
    }
    DITTO_ASSERT(fn != nullptr);
    if (!functional) {
      retain_grads(*fn, grads);
    }
    std::vector<Tensor> results;
    {
      determinism::PolicyGuard policy(node.policy());
      // The node's ops are nested in its frame: the trace shows the node
      // (mul_backward), not the ops it runs.
      trace::Frame frame;
      std::optional<trace::ModuleGuard> in_module;
      if (trace::enabled()) {
        in_module.emplace(node.trace_module());
      }
      // Missing gradients of floating outputs are zeros.
      for (size_t k = 0; k < grads.size(); ++k) {
        const TensorMeta& m = node.output_metas()[k];
        if (!grads[k].defined() && is_floating(m.dtype)) {
          grads[k] = detail::new_tensor(m.sizes, m.dtype, m.device).zero_();
        }
      }
      results = fn->apply(grads);
      DITTO_CHECK(
          results.size() == node.next_functions().size(),
          InternalError,
          node.name().c_str(),
          "returned ",
          results.size(),
          " gradients for ",
          node.next_functions().size(),
          " inputs");
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i].defined() && node.next_functions()[i].valid()) {
          results[i] = fit_gradient(
              node, i, std::move(results[i]), node.input_metas()[i]);
        } else {
          results[i] = Tensor();
        }
      }
      if (frame.outermost() && trace::enabled()) {
        trace::record(
            {node.op_name(), trace::Phase::kBackward, grads, results});
      }
    }
    release(fn);
    if (tls_anomaly) {
      for (size_t i = 0; i < results.size(); ++i) {
        DITTO_CHECK(
            !(results[i].defined() && has_nan(results[i])),
            ValueError,
            node.name().c_str(),
            "Function '",
            node.name(),
            "' returned nan values in its ",
            i,
            "th output (the backward of the forward op '",
            node.forward_name(),
            "').");
      }
    }
    // Summing contributions is the engine's own work, not an op to report.
    trace::Frame summing;
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].defined()) {
        const Edge& e = node.next_functions()[i];
        add_into(buffers_[e.node.get()], e.input_nr, std::move(results[i]));
      }
    }
  }

  // Gives tensors that called retain_grad() their gradient.
  static void retain_grads(FunctionNode& fn, const Buffer& grads) {
    auto& retained = fn.retained();
    for (size_t k = 0; k < retained.size() && k < grads.size(); ++k) {
      auto impl = retained[k].lock();
      if (!impl || !grads[k].defined()) {
        continue;
      }
      Tensor t(impl);
      AutogradMeta& m = ensure_meta(t);
      if (!m.retains_grad) {
        continue;
      }
      m.grad = m.grad.defined() ? m.grad.add(grads[k]) : grads[k].clone();
    }
  }

  void release(FunctionNode* fn) {
    if (fn != nullptr && !retain_graph_) {
      fn->release();
    }
  }

  bool retain_graph_;
  std::vector<std::pair<Edge, Tensor>> roots_;
  std::vector<Tensor> outputs_;
  std::vector<size_t> implicit_; // roots whose gradient is ones
  std::vector<std::shared_ptr<Node>> order_;
  std::unordered_map<Node*, Buffer> buffers_;
  std::unordered_map<Node*, std::vector<Capture>> captures_;
  std::unordered_set<Node*> needed_;
  std::vector<Tensor> captured_;
};

} // namespace

void backward(
    const std::vector<Tensor>& outputs,
    const std::vector<Tensor>& grad_outputs,
    std::optional<bool> retain_graph,
    bool create_graph) {
  std::vector<std::function<void()>> callbacks;
  try {
    Engine engine(
        outputs,
        grad_outputs,
        retain_graph.value_or(create_graph),
        create_graph);
    engine.run(0);
  } catch (...) {
    tls_callbacks.clear();
    throw;
  }
  callbacks.swap(tls_callbacks);
  for (auto& fn : callbacks) {
    fn();
  }
}

void queue_callback(std::function<void()> fn) {
  DITTO_CHECK(fn, ValueError, "queue_callback", "empty callback");
  tls_callbacks.push_back(std::move(fn));
}

std::vector<Tensor> grad(
    const std::vector<Tensor>& outputs,
    const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& grad_outputs,
    std::optional<bool> retain_graph,
    bool create_graph,
    bool allow_unused) {
  DITTO_CHECK(!inputs.empty(), ValueError, "grad", "inputs must not be empty");
  Engine engine(
      outputs, grad_outputs, retain_graph.value_or(create_graph), create_graph);
  for (size_t k = 0; k < inputs.size(); ++k) {
    DITTO_CHECK(
        inputs[k].defined() && requires_grad(inputs[k]),
        ValueError,
        "grad",
        "One of the differentiated Tensors (input ",
        k,
        ") does not require grad");
    engine.capture(gradient_edge(inputs[k]), k);
  }
  std::vector<Tensor> result = engine.run(inputs.size());
  for (size_t k = 0; k < result.size(); ++k) {
    DITTO_CHECK(
        result[k].defined() || allow_unused,
        ValueError,
        "grad",
        "One of the differentiated Tensors (input ",
        k,
        ") appears to not have been used in the graph. Set "
        "allow_unused=true if this is the desired behavior.");
  }
  return result;
}

DetectAnomalyGuard::DetectAnomalyGuard() : previous_(tls_anomaly) {
  tls_anomaly = true;
}

DetectAnomalyGuard::~DetectAnomalyGuard() {
  tls_anomaly = previous_;
}

bool DetectAnomalyGuard::is_enabled() {
  return tls_anomaly;
}

} // namespace ditto::autograd

// ---- Tensor's autograd methods

namespace ditto {

bool Tensor::requires_grad() const {
  return autograd::requires_grad(*this);
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  check_defined("requires_grad_");
  autograd::AutogradMeta* m = autograd::meta(*this);
  DITTO_CHECK(
      !(m != nullptr && m->grad_fn && !requires_grad),
      ValueError,
      "requires_grad_",
      "you can only change requires_grad flags of leaf variables. If you "
      "want to use a computed variable in a subgraph that doesn't require "
      "differentiation use var_no_grad = var.detach().");
  DITTO_CHECK(
      !requires_grad || is_floating(dtype()),
      ValueError,
      "requires_grad_",
      "only Tensors of floating point dtype can require gradients, got ",
      dtype());
  if (m == nullptr && !requires_grad) {
    return *this;
  }
  autograd::ensure_meta(*this).requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  autograd::AutogradMeta* m = autograd::meta(*this);
  return m ? m->grad : Tensor();
}

Tensor& Tensor::mutable_grad() {
  check_defined("mutable_grad");
  return autograd::ensure_meta(*this).grad;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  autograd::AutogradMeta* m = autograd::meta(*this);
  return m ? m->grad_fn : nullptr;
}

bool Tensor::is_leaf() const {
  return grad_fn() == nullptr;
}

Tensor Tensor::detach() const {
  check_defined("detach");
  if (impl_->is_sparse()) {
    return Tensor(
        std::make_shared<TensorImpl>(impl_->sparse(), sizes(), dtype()));
  }
  // Shares the data (and so the version counter), not the graph.
  return Tensor(std::make_shared<TensorImpl>(
      storage(), sizes(), strides(), storage_offset(), dtype()));
}

void Tensor::retain_grad() const {
  check_defined("retain_grad");
  DITTO_CHECK(
      requires_grad(),
      ValueError,
      "retain_grad",
      "can't retain_grad on Tensor that has requires_grad=False");
  autograd::AutogradMeta& m = autograd::ensure_meta(*this);
  if (!m.grad_fn) {
    return; // a leaf keeps its gradient anyway
  }
  m.retains_grad = true;
  auto& retained = m.grad_fn->retained();
  if (retained.size() <= m.output_nr) {
    retained.resize(m.output_nr + 1);
  }
  retained[m.output_nr] = impl();
}

bool Tensor::retains_grad() const {
  autograd::AutogradMeta* m = autograd::meta(*this);
  return m != nullptr && m->retains_grad;
}

void Tensor::backward(
    const Tensor& gradient,
    std::optional<bool> retain_graph,
    bool create_graph) const {
  autograd::backward(
      {*this},
      gradient.defined() ? std::vector<Tensor>{gradient}
                         : std::vector<Tensor>{},
      retain_graph,
      create_graph);
}

} // namespace ditto
