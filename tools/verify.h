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
  std::vector<std::string> program; // after --; empty: ditto train
};

// Adds verify's flags to cmd.
void add_verify_flags(CLI::App& cmd, VerifyOptions& o);

// Runs the verification; returns the exit code: 0 identical, 3 diverged,
// 1 error (a run failed, a program is missing), 2 usage.
int run_verify(const VerifyOptions& o);

} // namespace ditto::cli
