// The `ditto` command line tool.
//
//   ditto ops [--markdown]   the registry of ops with a nondeterministic
//                            implementation (the table of docs/determinism.md)
//   ditto config             version, CPU capability, threads, switches
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "ditto/ditto.h"

namespace {

int usage(std::FILE* to, int code) {
  std::fputs(
      "usage: ditto ops [--markdown]   ops with a nondeterministic "
      "implementation\n"
      "       ditto config             build and runtime configuration\n",
      to);
  return code;
}

void print_ops() {
  auto ops = ditto::determinism::registered_ops();
  size_t width = 2;
  for (const auto& op : ops) {
    width = std::max(width, op.name.size());
  }
  std::printf(
      "%-*s  %-13s  %-8s  %s\n",
      int(width),
      "op",
      "deterministic",
      "dtypes",
      "why the fast variant is nondeterministic");
  for (const auto& op : ops) {
    std::printf(
        "%-*s  %-13s  %-8s  %s\n",
        int(width),
        op.name.c_str(),
        op.has_deterministic_alternative ? "variant" : "alert",
        op.dtypes.c_str(),
        op.reason.c_str());
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return usage(stderr, 2);
  }
  const std::string cmd = argv[1];
  if (cmd == "ops" && argc == 3 && std::strcmp(argv[2], "--markdown") == 0) {
    std::fputs(ditto::determinism::registry_markdown().c_str(), stdout);
    return 0;
  }
  if (cmd == "ops" && argc == 2) {
    print_ops();
    return 0;
  }
  if (cmd == "config" && argc == 2) {
    std::cout << ditto::config_report();
    return 0;
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    return usage(stdout, 0);
  }
  std::fprintf(stderr, "ditto: unknown command '%s'\n", cmd.c_str());
  return usage(stderr, 2);
}
