// safetensors bytes: accepted, or a ValueError. An accepted file writes
// back to bytes that parse to the same tensors and metadata.

#include "ditto/io/safetensors.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  io::SafetensorsFile f;
  if (!fuzz::typed_error_or_result([&] {
        f = io::parse_safetensors(std::span<const uint8_t>(data, size));
      })) {
    return 0;
  }
  std::vector<uint8_t> again;
  fuzz::require(
      fuzz::typed_error_or_result(
          [&] { again = io::serialize_safetensors(f.tensors, f.metadata); }),
      "an accepted file could not be written back");
  io::SafetensorsFile g = io::parse_safetensors(again);
  fuzz::require(g.metadata == f.metadata, "metadata changed in a round trip");
  fuzz::require(g.tensors.size() == f.tensors.size(), "tensors lost");
  for (const auto& [name, t] : f.tensors) {
    const Tensor* u = g.tensors.find(name);
    fuzz::require(u != nullptr, "a tensor lost in a round trip");
    fuzz::require(
        u->dtype() == t.dtype() && u->sizes() == t.sizes() &&
            fingerprint(*u) == fingerprint(t),
        "a tensor changed in a round trip");
  }
  return 0;
}
