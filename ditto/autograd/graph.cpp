#include "ditto/autograd/graph.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <sstream>

#include "ditto/core/error.h"

namespace ditto::autograd {
namespace {

std::atomic<uint64_t> g_next_sequence_nr{0};
thread_local bool tls_grad_enabled = true;

const char* legacy_type_name(Dtype d) {
  switch (d) {
    case kFloat32:
      return "FloatTensor";
    case kFloat64:
      return "DoubleTensor";
    case kInt64:
      return "LongTensor";
    case kInt32:
      return "IntTensor";
    case kUInt8:
      return "ByteTensor";
    case kBool:
      return "BoolTensor";
    case kInt8:
      return "CharTensor";
    case kInt16:
      return "ShortTensor";
    case kFloat16:
      return "HalfTensor";
    case kBFloat16:
      return "BFloat16Tensor";
    default:
      return "Tensor";
  }
}

} // namespace

Node::Node(std::string op_name, std::string forward_name)
    : op_name_(std::move(op_name)),
      forward_name_(std::move(forward_name)),
      sequence_nr_(g_next_sequence_nr.fetch_add(1)),
      policy_(determinism::current_policy()) {}

// Note [Freeing deep graphs]
// A node owns the nodes of its inputs (its edges) and, through its closure's
// saved tensors, possibly more. Freed by plain destructors, a chain of N ops
// frees in N nested calls: 100,000 ops overflowed the stack (1.48M frames),
// whether or not backward had run. So the outermost node destructor on a
// thread opens a graveyard on its own stack; every node destructor moves its
// edges (and a FunctionNode its closure) into the graveyard instead of
// releasing them, and the outermost one releases the graveyard's contents
// one by one, each release adding at most one level before it returns. A
// node that someone else still holds is only unreferenced. The graveyard is
// found through a trivially destructible thread_local pointer, so a node
// freed at static destruction, after the thread's thread_locals are gone,
// still works. (PyTorch's deleteNode does the same for its edges.)
namespace {

struct Graveyard {
  std::vector<std::shared_ptr<Node>> nodes;
  std::vector<std::shared_ptr<const BackwardFn>> closures;
};
thread_local Graveyard* tls_graveyard = nullptr;

// Hands what a dying node owns to the thread's open graveyard; with none
// open, opens one here and releases everything that reaches it.
template <typename Give>
void bury(Give give) {
  if (tls_graveyard != nullptr) {
    give(*tls_graveyard);
    return;
  }
  Graveyard local;
  give(local);
  tls_graveyard = &local;
  while (!local.nodes.empty() || !local.closures.empty()) {
    if (!local.closures.empty()) {
      std::shared_ptr<const BackwardFn> fn = std::move(local.closures.back());
      local.closures.pop_back();
    } else {
      std::shared_ptr<Node> node = std::move(local.nodes.back());
      local.nodes.pop_back();
    }
  }
  tls_graveyard = nullptr;
}

} // namespace

Node::~Node() {
  bury([this](Graveyard& yard) {
    for (Edge& e : next_) {
      if (e.node) {
        yard.nodes.push_back(std::move(e.node));
      }
    }
  });
}

FunctionNode::~FunctionNode() {
  // Runs before ~Node: the closure (and the tensors it saved) goes to the
  // graveyard too.
  if (fn_) {
    bury([this](Graveyard& yard) { yard.closures.push_back(std::move(fn_)); });
  }
}

namespace {

size_t stripe(const TensorImpl* leaf) {
  return (reinterpret_cast<uintptr_t>(leaf) >> 6) % 64;
}

// Making a leaf's accumulator has its own set of locks: an accumulation
// (under leaf_mutex) may record an op and so make an accumulator, never the
// other way round, so the two sets cannot deadlock.
std::mutex& accumulator_mutex(const TensorImpl* leaf) {
  static std::mutex mutexes[64];
  return mutexes[stripe(leaf)];
}

} // namespace

std::mutex& leaf_mutex(const TensorImpl* leaf) {
  static std::mutex mutexes[64];
  return mutexes[stripe(leaf)];
}

FunctionNode::FunctionNode(
    std::string name,
    std::string forward_name,
    BackwardFn fn)
    : Node(std::move(name), std::move(forward_name)),
      fn_(std::make_shared<const BackwardFn>(std::move(fn))) {}

namespace {

// Note [Backward on one graph from two threads]
// Two threads may run backward through the same nodes (PyTorch allows it).
// A node's closure is taken under a lock and run from the reference taken,
// and release() drops the node's reference under the same lock: a thread
// still running the closure keeps it alive, and a thread that comes after
// the release gets "backward through the graph a second time" (without
// retain_graph), never a closure freed under it. Locks are striped by the
// node's address, so a node carries none.
std::mutex& node_lock(const void* node) {
  static std::mutex stripes[64];
  return stripes[(reinterpret_cast<uintptr_t>(node) >> 6) % 64];
}

} // namespace

GradList FunctionNode::apply(const GradList& grad_outputs) {
  std::shared_ptr<const BackwardFn> fn;
  bool released = false;
  {
    std::lock_guard<std::mutex> lock(node_lock(this));
    fn = fn_;
    released = released_;
  }
  DITTO_CHECK(
      !released && fn,
      Error,
      name().c_str(),
      "Trying to backward through the graph a second time (or directly "
      "access saved tensors after they have already been freed). Saved "
      "intermediate values of the graph are freed when you call backward() "
      "or autograd::grad(). Specify retain_graph=true if you need to "
      "backward through the graph a second time or if you need to access "
      "saved tensors after calling backward.");
  return (*fn)(grad_outputs);
}

void FunctionNode::release() {
  if (has_saved_) {
    std::shared_ptr<const BackwardFn> dropped;
    {
      std::lock_guard<std::mutex> lock(node_lock(this));
      dropped = std::move(fn_);
      released_ = true;
    }
    // The closure (and what it saved) is freed here, outside the lock,
    // unless a thread still runs it.
  }
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf)
    : Node("AccumulateGrad", ""), leaf_(std::move(leaf)) {}

AutogradMeta* meta(const Tensor& t) {
  return t.defined() ? t.impl()->autograd_meta() : nullptr;
}

AutogradMeta& ensure_meta(const Tensor& t) {
  DITTO_ASSERT(t.defined());
  if (t.impl()->autograd_meta() == nullptr) {
    t.impl()->set_autograd_meta(std::make_shared<AutogradMeta>());
  }
  return *t.impl()->autograd_meta();
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta(t);
  if (m == nullptr) {
    return {};
  }
  if (m->grad_fn) {
    return {m->grad_fn, m->output_nr};
  }
  if (!m->requires_grad) {
    return {};
  }
  std::lock_guard<std::mutex> lock(accumulator_mutex(t.impl().get()));
  auto acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl());
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << "[torch." << legacy_type_name(t.dtype()) << " [";
  for (int64_t i = 0; i < t.dim(); ++i) {
    os << (i ? ", " : "") << t.sizes()[i];
  }
  os << "]]";
  return os.str();
}

