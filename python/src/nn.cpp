// What ditto.nn's Python modules stand on: nn::init (PyTorch's
// initializers, drawing PyTorch's bits), the recurrent layers and cells
// (ditto.nn.RNN, LSTM, GRU and their cells wrap these C++ modules and
// share their parameters), Tensor's constructor (so that
// ditto.nn.Parameter can subclass Tensor) and the deferred initial draws.

#include "ditto/core/deferred.h"
#include "python/src/common.h"

namespace ditto::python {
namespace {

namespace init = nn::init;
using OptGen = std::optional<Generator>;

init::Nonlinearity nonlinearity_of(const std::string& s) {
  using NL = init::Nonlinearity;
  static const std::pair<const char*, NL> kNames[] = {
      {"linear", NL::Linear},
      {"conv1d", NL::Conv1d},
      {"conv2d", NL::Conv2d},
      {"conv3d", NL::Conv3d},
      {"conv_transpose1d", NL::ConvTranspose1d},
      {"conv_transpose2d", NL::ConvTranspose2d},
      {"conv_transpose3d", NL::ConvTranspose3d},
      {"sigmoid", NL::Sigmoid},
      {"tanh", NL::Tanh},
      {"relu", NL::ReLU},
      {"leaky_relu", NL::LeakyReLU},
      {"selu", NL::SELU}};
  for (const auto& [name, nl] : kNames) {
    if (s == name) {
      return nl;
    }
  }
  throw ValueError("Unsupported nonlinearity " + s);
}

init::FanMode mode_of(const std::string& s) {
  if (s == "fan_in") {
    return init::FanMode::FanIn;
  }
  if (s == "fan_out") {
    return init::FanMode::FanOut;
  }
  throw ValueError(
      "Mode " + s + " not supported, please use one of fan_in, fan_out");
}

// Fills obj's tensor in place and returns the same Python object
// (torch.nn.init returns its argument).
template <typename Fill>
py::object fill_in_place(py::object obj, Fill&& f) {
  Tensor t = obj.cast<Tensor>();
  {
    py::gil_scoped_release gil;
    f(t);
  }
  return obj;
}

void init_init(py::module_& m) {
  py::module_ i = m.def_submodule("_init", "ditto::nn::init");
  i.def(
      "calculate_gain",
      [](const std::string& nl, std::optional<double> param) {
        return init::calculate_gain(nonlinearity_of(nl), param);
      },
      py::arg("nonlinearity"),
      py::arg("param") = py::none());
  i.def(
      "_calculate_fan_in_and_fan_out",
      &init::calculate_fan_in_and_fan_out,
      py::arg("tensor"));
  i.def(
      "uniform_",
      [](py::object t, double a, double b, const OptGen& g) {
        return fill_in_place(
            t, [&](const Tensor& x) { init::uniform_(x, a, b, g); });
      },
      py::arg("tensor"),
      py::arg("a") = 0.0,
      py::arg("b") = 1.0,
      py::arg("generator") = py::none());
  i.def(
      "normal_",
      [](py::object t, double mean, double std, const OptGen& g) {
        return fill_in_place(
            t, [&](const Tensor& x) { init::normal_(x, mean, std, g); });
      },
      py::arg("tensor"),
      py::arg("mean") = 0.0,
      py::arg("std") = 1.0,
      py::arg("generator") = py::none());
  i.def(
      "trunc_normal_",
      [](py::object t,
         double mean,
         double std,
         double a,
         double b,
         const OptGen& g) {
        return fill_in_place(t, [&](const Tensor& x) {
          init::trunc_normal_(x, mean, std, a, b, g);
        });
      },
      py::arg("tensor"),
      py::arg("mean") = 0.0,
      py::arg("std") = 1.0,
      py::arg("a") = -2.0,
      py::arg("b") = 2.0,
      py::arg("generator") = py::none());
  i.def(
      "constant_",
      [](py::object t, double v) {
        return fill_in_place(
            t, [&](const Tensor& x) { init::constant_(x, v); });
      },
      py::arg("tensor"),
      py::arg("val"));
  i.def(
      "zeros_",
      [](py::object t) {
        return fill_in_place(t, [](const Tensor& x) { init::zeros_(x); });
      },
      py::arg("tensor"));
  i.def(
      "ones_",
      [](py::object t) {
        return fill_in_place(t, [](const Tensor& x) { init::ones_(x); });
      },
      py::arg("tensor"));
  i.def(
      "eye_",
      [](py::object t) {
        return fill_in_place(t, [](const Tensor& x) { init::eye_(x); });
      },
      py::arg("tensor"));
  for (const char* name : {"kaiming_uniform_", "kaiming_normal_"}) {
    const bool uniform = name[8] == 'u';
    i.def(
        name,
        [uniform](
            py::object t,
            double a,
            const std::string& mode,
            const std::string& nl,
            const OptGen& g) {
          const init::FanMode fm = mode_of(mode);
          const init::Nonlinearity n = nonlinearity_of(nl);
          return fill_in_place(t, [&](const Tensor& x) {
            if (uniform) {
              init::kaiming_uniform_(x, a, fm, n, g);
            } else {
              init::kaiming_normal_(x, a, fm, n, g);
            }
          });
        },
        py::arg("tensor"),
        py::arg("a") = 0.0,
        py::arg("mode") = "fan_in",
        py::arg("nonlinearity") = "leaky_relu",
        py::arg("generator") = py::none());
  }
  i.def(
      "xavier_uniform_",
      [](py::object t, double gain, const OptGen& g) {
        return fill_in_place(
            t, [&](const Tensor& x) { init::xavier_uniform_(x, gain, g); });
      },
      py::arg("tensor"),
      py::arg("gain") = 1.0,
      py::arg("generator") = py::none());
  i.def(
      "xavier_normal_",
      [](py::object t, double gain, const OptGen& g) {
        return fill_in_place(
            t, [&](const Tensor& x) { init::xavier_normal_(x, gain, g); });
      },
      py::arg("tensor"),
      py::arg("gain") = 1.0,
      py::arg("generator") = py::none());
  i.def(
      "orthogonal_",
      [](py::object t, double gain, const OptGen& g) {
        return fill_in_place(
            t, [&](const Tensor& x) { init::orthogonal_(x, gain, g); });
      },
      py::arg("tensor"),
      py::arg("gain") = 1.0,
      py::arg("generator") = py::none());
}

// ---- recurrent layers and cells

using Holder = std::shared_ptr<nn::Module>;
using OptState = std::optional<std::tuple<Tensor, Tensor>>;

// The C++ constructor queues its initial draws (ditto/core/deferred.h);
// they run here, so that a Python program sees them happen in its
// constructor call, as PyTorch's do.
template <typename M, typename Options>
std::shared_ptr<M> make_now(const Options& o) {
  auto m = std::make_shared<M>(o);
  detail::run_deferred();
  return m;
}

template <typename Options>
Options rnn_options(
    int64_t input_size,
    int64_t hidden_size,
    int64_t num_layers,
    bool bias,
    bool batch_first,
    double dropout,
    bool bidirectional) {
  Options o(input_size, hidden_size);
  o.num_layers(num_layers)
      .bias(bias)
      .batch_first(batch_first)
      .dropout(dropout)
      .bidirectional(bidirectional);
  return o;
}

nn::RNNNonlinearity rnn_nonlinearity(const std::string& s) {
  if (s == "tanh") {
    return nn::RNNNonlinearity::Tanh;
  }
  if (s == "relu") {
    return nn::RNNNonlinearity::ReLU;
  }
  throw ValueError(
      "Unknown nonlinearity '" + s + "'. Select from 'tanh' or 'relu'.");
}

void init_recurrent(py::module_& m) {
  py::module_ r = m.def_submodule("_rnn", "ditto::nn's recurrent modules");
  py::class_<nn::Module, Holder>(r, "Module")
      .def(
          "named_parameters",
          [](const nn::Module& mod) { return mod.named_parameters(); })
      .def("train", &nn::Module::train, py::arg("mode") = true)
      .def("extra_repr", &nn::Module::extra_repr);

  py::class_<nn::RNNImpl, nn::Module, std::shared_ptr<nn::RNNImpl>>(r, "RNN")
      .def(py::init([](int64_t in,
                       int64_t hidden,
                       int64_t layers,
                       const std::string& nl,
                       bool bias,
                       bool batch_first,
                       double dropout,
                       bool bidirectional) {
        auto o = rnn_options<nn::RNNOptions>(
            in, hidden, layers, bias, batch_first, dropout, bidirectional);
        o.nonlinearity(rnn_nonlinearity(nl));
        return make_now<nn::RNNImpl>(o);
      }))
      .def(
          "forward",
          [](const nn::RNNImpl& mod,
             const Tensor& x,
             const std::optional<Tensor>& h) {
            return mod.forward(x, value_or_undefined(h));
          },
          ReleaseGil());
  py::class_<nn::LSTMImpl, nn::Module, std::shared_ptr<nn::LSTMImpl>>(r, "LSTM")
      .def(py::init([](int64_t in,
                       int64_t hidden,
                       int64_t layers,
                       bool bias,
                       bool batch_first,
                       double dropout,
                       bool bidirectional,
                       int64_t proj_size) {
        auto o = rnn_options<nn::LSTMOptions>(
            in, hidden, layers, bias, batch_first, dropout, bidirectional);
        o.proj_size(proj_size);
        return make_now<nn::LSTMImpl>(o);
      }))
      .def(
          "forward",
          [](const nn::LSTMImpl& mod, const Tensor& x, const OptState& hx) {
            return mod.forward(x, hx);
          },
          ReleaseGil());
  py::class_<nn::GRUImpl, nn::Module, std::shared_ptr<nn::GRUImpl>>(r, "GRU")
      .def(py::init([](int64_t in,
                       int64_t hidden,
                       int64_t layers,
                       bool bias,
                       bool batch_first,
                       double dropout,
                       bool bidirectional) {
        return make_now<nn::GRUImpl>(rnn_options<nn::GRUOptions>(
            in, hidden, layers, bias, batch_first, dropout, bidirectional));
      }))
      .def(
          "forward",
          [](const nn::GRUImpl& mod,
             const Tensor& x,
             const std::optional<Tensor>& h) {
            return mod.forward(x, value_or_undefined(h));
          },
          ReleaseGil());

  auto cell_options = [](int64_t in, int64_t hidden, bool bias) {
    return nn::RNNCellOptions(in, hidden).bias(bias);
  };
  py::class_<nn::RNNCellImpl, nn::Module, std::shared_ptr<nn::RNNCellImpl>>(
      r, "RNNCell")
      .def(py::init(
          [cell_options](
              int64_t in, int64_t h, bool bias, const std::string& nl) {
            auto o = cell_options(in, h, bias);
            o.nonlinearity(rnn_nonlinearity(nl));
            return make_now<nn::RNNCellImpl>(o);
          }))
      .def(
          "forward",
          [](const nn::RNNCellImpl& mod,
             const Tensor& x,
             const std::optional<Tensor>& h) {
            return mod.forward(x, value_or_undefined(h));
          },
          ReleaseGil());
  py::class_<nn::LSTMCellImpl, nn::Module, std::shared_ptr<nn::LSTMCellImpl>>(
      r, "LSTMCell")
      .def(py::init([cell_options](int64_t in, int64_t h, bool bias) {
        return make_now<nn::LSTMCellImpl>(cell_options(in, h, bias));
      }))
      .def(
          "forward",
          [](const nn::LSTMCellImpl& mod, const Tensor& x, const OptState& hx) {
            return mod.forward(x, hx);
          },
          ReleaseGil());
  py::class_<nn::GRUCellImpl, nn::Module, std::shared_ptr<nn::GRUCellImpl>>(
      r, "GRUCell")
      .def(py::init([cell_options](int64_t in, int64_t h, bool bias) {
        return make_now<nn::GRUCellImpl>(cell_options(in, h, bias));
      }))
      .def(
          "forward",
          [](const nn::GRUCellImpl& mod,
             const Tensor& x,
             const std::optional<Tensor>& h) {
            return mod.forward(x, value_or_undefined(h));
          },
          ReleaseGil());
}

void init_utils(py::module_& m) {
  py::module_ u = m.def_submodule("_nn_utils", "ditto::nn::utils");
  u.def(
      "clip_grad_norm_",
      &nn::utils::clip_grad_norm_,
      py::arg("parameters"),
      py::arg("max_norm"),
      py::arg("norm_type") = 2.0,
      py::arg("error_if_nonfinite") = false,
      ReleaseGil());
  u.def(
      "clip_grad_value_",
      &nn::utils::clip_grad_value_,
      py::arg("parameters"),
      py::arg("clip_value"),
      ReleaseGil());
  u.def(
      "parameters_to_vector",
      &nn::utils::parameters_to_vector,
      py::arg("parameters"),
      ReleaseGil());
  u.def(
      "vector_to_parameters",
      &nn::utils::vector_to_parameters,
      py::arg("vec"),
      py::arg("parameters"),
      ReleaseGil());
}

} // namespace

void init_nn(py::module_& m, py::class_<Tensor>& cls) {
  // A new handle on data's tensor (the same storage and autograd leaf):
  // what ditto.nn.Parameter, a Python subclass of Tensor, is built from.
  cls.def(py::init([](const Tensor& data) { return data; }), py::arg("data"));
  // torch.Tensor's legacy constructor, ditto.FloatTensor's: Tensor() is
  // empty, Tensor(2, 3) uninitialized float32 of those sizes, Tensor([1, 2])
  // the data as float32.
  cls.def(py::init([](py::args args) {
    return py::module_::import("ditto")
        .attr("FloatTensor")(*args)
        .cast<Tensor>();
  }));
  m.def("_run_deferred", [] { detail::run_deferred(); });
  init_init(m);
  init_recurrent(m);
  init_utils(m);
}

} // namespace ditto::python
