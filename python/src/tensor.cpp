// ditto.Tensor's own surface: geometry, values out (item, tolist, numpy),
// values in (ditto.tensor, from_numpy), repr, autograd, dtype conversions
// and the factories.

#include <pybind11/numpy.h>

#include <cstring>

#include "ditto/core/print.h"
#include "python/src/common.h"

namespace ditto::python {
namespace {

// ---- NumPy

py::dtype numpy_dtype(Dtype d) {
  switch (d) {
    case kUInt8:
      return py::dtype::of<uint8_t>();
    case kInt32:
      return py::dtype::of<int32_t>();
    case kInt64:
      return py::dtype::of<int64_t>();
    case kFloat32:
      return py::dtype::of<float>();
    case kFloat64:
      return py::dtype::of<double>();
    case kBool:
      return py::dtype::of<bool>();
    case kInt8:
      return py::dtype::of<int8_t>();
    case kInt16:
      return py::dtype::of<int16_t>();
    case kFloat16:
      return py::dtype("float16");
    case kBFloat16:
      // As torch: NumPy has no bfloat16.
      throw TypeError("[numpy] Got unsupported ScalarType BFloat16");
  }
  throw TypeError("[numpy] unknown dtype");
}

Dtype dtype_of_numpy(const py::dtype& dt, const char* op) {
  char kind = dt.kind();
  py::ssize_t size = dt.itemsize();
  bool native = dt.attr("isnative").cast<bool>();
  if (native) {
    if (kind == 'f' && size == 4) {
      return kFloat32;
    }
    if (kind == 'f' && size == 8) {
      return kFloat64;
    }
    if (kind == 'f' && size == 2) {
      return kFloat16;
    }
    if (kind == 'i' && size == 2) {
      return kInt16;
    }
    if (kind == 'i' && size == 1) {
      return kInt8;
    }
    if (kind == 'i' && size == 8) {
      return kInt64;
    }
    if (kind == 'i' && size == 4) {
      return kInt32;
    }
    if (kind == 'u' && size == 1) {
      return kUInt8;
    }
    if (kind == 'b' && size == 1) {
      return kBool;
    }
  }
  throw TypeError(detail::str_cat(
      "[",
      op,
      "] can't convert np.ndarray of type ",
      std::string(py::str(py::handle(dt))),
      ". The only supported types are: float64, float32, float16, int64, "
      "int32, int16, int8, uint8, and bool."));
}

py::array to_numpy(const Tensor& t) {
  if (t.requires_grad()) {
    throw Error(
        "[numpy] Can't call numpy() on Tensor that requires grad. Use "
        "tensor.detach().numpy() instead.");
  }
  if (t.is_sparse()) {
    throw TypeError(
        "[numpy] a sparse tensor (layout torch.sparse_coo) has no array "
        "form: call to_dense() first");
  }
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides()) {
    strides.push_back(py::ssize_t(s * int64_t(t.element_size())));
  }
  // The array keeps a handle on the tensor, and so its storage, alive; and
  // resize_ may not move the bytes from under it.
  if (t.storage()) {
    t.storage()->share_address();
  }
  auto* keep = new Tensor(t);
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(t.dtype()), shape, strides, t.raw_data(), base);
}

Tensor from_numpy(const py::array& a) {
  Dtype dtype = dtype_of_numpy(a.dtype(), "from_numpy");
  Shape sizes(a.shape(), a.shape() + a.ndim());
  Shape strides;
  auto item = int64_t(a.itemsize());
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    int64_t s = int64_t(a.strides()[i]);
    if (s < 0) {
      throw ValueError(
          "[from_numpy] At least one stride in the given numpy array is "
          "negative, and tensors with negative strides are not currently "
          "supported. (You can probably work around this by making a copy "
          "of your array with array.copy().)");
    }
    if (s % item != 0) {
      throw ValueError(
          "[from_numpy] given numpy array strides not a multiple of the "
          "element byte size. Copy the numpy array to reallocate the memory.");
    }
    strides.push_back(s / item);
  }
  if (dtype == kBool && a.size() > 0) {
    // A bool tensor's bytes are 0 or 1 (every op relies on it); NumPy lets
    // a view of other bytes as bool through.
    py::module_ np = py::module_::import("numpy");
    py::object bytes = a.attr("view")(np.attr("uint8"));
    py::array bad = np.attr("flatnonzero")(bytes.attr("__gt__")(1));
    if (bad.size() > 0) {
      const auto i = bad.attr("__getitem__")(0).cast<int64_t>();
      const auto v = bytes.attr("ravel")().attr("__getitem__")(i).cast<int>();
      throw ValueError(detail::str_cat(
          "[from_numpy] a bool array holds the byte ",
          v,
          " at flat index ",
          i,
          " (bool elements must be 0 or 1)"));
    }
  }
  // The storage holds a reference to the array; the last tensor to let go
  // of it drops the reference under the GIL.
  PyObject* owner = a.ptr();
  Py_INCREF(owner);
  return from_blob(
      const_cast<void*>(a.data()), sizes, strides, dtype, [owner](void*) {
        if (Py_IsInitialized()) {
          py::gil_scoped_acquire gil;
          Py_DECREF(owner);
        }
      });
}

