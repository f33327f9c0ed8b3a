// The environment-variable parser (ditto/core/env.h), against an oracle
// written from its rules: the value is taken exactly as written, an
// optional '-' then decimal digits, in range; empty means unset; anything
// else is a ValueError naming the variable. The same value is read as a
// size list too (env_sizes, "key=SIZE,...": DITTO_GEMM_BLOCKING and
// DITTO_CPU_CACHES), against its own oracle.

#include <cstdlib>
#include <cstring>
#include <map>

#include "ditto/core/env.h"
#include "fuzz/fuzz_util.h"

namespace {

constexpr const char* kVar = "DITTO_FUZZ_ENV";

// The oracle: the value as a 128-bit integer, or nothing for any text that
// is not '-'? digits (more than 30 significant digits count as out of any
// range here; leading zeros are fine).
bool oracle(const std::string& s, __int128* out) {
  size_t at = !s.empty() && s[0] == '-' ? 1 : 0;
  if (at == s.size()) {
    return false;
  }
  __int128 v = 0;
  int digits = 0; // significant ones: leading zeros do not count
  for (; at < s.size(); ++at) {
    if (s[at] < '0' || s[at] > '9') {
      return false;
    }
    if (v != 0 || s[at] != '0') {
      ++digits;
    }
    if (digits > 30) {
      return false;
    }
    v = v * 10 + (s[at] - '0');
  }
  *out = s[0] == '-' ? -v : v;
  return true;
}

// The size-list oracle: items split at every ',', each KEY=DIGITS with
// an optional K/M/G (any case), the key "a" or "b", the value (digits times
// the unit) at most 2^40 and in [lo, hi]; the last value of a key wins.
bool sizes_oracle(
    const std::string& s,
    int64_t lo,
    int64_t hi,
    std::map<std::string, int64_t>* out) {
  std::string item;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != ',') {
      item += s[i];
      continue;
    }
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return false;
    }
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key != "a" && key != "b") {
      return false;
    }
    size_t d = 0;
    __int128 n = 0;
    for (; d < v.size() && v[d] >= '0' && v[d] <= '9'; ++d) {
      n = n * 10 + (v[d] - '0');
      if (n > (__int128(1) << 41)) {
        return false;
      }
    }
    if (d == 0 || d + 1 < v.size()) {
      return false;
    }
    if (d + 1 == v.size()) {
      const char u = char(v[d] | 0x20); // lower case for letters
      if (u != 'k' && u != 'm' && u != 'g') {
        return false;
      }
      n <<= u == 'k' ? 10 : u == 'm' ? 20 : 30;
    }
    if (n > (__int128(1) << 40) || n < lo || n > hi) {
      return false;
    }
    (*out)[key] = int64_t(n);
    item.clear();
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  if (size < 1) {
    return 0;
  }
  // The first byte picks the range; the rest (up to a NUL, as the
  // environment holds C strings) is the value.
  const int64_t bounds[][2] = {
      {1, 1024}, {0, 0}, {INT64_MIN, INT64_MAX}, {-5, 5}};
  const auto& b = bounds[data[0] % 4];
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  value = value.substr(0, value.find('\0'));
  ::setenv(kVar, value.c_str(), 1);

  __int128 want = 0;
  const bool parses = oracle(value, &want);
  std::optional<int64_t> got;
  const bool ok = fuzz::typed_error_or_result(
      [&] { got = detail::env_int(kVar, b[0], b[1]); });
  if (value.empty()) {
    fuzz::require(ok && !got, "an empty value is not unset");
  } else if (parses && want >= b[0] && want <= b[1]) {
    fuzz::require(
        ok && got && *got == int64_t(want),
        "a valid integer was refused or misread");
  } else {
    fuzz::require(!ok, "an invalid value was accepted");
  }

  std::optional<uint64_t> bits;
  const bool ok_bits =
      fuzz::typed_error_or_result([&] { bits = detail::env_u64_bits(kVar); });
  const __int128 lo = -(__int128(1) << 63), hi = (__int128(1) << 64) - 1;
  if (value.empty()) {
    fuzz::require(ok_bits && !bits, "an empty value is not unset (bits)");
  } else if (parses && want >= lo && want <= hi) {
    fuzz::require(
        ok_bits && bits && *bits == uint64_t(want),
        "a valid seed was refused or misread");
  } else {
    fuzz::require(!ok_bits, "an invalid seed was accepted");
  }

  const int64_t size_lo = data[0] & 4 ? 1024 : 0;
  const int64_t size_hi = data[0] & 8 ? int64_t(1) << 34 : int64_t(1) << 40;
  std::map<std::string, int64_t> want_sizes;
  const bool sizes_parse = sizes_oracle(value, size_lo, size_hi, &want_sizes);
  std::optional<std::map<std::string, int64_t>> sizes;
  const bool ok_sizes = fuzz::typed_error_or_result([&] {
    sizes = detail::env_sizes(kVar, {"a", "b"}, size_lo, size_hi, "a list");
  });
  if (value.empty()) {
    fuzz::require(ok_sizes && !sizes, "an empty list is not unset");
  } else if (sizes_parse) {
    fuzz::require(
        ok_sizes && sizes && *sizes == want_sizes,
        "a valid size list was refused or misread");
  } else {
    fuzz::require(!ok_sizes, "an invalid size list was accepted");
  }
  return 0;
}
