#pragma once

// The one reader of ditto's environment variables (DITTO_*), so they all
// follow the same rules (README, "Environment variables"):
// - unset and set to the empty string mean the same: not set;
// - the value is taken exactly as written: no spaces around it, no '+';
// - a bad value raises ValueError naming the variable, every time it is
//   read, and is never replaced by a default.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ditto::detail {

// The variable's text, or nothing when it is unset or empty.
std::optional<std::string> env_text(const char* name);

// A decimal integer in [lo, hi]: an optional '-' then digits only.
std::optional<int64_t> env_int(const char* name, int64_t lo, int64_t hi);

// A decimal integer in [-2^63, 2^64) as 64 bits (a negative value is taken
// as its two's-complement bits, as manual_seed does).
std::optional<uint64_t> env_u64_bits(const char* name);

// Every DITTO_* variable in the environment, empty ones included, by name
// (the list of `ditto env`).
std::map<std::string, std::string> env_ditto_variables();

} // namespace ditto::detail