// ---- Python data to a tensor (ditto.tensor)

// The values of nested sequences, in row-major order, and the widest kind
// among them (bool < int < float), as torch.tensor infers its dtype.
struct Collected {
  Shape shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  Scalar::Kind kind = Scalar::Kind::Bool;
  bool shape_known = false;
};

// How deep data may nest (torch's limit on dims, 64): deeper lists, or a
// list that holds itself, would recurse until the C stack ran out.
constexpr size_t kMaxDataDepth = 64;

void collect(py::handle obj, size_t depth, Collected& out) {
  if (depth > kMaxDataDepth) {
    throw ValueError(detail::str_cat(
        "[tensor] too many dimensions: the data nests deeper than ",
        kMaxDataDepth,
        " sequences"));
  }
  if (py::isinstance<py::bytes>(obj) || PyByteArray_Check(obj.ptr())) {
    // As torch: bytes are not a sequence of numbers here.
    throw TypeError(detail::str_cat(
        "[tensor] invalid data type '",
        std::string(py::str(py::type::of(obj).attr("__name__"))),
        "'"));
  }
  bool is_seq = !py::isinstance<py::str>(obj) && !py::isinstance<Tensor>(obj) &&
      PySequence_Check(obj.ptr());
  if (py::isinstance<Tensor>(obj) && obj.cast<Tensor>().dim() > 0) {
    throw TypeError(
        "[tensor] only one-element tensors can be nested in the data (use "
        "ditto.stack for a list of tensors)");
  }
  if (!is_seq) {
    if (!out.shape_known) {
      out.shape.resize(depth);
      out.shape_known = true;
    } else if (out.shape.size() != depth) {
      throw ValueError(
          "[tensor] expected a sequence at every level of equal depth");
    }
    Scalar s;
    try {
      s = obj.cast<Scalar>();
    } catch (const py::cast_error&) {
      throw TypeError(detail::str_cat(
          "[tensor] Could not infer dtype of ",
          std::string(py::str(py::type::of(obj).attr("__name__")))));
    }
    if (s.kind() > out.kind) {
      out.kind = s.kind();
    }
    out.floats.push_back(s.to<double>());
    out.ints.push_back(s.is_floating() ? 0 : s.to<int64_t>());
    return;
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  auto n = int64_t(py::len(seq));
  if (!out.shape_known) {
    if (out.shape.size() == depth) {
      out.shape.resize(depth + 1, n); // (push_back: a GCC 12 false warning)
    }
    if (n == 0) {
      out.shape_known = true;
      out.kind = Scalar::Kind::Float;
    }
  }
  if (out.shape.size() <= depth || out.shape[depth] != n) {
    throw ValueError(detail::str_cat(
        "[tensor] expected sequence of length ",
        out.shape.size() > depth ? out.shape[depth] : 0,
        " at dim ",
        depth,
        " (got ",
        n,
        ")"));
  }
  // Each item held while it is read: a sequence may make its items on
  // access (numpy arrays, array.array, any __getitem__), and a borrowed
  // handle to such a temporary would outlive it.
  for (int64_t i = 0; i < n; ++i) {
    py::object item = seq[size_t(i)];
    collect(item, depth + 1, out);
  }
}

Tensor tensor_from_data(py::handle data, std::optional<Dtype> dtype) {
  if (py::isinstance<Tensor>(data)) {
    Tensor t = data.cast<Tensor>();
    py::gil_scoped_release gil;
    Tensor c = t.detach().clone();
    return dtype ? c.to(*dtype) : c;
  }
  if (py::isinstance<py::array>(data)) {
    auto a = py::reinterpret_borrow<py::array>(data);
    Tensor view = from_numpy(a);
    py::gil_scoped_release gil;
    Tensor c = view.clone(); // a copy, as torch.tensor(ndarray)
    return dtype ? c.to(*dtype) : c;
  }
  Collected c;
  collect(data, 0, c);
  Dtype inferred = c.kind == Scalar::Kind::Float ? kFloat32
      : c.kind == Scalar::Kind::Int              ? kInt64
                                                 : kBool;
  Dtype target = dtype.value_or(inferred);
  auto count = int64_t(c.floats.size());
  py::gil_scoped_release gil;
  Tensor t;
  if (c.kind == Scalar::Kind::Float || is_floating(target)) {
    t = detail::tensor_from_bytes(
        c.floats.data(), count, kFloat64, c.shape, true);
  } else {
    t = detail::tensor_from_bytes(c.ints.data(), count, kInt64, c.shape, true);
  }
  return t.to(target);
}

// ---- values out

py::object tolist_rec(const char* p, const Tensor& t, int64_t dim) {
  if (dim == t.dim()) {
    return dispatch_dtype(t.dtype(), "tolist", [&]<typename T>() {
      T v;
      std::memcpy(&v, p, sizeof(T));
      return py::cast(v);
    });
  }
  py::list out;
  int64_t step = t.stride(dim) * int64_t(t.element_size());
  for (int64_t i = 0; i < t.size(dim); ++i) {
    out.append(tolist_rec(p + i * step, t, dim + 1));
  }
  return out;
}

py::object item(const Tensor& t) {
  Scalar s;
  {
    py::gil_scoped_release gil;
    s = t.item_scalar();
  }
  return py::cast(s);
}

// A node's name as PyTorch's Python API shows it. torch's Python binding
// of add, sub, mul and div turns a number into a 0-dim tensor, so `x * 2`
// runs mul.Tensor (MulBackward0) where LibTorch's `x * 2` runs mul.Scalar
// (MulBackward1, Node::name()'s).
std::string python_node_name(const autograd::Node& n) {
  std::string name = n.name();
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    if (name == std::string(op) + "Backward1") {
      return std::string(op) + "Backward0";
    }
  }
  return name;
}

