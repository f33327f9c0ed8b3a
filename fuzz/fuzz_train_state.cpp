// A checkpoint's train_state.safetensors, as `ditto train --resume` reads
// it: the safetensors parser, then train::read_train_state (metadata JSON,
// progress, loader state, generator states). A result or a typed error,
// and nothing applied: the default generator is unchanged either way.

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  const uint64_t before = fingerprint(default_generator().get_state());
  fuzz::typed_error_or_result([&] {
    io::SafetensorsFile f = io::parse_safetensors(
        std::span<const uint8_t>(data, size), "train_state.safetensors");
    train::CheckpointProgress p =
        train::read_train_state(f, "train_state.safetensors");
    fuzz::require(
        p.step >= 0 && p.epoch == int64_t(p.history.size()),
        "accepted inconsistent progress");
  });
  fuzz::require(
      fingerprint(default_generator().get_state()) == before,
      "reading a train state changed the default generator");
  return 0;
}
