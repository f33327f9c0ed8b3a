#include "ditto/data/mnist.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/core/file_io.h"
#include "ditto/ops/detail/op_util.h"

namespace ditto::data {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const {
    gzclose(f);
  }
};

// Reads up to n bytes; returns how many were read, raising on a corrupt
// stream.
int64_t read_some(
    gzFile f,
    void* to,
    int64_t n,
    const std::string& path,
    const char* op) {
  int64_t got = 0;
  char* p = static_cast<char*>(to);
  while (got < n) {
    const unsigned chunk = unsigned(std::min<int64_t>(n - got, 1 << 30));
    const int r = gzread(f, p + got, chunk);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      DITTO_CHECK(false, ValueError, op, path, ": corrupt data (", msg, ")");
    }
    if (r == 0) {
      break;
    }
    got += r;
  }
  return got;
}

uint32_t big_endian(const unsigned char* b) {
  return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) |
      (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

// path + ".gz" if it exists, else path.
std::string find_file(
    const std::string& root,
    const std::string& name,
    const char* op) {
  const std::string base = (std::filesystem::path(root) / name).string();
  // The non-throwing checks: a path the OS refuses (too long, a file where a
  // directory should be) is a ValueError naming it, not a filesystem_error.
  auto exists = [&](const std::string& p) {
    std::error_code ec;
    const bool there = std::filesystem::exists(p, ec);
    DITTO_CHECK(!ec, ValueError, op, "cannot look for ", p, ": ", ec.message());
    return there;
  };
  if (exists(base + ".gz")) {
    return base + ".gz";
  }
  DITTO_CHECK(
      exists(base), ValueError, op, "cannot find ", base, ".gz or ", base);
  return base;
}

} // namespace

Tensor read_idx(
    const std::string& path,
    int64_t expected_dims,
    const char* op) {
  detail::check_regular_file(path, op);
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  DITTO_CHECK(f != nullptr, ValueError, op, "cannot open ", path);
  unsigned char magic[4];
  DITTO_CHECK(
      read_some(f.get(), magic, 4, path, op) == 4,
      ValueError,
      op,
      path,
      ": truncated: no IDX header");
  DITTO_CHECK(
      magic[0] == 0 && magic[1] == 0 && magic[2] == 0x08 &&
          magic[3] == expected_dims,
      ValueError,
      op,
      path,
      ": not an IDX file of unsigned bytes with ",
      expected_dims,
      " dims (magic bytes ",
      int(magic[0]),
      " ",
      int(magic[1]),
      " ",
      int(magic[2]),
      " ",
      int(magic[3]),
      ")");
  Shape sizes;
  int64_t total = 1;
  int64_t span = 1; // the same with empty dims counted as 1 (the strides)
  for (int64_t d = 0; d < expected_dims; ++d) {
    unsigned char b[4];
    DITTO_CHECK(
        read_some(f.get(), b, 4, path, op) == 4,
        ValueError,
        op,
        path,
        ": truncated: the header ends before its sizes");
    sizes.push_back(int64_t(big_endian(b)));
    DITTO_CHECK(
        !__builtin_mul_overflow(total, sizes.back(), &total) &&
            !__builtin_mul_overflow(
                span, std::max<int64_t>(sizes.back(), 1), &span) &&
            span <= (int64_t(1) << 36),
        ValueError,
        op,
        path,
        ": implausible sizes ",
        shape_str(sizes));
  }
  // The data is read in chunks and memory grows with what the file really
  // holds: a short file whose header promises gigabytes fails as truncated
  // without allocating them.
  constexpr int64_t kChunk = int64_t(1) << 24;
  std::vector<unsigned char> data;
  int64_t got = 0;
  while (got < total) {
    const int64_t want = std::min(kChunk, total - got);
    data.resize(size_t(got + want));
    const int64_t r = read_some(f.get(), data.data() + got, want, path, op);
    got += r;
    if (r < want) {
      break;
    }
  }
  DITTO_CHECK(
      got == total,
      ValueError,
      op,
      path,
      ": truncated: the header promises ",
      total,
      " bytes of data (sizes ",
      shape_str(sizes),
      ") but the file holds ",
      got);
  unsigned char extra;
  DITTO_CHECK(
      read_some(f.get(), &extra, 1, path, op) == 0,
      ValueError,
      op,
      path,
      ": more data than the header's sizes ",
      shape_str(sizes));
  Tensor out = detail::new_tensor(sizes, kUInt8);
  if (total > 0) {
    std::memcpy(out.raw_data(), data.data(), size_t(total));
  }
  return out;
}

MNIST::MNIST(const std::string& root, bool train)
    : MNIST(root, train, "MNIST") {}

MNIST::MNIST(const std::string& root, bool train, const char* name) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string ipath =
      find_file(root, prefix + "-images-idx3-ubyte", name);
  const std::string lpath =
      find_file(root, prefix + "-labels-idx1-ubyte", name);
  images_ = read_idx(ipath, 3, name);
  Tensor labels = read_idx(lpath, 1, name);
  DITTO_CHECK(
      images_.size(0) == labels.size(0),
      ValueError,
      name,
      ipath,
      " has ",
      images_.size(0),
      " images but ",
      lpath,
      " has ",
      labels.size(0),
      " labels");
  // A label outside the 10 classes is the file's fault: named here, when the
  // dataset opens, not by a loss when its batch comes up.
  const uint8_t* l = labels.data_ptr<uint8_t>();
  for (int64_t i = 0; i < labels.numel(); ++i) {
    DITTO_CHECK(
        l[i] < kMNISTClasses,
        ValueError,
        name,
        lpath,
        ": label ",
        int(l[i]),
        " at index ",
        i,
        " is outside the ",
        kMNISTClasses,
        " classes [0, ",
        kMNISTClasses - 1,
        "]");
  }
  labels_ = labels.to(kInt64);
}

int64_t MNIST::size() const {
  return images_.size(0);
}

Example<> MNIST::get(int64_t index) const {
  DITTO_CHECK(
      index >= 0 && index < size(),
      IndexError,
      "MNIST",
      "index ",
      index,
      " is out of range for a dataset of ",
      size(),
      " samples");
  const int64_t h = images_.size(1), w = images_.size(2);
  Tensor img = detail::new_tensor({1, h, w}, kFloat32);
  const uint8_t* src = images_.data_ptr<uint8_t>() + index * h * w;
  float* dst = img.data_ptr<float>();
  for (int64_t k = 0; k < h * w; ++k) {
    dst[k] = float(src[k]) / 255.0f;
  }
  return {img, labels_.select(0, index).clone()};
}

FashionMNIST::FashionMNIST(const std::string& root, bool train)
    : MNIST(root, train, "FashionMNIST") {}

} // namespace ditto::data
