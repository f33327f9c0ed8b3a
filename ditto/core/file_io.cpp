#include "ditto/core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ditto/core/error.h"

namespace ditto::detail {

namespace {

// Writes all of bytes to fd; the reason on failure, empty on success.
std::string write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return n == 0 ? "short write" : std::strerror(errno);
    }
    done += size_t(n);
  }
  return {};
}

// Writes bytes to a new file at path and fsyncs it; the reason on failure
// (the file may be left partly written), empty on success.
std::string try_write_synced(const std::string& path, std::string_view bytes) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return std::strerror(errno);
  }
  if (std::string why = write_all(fd, bytes); !why.empty()) {
    ::close(fd);
    return why;
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

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  return "a file of an unknown kind";
}

// Why a reader refuses what st describes, or "" for a regular file.
std::string not_regular(const struct stat& st) {
  return S_ISREG(st.st_mode)
      ? std::string()
      : str_cat("it is ", kind_of(st.st_mode), ", not a regular file");
}

} // namespace

// Note [What an atomic write may replace]
// An atomic write renames a temporary over its target. That is right for a
// regular file and wrong for anything else: run as root, renaming over
// /dev/null turns the device into a file for every process on the machine,
// and renaming over a symlink replaces the link instead of writing where it
// points. So the target's symlinks are resolved first (the temporary goes
// beside the file the link names); a character device (/dev/null,
// /dev/full, a terminal) or a FIFO is written in place, where a failure is
// the device's own (/dev/full says "No space left on device"); a directory,
// socket or block device is refused. Nothing here ever renames over a path
// that is not a regular file.
void check_path(const std::string& path, const char* op) {
  const size_t nul = path.find('\0');
  if (nul != std::string::npos) {
    throw_error<ValueError>(
        op,
        "embedded null byte in the path '",
        path.substr(0, nul),
        "\\0",
        path.substr(nul + 1),
        "'");
  }
}

WriteTarget resolve_write_target(const std::string& path, const char* op) {
  check_path(path, op);
  namespace fs = std::filesystem;
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        return {p.string(), false};
      }
      throw_error<ValueError>(
          op, "cannot write ", path, ": ", std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops >= 40) {
        throw_error<ValueError>(
            op, "cannot write ", path, ": too many levels of symbolic links");
      }
      std::error_code ec;
      const fs::path to = fs::read_symlink(p, ec);
      if (ec) {
        throw_error<ValueError>(op, "cannot write ", path, ": ", ec.message());
      }
      p = to.is_absolute() ? to : p.parent_path() / to;
      continue;
    }
    if (S_ISREG(st.st_mode)) {
      return {p.string(), false};
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      return {p.string(), true};
    }
    throw_error<ValueError>(
        op,
        "cannot write ",
        path,
        ": it is ",
        kind_of(st.st_mode),
        " (only a regular file, a character device or a FIFO is written)");
  }
}

int open_in_place(const WriteTarget& target, const char* op) {
  // O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of
  // waiting forever; the flag is cleared again for the writes.
  const int fd =
      ::open(target.path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = errno == ENXIO
        ? "no process has the FIFO open for reading"
        : std::strerror(errno);
    throw_error<ValueError>(op, "cannot write ", target.path, ": ", why);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw_error<ValueError>(op, "cannot write ", target.path, ": ", why);
  }
  return fd;
}

namespace {

// Reads exactly size bytes of fd into out; the reason on failure.
std::string read_all(int fd, uint64_t size, std::string& out) {
  out.resize(size_t(size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return std::strerror(errno);
    }
    if (n == 0) {
      return "the file shrank while it was read";
    }
    done += size_t(n);
  }
  char extra;
  if (::read(fd, &extra, 1) > 0) {
    return "the file grew while it was read";
  }
  return {};
}

} // namespace

std::string read_regular_file(
    const std::string& path,
    const char* op,
    uint64_t max_bytes) {
  check_path(path, op);
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer; it
  // has no effect on a regular file.
  const int fd =
      ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    throw_error<ValueError>(
        op, "cannot read ", path, ": ", std::strerror(errno));
  }
  // The checks are on the descriptor read, not on the name (which could be
  // swapped between a stat and the open).
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = not_regular(st);
  } else if (uint64_t(st.st_size) > max_bytes) {
    why = str_cat(
        "the file has ",
        st.st_size,
        " bytes, more than the ",
        max_bytes,
        " this reader takes");
  }
  std::string out;
  if (why.empty()) {
    why = read_all(fd, uint64_t(st.st_size), out);
  }
  ::close(fd);
  if (!why.empty()) {
    throw_error<ValueError>(op, "cannot read ", path, ": ", why);
  }
  return out;
}

void check_regular_file(const std::string& path, const char* op) {
  check_path(path, op);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw_error<ValueError>(
        op, "cannot read ", path, ": ", std::strerror(errno));
  }
  if (const std::string why = not_regular(st); !why.empty()) {
    throw_error<ValueError>(op, "cannot read ", path, ": ", why);
  }
}

void write_file_synced(
    const std::string& path,
    std::string_view bytes,
    const char* op) {
  check_path(path, op);
  const std::string why = try_write_synced(path, bytes);
  if (!why.empty()) {
    throw_error<ValueError>(op, "cannot write ", path, ": ", why);
  }
}

void fsync_directory(const std::string& path, const char* op) {
  check_path(path, op);
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
  const WriteTarget target = resolve_write_target(path, op);
  if (target.in_place) {
    const int fd = open_in_place(target, op);
    std::string why = write_all(fd, bytes);
    if (::close(fd) != 0 && why.empty()) {
      why = std::strerror(errno);
    }
    if (!why.empty()) {
      throw_error<ValueError>(op, "cannot write ", path, ": ", why);
    }
    return;
  }
  static std::atomic<uint64_t> serial{0};
  const std::string tmp =
      str_cat(target.path, ".tmp.", ::getpid(), ".", serial.fetch_add(1));
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
  std::filesystem::rename(tmp, target.path, ec);
  if (ec) {
    fail(ec.message());
  }
}

} // namespace ditto::detail