std::string repr(const Tensor& t) {
  std::vector<std::string> suffixes;
  if (auto fn = t.grad_fn()) {
    suffixes.push_back("grad_fn=<" + python_node_name(*fn) + ">");
  } else if (t.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return detail::tensor_repr(t, "ditto.", suffixes);
}

// ---- factories

Tensor finish(Tensor t, bool requires_grad) {
  if (requires_grad) {
    t.requires_grad_(true);
  }
  return t;
}

void init_factories(py::module_& m) {
  // empty, zeros, ones, full, the *_like factories, empty_strided, arange,
  // linspace, eye and scalar_tensor: factories/factories.ops.toml, with
  // torch's options (Note [Factory options] in tools/opgen.py).
  // torch.tensor(data, *, dtype=None, device=None, requires_grad=False,
  // pin_memory=False): the values read on the CPU, then moved.
  m.def(
      "tensor",
      [](py::handle data,
         std::optional<Dtype> dtype,
         const std::optional<std::string>& device,
         bool rg,
         bool pin_memory) {
        const TensorOptions o = factory_options(
            "tensor", dtype, std::nullopt, device, pin_memory, rg);
        Tensor t = tensor_from_data(data, dtype);
        if (o.has_device()) {
          py::gil_scoped_release gil;
          t = t.to(o.device());
        }
        return finish(t, rg);
      },
      py::arg("data"),
      py::kw_only(),
      py::arg("dtype") = py::none(),
      py::arg("device") = py::none(),
      py::arg("requires_grad") = false,
      py::arg("pin_memory") = false);
  m.def(
      "from_numpy",
      [](const py::array& a) {
        // A tensor can always be written: one on read-only memory (a
        // read-only mapping, a bytes object) would crash, or change what
        // its owner holds immutable. ditto.tensor(a) copies instead.
        if (!a.writeable()) {
          throw ValueError(
              "[from_numpy] the array is read-only (flags.writeable is "
              "False) and ditto tensors are always writable: pass "
              "array.copy(), or ditto.tensor(array) for a copy");
        }
        return from_numpy(a);
      },
      py::arg("ndarray"));
}

} // namespace

