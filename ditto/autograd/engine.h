#pragma once

// Reverse-mode autograd: the public API. See docs/autograd.md.
//
// Nodes run in decreasing sequence number (the reverse of the order the
// forward recorded them), one at a time on the calling thread; the ops
// inside a node use the thread pool as any op does. Gradients reaching one
// tensor are summed in that same fixed order. Each node's backward runs
// under the determinism policy recorded with its forward. So gradients have
// the same bits on every run, for any thread count and CPU capability.

#include <functional>
#include <optional>
#include <vector>

#include "ditto/autograd/graph.h"
#include "ditto/core/tensor.h"

namespace ditto::autograd {

// Computes the gradients of outputs with respect to every leaf that
// requires grad and adds them to the leaves' .grad (torch.autograd.
// backward). grad_outputs: one per output (undefined: ones, allowed for a
// one-element output only). retain_graph defaults to create_graph; without
// it the saved tensors are freed and a second backward raises.
// create_graph (double backward) is not supported and raises.
DITTO_API void backward(
    const std::vector<Tensor>& outputs,
    const std::vector<Tensor>& grad_outputs = {},
    std::optional<bool> retain_graph = std::nullopt,
    bool create_graph = false);

// The gradients of outputs with respect to inputs, returned instead of
// accumulated into .grad (torch.autograd.grad). With allow_unused, an input
// the outputs do not depend on gets an undefined tensor; without, it raises.
DITTO_API std::vector<Tensor> grad(
    const std::vector<Tensor>& outputs,
    const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& grad_outputs = {},
    std::optional<bool> retain_graph = std::nullopt,
    bool create_graph = false,
    bool allow_unused = false);

// Runs fn on this thread when the next backward() on this thread has
// written every leaf's .grad, before it returns; callbacks run in the order
// queued, once. A backward that raises drops them. (torch's
// Variable._execution_engine.queue_callback, which DDP uses to reduce the
// gradients once backward has accumulated them; ditto lets a forward queue
// the callback for the backward that follows.) autograd::grad() does not
// run them.
DITTO_API void queue_callback(std::function<void()> fn);

// While on (per thread), a backward node whose gradient contains a NaN
// raises an error naming the node and the forward op that recorded it
// (torch.autograd.detect_anomaly).
class DITTO_API DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;
  static bool is_enabled();

 private:
  bool previous_;
};

} // namespace ditto::autograd
