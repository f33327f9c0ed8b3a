// t[...] and t[...] = v with PyTorch's rules: ints select, slices slice,
// None inserts a dim, Ellipsis stands for the dims not named; tensors,
// lists and bools index as advanced indices (ditto::index, index_put_).

#include "python/src/common.h"

namespace ditto::python {
namespace {

struct Indexed {
  Tensor view; // after the basic indices
  // One entry per dim of view when any advanced index is present: the
  // index, or undefined for a dim taken whole.
  std::vector<Tensor> advanced;
  bool has_advanced = false;
};

bool is_advanced(py::handle item) {
  return py::isinstance<Tensor>(item) || py::isinstance<py::list>(item) ||
      PyBool_Check(item.ptr()) || py::hasattr(item, "__array_interface__");
}

int64_t dims_consumed(py::handle item) {
  if (item.is_none() || item.ptr() == Py_Ellipsis || PyBool_Check(item.ptr())) {
    return 0;
  }
  if (py::isinstance<Tensor>(item)) {
    Tensor t = item.cast<Tensor>();
    return t.dtype() == kBool || t.dtype() == kUInt8
        ? std::max<int64_t>(t.dim(), 1)
        : 1;
  }
  return 1;
}

Indexed apply_indices(const Tensor& self, py::handle index) {
  py::tuple items = py::isinstance<py::tuple>(index)
      ? py::reinterpret_borrow<py::tuple>(index)
      : py::make_tuple(index);
  int64_t named = 0;
  int ellipses = 0;
  for (py::handle item : items) {
    named += dims_consumed(item);
    ellipses += item.ptr() == Py_Ellipsis ? 1 : 0;
  }
  if (ellipses > 1) {
    throw IndexError(
        "[index] an index can only have a single ellipsis ('...')");
  }
  if (named > self.dim()) {
    throw IndexError(detail::str_cat(
        "[index] too many indices for tensor of dimension ", self.dim()));
  }
  Indexed r;
  r.view = self;
  int64_t dim = 0; // the dim of r.view the next item applies to
  for (py::handle item : items) {
    PyObject* o = item.ptr();
    if (item.is_none()) {
      r.view = r.view.unsqueeze(dim);
      r.advanced.emplace_back();
      ++dim;
    } else if (o == Py_Ellipsis) {
      int64_t skip = self.dim() - named;
      for (int64_t i = 0; i < skip; ++i) {
        r.advanced.emplace_back();
      }
      dim += skip;
    } else if (PyBool_Check(o)) {
      // t[True] is t[None]; t[False] is t[None][[]] (empty).
      r.view = r.view.unsqueeze(dim);
      r.has_advanced = true;
      r.advanced.push_back(
          o == Py_True ? tensor(std::vector<int64_t>{0})
                       : detail::new_tensor({0}, kInt64));
      ++dim;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start = 0;
      Py_ssize_t stop = 0;
      Py_ssize_t step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) != 0) {
        throw py::error_already_set();
      }
      if (step <= 0) {
        throw ValueError("[index] step must be greater than zero");
      }
      Py_ssize_t n = PySlice_AdjustIndices(
          Py_ssize_t(r.view.size(dim)), &start, &stop, step);
      r.view = r.view.slice(dim, start, start + n * step, step);
      r.advanced.emplace_back();
      ++dim;
    } else if (PyIndex_Check(o) && !py::isinstance<Tensor>(item)) {
      r.view = r.view.select(dim, item.cast<int64_t>());
    } else if (is_advanced(item)) {
      Tensor idx = as_tensor(item);
      r.has_advanced = true;
      if (idx.dtype() == kBool || idx.dtype() == kUInt8) {
        // One entry: index() reads a k-dim mask as covering k dims.
        r.advanced.push_back(idx.to(kBool));
        dim += std::max<int64_t>(idx.dim(), 1);
      } else {
        r.advanced.push_back(idx);
        ++dim;
      }
    } else {
      throw TypeError(detail::str_cat(
          "[index] only integers, slices (`:`), ellipsis (`...`), None and "
          "long or byte Variables are valid indices (got ",
          std::string(py::str(py::type::of(item).attr("__name__"))),
          ")"));
    }
  }
  return r;
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
  Indexed r = apply_indices(self, index);
  if (!r.has_advanced) {
    if (r.view.is_same(self)) { // t[...] and t[()]: a new view
      return py::cast(
          self.as_strided(self.sizes(), self.strides(), self.storage_offset()));
    }
    return py::cast(r.view);
  }
  Tensor out;
  {
    py::gil_scoped_release gil;
    out = ditto::index(r.view, r.advanced);
  }
  return py::cast(out);
}

void setitem(Tensor& self, py::handle index, py::handle value) {
  Indexed r = apply_indices(self, index);
  bool scalar = !py::isinstance<Tensor>(value) &&
      (PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) ||
       PyBool_Check(value.ptr()));
  Tensor v;
  Scalar s;
  if (scalar) {
    s = value.cast<Scalar>();
  } else {
    v = as_tensor(value, self.dtype());
  }
  py::gil_scoped_release gil;
  if (r.has_advanced) {
    if (scalar) {
      v = scalar_tensor(s, self.dtype());
    }
    r.view.index_put_(r.advanced, v);
  } else if (scalar) {
    r.view.fill_(s);
  } else {
    r.view.copy_(v);
  }
}

} // namespace

void init_tensor_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);
}

} // namespace ditto::python