bool GradMode::is_enabled() {
  return tls_grad_enabled;
}

void GradMode::set_enabled(bool enabled) {
  tls_grad_enabled = enabled;
}

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) {
    return;
  }
  // An alias without autograd metadata: the node keeps the values, not the
  // tensor's graph (which may lead back to this very node).
  info_ = std::make_shared<Info>();
  info_->original = t.impl();
  if (t.impl()->is_sparse()) {
    // Sparse parts are never written in place: nothing to check later.
    data_ = Tensor(
        std::make_shared<TensorImpl>(t.impl()->sparse(), t.sizes(), t.dtype()));
    return;
  }
  data_ = Tensor(std::make_shared<TensorImpl>(
      t.storage(), t.sizes(), t.strides(), t.storage_offset(), t.dtype()));
  info_->version = t.storage()->version();
}

void SavedTensor::restamp() const {
  if (data_.defined() && !data_.impl()->is_sparse()) {
    info_->version = data_.storage()->version();
  }
}

bool SavedTensor::is_of(const Tensor& t) const {
  return data_.defined() && t.defined() && info_->original.lock() == t.impl();
}

Tensor SavedTensor::unpack() const {
  if (data_.defined() && !data_.impl()->is_sparse()) {
    uint64_t now = data_.storage()->version();
    // Which node produced the tensor, if it still exists (an op's own
    // output gets its grad_fn after being saved, so it is looked up now).
    std::string producer;
    if (auto node = info_->output_of.lock()) {
      producer = detail::str_cat(
          ", which is output ", info_->output_nr, " of ", node->name(), ",");
    } else if (auto impl = info_->original.lock()) {
      AutogradMeta* m = impl->autograd_meta();
      if (m != nullptr && m->grad_fn) {
        producer = detail::str_cat(
            ", which is output ",
            m->output_nr,
            " of ",
            m->grad_fn->name(),
            ",");
      }
    }
    DITTO_CHECK(
        now == info_->version,
        ValueError,
        "backward",
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation: ",
        describe(data_),
        producer,
        " is at version ",
        now,
        "; expected version ",
        info_->version,
        " instead. Hint: enable anomaly detection to find the operation that "
        "failed to compute its gradient, with "
        "autograd::DetectAnomalyGuard.");
  }
  return data_;
}

