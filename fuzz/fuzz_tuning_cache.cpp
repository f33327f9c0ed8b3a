// The convolution tuning cache file: loaded (true) or refused (false, with
// a warning), never an exception or a crash; a refused file changes
// nothing.

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  static const bool quiet = [] {
    determinism::set_warning_handler([](std::string_view, std::string_view) {});
    return true;
  }();
  (void)quiet;
  const std::string path = fuzz::scratch_file(data, size, ".json");
  backends::conv::clear_tuning_cache();
  try {
    backends::conv::load_tuning_cache(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: load_tuning_cache raised: %s\n", e.what());
    std::abort();
  }
  return 0;
}
