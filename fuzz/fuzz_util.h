// Shared by the fuzz targets: the contract every target checks, and a
// scratch file for parsers that read files.

#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ditto/ditto.h"

namespace ditto::fuzz {

// Runs f: a result or a typed ditto error (ValueError, TypeError,
// IndexError) is fine; any other exception is a bug (abort, so libFuzzer
// records the input).
template <typename F>
bool typed_error_or_result(F f) {
  try {
    f();
    return true;
  } catch (const ValueError&) {
  } catch (const TypeError&) {
  } catch (const IndexError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an untyped exception: %s\n", e.what());
    std::abort();
  }
  return false;
}

// Aborts with a message when cond does not hold.
inline void require(bool cond, const char* what) {
  if (!cond) {
    std::fprintf(stderr, "fuzz: %s\n", what);
    std::abort();
  }
}

// A file of this process holding the input (rewritten per input).
inline std::string scratch_file(
    const uint8_t* data,
    size_t size,
    const char* suffix) {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp ? tmp : "/tmp");
  }();
  const std::string path =
      dir + "/ditto_fuzz_" + std::to_string(::getpid()) + suffix;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

} // namespace ditto::fuzz
