// The elementwise, reduction, shape and matrix-product records as
// ditto.<op> functions, Tensor.<op> methods and in-place Tensor.<op>_
// forms, with torch's argument names; and Python's operators.

#include "python/src/common.h"

namespace ditto::python {
namespace {

constexpr auto kSelf = py::return_value_policy::reference;

// Binds f as ditto.<name>(input, ...) and as Tensor.<name>(...). input may
// not be None: f may be a member function, which pybind11 binds with a
// pointer for self (None would be a null this).
template <typename F, typename... Extra>
void def_both(
    py::module_& m,
    py::class_<Tensor>& cls,
    const char* name,
    F f,
    const Extra&... extra) {
  m.def(name, f, py::arg("input").none(false), extra..., ReleaseGil());
  cls.def(name, f, extra..., ReleaseGil());
}

// A (values, indices) pair as torch's named tuple (torch.return_types).
py::object values_indices(const char* name, std::pair<Tensor, Tensor> r) {
  py::object types = py::module_::import("ditto.return_types");
  return types.attr(name)(std::move(r.first), std::move(r.second));
}

// The declared ops (ditto/ops/*.ops.toml): init_declared, generated.
#include "python/declared_bindings.inc"

void init_elementwise(py::module_& m, py::class_<Tensor>& cls) {
  init_declared(m, cls);
  def_both(m, cls, "erfinv", &erfinv);

  // Binary ops: a tensor or a number on the right; add and sub take
  // torch's alpha.
  using BinT = Tensor (*)(const Tensor&, const Tensor&);
  using BinS = Tensor (*)(const Tensor&, const Scalar&);
  auto binary = [&](const char* name, BinT ft, BinS fs) {
    def_both(m, cls, name, ft, py::arg("other"));
    def_both(m, cls, name, fs, py::arg("other"));
  };
  for (const char* name : {"add", "sub"}) {
    bool is_add = name[0] == 'a';
    def_both(
        m,
        cls,
        name,
        [is_add](const Tensor& a, const Tensor& b, const Scalar& alpha) {
          bool one = !alpha.is_floating() && alpha.to<int64_t>() == 1;
          if (one) {
            return is_add ? add(a, b) : sub(a, b);
          }
          return is_add ? add(a, b, alpha) : sub(a, b, alpha);
        },
        py::arg("other"),
        py::kw_only(),
        py::arg("alpha") = 1);
    def_both(
        m,
        cls,
        name,
        [is_add](const Tensor& a, const Scalar& b, const Scalar& alpha) {
          // Integers multiply wrapping, as int64 tensor arithmetic does
          // (a product past 2^63 was undefined: UBSan, the binding fuzzer).
          Scalar v = alpha.is_floating() || b.is_floating()
              ? Scalar(b.to<double>() * alpha.to<double>())
              : Scalar(int64_t(
                    uint64_t(b.to<int64_t>()) * uint64_t(alpha.to<int64_t>())));
          return is_add ? add(a, v) : sub(a, v);
        },
        py::arg("other"),
        py::kw_only(),
        py::arg("alpha") = 1);
  }
  m.attr("subtract") = m.attr("sub");
  binary("mul", &mul, &mul);
  binary("div", &div, &div);
  binary("pow", &pow, &pow);
  m.attr("multiply") = m.attr("mul");
  m.attr("divide") = m.attr("div");
  m.attr("true_divide") = m.attr("div");
  m.def(
      "pow",
      [](const Scalar& base, const Tensor& exponent) {
        return pow(scalar_tensor(base, result_type(exponent, base)), exponent);
      },
      py::arg("self"),
      py::arg("exponent"),
      ReleaseGil());

  // In-place binary forms.
  for (const char* name : {"add_", "sub_"}) {
    bool is_add = name[0] == 'a';
    cls.def(
        name,
        [is_add](Tensor& a, const Tensor& b, const Scalar& alpha) -> Tensor& {
          return is_add ? a.add_(b, alpha) : a.sub_(b, alpha);
        },
        py::arg("other"),
        py::kw_only(),
        py::arg("alpha") = 1,
        kSelf,
        ReleaseGil());
    cls.def(
        name,
        [is_add](Tensor& a, const Scalar& b, const Scalar& alpha) -> Tensor& {
          // Integers multiply wrapping, as int64 tensor arithmetic does
          // (a product past 2^63 was undefined: UBSan, the binding fuzzer).
          Scalar v = alpha.is_floating() || b.is_floating()
              ? Scalar(b.to<double>() * alpha.to<double>())
              : Scalar(int64_t(
                    uint64_t(b.to<int64_t>()) * uint64_t(alpha.to<int64_t>())));
          return is_add ? a.add_(v) : a.sub_(v);
        },
        py::arg("other"),
        py::kw_only(),
        py::arg("alpha") = 1,
        kSelf,
        ReleaseGil());
  }
  cls.def(
      "mul_",
      py::overload_cast<const Tensor&>(&Tensor::mul_),
      py::arg("other"),
      kSelf,
      ReleaseGil());
  cls.def(
      "mul_",
      py::overload_cast<const Scalar&>(&Tensor::mul_),
      py::arg("other"),
      kSelf,
      ReleaseGil());
  cls.def(
      "div_",
      py::overload_cast<const Tensor&>(&Tensor::div_),
      py::arg("other"),
      kSelf,
      ReleaseGil());
  cls.def(
      "div_",
      py::overload_cast<const Scalar&>(&Tensor::div_),
      py::arg("other"),
      kSelf,
      ReleaseGil());
  cls.def("pow_", &Tensor::pow_, py::arg("exponent"), kSelf, ReleaseGil());

  using OptS = std::optional<Scalar>;
  def_both(
      m,
      cls,
      "clamp",
      [](const Tensor& a, const OptS& lo, const OptS& hi) {
        return clamp(a, lo, hi);
      },
      py::arg("min") = py::none(),
      py::arg("max") = py::none());
  m.attr("clip") = m.attr("clamp");
  cls.def(
      "clamp_",
      [](Tensor& a, const OptS& lo, const OptS& hi) -> Tensor& {
        return a.clamp_(lo, hi);
      },
      py::arg("min") = py::none(),
      py::arg("max") = py::none(),
      kSelf,
      ReleaseGil());
  m.def(
      "where",
      py::overload_cast<const Tensor&, const Tensor&, const Tensor&>(&where),
      py::arg("condition"),
      py::arg("input"),
      py::arg("other"),
      ReleaseGil());
  m.def(
      "where",
      py::overload_cast<const Tensor&, const Tensor&, const Scalar&>(&where),
      py::arg("condition"),
      py::arg("input"),
      py::arg("other"),
      ReleaseGil());
  m.def(
      "where",
      py::overload_cast<const Tensor&, const Scalar&, const Tensor&>(&where),
      py::arg("condition"),
      py::arg("input"),
      py::arg("other"),
      ReleaseGil());
  cls.def(
      "where",
      [](const Tensor& self, const Tensor& cond, const Tensor& other) {
        return where(cond, self, other);
      },
      py::arg("condition"),
      py::arg("other"),
      ReleaseGil());
  m.def(
      "result_type",
      py::overload_cast<const Tensor&, const Tensor&>(&result_type),
      py::arg("tensor1"),
      py::arg("tensor2"));
}

void init_operators(py::class_<Tensor>& cls) {
  using BinT = Tensor (*)(const Tensor&, const Tensor&);
  using BinS = Tensor (*)(const Tensor&, const Scalar&);
  auto op = [&](const char* name, BinT ft, BinS fs) {
    cls.def(name, ft, py::is_operator(), ReleaseGil());
    cls.def(name, fs, py::is_operator(), ReleaseGil());
  };
  op("__add__", &add, &add);
  op("__sub__", &sub, &sub);
  op("__mul__", &mul, &mul);
  op("__truediv__", &div, &div);
  op("__pow__", &pow, &pow);
  op("__eq__", &eq, &eq);
  op("__ne__", &ne, &ne);
  op("__lt__", &lt, &lt);
  op("__le__", &le, &le);
  op("__gt__", &gt, &gt);
  op("__ge__", &ge, &ge);
  cls.def("__matmul__", &matmul, py::is_operator(), ReleaseGil());
  // Reflected: number (op) tensor.
  cls.def(
      "__radd__",
      [](const Tensor& t, const Scalar& s) { return s + t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rsub__",
      [](const Tensor& t, const Scalar& s) { return s - t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rmul__",
      [](const Tensor& t, const Scalar& s) { return s * t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rtruediv__",
      [](const Tensor& t, const Scalar& s) { return s / t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rpow__",
      [](const Tensor& t, const Scalar& s) {
        return pow(scalar_tensor(s, result_type(t, s)), t);
      },
      py::is_operator(),
      ReleaseGil());
  cls.def("__neg__", py::overload_cast<const Tensor&>(&neg), ReleaseGil());
  cls.def("__pos__", [](const Tensor& t) { return t; });
  cls.def("__abs__", py::overload_cast<const Tensor&>(&abs), ReleaseGil());
  // In place: a += b writes a (and returns the same object).
  cls.def(
      "__iadd__",
      py::overload_cast<const Tensor&>(&Tensor::add_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__iadd__",
      py::overload_cast<const Scalar&>(&Tensor::add_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__isub__",
      py::overload_cast<const Tensor&>(&Tensor::sub_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__isub__",
      py::overload_cast<const Scalar&>(&Tensor::sub_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__imul__",
      py::overload_cast<const Tensor&>(&Tensor::mul_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__imul__",
      py::overload_cast<const Scalar&>(&Tensor::mul_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__itruediv__",
      py::overload_cast<const Tensor&>(&Tensor::div_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def(
      "__itruediv__",
      py::overload_cast<const Scalar&>(&Tensor::div_),
      py::is_operator(),
      kSelf,
      ReleaseGil());
  cls.def("__ipow__", &Tensor::pow_, py::is_operator(), kSelf, ReleaseGil());
  // __eq__ is elementwise, so tensors hash by identity (as torch's).
  cls.attr("__hash__") =
      py::module_::import("builtins").attr("object").attr("__hash__");
}

void init_reductions(py::module_& m, py::class_<Tensor>& cls) {
  using Dims = std::optional<IntList>;
  using OptD = std::optional<Dtype>;
  def_both(
      m,
      cls,
      "sum",
      [](const Tensor& a, const Dims& dim, bool keepdim, const OptD& dtype) {
        Tensor x = dtype ? a.to(*dtype) : a;
        return dim ? sum(x, *dim, keepdim) : sum(x);
      },
      py::arg("dim") = py::none(),
      py::arg("keepdim") = false,
      py::kw_only(),
      py::arg("dtype") = py::none());
  def_both(
      m,
      cls,
      "mean",
      [](const Tensor& a, const Dims& dim, bool keepdim, const OptD& dtype) {
        Tensor x = dtype ? a.to(*dtype) : a;
        return dim ? mean(x, *dim, keepdim) : mean(x);
      },
      py::arg("dim") = py::none(),
      py::arg("keepdim") = false,
      py::kw_only(),
      py::arg("dtype") = py::none());
  def_both(
      m,
      cls,
      "prod",
      [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
        return dim ? prod(a, *dim, keepdim) : prod(a);
      },
      py::arg("dim") = py::none(),
      py::arg("keepdim") = false);
  def_both(m, cls, "sum_to_size", [](const Tensor& a, py::args size) {
    Shape s;
    {
      py::gil_scoped_acquire gil;
      s = shape_from_args(size, "sum_to_size");
    }
    return sum_to_size(a, s);
  });
  for (const char* name : {"max", "min"}) {
    bool is_max = name[1] == 'a';
    def_both(m, cls, name, [is_max](const Tensor& a) {
      return is_max ? max(a) : min(a);
    });
    auto by_dim = [is_max, name](const Tensor& a, int64_t dim, bool keepdim) {
      std::pair<Tensor, Tensor> r;
      {
        py::gil_scoped_release gil;
        r = is_max ? max(a, dim, keepdim) : min(a, dim, keepdim);
      }
      return values_indices(name, std::move(r));
    };
    m.def(
        name,
        by_dim,
        py::arg("input"),
        py::arg("dim"),
        py::arg("keepdim") = false);
    cls.def(name, by_dim, py::arg("dim"), py::arg("keepdim") = false);
    // torch.max(a, b) is maximum.
    def_both(
        m,
        cls,
        name,
        static_cast<Tensor (*)(const Tensor&, const Tensor&)>(
            is_max ? &maximum : &minimum),
        py::arg("other"));
  }
  def_both(
      m,
      cls,
      "norm",
      [](const Tensor& a, const Scalar& p, const Dims& dim, bool keepdim) {
        return dim ? norm(a, p, *dim, keepdim) : norm(a, p);
      },
      py::arg("p") = 2,
      py::arg("dim") = py::none(),
      py::arg("keepdim") = false);
}

void init_shape_and_linalg(py::module_& m, py::class_<Tensor>& cls) {
  m.def("cat", &cat, py::arg("tensors"), py::arg("dim") = 0, ReleaseGil());
  m.attr("concat") = m.attr("cat");
  m.def("stack", &stack, py::arg("tensors"), py::arg("dim") = 0, ReleaseGil());
  // flip(dims) as ints, a list, or the keyword dims= (torch's schema).
  def_both(m, cls, "flip", [](const Tensor& a, py::args dims, py::kwargs kw) {
    IntList d;
    {
      py::gil_scoped_acquire gil;
      if (kw.empty()) {
        d = shape_from_args(dims, "flip");
      } else {
        DITTO_CHECK(
            dims.empty() && kw.size() == 1 && kw.contains("dims"),
            TypeError,
            "flip",
            "flip() takes dims, as ints, a list or dims=");
        d = shape_from_args(
            py::reinterpret_steal<py::args>(
                py::make_tuple(kw["dims"]).release()),
            "flip");
      }
    }
    return flip(a, d);
  });
  m.def(
      "pad",
      [](const Tensor& a,
         const IntList& pad_,
         const std::string& mode,
         std::optional<double> value) {
        return pad(a, pad_, mode, value.value_or(0.0));
      },
      py::arg("input"),
      py::arg("pad"),
      py::arg("mode") = "constant",
      py::arg("value") = py::none(),
      ReleaseGil());
  // The order statistics (selection.h), as torch's functions and methods.
  auto kth = [](const Tensor& a, int64_t k, int64_t d, bool keep) {
    std::pair<Tensor, Tensor> r;
    {
      py::gil_scoped_release gil;
      r = kthvalue(a, k, d, keep);
    }
    return values_indices("kthvalue", std::move(r));
  };
  auto mode_fn = [](const Tensor& a, int64_t d, bool keep) {
    std::pair<Tensor, Tensor> r;
    {
      py::gil_scoped_release gil;
      r = mode(a, d, keep);
    }
    return values_indices("mode", std::move(r));
  };
  auto topk_fn =
      [](const Tensor& a, int64_t k, int64_t d, bool largest, bool sorted) {
        std::pair<Tensor, Tensor> r;
        {
          py::gil_scoped_release gil;
          r = topk(a, k, d, largest, sorted);
        }
        return values_indices("topk", std::move(r));
      };
  for (bool method : {false, true}) {
    auto def = [&](const char* name, auto f, auto... args) {
      if (method) {
        cls.def(name, f, args...);
      } else {
        m.def(name, f, py::arg("input"), args...);
      }
    };
    def("kthvalue",
        kth,
        py::arg("k"),
        py::arg("dim") = -1,
        py::arg("keepdim") = false);
    def("mode", mode_fn, py::arg("dim") = -1, py::arg("keepdim") = false);
    def("topk",
        topk_fn,
        py::arg("k"),
        py::arg("dim") = -1,
        py::arg("largest") = true,
        py::arg("sorted") = true);
    for (bool nan : {false, true}) {
      // median(input) is the value; median(input, dim) the named tuple.
      auto median_fn = [nan](
                           const Tensor& a,
                           std::optional<int64_t> dim,
                           bool keep) -> py::object {
        if (!dim) {
          Tensor v;
          {
            py::gil_scoped_release gil;
            v = nan ? nanmedian(a) : median(a);
          }
          return py::cast(v);
        }
        std::pair<Tensor, Tensor> r;
        {
          py::gil_scoped_release gil;
          r = nan ? nanmedian(a, *dim, keep) : median(a, *dim, keep);
        }
        return values_indices(nan ? "nanmedian" : "median", std::move(r));
      };
      def(nan ? "nanmedian" : "median",
          median_fn,
          py::arg("dim") = py::none(),
          py::arg("keepdim") = false);
    }
  }
  // The scans (scan.h), as torch's functions and methods.
  for (bool prod : {false, true}) {
    const char* name = prod ? "cumprod" : "cumsum";
    def_both(
        m,
        cls,
        name,
        [prod](
            const Tensor& a, int64_t dim, const std::optional<Dtype>& dtype) {
          return prod ? cumprod(a, dim, dtype) : cumsum(a, dim, dtype);
        },
        py::arg("dim"),
        py::kw_only(),
        py::arg("dtype") = py::none());
    cls.def(
        prod ? "cumprod_" : "cumsum_",
        [prod](Tensor& a, int64_t dim, const std::optional<Dtype>& dtype)
            -> Tensor& {
          if (dtype) {
            // torch: the in-place form keeps self's dtype.
            DITTO_CHECK(
                *dtype == a.dtype(),
                TypeError,
                prod ? "cumprod_" : "cumsum_",
                "dtype ",
                dtype_name(*dtype),
                " differs from the tensor's ",
                dtype_name(a.dtype()));
          }
          return prod ? a.cumprod_(dim) : a.cumsum_(dim);
        },
        py::arg("dim"),
        py::kw_only(),
        py::arg("dtype") = py::none(),
        kSelf,
        ReleaseGil());
  }
  // quantile / nanquantile(input, q, dim=None, keepdim=False, *,
  // interpolation='linear'), q a number or a tensor; lerp(input, end,
  // weight), weight a tensor or a number. They read Python objects, so the
  // GIL is released inside, once the arguments are C++ values.
  for (bool nan : {false, true}) {
    auto f = [nan](
                 const Tensor& a,
                 const py::object& q,
                 std::optional<int64_t> dim,
                 bool keepdim,
                 const std::string& mode) {
      const bool is_tensor = py::isinstance<Tensor>(q);
      const Tensor qt = is_tensor ? q.cast<Tensor>() : Tensor();
      const double qd = is_tensor ? 0.0 : q.cast<double>();
      py::gil_scoped_release gil;
      if (is_tensor) {
        return nan ? nanquantile(a, qt, dim, keepdim, mode)
                   : quantile(a, qt, dim, keepdim, mode);
      }
      return nan ? nanquantile(a, qd, dim, keepdim, mode)
                 : quantile(a, qd, dim, keepdim, mode);
    };
    const char* name = nan ? "nanquantile" : "quantile";
    m.def(
        name,
        f,
        py::arg("input"),
        py::arg("q"),
        py::arg("dim") = py::none(),
        py::arg("keepdim") = false,
        py::kw_only(),
        py::arg("interpolation") = "linear");
    cls.def(
        name,
        f,
        py::arg("q"),
        py::arg("dim") = py::none(),
        py::arg("keepdim") = false,
        py::kw_only(),
        py::arg("interpolation") = "linear");
  }
  // repeat_interleave(input, repeats, dim=None, *, output_size=None), and
  // repeat_interleave(repeats) giving the repeated indices.
  using OptI = std::optional<int64_t>;
  auto repeat_fn = [](const Tensor& a,
                      const py::object& repeats,
                      OptI dim,
                      OptI output_size) {
    if (py::isinstance<Tensor>(repeats)) {
      const Tensor r = repeats.cast<Tensor>();
      py::gil_scoped_release gil;
      return repeat_interleave(a, r, dim, output_size);
    }
    const int64_t r = repeats.cast<int64_t>();
    py::gil_scoped_release gil;
    return repeat_interleave(a, r, dim, output_size);
  };
  m.def(
      "repeat_interleave",
      [repeat_fn](
          const Tensor& a,
          const py::object& repeats,
          OptI dim,
          OptI output_size) -> Tensor {
        if (repeats.is_none()) {
          py::gil_scoped_release gil;
          return repeat_interleave(a, output_size);
        }
        return repeat_fn(a, repeats, dim, output_size);
      },
      py::arg("input"),
      py::arg("repeats") = py::none(),
      py::arg("dim") = py::none(),
      py::kw_only(),
      py::arg("output_size") = py::none());
  cls.def(
      "repeat_interleave",
      repeat_fn,
      py::arg("repeats"),
      py::arg("dim") = py::none(),
      py::kw_only(),
      py::arg("output_size") = py::none());
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
        return linear(x, w, value_or_undefined(b));
      },
      py::arg("input"),
      py::arg("weight"),
      py::arg("bias") = py::none(),
      ReleaseGil());

  py::module_ la = m.def_submodule("_linalg", "ditto::linalg");
  la.def(
      "qr",
      [](const Tensor& a) {
        std::pair<Tensor, Tensor> r;
        {
          py::gil_scoped_release gil;
          r = linalg::qr(a);
        }
        return py::module_::import("ditto.return_types")
            .attr("qr")(r.first, r.second);
      },
      py::arg("A"));
  la.def(
      "svd",
      [](const Tensor& a) {
        linalg::SVD r;
        {
          py::gil_scoped_release gil;
          r = linalg::svd(a);
        }
        return py::make_tuple(r.U, r.S, r.V);
      },
      py::arg("A"));
  la.def(
      "svd_lowrank",
      [](const Tensor& a,
         int64_t q,
         int64_t niter,
         const std::optional<Generator>& gen) {
        linalg::SVD r;
        {
          py::gil_scoped_release gil;
          r = linalg::svd_lowrank(a, q, niter, gen);
        }
        return py::make_tuple(r.U, r.S, r.V);
      },
      py::arg("A"),
      py::arg("q") = 6,
      py::arg("niter") = 2,
      py::kw_only(),
      py::arg("generator") = py::none());
}

} // namespace

void init_ops(py::module_& m, py::class_<Tensor>& cls) {
  init_elementwise(m, cls);
  init_operators(cls);
  init_reductions(m, cls);
  init_shape_and_linalg(m, cls);
}

} // namespace ditto::python
