// Generator state blobs (mt19937's 5056 bytes, Philox's): accepted, or a
// ValueError that leaves the generator as it was. An accepted state draws
// the same numbers in two generators (or, at a Philox stream's end, refuses
// the same draw in both).

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  // Fuzzed bytes over a valid state, so that the fuzzer explores the
  // fields rather than the size check.
  Generator cpu;
  cpu.manual_seed(size);
  Generator philox = Generator::philox(size);
  for (Generator g : {cpu, philox}) {
    Tensor before = g.get_state();
    Tensor blob = before.clone();
    uint8_t* p = blob.data_ptr<uint8_t>();
    for (size_t i = 0; i < size && i < size_t(blob.numel()); ++i) {
      p[i] = data[i];
    }
    if (!fuzz::typed_error_or_result([&] { g.set_state(blob); })) {
      fuzz::require(equal(g.get_state(), before), "a refused state changed it");
      continue;
    }
    // A Philox state near its stream's end (2^64 words) is accepted, and a
    // draw past the end is a ValueError: the same for both generators.
    Generator twin = g.clone();
    Tensor a, b;
    const bool drew =
        fuzz::typed_error_or_result([&] { a = rand({700}, kFloat32, g); });
    const bool twin_drew =
        fuzz::typed_error_or_result([&] { b = rand({700}, kFloat32, twin); });
    fuzz::require(
        drew == twin_drew, "two generators in one state disagree on a draw");
    fuzz::require(
        !drew || equal(a, b), "two generators in one state drew differently");
  }
  // The raw bytes as a whole blob (any size).
  Tensor raw = tensor(std::vector<uint8_t>(data, data + size));
  Tensor before = cpu.get_state();
  if (!fuzz::typed_error_or_result([&] { cpu.set_state(raw); })) {
    fuzz::require(equal(cpu.get_state(), before), "a refused blob changed it");
  }
  return 0;
}
