#pragma once

// Internal: parsing the JSON that ditto reads from files (checkpoint
// metadata, tuning caches, loader state, trace lines), with limits. Not
// installed.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "ditto/core/error.h"

namespace ditto::detail {

// Note [Limits on JSON read from files]
// nlohmann's parser keeps its own stack, but copying, comparing and dumping
// a parsed value recurse once per level: 200 KB of '[' parse fine and then
// overflow the stack in dump(). No file ditto writes nests deeper than 5
// levels, so every JSON text read from outside is refused above
// kJsonMaxDepth levels before it is parsed, and above a size fitting its
// use (the DOM of a number costs about 16 bytes against its text's 2-20).
inline constexpr int kJsonMaxDepth = 64;
inline constexpr size_t kJsonMaxBytes = size_t(64) << 20;

// True when no '[' or '{' of s (outside strings) opens more than limit
// levels deep. Malformed text is left to the parser.
inline bool json_nesting_at_most(std::string_view s, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) {
        return false;
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

// Parses text read from `where` (a file, or a file and a field) for op.
// Too long, too deep or malformed text is a ValueError
// "[op] where: ...", one line; nothing is parsed past the limits.
inline nlohmann::json parse_json(
    std::string_view text,
    const char* op,
    std::string_view where,
    size_t max_bytes = kJsonMaxBytes) {
  if (text.size() > max_bytes) {
    throw_error<ValueError>(
        op,
        where,
        ": JSON of ",
        text.size(),
        " bytes, more than the ",
        max_bytes,
        " accepted");
  }
  if (!json_nesting_at_most(text, kJsonMaxDepth)) {
    throw_error<ValueError>(
        op, where, ": JSON nests deeper than ", kJsonMaxDepth, " levels");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw_error<ValueError>(op, where, ": invalid JSON: ", e.what());
  }
}

} // namespace ditto::detail
