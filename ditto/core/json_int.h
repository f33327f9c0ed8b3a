#pragma once

// Internal: reading integer fields of the JSON files ditto loads (traces,
// tuning caches, loader and trainer state). Not installed.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace ditto::detail {

// An integer field as int64. nlohmann's get<int64_t> converts a float, or an
// unsigned value past int64, with a cast that is undefined out of range
// (fuzz_trace found a trace version of 8.9e79); anything but an integer in
// range is refused with the type_error a wrong type gets anyway.
inline int64_t json_int(const nlohmann::json& v) {
  const bool ok = v.is_number_integer() &&
      !(v.is_number_unsigned() &&
        v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
  if (!ok) {
    throw nlohmann::json::type_error::create(
        302, "not a 64-bit integer: " + v.dump(), nullptr);
  }
  return v.get<int64_t>();
}

inline std::vector<int64_t> json_ints(const nlohmann::json& a) {
  if (!a.is_array()) {
    throw nlohmann::json::type_error::create(
        302, "not an array: " + a.dump(), nullptr);
  }
  std::vector<int64_t> out;
  out.reserve(a.size());
  for (const nlohmann::json& v : a) {
    out.push_back(json_int(v));
  }
  return out;
}

} // namespace ditto::detail
