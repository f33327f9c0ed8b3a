#pragma once

// Reading trace files (ditto/trace/trace.h, docs/verify.md) and comparing
// two runs op by op: what `ditto verify` reports, and its HTML page.

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/determinism/context.h"

namespace ditto::trace {

// One output of a traced op, as the file has it.
struct TracedOutput {
  std::vector<int64_t> shape;
  std::string dtype;
  std::string fingerprint; // 16 hex digits
  // Values at evenly spaced logical positions (first and last included);
  // NaN and infinities as themselves.
  std::vector<double> sample;
  // Every value in logical order, for the one record a run was asked to
  // keep whole (DITTO_TRACE_FULL=position); empty otherwise.
  std::vector<double> values;
};

struct TraceRecord {
  int64_t index = 0; // position in its file
  std::string op;
  std::string phase; // forward, backward, optimizer, eval, data
  int64_t step = 0;
  std::string module; // dotted path, empty outside modules
  std::string type; // the module's type
  // An undefined output (a gradient not asked for) is nullopt.
  std::vector<std::optional<TracedOutput>> outputs;
};

// Reads a whole trace file; ValueError naming the file and line if it is
// not one (a truncated file, a line that is not a record).
// With registry, also the traced program's registry of nondeterministic
// ops (its custom ops included), from the end line.
DITTO_API std::vector<TraceRecord> read_trace(
    const std::string& path,
    std::vector<determinism::OpInfo>* registry = nullptr);
// The same from a stream; path names it in errors.
DITTO_API std::vector<TraceRecord> parse_trace(
    std::istream& in,
    const std::string& path,
    std::vector<determinism::OpInfo>* registry = nullptr);

// How far apart two versions of one op's outputs are: the largest absolute
// and relative difference (|a - b| / max(|a|, |b|)) over the values both
// traces hold, every value when both have them all (exact), else the
// samples. A NaN against a number, or infinities of opposite signs, count
// as an infinite difference.
struct Difference {
  double max_abs = 0;
  double max_rel = 0;
  bool exact = false;
  // The fingerprints differ although every compared value agrees: the
  // difference lies between the samples (or in a NaN's payload).
  bool below_samples = false;
};

// The first place two traces part.
struct Divergence {
  int64_t position = 0; // index of the record in both files
  // The runs did different things there (another op, module, shape,
  // dtype, or one run ended), rather than the same op with other values.
  bool structural = false;
  std::string what; // for a structural divergence: what differs
  int64_t output = 0; // the first output whose values differ
  Difference difference;
};

struct Comparison {
  int64_t length_a = 0, length_b = 0;
  std::optional<Divergence> first;
  // Per position (up to the shorter length): the largest relative
  // difference over the outputs, 0 where the records are identical.
  std::vector<Difference> per_op;
  int64_t differing = 0; // positions whose outputs differ
};

DITTO_API Difference difference(const TracedOutput& a, const TracedOutput& b);

// Compares two traces position by position.
DITTO_API Comparison compare_traces(
    const std::vector<TraceRecord>& a,
    const std::vector<TraceRecord>& b);

// What the HTML report shows.
struct ReportInput {
  std::string title; // the command that was verified
  std::string label_a, label_b; // the two runs' settings
  std::vector<TraceRecord> a, b;
  Comparison comparison;
  std::string summary; // the verdict as `ditto verify` printed it
};

// One self-contained HTML page (no scripts, no network): the summary, the
// per-op relative difference along the run as an SVG chart (log scale,
// phases shaded, the first divergence marked) and a table of the first 20
// differing ops.
DITTO_API std::string report_html(const ReportInput& in);

} // namespace ditto::trace
