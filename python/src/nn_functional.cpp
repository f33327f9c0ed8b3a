// ditto._C._nn: the NN-family ops that torch.nn.functional has and torch's
// top level does not (python/ditto/nn/functional.py exports them). Every
// one is declared and bound by the generator (ditto/ops/*/*.ops.toml):
// - the ATen forms (poolings and their gradients, normalizations, losses,
//   interpolate's upsample_*, grid_sample, affine_grid) are functions of
//   namespace ditto, bound in ditto._C, and python/ditto/nn/functional.py
//   is torch's Python over them;
// - ditto::nn::functional's own (normalize, max_unpool1d, the max poolings'
//   gradients in ditto's form, the recurrent steps lstm_cell_gates,
//   gru_cell_gates and split_rows) are declared with namespace =
//   "nn::functional" and bound in this module.
// What is left here: the module's aliases of ditto's top-level functions.

#include "python/src/common.h"

namespace ditto::python {

void init_nn_functional(py::module_& m, py::class_<Tensor>&) {
  py::module_ nn = submodule(m, "_nn"); // ditto::nn::functional
  for (const char* name : {"relu", "sigmoid", "tanh", "linear", "pad"}) {
    nn.attr(name) = m.attr(name);
  }
}

} // namespace ditto::python
