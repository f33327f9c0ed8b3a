#pragma once

// An ordered name -> tensor map (PyTorch's OrderedDict of a state_dict):
// what modules' and optimizers' state_dict return and safetensors files
// hold. Below nn: a file format and an optimizer use it without modules.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/ordered_dict.h"
#include "ditto/core/tensor.h"

namespace ditto {

// Names to tensors in order (LibTorch's OrderedDict<std::string, Tensor>;
// items read as pairs too).
using NamedTensors = OrderedDict<std::string, Tensor>;

// Insertion-ordered; what state_dict returns and load_state_dict takes.

class DITTO_API StateDict {
 public:
  StateDict() = default;
  StateDict(NamedTensors items);

  // Adds name, or replaces its tensor in place in the order.
  void insert(const std::string& name, const Tensor& t);
  // Null if name is absent.
  const Tensor* find(std::string_view name) const;
  bool contains(std::string_view name) const {
    return find(name) != nullptr;
  }
  const Tensor& at(std::string_view name) const; // KeyError if absent
  size_t size() const {
    return items_.size();
  }
  bool empty() const {
    return items_.empty();
  }
  std::vector<std::string> keys() const;
  NamedTensors::const_iterator begin() const {
    return items_.begin();
  }
  NamedTensors::const_iterator end() const {
    return items_.end();
  }
  const NamedTensors& items() const {
    return items_;
  }

 private:
  NamedTensors items_;
};

} // namespace ditto
