#pragma once

// Text as bytes, for character-level language models (`ditto train --model
// gpt`): every byte is a token (a vocabulary of 256, the same for any text).

#include <cstdint>
#include <string>

#include "ditto/core/api.h"
#include "ditto/data/dataset.h"

namespace ditto::data {

// What `ditto train --model gpt` reads by default: the license texts every
// Debian system ships (package base-files), about 260 KB.
inline constexpr const char* kDefaultTextRoot = "/usr/share/common-licenses";

// The bytes at path: a regular file's, or those of every regular file
// directly in a directory (symlinks skipped), concatenated in name order.
// ValueError naming path if it is neither, holds no regular file, or is
// larger than max_bytes.
DITTO_API std::string read_text(
    const std::string& path,
    uint64_t max_bytes = uint64_t(1) << 32);

// Next-byte prediction: sample i is the block bytes from i * block as int64
// tokens [block] and, as its target, the block bytes after each of them
// ([block], shifted by one). The last byte of the text is only a target.
// ValueError unless block >= 1 and the text holds block + 1 bytes.
class DITTO_API ByteWindows : public Dataset {
 public:
  ByteWindows(const std::string& bytes, int64_t block);
  int64_t size() const override;
  Example<> get(int64_t index) const override;

 private:
  Tensor tokens_;
  int64_t block_ = 0, size_ = 0;
};

} // namespace ditto::data
