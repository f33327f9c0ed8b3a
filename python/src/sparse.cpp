// Sparse COO tensors in Python (docs/sparse.md): the constructor, the
// parts and conversions as Tensor methods, and ditto._C._sparse (the
// products that ditto.sparse re-exports).

#include "ditto/ops/sparse.h"
#include "python/src/common.h"

namespace ditto::python {

void init_sparse(py::module_&, py::class_<Tensor>& cls) {
  // sparse_coo_tensor, sparse_bmm, the parts and conversions (_values,
  // coalesce, to_dense, to_sparse ...) and ditto._C._sparse's mm and addmm
  // are declared (ditto/ops/sparse/sparse.ops.toml).
  cls.def_property_readonly("is_sparse", &Tensor::is_sparse);
  cls.def_property_readonly("layout", [](const Tensor& t) {
    return py::module_::import("ditto").attr(
        t.is_sparse() ? "sparse_coo" : "strided");
  });
  cls.def("sparse_dim", &Tensor::sparse_dim);
  cls.def("dense_dim", &Tensor::dense_dim);
  cls.def("_nnz", &Tensor::_nnz);
  cls.def("is_coalesced", &Tensor::is_coalesced);
}

} // namespace ditto::python
