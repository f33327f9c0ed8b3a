#pragma once

// Internal: whole-file writes that readers never see half done.

#include <cstdint>
#include <string>
#include <string_view>

#include "ditto/core/api.h"

namespace ditto::detail {

// Where a write of path goes (Note [What an atomic write may replace]).
struct WriteTarget {
  std::string path; // path with its symlinks resolved
  bool in_place; // a character device or a FIFO: written, never replaced
};

// Resolves path's symlinks and decides how to write it: a regular file or a
// new one is replaced atomically; a character device or a FIFO is written in
// place; anything else (a directory, a socket, a block device, a symlink
// loop) is a ValueError naming op and the file.
DITTO_API WriteTarget
resolve_write_target(const std::string& path, const char* op);

// Opens a resolved in-place target for writing without blocking on a FIFO
// that no process reads (that is a ValueError naming op and the file).
// Returns the descriptor; the caller closes it.
DITTO_API int open_in_place(const WriteTarget& target, const char* op);

// Writes bytes to path atomically: to a temporary beside it (named for this
// process and call), flushed to disk, then renamed over path. Readers see
// the old file or the new one, never a part. On any failure the temporary
// is removed, path is untouched, and ValueError names op and the file. A
// symlink is followed (the link stays, its target is replaced); a character
// device or a FIFO is written in place (resolve_write_target).
DITTO_API void write_file_atomic(
    const std::string& path,
    std::string_view bytes,
    const char* op);

// Writes bytes to path (created or truncated) and fsyncs it. ValueError
// naming op and the file on failure (the file may then be partly written:
// use it inside a temporary directory, as checkpoints do).
DITTO_API void write_file_synced(
    const std::string& path,
    std::string_view bytes,
    const char* op);

// The whole of the regular file at path (symlinks followed), read with one
// open: a directory, device, FIFO or socket, a missing or unreadable file,
// or one larger than max_bytes is a ValueError naming op and the file, never
// an allocation of the size a directory reports.
// A path with an embedded NUL byte is a ValueError naming op ("embedded null
// byte", as Python's open says): the C library would cut it there and act
// on another file. Every function below checks its path first.
DITTO_API void check_path(const std::string& path, const char* op);

DITTO_API std::string read_regular_file(
    const std::string& path,
    const char* op,
    uint64_t max_bytes = uint64_t(1) << 40);

// ValueError naming op and the file unless path is a regular file (symlinks
// followed), for readers that open the file themselves (zlib).
DITTO_API void check_regular_file(const std::string& path, const char* op);

// fsyncs a directory, so that the entries created or renamed in it are on
// disk. ValueError naming op and the directory on failure.
DITTO_API void fsync_directory(const std::string& path, const char* op);

} // namespace ditto::detail
