// The view, copy, index and scatter records as ditto.<op> functions and
// Tensor methods (and their in-place forms), with torch's argument names.

#include "python/src/common.h"

namespace ditto::python {
namespace {

void init_views(py::class_<Tensor>& cls) {
  // The views' methods and functions are declared
  // (ditto/ops/shape/views.ops.toml); x.T is a property.
  cls.def_property_readonly("T", [](const Tensor& t) {
    IntList rev;
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      rev.push_back(d);
    }
    return t.permute(rev);
  });
}

void init_copies(py::class_<Tensor>& cls) {
  // clone, copy_, fill_, zero_ and resize_ are declared
  // (ditto/ops/factories/copies.ops.toml).
  cls.def("contiguous", &Tensor::contiguous, ReleaseGil());
}

// embedding_bag, index, index_put and index_put_ are declared
// (index/index.ops.toml).

} // namespace

void init_ops_index(py::module_&, py::class_<Tensor>& cls) {
  init_views(cls);
  init_copies(cls);
}

} // namespace ditto::python
