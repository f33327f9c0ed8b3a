// The NN-family records (activation, conv, pooling, normalization, loss,
// interpolation, rnn) as ditto._C._nn functions with
// torch.nn.functional's argument names; python/ditto/nn/functional.py
// exports them, and the ones torch has at top level too (ditto.conv2d).

#include "python/src/common.h"

namespace ditto::python {
namespace {

namespace F = nn::functional;

void init_pooling_and_norm(py::module_& nn) {
  // The max poolings' gradients in ditto's form (indices and the input's
  // sizes; ATen's max_pool2d/3d_with_indices_backward are declared).
  for (const auto& [name, fn] :
       {std::pair{"max_pool2d_backward", &F::max_pool2d_backward},
        std::pair{"max_pool3d_backward", &F::max_pool3d_backward}}) {
    nn.def(
        name,
        fn,
        py::arg("grad_output"),
        py::arg("indices"),
        py::arg("input_size"),
        ReleaseGil());
  }
  // batch_norm, instance_norm, layer_norm and group_norm: their ATen forms
  // are declared (composite/normalization.ops.toml);
  // python/ditto/nn/functional.py is torch's Python over them.
  nn.def(
      "normalize",
      [](const Tensor& x, double p, int64_t dim, double eps) {
        if (p != 2.0) {
          throw ValueError("[normalize] ditto implements p=2 only");
        }
        return F::normalize(x, dim, eps);
      },
      py::arg("input"),
      py::arg("p") = 2.0,
      py::arg("dim") = 1,
      py::arg("eps") = 1e-12,
      ReleaseGil());
}

// The poolings' ATen forms, their gradients' included, are declared
// (composite/pooling.ops.toml); python/ditto/nn/functional.py is torch's
// Python over them.

// The losses' ATen forms are declared (composite/loss.ops.toml: nll_loss
// ... ctc_loss, cross_entropy_loss); python/ditto/nn/functional.py is
// torch's Python over them.

void init_other(py::module_& nn) {
  nn.def(
      "upsample2d",
      [](const Tensor& x,
         int64_t out_h,
         int64_t out_w,
         const std::string& mode,
         bool align_corners) {
        return F::upsample2d(
            x,
            out_h,
            out_w,
            F::interpolate_mode_from_name(mode, "upsample2d"),
            align_corners);
      },
      py::arg("input"),
      py::arg("out_h"),
      py::arg("out_w"),
      py::arg("mode") = "nearest",
      py::arg("align_corners") = false,
      ReleaseGil());
  nn.def(
      "upsample",
      [](const Tensor& x,
         const IntList& output_size,
         const std::string& mode,
         bool align_corners,
         const std::vector<std::optional<double>>& scales,
         bool antialias) {
        return F::upsample(
            x,
            output_size,
            F::interpolate_mode_from_name(mode, "upsample"),
            align_corners,
            scales,
            antialias);
      },
      py::arg("input"),
      py::arg("output_size"),
      py::arg("mode") = "nearest",
      py::arg("align_corners") = false,
      py::arg("scales") = std::vector<std::optional<double>>{},
      py::arg("antialias") = false,
      ReleaseGil());
  nn.def(
      "interpolate",
      [](const Tensor& x,
         const std::optional<IntList>& size,
         const py::object& scale_factor,
         const std::string& mode,
         std::optional<bool> align_corners,
         std::optional<bool> recompute_scale_factor,
         bool antialias) {
        F::InterpolateOptions o;
        o.mode(F::interpolate_mode_from_name(mode, "interpolate"));
        if (size) {
          o.size(*size);
        }
        // One number for every dim, or a sequence (torch's forms).
        if (py::isinstance<py::float_>(scale_factor) ||
            py::isinstance<py::int_>(scale_factor)) {
          o.scale_factor({scale_factor.cast<double>()});
        } else if (!scale_factor.is_none()) {
          o.scale_factor(scale_factor.cast<std::vector<double>>());
        }
        o.align_corners(align_corners);
        o.recompute_scale_factor(recompute_scale_factor.value_or(false));
        o.antialias(antialias);
        py::gil_scoped_release gil; // scale_factor read above, with it
        return F::interpolate(x, o);
      },
      py::arg("input"),
      py::arg("size") = py::none(),
      py::arg("scale_factor") = py::none(),
      py::arg("mode") = "nearest",
      py::arg("align_corners") = py::none(),
      py::arg("recompute_scale_factor") = py::none(),
      py::arg("antialias") = false);
  // grid_sample and affine_grid: their ATen forms are declared
  // (composite/vision.ops.toml); python/ditto/nn/functional.py is torch's
  // Python over them.
  nn.def(
      "lstm_cell_gates",
      [](const Tensor& gates, const Tensor& c) {
        std::pair<Tensor, Tensor> r;
        {
          py::gil_scoped_release gil;
          r = F::lstm_cell_gates(gates, c);
        }
        return py::make_tuple(r.first, r.second);
      },
      py::arg("gates"),
      py::arg("c"));
  nn.def(
      "gru_cell_gates",
      &F::gru_cell_gates,
      py::arg("gi"),
      py::arg("gh"),
      py::arg("h"),
      ReleaseGil());
  nn.def(
      "split_rows",
      &F::split_rows,
      py::arg("input"),
      py::arg("rows"),
      ReleaseGil());
}

} // namespace

void init_nn_functional(py::module_& m, py::class_<Tensor>&) {
  py::module_ nn = m.def_submodule("_nn", "ditto::nn::functional");
  init_pooling_and_norm(nn);
  init_other(nn);
  for (const char* name : {"relu", "sigmoid", "tanh", "linear", "pad"}) {
    nn.attr(name) = m.attr(name);
  }
}

} // namespace ditto::python
