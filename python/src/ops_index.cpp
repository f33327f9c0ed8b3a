// The view, copy, index and scatter records as ditto.<op> functions and
// Tensor methods (and their in-place forms), with torch's argument names.

#include "python/src/common.h"

namespace ditto::python {
namespace {

constexpr auto kSelf = py::return_value_policy::reference;

// Sizes from *args, read with the GIL held (the bindings release it).
Shape sizes_of(const py::args& args, const char* op) {
  py::gil_scoped_acquire gil;
  return shape_from_args(args, op);
}

void init_views(py::class_<Tensor>& cls) {
  // The dtype form first: a dtype would also read as an int shape.
  cls.def(
      "view",
      [](const Tensor& t, Dtype dtype) { return t.view(dtype); },
      py::arg("dtype"));
  cls.def(
      "view",
      [](const Tensor& t, py::args shape) {
        return t.view(sizes_of(shape, "view"));
      },
      ReleaseGil());
  cls.def(
      "reshape",
      [](const Tensor& t, py::args shape) {
        return t.reshape(sizes_of(shape, "reshape"));
      },
      ReleaseGil());
  cls.def(
      "permute",
      [](const Tensor& t, py::args dims) {
        return t.permute(sizes_of(dims, "permute"));
      },
      ReleaseGil());
  cls.def(
      "expand",
      [](const Tensor& t, py::args sizes) {
        return t.expand(sizes_of(sizes, "expand"));
      },
      ReleaseGil());
  cls.def(
      "expand_as",
      [](const Tensor& t, const Tensor& other) {
        return t.expand(other.sizes());
      },
      py::arg("other"),
      ReleaseGil());
  cls.def(
      "view_as",
      [](const Tensor& t, const Tensor& other) {
        return t.view(other.sizes());
      },
      py::arg("other"),
      ReleaseGil());
  cls.def(
      "reshape_as",
      [](const Tensor& t, const Tensor& other) {
        return t.reshape(other.sizes());
      },
      py::arg("other"),
      ReleaseGil());
  cls.def(
      "transpose",
      &Tensor::transpose,
      py::arg("dim0"),
      py::arg("dim1"),
      ReleaseGil());
  cls.def("t", &Tensor::t, ReleaseGil());
  cls.def_property_readonly("T", [](const Tensor& t) {
    IntList rev;
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      rev.push_back(d);
    }
    return t.permute(rev);
  });
  cls.def(
      "narrow",
      &Tensor::narrow,
      py::arg("dim"),
      py::arg("start"),
      py::arg("length"),
      ReleaseGil());
  cls.def(
      "select",
      &Tensor::select,
      py::arg("dim"),
      py::arg("index"),
      ReleaseGil());
  cls.def(
      "slice",
      [](const Tensor& t,
         int64_t dim,
         std::optional<int64_t> start,
         std::optional<int64_t> end,
         int64_t step) {
        return t.slice(dim, start.value_or(0), end.value_or(INT64_MAX), step);
      },
      py::arg("dim") = 0,
      py::arg("start") = py::none(),
      py::arg("end") = py::none(),
      py::arg("step") = 1,
      ReleaseGil());
  cls.def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"), ReleaseGil());
  cls.def(
      "squeeze",
      [](const Tensor& t, std::optional<int64_t> dim) {
        return dim ? t.squeeze(*dim) : t.squeeze();
      },
      py::arg("dim") = py::none(),
      ReleaseGil());
  cls.def(
      "flatten",
      &Tensor::flatten,
      py::arg("start_dim") = 0,
      py::arg("end_dim") = -1,
      ReleaseGil());
  cls.def(
      "as_strided",
      [](const Tensor& t,
         const Shape& size,
         const Shape& stride,
         std::optional<int64_t> offset) {
        return t.as_strided(size, stride, offset.value_or(t.storage_offset()));
      },
      py::arg("size"),
      py::arg("stride"),
      py::arg("storage_offset") = py::none(),
      ReleaseGil());
}

void init_copies(py::class_<Tensor>& cls) {
  cls.def("clone", &Tensor::clone, ReleaseGil());
  cls.def("contiguous", &Tensor::contiguous, ReleaseGil());
  cls.def(
      "copy_",
      [](Tensor& t, const Tensor& src, bool) -> Tensor& {
        return t.copy_(src);
      },
      py::arg("src"),
      py::arg("non_blocking") = false,
      kSelf,
      ReleaseGil());
  cls.def("fill_", &Tensor::fill_, py::arg("value"), kSelf, ReleaseGil());
  cls.def("zero_", &Tensor::zero_, kSelf, ReleaseGil());
  cls.def(
      "resize_",
      [](Tensor& t, py::args size) -> Tensor& {
        return t.resize_(sizes_of(size, "resize_"));
      },
      kSelf,
      ReleaseGil());
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
