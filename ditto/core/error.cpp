#include "ditto/core/error.h"

#include <cstring>

namespace ditto::detail {
namespace {

// Frames deeper than this are counted but not named (no op nests so deep).
constexpr int kNamed = 32;
thread_local const char* tls_names[kNamed];
thread_local int tls_depth = 0;

} // namespace

OpNameFrame::OpNameFrame(const char* name) {
  if (tls_depth < kNamed) {
    tls_names[tls_depth] = name;
  }
  ++tls_depth;
}

OpNameFrame::~OpNameFrame() {
  --tls_depth;
}

const char* reported_op(const char* op) {
  const int named = tls_depth < kNamed ? tls_depth : kNamed;
  for (int k = 1; k < named; ++k) {
    if (std::strcmp(op, tls_names[k]) == 0) {
      return tls_names[0];
    }
  }
  return op;
}

} // namespace ditto::detail
