// The numeric flag values of `ditto train` and `ditto verify`
// (tools/cli_common.h) against an oracle written from their rules: an
// integer is an optional '-' and digits, nothing else, within its range
// (computed here in 128 bits); a seed is such an integer in [-2^63, 2^64),
// a negative one as its two's-complement bits; a number is finite and in
// range. one_line leaves no control character. Needs no library.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/cli_common.h"

namespace {

void require(bool cond, const char* what, const std::string& input) {
  if (!cond) {
    std::fprintf(stderr, "fuzz: %s for '%s'\n", what, input.c_str());
    std::abort();
  }
}

// The oracle: s as a 128-bit integer when it is '-'? digits+ and fits.
bool oracle_integer(const std::string& s, __int128& v) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) {
    return false;
  }
  __int128 x = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') {
      return false;
    }
    x = x * 10 + (s[i] - '0');
    if (x > (__int128(1) << 70)) {
      return false; // past any range checked here
    }
  }
  v = s[0] == '-' ? -x : x;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto::cli;
  std::string s(reinterpret_cast<const char*>(data), size);
  __int128 v = 0;
  const bool is_int = oracle_integer(s, v);
  const __int128 kMin = -(__int128(1) << 63), kMax = (__int128(1) << 63) - 1;

  const std::optional<int64_t> got = plain_integer(s);
  require(
      got.has_value() == (is_int && v >= kMin && v <= kMax),
      "plain_integer accepts what the rules refuse, or the reverse",
      s);
  if (got) {
    require(__int128(*got) == v, "plain_integer's value", s);
  }

  std::string copy = s;
  const bool in_range = integer_in(-5, 1 << 20)(copy).empty();
  require(
      in_range == (is_int && v >= -5 && v <= (1 << 20)),
      "integer_in's verdict",
      s);

  const std::optional<uint64_t> seed = seed_bits(s);
  const bool seed_ok = is_int && v >= kMin && v < (__int128(1) << 64);
  require(seed.has_value() == seed_ok, "seed_bits' verdict", s);
  if (seed) {
    require(*seed == uint64_t(v), "seed_bits' bits", s);
  }

  copy = s;
  if (number_in(0.0, 1e6, true)(copy).empty()) {
    const double d = std::strtod(s.c_str(), nullptr);
    require(
        std::isfinite(d) && d > 0 && d <= 1e6 && !s.empty() && s[0] != '+' &&
            s.find_first_of(" \t\n\r\f\v") == std::string::npos,
        "number_in accepted what the rules refuse",
        s);
  }

  for (char c : one_line(s)) {
    const auto u = static_cast<unsigned char>(c);
    require(u >= 0x20 && u != 0x7f, "one_line left a control character", s);
  }
  return 0;
}
