#include "ditto/core/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ditto/core/error.h"

namespace ditto::detail {

void write_file_atomic(
    const std::string& path,
    std::string_view bytes,
    const char* op) {
  static std::atomic<uint64_t> serial{0};
  const std::string tmp =
      str_cat(path, ".tmp.", ::getpid(), ".", serial.fetch_add(1));
  auto fail = [&](const std::string& why) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw_error<ValueError>(op, "cannot write ", path, ": ", why);
  };
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw_error<ValueError>(
        op, "cannot write ", path, ": ", std::strerror(errno));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      fail(why);
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    fail(why);
  }
  if (::close(fd) != 0) {
    fail(std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    fail(ec.message());
  }
}

} // namespace ditto::detail