void NodeBuilder::record(
    const char* forward_name,
    const std::vector<const Tensor*>& inputs,
    std::span<const Tensor> outputs,
    BackwardFn fn,
    const std::vector<SavedTensor>& saved,
    bool inplace_self) {
  // The edges first: a leaf's accumulator made here must get a lower
  // sequence number than the node that feeds it.
  std::vector<Edge> next;
  std::vector<TensorMeta> input_metas;
  next.reserve(inputs.size());
  input_metas.reserve(inputs.size());
  for (const Tensor* in : inputs) {
    if (in != nullptr && in->defined()) {
      next.push_back(gradient_edge(*in));
      input_metas.push_back({in->sizes(), in->dtype(), in->device()});
    } else {
      next.push_back({});
      input_metas.push_back({});
    }
  }
  auto node = std::make_shared<FunctionNode>(
      detail::str_cat(forward_name, "_backward"), forward_name, std::move(fn));
  node->set_has_saved(!saved.empty());
  if (trace::enabled()) {
    node->module_ = trace::current_module();
  }
  node->next_ = std::move(next);
  node->input_metas_ = std::move(input_metas);
  node->output_metas_.reserve(outputs.size());
  node->retained().resize(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& out = outputs[k];
    if (!out.defined()) {
      node->output_metas_.push_back({});
      continue;
    }
    node->output_metas_.push_back({out.sizes(), out.dtype(), out.device()});
    if (!is_floating(out.dtype())) {
      continue; // integer outputs (indices) carry no gradient
    }
    AutogradMeta& m = ensure_meta(out);
    m.grad_fn = node;
    m.output_nr = uint32_t(k);
    m.requires_grad = false;
    if (k == 0 && inplace_self && m.retains_grad) {
      node->retained()[0] = out.impl();
    }
    for (const SavedTensor& st : saved) {
      if (st.is_of(out)) {
        st.info_->output_of = node;
        st.info_->output_nr = uint32_t(k);
      }
    }
  }
}

void check_inplace(const Tensor& t, const char* op) {
  AutogradMeta* m = meta(t);
  if (m == nullptr) {
    return;
  }
  DITTO_CHECK(
      !(m->requires_grad && !m->grad_fn),
      ValueError,
      op,
      "a leaf Variable that requires grad is being used in an in-place "
      "operation.");
  DITTO_CHECK(
      !m->is_view,
      ValueError,
      op,
      "an in-place operation on a view of a tensor that requires grad is not "
      "supported yet; clone() the view, or change the base tensor instead");
}

void check_view_fresh(const Tensor& t, const char* op) {
  AutogradMeta* m = meta(t);
  if (m == nullptr || !m->is_view) {
    return;
  }
  DITTO_CHECK(
      t.storage()->version() == m->view_version,
      ValueError,
      op,
      "a view of a tensor that requires grad is used after its base was "
      "modified in place (version ",
      t.storage()->version(),
      ", the view was taken at version ",
      m->view_version,
      "); take the view again after the in-place operation");
}

} // namespace ditto::autograd