void init_tensor(py::module_& m, py::class_<Tensor>& cls) {
  static py::object* size_cls = nullptr;
  cls.def_property_readonly("dtype", &Tensor::dtype);
  cls.def_property_readonly("shape", [](const Tensor& t) {
    if (size_cls == nullptr) {
      size_cls =
          new py::object(py::module_::import("ditto._size").attr("Size"));
    }
    return (*size_cls)(py::cast(t.sizes()));
  });
  cls.def(
      "size",
      [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
        if (dim) {
          return py::int_(t.size(*dim));
        }
        if (size_cls == nullptr) {
          size_cls =
              new py::object(py::module_::import("ditto._size").attr("Size"));
        }
        return (*size_cls)(py::cast(t.sizes()));
      },
      py::arg("dim") = py::none());
  cls.def(
      "stride",
      [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
        return dim ? py::object(py::int_(t.stride(*dim)))
                   : py::object(py::cast(t.strides()));
      },
      py::arg("dim") = py::none());
  cls.def("dim", &Tensor::dim);
  cls.def("ndimension", &Tensor::dim);
  cls.def_property_readonly("ndim", &Tensor::dim);
  cls.def("numel", &Tensor::numel);
  cls.def("nelement", &Tensor::numel);
  cls.def("element_size", &Tensor::element_size);
  cls.def_property_readonly("itemsize", &Tensor::element_size);
  cls.def_property_readonly("nbytes", &Tensor::nbytes);
  cls.def("storage_offset", &Tensor::storage_offset);
  cls.def("is_contiguous", &Tensor::is_contiguous);
  cls.def("is_floating_point", [](const Tensor& t) {
    return is_floating(t.dtype());
  });
  cls.def_property_readonly(
      "device", [](const Tensor& t) { return t.device().str(); });
  cls.def_property_readonly("is_cpu", &Tensor::is_cpu);
  cls.def_property_readonly("is_vulkan", &Tensor::is_vulkan);
  cls.def("data_ptr", [](const Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.raw_data());
  });
  cls.def("item", &item);
  cls.def("tolist", [](const Tensor& t) {
    Tensor c;
    {
      py::gil_scoped_release gil;
      c = (t.is_cpu() ? t : t.cpu()).contiguous();
      // Note [Storage dtypes]: the exact values, as Python numbers.
      c = c.to(compute_dtype(c.dtype()));
    }
    return tolist_rec(static_cast<const char*>(c.raw_data()), c, 0);
  });
  cls.def("__len__", [](const Tensor& t) {
    if (t.dim() == 0) {
      throw py::type_error("len() of a 0-d tensor");
    }
    return t.size(0);
  });
  // As torch: the views along dim 0; a 0-d tensor is not iterable (without
  // __iter__, Python's sequence protocol gave [] for it).
  cls.def("__iter__", [](const Tensor& t) {
    if (t.dim() == 0) {
      throw py::type_error("iteration over a 0-d tensor");
    }
    py::list items;
    for (int64_t i = 0; i < t.size(0); ++i) {
      items.append(py::cast(t.select(0, i)));
    }
    return py::iter(items);
  });
  cls.def("__bool__", [](const Tensor& t) { return item(t).cast<bool>(); });
  cls.def("__float__", [](const Tensor& t) { return item(t).cast<double>(); });
  // int() of a floating tensor truncates, as Python's int() of a float.
  cls.def("__int__", [](const Tensor& t) { return py::int_(item(t)); });
  cls.def("__repr__", &repr);
  cls.def("__str__", &repr);
  cls.def("numpy", &to_numpy);
  cls.def(
      "__array__",
      [](const Tensor& t, py::object dtype) -> py::object {
        py::array a = to_numpy(t);
        return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
      },
      py::arg("dtype") = py::none());
  // pickle and copy: the values as a NumPy array and requires_grad, rebuilt
  // by a Python function (pickle names it; a pybind11 function's self is a
  // capsule that pickle cannot name).
  cls.def("__reduce__", [](const Tensor& t) -> py::tuple {
    Tensor c = t.detach().clone();
    return py::make_tuple(
        py::module_::import("ditto.serialization").attr("_rebuild_tensor"),
        py::make_tuple(to_numpy(c).attr("copy")(), t.requires_grad()));
  });

  // ---- autograd
  cls.def_property(
      "requires_grad", &Tensor::requires_grad, [](Tensor& t, bool v) {
        t.requires_grad_(v);
      });
  cls.def(
      "requires_grad_",
      [](Tensor& t, bool v) -> Tensor& { return t.requires_grad_(v); },
      py::arg("requires_grad") = true,
      py::return_value_policy::reference);
  cls.def_property(
      "grad",
      [](const Tensor& t) { return tensor_or_none(t.grad()); },
      [](Tensor& t, std::optional<Tensor> g) {
        // As torch: a gradient of another shape or dtype is refused here,
        // not at the next step.
        if (g && g->defined()) {
          if (g->sizes() != t.sizes()) {
            throw std::runtime_error(
                "assigned grad has data of a different size: " +
                shape_str(g->sizes()) + " for a tensor of " +
                shape_str(t.sizes()));
          }
          if (g->dtype() != t.dtype()) {
            throw std::runtime_error(
                "assigned grad has data of a different type: " +
                std::string(dtype_name(g->dtype())) + " for a tensor of " +
                std::string(dtype_name(t.dtype())));
          }
        }
        t.mutable_grad() = value_or_undefined(g);
      });
  cls.def_property_readonly("grad_fn", &Tensor::grad_fn);
  cls.def_property_readonly("is_leaf", &Tensor::is_leaf);
  cls.def("detach", &Tensor::detach);
  // Reading shares storage without the graph; assigning points this tensor
  // at another's data, dtype and shape, keeping its autograd slot (torch's
  // `t.data = src`, how Module.to converts parameters in place).
  cls.def_property(
      "data", &Tensor::detach, [](const Tensor& t, const Tensor& src) {
        t.impl()->set_data(*src.impl());
      });
  cls.def("retain_grad", &Tensor::retain_grad);
  cls.def_property_readonly("retains_grad", &Tensor::retains_grad);
  cls.def(
      "backward",
      [](const Tensor& t,
         std::optional<Tensor> gradient,
         std::optional<bool> retain_graph,
         bool create_graph) {
        t.backward(value_or_undefined(gradient), retain_graph, create_graph);
      },
      py::arg("gradient") = py::none(),
      py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false,
      ReleaseGil());
  py::class_<autograd::Node, std::shared_ptr<autograd::Node>>(m, "Node")
      .def("name", &python_node_name)
      .def(
          "__repr__",
          [](const autograd::Node& n) {
            std::string text = "<";
            return text.append(python_node_name(n)).append(">");
          })
      .def_property_readonly("next_functions", [](const autograd::Node& n) {
        py::list out;
        for (const auto& e : n.next_functions()) {
          out.append(py::make_tuple(
              e.node ? py::cast(e.node) : py::none(), e.input_nr));
        }
        return py::tuple(out);
      });
  m.def(
      "autograd_grad",
      [](const std::vector<Tensor>& outputs,
         const std::vector<Tensor>& inputs,
         std::optional<std::vector<Tensor>> grad_outputs,
         std::optional<bool> retain_graph,
         bool create_graph,
         bool allow_unused) {
        std::vector<Tensor> r;
        {
          py::gil_scoped_release gil;
          r = autograd::grad(
              outputs,
              inputs,
              grad_outputs.value_or(std::vector<Tensor>{}),
              retain_graph,
              create_graph,
              allow_unused);
        }
        py::list out;
        for (const Tensor& g : r) {
          out.append(tensor_or_none(g));
        }
        return py::tuple(out);
      },
      py::arg("outputs"),
      py::arg("inputs"),
      py::arg("grad_outputs") = py::none(),
      py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false,
      py::arg("allow_unused") = false);

  // ---- dtype conversions: to's three forms are declared
  // (ops/factories/copies.ops.toml).
  auto as = [&](const char* name, Dtype d) {
    cls.def(
        name, [d](const Tensor& t) { return t.to(d); }, ReleaseGil());
  };
  as("float", kFloat32);
  as("double", kFloat64);
  as("long", kInt64);
  as("int", kInt32);
  as("bool", kBool);
  as("byte", kUInt8);
  as("char", kInt8);
  as("short", kInt16);
  as("half", kFloat16);
  as("bfloat16", kBFloat16);
  cls.def(
      "type",
      [](const Tensor& t, Dtype d) { return t.to(d); },
      py::arg("dtype"),
      ReleaseGil());
  cls.def("cpu", &Tensor::cpu, ReleaseGil());
  cls.def(
      "vulkan",
      [](const Tensor& t, int index) {
        return t.to(Device(kVulkan, int16_t(index)));
      },
      py::arg("device") = 0,
      ReleaseGil());
  m.def("is_vulkan_available", &is_vulkan_available);
  m.def("_vulkan_device_count", &vulkan_device_count);
  m.def("_vulkan_device_name", [](int index) {
    return vulkan_device_info(index).name;
  });
  init_factories(m);
}

} // namespace ditto::python
