#include "ditto/data/text.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/core/file_io.h"
#include "ditto/ops/factories.h"

namespace ditto::data {

namespace fs = std::filesystem;

std::string read_text(const std::string& path, uint64_t max_bytes) {
  const char* op = "read_text";
  detail::check_path(path, op);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return detail::read_regular_file(path, op, max_bytes);
  }
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    if (!e.is_symlink(ec) && e.is_regular_file(ec)) {
      files.push_back(e.path().string());
    }
  }
  DITTO_CHECK(
      !ec, ValueError, op, path, ": cannot list the directory: ", ec.message());
  DITTO_CHECK(!files.empty(), ValueError, op, path, ": holds no regular file");
  std::sort(files.begin(), files.end());
  std::string text;
  for (const std::string& f : files) {
    text += detail::read_regular_file(f, op, max_bytes);
    DITTO_CHECK(
        text.size() <= max_bytes,
        ValueError,
        op,
        path,
        ": more than ",
        max_bytes,
        " bytes");
  }
  return text;
}

ByteWindows::ByteWindows(const std::string& bytes, int64_t block)
    : block_(block) {
  const char* op = "ByteWindows";
  DITTO_CHECK(
      block >= 1, ValueError, op, "block must be at least 1, got ", block);
  DITTO_CHECK(
      int64_t(bytes.size()) > block,
      ValueError,
      op,
      "a text of ",
      bytes.size(),
      " bytes is too short for one window of ",
      block,
      " and its next byte");
  std::vector<int64_t> t(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    t[i] = static_cast<unsigned char>(bytes[i]);
  }
  tokens_ = tensor(t);
  size_ = (int64_t(bytes.size()) - 1) / block;
}

int64_t ByteWindows::size() const {
  return size_;
}

Example<> ByteWindows::get(int64_t index) const {
  DITTO_CHECK(
      index >= 0 && index < size_,
      IndexError,
      "ByteWindows",
      "index ",
      index,
      " is out of range for ",
      size_,
      " windows");
  return {
      tokens_.narrow(0, index * block_, block_),
      tokens_.narrow(0, index * block_ + 1, block_)};
}

} // namespace ditto::data
