// Trace files (ditto/trace/compare.h): parsed into records and the
// program's registry, or a ValueError naming the file; a parsed trace
// compares with itself as identical and with a copy of itself cut short as
// diverging where the copy ends, and renders as a report.

#include <sstream>

#include "ditto/trace/compare.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<trace::TraceRecord> records;
  std::vector<determinism::OpInfo> registry;
  if (!fuzz::typed_error_or_result([&] {
        std::istringstream in(text);
        records = trace::parse_trace(in, "fuzz.jsonl", &registry);
      })) {
    return 0;
  }
  const trace::Comparison same = trace::compare_traces(records, records);
  fuzz::require(!same.first.has_value(), "a trace differs from itself");
  if (!records.empty()) {
    std::vector<trace::TraceRecord> shorter(records.begin(), records.end() - 1);
    const trace::Comparison c = trace::compare_traces(records, shorter);
    fuzz::require(
        c.first.has_value() && c.first->structural &&
            c.first->position == int64_t(shorter.size()),
        "a trace cut short does not diverge where it ends");
    trace::ReportInput in;
    in.title = "fuzz";
    in.a = records;
    in.b = shorter;
    in.comparison = c;
    const std::string html = trace::report_html(in);
    fuzz::require(
        html.find("</html>") != std::string::npos, "a report is not whole");
  }
  return 0;
}
