#pragma once

// Internal: whole-file writes that readers never see half done.

#include <string>
#include <string_view>

#include "ditto/core/api.h"

namespace ditto::detail {

// Writes bytes to path atomically: to a temporary beside it (named for this
// process and call), flushed to disk, then renamed over path. Readers see
// the old file or the new one, never a part. On any failure the temporary
// is removed, path is untouched, and ValueError names op and the file.
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

// fsyncs a directory, so that the entries created or renamed in it are on
// disk. ValueError naming op and the directory on failure.
DITTO_API void fsync_directory(const std::string& path, const char* op);

} // namespace ditto::detail
