#pragma once

// What `ditto train` and `ditto verify` share in reading flags and printing
// errors. Validators for the numeric flags:
// CLI11's Range lets NaN through (every comparison with NaN is false), and
// infinities where the bound is a type's limit; a value is taken here only
// when it is written plainly (an optional '-', digits; no spaces, no '+'),
// is finite, and lies in the range the help states. A bad value is a usage
// error (exit 2) naming the flag and the value.

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace ditto::cli {

// s as an integer, or nothing unless it is an optional '-' then only
// digits, within int64.
inline std::optional<int64_t> plain_integer(const std::string& s) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  const bool digits = !s.empty() && s[0] != '+' &&
      s.find_first_not_of("-0123456789") == std::string::npos;
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (!digits || ec != std::errc() || p != end) {
    return std::nullopt;
  }
  return v;
}

// An integer flag in [lo, hi].
inline CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range =
      "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        const std::optional<int64_t> v = plain_integer(s);
        if (!v || *v < lo || *v > hi) {
          return "'" + s + "' is not an integer in " + range;
        }
        return {};
      },
      range);
}

// A finite number flag in [lo, hi] ((lo, hi] with lo_open).
inline CLI::Validator number_in(double lo, double hi, bool lo_open = false) {
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  const std::string range =
      std::string(lo_open ? "(" : "[") + text(lo) + ", " + text(hi) + "]";
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& s) -> std::string {
        char* end = nullptr;
        const bool plain = !s.empty() && s[0] != '+' &&
            s.find_first_of(" \t\n\r\f\v") == std::string::npos;
        const double v = plain ? std::strtod(s.c_str(), &end) : 0.0;
        const bool ok = plain && end == s.c_str() + s.size() &&
            std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
        if (!ok) {
          return "'" + s + "' is not a finite number in " + range;
        }
        return {};
      },
      range);
}

// A seed: an integer in [-2^63, 2^64), a negative one taken as its
// two's-complement bits (as manual_seed and DITTO_SEED take it).
inline std::optional<uint64_t> seed_bits(const std::string& s) {
  if (!s.empty() && s[0] == '-') {
    const std::optional<int64_t> v = plain_integer(s);
    return v ? std::optional<uint64_t>(uint64_t(*v)) : std::nullopt;
  }
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  const bool digits =
      !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (!digits || ec != std::errc() || p != end) {
    return std::nullopt;
  }
  return v;
}

inline CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (!seed_bits(s)) {
          return "'" + s + "' is not an integer in [-2^63, 2^64)";
        }
        return {};
      },
      "[-2^63, 2^64)");
}

// An error message as one line: a file's contents echoed in it (a tensor
// name, a metadata value, a program's output) may hold newlines and other
// control characters; they are written as escapes (\n, \r, \t, \xNN), so
// every error ditto prints is one line naming the file or setting.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace ditto::cli
