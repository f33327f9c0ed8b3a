// Sparse COO tensors in Python (docs/sparse.md): the constructor, the
// parts and conversions as Tensor methods, and ditto._C._sparse (the
// products that ditto.sparse re-exports).

#include "ditto/ops/sparse.h"
#include "python/src/common.h"

namespace ditto::python {

void init_sparse(py::module_& m, py::class_<Tensor>& cls) {
  m.def(
      "_sparse_coo_tensor",
      [](const Tensor& indices,
         const Tensor& values,
         std::optional<Shape> size) {
        return size ? sparse_coo_tensor(indices, values, *size)
                    : sparse_coo_tensor(indices, values);
      },
      py::arg("indices"),
      py::arg("values"),
      py::arg("size") = py::none(),
      ReleaseGil());
  m.def(
      "sparse_bmm",
      &sparse_bmm,
      py::arg("input"),
      py::arg("mat2"),
      ReleaseGil());
  py::module_ sp = m.def_submodule("_sparse", "sparse-dense products");
  sp.def("mm", &sparse::mm, py::arg("mat1"), py::arg("mat2"), ReleaseGil());
  sp.def(
      "addmm",
      &sparse::addmm,
      py::arg("mat"),
      py::arg("mat1"),
      py::arg("mat2"),
      py::kw_only(),
      py::arg("beta") = 1.0,
      py::arg("alpha") = 1.0,
      ReleaseGil());
  cls.def_property_readonly("is_sparse", &Tensor::is_sparse);
  cls.def_property_readonly("layout", [](const Tensor& t) {
    return py::module_::import("ditto").attr(
        t.is_sparse() ? "sparse_coo" : "strided");
  });
  cls.def("sparse_dim", &Tensor::sparse_dim);
  cls.def("dense_dim", &Tensor::dense_dim);
  cls.def("_nnz", &Tensor::_nnz);
  cls.def("is_coalesced", &Tensor::is_coalesced);
  cls.def("_indices", &Tensor::_indices);
  cls.def("_values", &Tensor::_values);
  cls.def("indices", &Tensor::indices);
  cls.def("values", &Tensor::values);
  cls.def("coalesce", &Tensor::coalesce, ReleaseGil());
  cls.def("to_dense", &Tensor::to_dense, ReleaseGil());
  cls.def(
      "to_sparse",
      [](const Tensor& t, std::optional<int64_t> sparse_dim) {
        return sparse_dim ? t.to_sparse(*sparse_dim) : t.to_sparse();
      },
      py::arg("sparse_dim") = py::none(),
      ReleaseGil());
}

} // namespace ditto::python
