// ditto.Generator, the default generator's functions, the named streams
// and the fingerprints (the random ops are declared: random.ops.toml).

#include "python/src/common.h"

namespace ditto::python {
namespace {

// A seed as torch takes it: any Python int, negative ones as their
// two's-complement bits (torch.manual_seed(-1) is 2**64 - 1).
uint64_t seed_of(const py::int_& seed) {
  py::object mask = py::int_(
      py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(~0ull)));
  py::object low = seed.attr("__and__")(mask);
  return low.cast<uint64_t>();
}

} // namespace

void init_generator(py::module_& m) {
  py::class_<Generator>(m, "Generator")
      .def(
          py::init([](const std::string& device) {
            // A device's generator is a Philox stream (as torch's CUDA
            // generators), with PyTorch's default seed until seeded.
            const Device d(device); // ValueError for an unknown device
            return d.is_cpu() ? Generator()
                              : Generator::philox(kDefaultGeneratorSeed);
          }),
          py::arg("device") = "cpu")
      .def_static(
          "philox",
          [](const py::int_& seed) { return Generator::philox(seed_of(seed)); },
          py::arg("seed"))
      .def(
          "manual_seed",
          [](Generator& g, const py::int_& seed) -> Generator& {
            return g.manual_seed(seed_of(seed));
          },
          py::arg("seed"),
          kSelf)
      .def("initial_seed", &Generator::initial_seed)
      .def("seed", &Generator::seed)
      .def("get_state", &Generator::get_state)
      .def(
          "set_state",
          [](Generator& g, const Tensor& state) -> Generator& {
            return g.set_state(state);
          },
          py::arg("new_state"),
          kSelf)
      .def("clone", &Generator::clone)
      .def_property_readonly(
          "is_philox", [](const Generator& g) { return g.is_philox(); })
      .def_property_readonly("device", [](const Generator&) { return "cpu"; })
      .def("__eq__", [](const Generator& a, const Generator& b) {
        return a == b;
      });
  m.def(
      "_manual_seed", [](const py::int_& seed) { manual_seed(seed_of(seed)); });
  m.def("initial_seed", py::overload_cast<>(&initial_seed));
  m.def("seed", py::overload_cast<>(&seed));
  m.def("default_generator", py::overload_cast<>(&default_generator));
  m.def("_device_generator", [](const std::string& device) {
    return device_generator(Device(device));
  });
  m.def("get_rng_state", &get_rng_state);
  m.def("set_rng_state", &set_rng_state, py::arg("new_state"));
}

namespace {

void init_random_ops(py::module_&) {
  // rand, randn, rand_like, randn_like, randint, randint_like and randperm:
  // random/random.ops.toml, with torch's options (Note [Factory options] in
  // tools/opgen.py).
  // bernoulli and the fills (uniform_, normal_, random_, bernoulli_,
  // exponential_): random/random.ops.toml.
}

// Named streams, seed_everything and the fingerprints (docs/randomness.md,
// docs/fingerprint.md).
void init_streams(py::module_& m) {
  m.def("_derive_seed", [](uint64_t root, const std::string& name) {
    return random::derive_seed(root, name);
  });
  m.def(
      "_stream", [](const std::string& name) { return random::stream(name); });
  m.def("_stream_names", &random::stream_names);
  m.def("_seed_everything", &seed_everything, ReleaseGil());
  m.def(
      "fingerprint",
      [](const Tensor& t) { return fingerprint(t); },
      ReleaseGil());
  m.def(
      "_weights_fingerprint",
      [](const std::vector<Tensor>& ts) {
        return train::weights_fingerprint(ts);
      },
      ReleaseGil());
  m.def("_hex64", &train::hex64);
}

} // namespace

void init_random(py::module_& m) {
  init_random_ops(m);
  init_streams(m);
}

} // namespace ditto::python
