// ditto.save / ditto.load as safetensors files (ditto/io/safetensors.h):
// a name -> tensor mapping (a state_dict) in, the same back, written
// atomically.

#include "python/src/common.h"

namespace ditto::python {

void init_io(py::module_& m) {
  m.def(
      "_save_safetensors",
      [](const std::string& path,
         const NamedTensors& tensors,
         const std::map<std::string, std::string>& metadata) {
        io::save_safetensors(path, StateDict(tensors), metadata);
      },
      py::arg("path"),
      py::arg("tensors"),
      py::arg("metadata"),
      ReleaseGil());
  m.def(
      "_load_safetensors",
      [](const std::string& path) {
        io::SafetensorsFile f;
        {
          py::gil_scoped_release gil;
          f = io::load_safetensors(path);
        }
        py::dict tensors;
        for (const auto& [name, t] : f.tensors) {
          tensors[py::str(name)] = t;
        }
        return py::make_tuple(tensors, f.metadata);
      },
      py::arg("path"));
}

} // namespace ditto::python
