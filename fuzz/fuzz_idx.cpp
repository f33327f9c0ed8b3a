// IDX files, plain and gzipped (the reader picks by content): a uint8
// tensor whose size matches the header, or a ValueError; never a crash or
// an allocation the file cannot back (-rss_limit_mb).

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  const std::string path = fuzz::scratch_file(data, size, ".idx");
  for (int64_t dims : {1, 3}) {
    Tensor t;
    if (fuzz::typed_error_or_result(
            [&] { t = data::read_idx(path, dims, "fuzz"); })) {
      fuzz::require(t.dim() == dims, "read_idx: wrong number of dims");
      fuzz::require(t.dtype() == kUInt8, "read_idx: not uint8");
    }
  }
  return 0;
}
