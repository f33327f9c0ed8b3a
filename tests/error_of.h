// The message of the error a call raises, for tests that check what it
// says; shared by the test programs.

#pragma once

#include <string>

#include "ditto/core/error.h"

namespace ditto::test {

// What f raised as E (any ditto error by default), or "" when it raised
// nothing; another exception propagates and fails the test.
template <typename E = Error, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

} // namespace ditto::test
