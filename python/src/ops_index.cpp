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

void init_index(py::module_& m) {
  m.def(
      "embedding_bag",
      [](const Tensor& input,
         const Tensor& weight,
         const std::optional<Tensor>& offsets,
         const std::string& mode,
         const std::optional<Tensor>& per_sample_weights,
         bool include_last_offset,
         std::optional<int64_t> padding_idx) {
        return embedding_bag(
            input,
            weight,
            value_or_undefined(offsets),
            mode,
            value_or_undefined(per_sample_weights),
            include_last_offset,
            padding_idx);
      },
      py::arg("input"),
      py::arg("weight"),
      py::arg("offsets") = py::none(),
      py::arg("mode") = "mean",
      py::arg("per_sample_weights") = py::none(),
      py::arg("include_last_offset") = false,
      py::arg("padding_idx") = py::none(),
      ReleaseGil());
  // index, index_put and index_put_: index/index.ops.toml.
}

} // namespace

void init_ops_index(py::module_& m, py::class_<Tensor>& cls) {
  init_views(cls);
  init_copies(cls);
  init_index(m);
}

} // namespace ditto::python
