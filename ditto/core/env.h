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
#include <vector>

namespace ditto::detail {

// The variable's text, or nothing when it is unset or empty.
std::optional<std::string> env_text(const char* name);

// A decimal integer in [lo, hi]: an optional '-' then digits only.
std::optional<int64_t> env_int(const char* name, int64_t lo, int64_t hi);

// A decimal integer in [-2^63, 2^64) as 64 bits (a negative value is taken
// as its two's-complement bits, as manual_seed does).
std::optional<uint64_t> env_u64_bits(const char* name);

// A byte size: decimal digits and an optional K, M or G (powers of 1024,
// either case), at most 2^40; nothing for any other text.
std::optional<int64_t> parse_byte_size(const std::string& s);

// A list "key=SIZE[,key=SIZE...]" (SIZE as parse_byte_size), every key one
// of `keys`, every value in [lo, hi] (a key named twice: the last value),
// or nothing when unset; anything else is a ValueError naming the variable
// and saying `form` was expected.
std::optional<std::map<std::string, int64_t>> env_sizes(
    const char* name,
    const std::vector<std::string>& keys,
    int64_t lo,
    int64_t hi,
    const char* form);

// Every DITTO_* variable in the environment, empty ones included, by name
// (the list of `ditto env`).
std::map<std::string, std::string> env_ditto_variables();

} // namespace ditto::detail
