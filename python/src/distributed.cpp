// The extension module ditto._distributed: ditto::distributed on Open MPI
// for python/ditto/distributed (docs/distributed.md). A module of its own,
// linked with libditto_distributed, so that `import ditto` does not load
// MPI. Tensors are ditto._C's (pybind11 shares registered types between
// modules); errors are translated by ditto._C's translator.

#include <chrono>
#include <cmath>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace py = pybind11;
namespace dist = ditto::distributed;
using ditto::Tensor;

namespace {

// Collectives wait on the other ranks: without the GIL, so that the
// process's other Python threads (a DataLoader's workers among them) go on.
using ReleaseGil = py::call_guard<py::gil_scoped_release>;

} // namespace

PYBIND11_MODULE(_distributed, m) {
  py::module_::import("ditto._C");
  py::enum_<dist::ReduceOp>(m, "ReduceOp")
      .value("SUM", dist::ReduceOp::Sum)
      .value("AVG", dist::ReduceOp::Avg);
  m.def("init", &dist::init, ReleaseGil());
  m.def("is_initialized", &dist::is_initialized);
  m.def(
      "set_timeout",
      [](double seconds) {
        DITTO_CHECK(
            seconds > 0 && seconds < 1e9,
            ditto::ValueError,
            "init_process_group",
            "timeout must be a positive number of seconds, got ",
            seconds);
        dist::set_timeout(
            std::chrono::milliseconds(int64_t(std::ceil(seconds * 1000.0))));
      },
      py::arg("seconds"));
  m.def("timeout", [] { return double(dist::timeout().count()) / 1000.0; });
  m.def("rank", &dist::rank);
  m.def("world_size", &dist::world_size);
  m.def("barrier", &dist::barrier, ReleaseGil());
  m.def(
      "all_reduce",
      [](Tensor t, dist::ReduceOp op) { dist::all_reduce(t, op); },
      py::arg("tensor"),
      py::arg("op"),
      ReleaseGil());
  m.def(
      "broadcast",
      [](Tensor t, int src) { dist::broadcast(t, src); },
      py::arg("tensor"),
      py::arg("src"),
      ReleaseGil());
  m.def("all_gather", &dist::all_gather, py::arg("tensor"), ReleaseGil());
  m.def(
      "reduce_scatter",
      [](Tensor out, const std::vector<Tensor>& inputs, dist::ReduceOp op) {
        dist::reduce_scatter(out, inputs, op);
      },
      py::arg("output"),
      py::arg("inputs"),
      py::arg("op"),
      ReleaseGil());

  py::class_<dist::DataParallelState>(m, "DataParallelState")
      .def(
          py::init<std::vector<Tensor>, std::vector<Tensor>, bool>(),
          py::arg("params"),
          py::arg("buffers"),
          py::arg("broadcast_buffers"),
          ReleaseGil())
      .def(
          "before_forward",
          &dist::DataParallelState::before_forward,
          ReleaseGil())
      .def("prepare_backward", &dist::DataParallelState::prepare_backward)
      .def(
          "reduce_gradients",
          &dist::DataParallelState::reduce_gradients,
          ReleaseGil())
      .def_property(
          "sync",
          &dist::DataParallelState::sync,
          &dist::DataParallelState::set_sync);

  py::class_<dist::MicroBatchGradient>(m, "MicroBatchGradient")
      .def(
          py::init<std::vector<Tensor>, int64_t>(),
          py::arg("params"),
          py::arg("micro_batches"))
      .def("begin", &dist::MicroBatchGradient::begin)
      .def("end", &dist::MicroBatchGradient::end)
      .def("add", &dist::MicroBatchGradient::add, py::arg("j"), ReleaseGil())
      .def("reduce", &dist::MicroBatchGradient::reduce, ReleaseGil());
}
