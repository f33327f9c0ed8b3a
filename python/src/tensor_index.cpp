// t[...] and t[...] = v with PyTorch's rules: the items become the core's
// index entries (ditto/core/indexing.h, LibTorch's x.index({...})), which
// apply them: ints select, slices slice, None inserts a dim, Ellipsis
// stands for the dims not named; tensors, lists and bools index as advanced
// indices (ditto::index, index_put_).

#include "python/src/common.h"

namespace ditto::python {
namespace {

bool is_advanced(py::handle item) {
  return py::isinstance<Tensor>(item) || py::isinstance<py::list>(item) ||
      py::hasattr(item, "__array_interface__");
}

// The Python index as the core's entries (ditto/core/indexing.h, which
// applies them).
std::vector<indexing::TensorIndex> entries(py::handle index) {
  py::tuple items = py::isinstance<py::tuple>(index)
      ? py::reinterpret_borrow<py::tuple>(index)
      : py::make_tuple(index);
  std::vector<indexing::TensorIndex> out;
  out.reserve(items.size());
  for (py::handle item : items) {
    PyObject* o = item.ptr();
    if (item.is_none()) {
      out.emplace_back(indexing::None);
    } else if (o == Py_Ellipsis) {
      out.emplace_back(indexing::Ellipsis);
    } else if (PyBool_Check(o)) {
      out.emplace_back(o == Py_True);
    } else if (PySlice_Check(o)) {
      Py_ssize_t start = 0;
      Py_ssize_t stop = 0;
      Py_ssize_t step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) != 0) {
        throw py::error_already_set();
      }
      out.emplace_back(
          indexing::Slice(int64_t(start), int64_t(stop), int64_t(step)));
    } else if (PyIndex_Check(o) && !py::isinstance<Tensor>(item)) {
      out.emplace_back(item.cast<int64_t>());
    } else if (is_advanced(item)) {
      out.emplace_back(as_tensor(item));
    } else {
      throw TypeError(detail::str_cat(
          "[index] only integers, slices (`:`), ellipsis (`...`), None and "
          "long or byte Variables are valid indices (got ",
          std::string(py::str(py::type::of(item).attr("__name__"))),
          ")"));
    }
  }
  return out;
}

py::object getitem(const Tensor& self, py::handle index) {
  // The common cases first: t[i] and t[a:b].
  if (PyLong_Check(index.ptr()) && !PyBool_Check(index.ptr())) {
    int64_t i = index.cast<int64_t>();
    if (self.dim() == 0) {
      throw IndexError(
          "[index] invalid index of a 0-dim tensor. Use `tensor.item()` "
          "to convert a 0-dim tensor to a number");
    }
    Tensor out;
    {
      py::gil_scoped_release gil;
      out = self.select(0, i);
    }
    return py::cast(std::move(out));
  }
  std::vector<indexing::TensorIndex> e = entries(index);
  Tensor out;
  {
    py::gil_scoped_release gil;
    out = indexing::get(self, e);
  }
  return py::cast(std::move(out));
}

void setitem(Tensor& self, py::handle index, py::handle value) {
  std::vector<indexing::TensorIndex> e = entries(index);
  bool scalar = !py::isinstance<Tensor>(value) &&
      (PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) ||
       PyBool_Check(value.ptr()));
  if (scalar) {
    Scalar s = value.cast<Scalar>();
    py::gil_scoped_release gil;
    indexing::set(self, e, s);
  } else {
    Tensor v = as_tensor(value, self.dtype());
    py::gil_scoped_release gil;
    indexing::set(self, e, v);
  }
}

} // namespace

void init_tensor_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);
}

} // namespace ditto::python
