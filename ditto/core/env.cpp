#include "ditto/core/env.h"

#include <unistd.h>

#include <cstdlib>

#include "ditto/core/error.h"

extern char** environ;

namespace ditto::detail {
namespace {

// Digits only after an optional '-': the magnitude, or nothing on any other
// character or on overflow of uint64.
std::optional<uint64_t> magnitude(const std::string& s, bool* negative) {
  size_t at = 0;
  *negative = !s.empty() && s[0] == '-';
  at = *negative ? 1 : 0;
  if (at == s.size()) {
    return std::nullopt;
  }
  uint64_t v = 0;
  for (; at < s.size(); ++at) {
    const char c = s[at];
    if (c < '0' || c > '9' || __builtin_mul_overflow(v, uint64_t(10), &v) ||
        __builtin_add_overflow(v, uint64_t(c - '0'), &v)) {
      return std::nullopt;
    }
  }
  return v;
}

} // namespace

std::optional<std::string> env_text(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    return std::nullopt;
  }
  return std::string(v);
}

std::optional<int64_t> env_int(const char* name, int64_t lo, int64_t hi) {
  auto text = env_text(name);
  if (!text) {
    return std::nullopt;
  }
  bool negative = false;
  auto m = magnitude(*text, &negative);
  const __int128 v = m ? (negative ? -__int128(*m) : __int128(*m)) : 0;
  DITTO_CHECK(
      m && v >= lo && v <= hi,
      ValueError,
      name,
      "expected an integer in [",
      lo,
      ", ",
      hi,
      "] but got '",
      *text,
      "'");
  return int64_t(v);
}

std::optional<uint64_t> env_u64_bits(const char* name) {
  auto text = env_text(name);
  if (!text) {
    return std::nullopt;
  }
  bool negative = false;
  auto m = magnitude(*text, &negative);
  DITTO_CHECK(
      m && (!negative || *m <= (uint64_t(1) << 63)),
      ValueError,
      name,
      "expected an integer in [-2^63, 2^64) but got '",
      *text,
      "'");
  return negative ? uint64_t(0) - *m : *m;
}

std::optional<int64_t> parse_byte_size(const std::string& s) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') {
    ++digits;
  }
  // Leading zeros are fine, as in every integer of ditto's variables.
  size_t zeros = 0;
  while (zeros + 1 < digits && s[zeros] == '0') {
    ++zeros;
  }
  if (digits == 0 || digits - zeros > 13 || s.size() > digits + 1) {
    return std::nullopt;
  }
  int64_t unit = 1;
  if (s.size() == digits + 1) {
    const char u = s[digits];
    const int shift = u == 'K' || u == 'k' ? 10
        : u == 'M' || u == 'm'             ? 20
        : u == 'G' || u == 'g'             ? 30
                                           : -1;
    if (shift < 0) {
      return std::nullopt;
    }
    unit = int64_t(1) << shift;
  }
  // At most 13 significant digits: no overflow.
  const int64_t v = std::stoll(s.substr(zeros, digits - zeros));
  if (v > (int64_t(1) << 40) / unit) {
    return std::nullopt;
  }
  return v * unit;
}

std::optional<std::map<std::string, int64_t>> env_sizes(
    const char* name,
    const std::vector<std::string>& keys,
    int64_t lo,
    int64_t hi,
    const char* form) {
  auto text = env_text(name);
  if (!text) {
    return std::nullopt;
  }
  std::map<std::string, int64_t> out;
  size_t at = 0;
  while (at <= text->size()) {
    size_t end = text->find(',', at);
    if (end == std::string::npos) {
      end = text->size();
    }
    const std::string item = text->substr(at, end - at);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    std::optional<int64_t> v;
    if (eq != std::string::npos) {
      v = parse_byte_size(item.substr(eq + 1));
    }
    bool known = false;
    for (const std::string& k : keys) {
      known = known || k == key;
    }
    DITTO_CHECK(
        known && v && *v >= lo && *v <= hi,
        ValueError,
        name,
        "expected ",
        form,
        ", got \"",
        *text,
        "\"");
    out[key] = *v;
    at = end + 1;
  }
  return out;
}

std::map<std::string, std::string> env_ditto_variables() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("DITTO_", 0) == 0) {
      const size_t eq = kv.find('=');
      vars[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
  }
  return vars;
}

} // namespace ditto::detail
