// Prints the registry of nondeterministic ops as the markdown table of
// docs/determinism.md. CTest checks that the document holds exactly this
// table, so the list cannot drift from the code; `make docs` rewrites it.
#include <cstdio>

#include "ditto/ditto.h"

int main() {
  std::fputs(ditto::determinism::registry_markdown().c_str(), stdout);
  return 0;
}
