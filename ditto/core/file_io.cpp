#include "ditto/core/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ditto/core/error.h"

namespace ditto::detail {

namespace {

// Writes bytes to a new file at path and fsyncs it; the reason on failure
// (the file may be left partly written), empty on success.
std::string try_write_synced(const std::string& path, std::string_view bytes) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return std::strerror(errno);
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const std::string why = n == 0 ? "short write" : std::strerror(errno);
      ::close(fd);
      return why;
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return why;
  }
  if (::close(fd) != 0) {
    return std::strerror(errno);
  }
  return {};
}

} // namespace

void write_file_synced(
    const std::string& path,
    std::string_view bytes,
    const char* op) {
  const std::string why = try_write_synced(path, bytes);
  if (!why.empty()) {
    throw_error<ValueError>(op, "cannot write ", path, ": ", why);
  }
}

void fsync_directory(const std::string& path, const char* op) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) {
      ::close(fd);
    }
    throw_error<ValueError>(op, "cannot sync directory ", path, ": ", why);
  }
  ::close(fd);
}

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
  const std::string why = try_write_synced(tmp, bytes);
  if (!why.empty()) {
    fail(why);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    fail(ec.message());
  }
}

} // namespace ditto::detail
