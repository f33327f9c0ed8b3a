#pragma once

// `ditto verify`: runs a program several ways with DITTO_TRACE set and
// names the first op where the runs diverge (docs/verify.md).

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ditto::cli {

struct VerifyOptions {
  int runs = 0; // 0: 2 when no setting varies, else 1
  std::vector<std::string> threads, capabilities, workers, seeds;
  std::vector<std::string> env; // "VAR=a,b", repeatable
  int64_t resume_at = 0;
  std::string report;
  std::string keep; // keep traces and outputs in this directory
  bool exact = true; // rerun the first divergence for exact differences
  // Each run is stopped (its whole process group) after this many seconds;
  // 0: no limit. A day by default: long enough for a training run.
  double timeout_s = 86400;
  std::vector<std::string> program; // after --; empty: ditto train
};

// Adds verify's flags to cmd.
void add_verify_flags(CLI::App& cmd, VerifyOptions& o);

// Runs the verification; returns the exit code: 0 identical, 3 diverged,
// 1 error (a run failed or timed out, a program is missing), 2 usage. When
// verify gets SIGINT, SIGTERM or SIGHUP it stops the running program's
// process group, cleans up and dies of that signal.
int run_verify(const VerifyOptions& o);

} // namespace ditto::cli
