// LoaderState JSON: parsed, or a ValueError; a parsed state is accepted or
// refused by load_state_dict, and a refused one leaves the loader as it was.

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  using namespace ditto::data;
  const std::string text(reinterpret_cast<const char*>(data), size);
  LoaderState state;
  if (!fuzz::typed_error_or_result(
          [&] { state = LoaderState::from_json(text); })) {
    return 0;
  }
  static auto dataset = std::make_shared<TensorDataset>(
      arange(0, 12, 1, kFloat32).view({6, 2}), arange(0, 6, 1, kInt64));
  for (SeedMode mode : {SeedMode::PerSample, SeedMode::PyTorch}) {
    DataLoaderOptions options;
    options.batch_size(2);
    options.shuffle(true);
    options.seed_mode(mode);
    options.generator(Generator());
    DataLoader loader(dataset, options);
    const std::string before = loader.state_dict().to_json();
    if (!fuzz::typed_error_or_result([&] { loader.load_state_dict(state); })) {
      fuzz::require(
          loader.state_dict().to_json() == before,
          "a refused state changed the loader");
      continue;
    }
    // An accepted state resumes: the rest of its epoch, or a typed error.
    fuzz::typed_error_or_result([&] {
      int batches = 0;
      for (const Batch& b : loader) {
        (void)b;
        if (++batches > 10) {
          break;
        }
      }
    });
  }
  return 0;
}
