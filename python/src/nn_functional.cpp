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
  // normalize: LibTorch's F::normalize with its options (python/ditto/nn/
  // functional.py adds torch's out=).
  nn.def(
      "normalize",
      [](const Tensor& x, double p, int64_t dim, double eps) {
        return F::normalize(
            x, F::NormalizeFuncOptions().p(p).dim(dim).eps(eps));
      },
      py::arg("input"),
      py::arg("p"),
      py::arg("dim"),
      py::arg("eps"),
      ReleaseGil());
}

// The poolings' ATen forms, their gradients' included, are declared
// (composite/pooling.ops.toml); python/ditto/nn/functional.py is torch's
// Python over them.

// The losses' ATen forms are declared (composite/loss.ops.toml: nll_loss
// ... ctc_loss, cross_entropy_loss); python/ditto/nn/functional.py is
// torch's Python over them.

// interpolate's ATen forms (upsample_nearest1d ... _upsample_bicubic2d_aa)
// are declared (composite/interpolation.ops.toml);
// python/ditto/nn/functional.py's interpolate is torch's Python over them.
// grid_sample and affine_grid: their ATen forms are declared
// (composite/vision.ops.toml); python/ditto/nn/functional.py is torch's
// Python over them. The recurrent steps (lstm_cell_gates, gru_cell_gates,
// split_rows) are declared in ditto::nn::functional (composite/rnn.ops.toml)
// and bound in this module.

} // namespace

void init_nn_functional(py::module_& m, py::class_<Tensor>&) {
  py::module_ nn = submodule(m, "_nn"); // ditto::nn::functional
  init_pooling_and_norm(nn);
  for (const char* name : {"relu", "sigmoid", "tanh", "linear", "pad"}) {
    nn.attr(name) = m.attr(name);
  }
}

} // namespace ditto::python
