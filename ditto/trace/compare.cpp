#include "ditto/trace/compare.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "ditto/core/error.h"
#include "ditto/core/file_io.h"
#include "ditto/core/json_int.h"
#include "ditto/core/json_read.h"

namespace ditto::trace {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

double json_value(const json& v) {
  if (v.is_number()) {
    return v.get<double>();
  }
  const std::string s = v.get<std::string>();
  if (s == "nan") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (s == "inf") {
    return kInf;
  }
  if (s == "-inf") {
    return -kInf;
  }
  throw std::invalid_argument("not a value: " + s);
}

std::vector<double> json_values(const json& a) {
  std::vector<double> out;
  out.reserve(a.size());
  for (const json& v : a) {
    out.push_back(json_value(v));
  }
  return out;
}

TracedOutput parse_output(const json& j) {
  TracedOutput o;
  o.shape = detail::json_ints(j.at("shape"));
  o.dtype = j.at("dtype").get<std::string>();
  o.fingerprint = j.at("fp").get<std::string>();
  o.sample = json_values(j.at("sample"));
  if (j.contains("values")) {
    o.values = json_values(j.at("values"));
  }
  return o;
}

// |a - b| and |a - b| / max(|a|, |b|) of two values.
std::pair<double, double> value_difference(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? std::pair{0.0, 0.0}
                                          : std::pair{kInf, kInf};
  }
  if (a == b) {
    return {0.0, 0.0};
  }
  const double d = std::fabs(a - b);
  if (std::isinf(d)) {
    return {kInf, kInf};
  }
  return {d, d / std::max(std::fabs(a), std::fabs(b))};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

std::string escape_html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double v) {
  if (std::isinf(v)) {
    return "inf";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string fixed(double v, int digits = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

const char* phase_color(const std::string& phase) {
  if (phase == "forward") {
    return "#e8f0fe";
  }
  if (phase == "backward") {
    return "#fdeee0";
  }
  if (phase == "optimizer") {
    return "#e6f4ea";
  }
  if (phase == "eval") {
    return "#f3e8fd";
  }
  return "#f1f3f4";
}

// A record's line holds a sample of each output, or with DITTO_TRACE_FULL
// every value of one record's outputs: a trace line is refused past 1 GiB.
constexpr size_t kMaxTraceLine = size_t(1) << 30;

// std::getline with a limit: false at the end of the stream, ValueError
// naming the line once it passes kMaxTraceLine (nothing more is read).
bool read_line(
    std::istream& in,
    std::string& line,
    const std::string& path,
    int64_t line_no) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      return !line.empty();
    }
    if (c == '\n') {
      return true;
    }
    DITTO_CHECK(
        line.size() < kMaxTraceLine,
        ValueError,
        "read_trace",
        path,
        ":",
        line_no,
        ": a line longer than ",
        kMaxTraceLine,
        " bytes");
    line.push_back(char(c));
  }
}

} // namespace

std::vector<TraceRecord> read_trace(
    const std::string& path,
    std::vector<determinism::OpInfo>* registry) {
  detail::check_regular_file(path, "read_trace");
  std::ifstream in(path, std::ios::binary);
  DITTO_CHECK(in.good(), ValueError, "read_trace", "cannot open '", path, "'");
  return parse_trace(in, path, registry);
}

std::vector<TraceRecord> parse_trace(
    std::istream& in,
    const std::string& path,
    std::vector<determinism::OpInfo>* registry) {
  std::vector<TraceRecord> records;
  std::string line;
  int64_t line_no = 0;
  bool header = false, end = false;
  while (read_line(in, line, path, line_no + 1)) {
    ++line_no;
    DITTO_CHECK(
        !end,
        ValueError,
        "read_trace",
        path,
        ":",
        line_no,
        ": a line after the trace's end");
    try {
      const json j = detail::parse_json(
          line,
          "read_trace",
          detail::str_cat(path, ":", line_no),
          kMaxTraceLine);
      if (!header) {
        DITTO_CHECK(
            j.is_object() && j.value("ditto_trace", json()) == 1,
            ValueError,
            "read_trace",
            path,
            ":1: not a ditto trace (version 1)");
        header = true;
        continue;
      }
      if (j.contains("end")) {
        const int64_t counted = detail::json_int(j.at("records"));
        DITTO_CHECK(
            counted == int64_t(records.size()),
            ValueError,
            "read_trace",
            path,
            ":",
            line_no,
            ": the end line counts ",
            counted,
            " records, the file has ",
            records.size());
        if (registry != nullptr) {
          registry->clear();
          for (const json& e : j.value("registry", json::array())) {
            registry->push_back(
                {e.at("op").get<std::string>(),
                 e.at("reason").get<std::string>(),
                 e.at("alternative").get<bool>(),
                 e.at("dtypes").get<std::string>(),
                 e.at("cost").get<std::string>()});
          }
        }
        end = true;
        continue;
      }
      TraceRecord r;
      r.index = detail::json_int(j.at("i"));
      DITTO_CHECK(
          r.index == int64_t(records.size()),
          ValueError,
          "read_trace",
          path,
          ":",
          line_no,
          ": record ",
          r.index,
          " where ",
          records.size(),
          " was expected");
      r.op = j.at("op").get<std::string>();
      r.phase = j.at("phase").get<std::string>();
      r.step = detail::json_int(j.at("step"));
      r.module = j.value("module", "");
      r.type = j.value("type", "");
      for (const json& o : j.at("out")) {
        if (o.is_null()) {
          r.outputs.emplace_back(std::nullopt);
        } else {
          r.outputs.emplace_back(parse_output(o));
        }
      }
      records.push_back(std::move(r));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      detail::throw_error<ValueError>(
          "read_trace",
          path,
          ":",
          line_no,
          ": not a trace record (",
          e.what(),
          ")");
    }
  }
  DITTO_CHECK(
      header, ValueError, "read_trace", path, ": empty, not a ditto trace");
  DITTO_CHECK(
      end,
      ValueError,
      "read_trace",
      path,
      ": the trace has no end line (the program did not finish, or the file "
      "was cut short)");
  return records;
}

Difference difference(const TracedOutput& a, const TracedOutput& b) {
  Difference d;
  const bool whole = !a.values.empty() && a.values.size() == b.values.size();
  const std::vector<double>& va = whole ? a.values : a.sample;
  const std::vector<double>& vb = whole ? b.values : b.sample;
  d.exact = whole;
  for (size_t i = 0; i < std::min(va.size(), vb.size()); ++i) {
    const auto [abs_d, rel_d] = value_difference(va[i], vb[i]);
    d.max_abs = std::max(d.max_abs, abs_d);
    d.max_rel = std::max(d.max_rel, rel_d);
  }
  d.below_samples = a.fingerprint != b.fingerprint && d.max_abs == 0;
  return d;
}

Comparison compare_traces(
    const std::vector<TraceRecord>& a,
    const std::vector<TraceRecord>& b) {
  Comparison c;
  c.length_a = int64_t(a.size());
  c.length_b = int64_t(b.size());
  const size_t n = std::min(a.size(), b.size());
  c.per_op.resize(n);
  auto diverge = [&](size_t at, std::string what) {
    if (!c.first) {
      Divergence d;
      d.position = int64_t(at);
      d.structural = true;
      d.what = std::move(what);
      c.first = d;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    const TraceRecord& x = a[i];
    const TraceRecord& y = b[i];
    if (x.op != y.op || x.phase != y.phase || x.module != y.module) {
      // From here on the runs do different things: no use comparing values.
      diverge(
          i,
          "run A ran " + x.op + " (" + x.phase +
              (x.module.empty() ? "" : ", " + x.module) + "), run B " + y.op +
              " (" + y.phase + (y.module.empty() ? "" : ", " + y.module) + ")");
      c.per_op.resize(i);
      return c;
    }
    if (x.outputs.size() != y.outputs.size()) {
      diverge(
          i,
          x.op + " has " + std::to_string(x.outputs.size()) +
              " outputs in run A, " + std::to_string(y.outputs.size()) +
              " in run B");
      c.per_op.resize(i);
      return c;
    }
    Difference worst;
    bool differs = false;
    int64_t first_output = -1;
    for (size_t k = 0; k < x.outputs.size(); ++k) {
      const auto& ox = x.outputs[k];
      const auto& oy = y.outputs[k];
      if (ox.has_value() != oy.has_value() ||
          (ox && (ox->shape != oy->shape || ox->dtype != oy->dtype))) {
        diverge(
            i,
            x.op + " output " + std::to_string(k) + " is " +
                (ox ? ox->dtype + " " + shape_text(ox->shape) : "undefined") +
                " in run A, " +
                (oy ? oy->dtype + " " + shape_text(oy->shape) : "undefined") +
                " in run B");
        c.per_op.resize(i);
        return c;
      }
      if (!ox || ox->fingerprint == oy->fingerprint) {
        continue;
      }
      const Difference d = difference(*ox, *oy);
      if (!differs || d.max_rel > worst.max_rel) {
        worst.max_rel = std::max(worst.max_rel, d.max_rel);
      }
      worst.max_abs = std::max(worst.max_abs, d.max_abs);
      worst.exact = (!differs || worst.exact) && d.exact;
      worst.below_samples =
          (!differs || worst.below_samples) && d.below_samples;
      if (first_output < 0) {
        first_output = int64_t(k);
      }
      differs = true;
    }
    if (differs) {
      c.per_op[i] = worst;
      ++c.differing;
      if (!c.first) {
        Divergence d;
        d.position = int64_t(i);
        d.output = first_output;
        d.difference = worst;
        c.first = d;
      }
    }
  }
  if (a.size() != b.size()) {
    diverge(
        n,
        "run " + std::string(a.size() < b.size() ? "A" : "B") +
            " ended after " + std::to_string(n) + " ops, run " +
            (a.size() < b.size() ? "B" : "A") + " ran " +
            std::to_string(std::max(a.size(), b.size())));
  }
  return c;
}

std::string report_html(const ReportInput& in) {
  const Comparison& c = in.comparison;
  const size_t n = c.per_op.size();
  std::string h;
  h +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>ditto verify: " + escape_html(in.title) + "</title>\n";
  h += "<style>body{font-family:sans-serif;margin:24px;color:#202124}"
       "table{border-collapse:collapse;font-size:13px}"
       "td,th{border:1px solid #dadce0;padding:3px 8px;text-align:left}"
       "th{background:#f1f3f4}code,pre{font-family:monospace}"
       ".legend span{display:inline-block;padding:2px 8px;margin-right:6px}"
       "</style>\n</head>\n<body>\n";
  h += "<h1>ditto verify</h1>\n<p><code>" + escape_html(in.title) +
      "</code></p>\n";
  h += "<p>Run A: <code>" + escape_html(in.label_a) +
      "</code><br>Run B: <code>" + escape_html(in.label_b) + "</code></p>\n";
  h += "<pre id=\"summary\">" + escape_html(in.summary) + "</pre>\n";

  // The chart: x = op position, y = log10 of the largest relative
  // difference, from 1e-16 (bottom) to 1 (top).
  const double width = 960, height = 320, left = 60, right = 10, top = 10,
               bottom = 40;
  const double pw = width - left - right, ph = height - top - bottom;
  const double lo = -16, hi = 0;
  const size_t span = std::max<size_t>(n, 1);
  auto x_of = [&](double pos) { return left + pw * pos / double(span); };
  auto y_of = [&](double rel) {
    double l = rel > 0 ? std::log10(rel) : lo;
    l = std::clamp(l, lo, hi);
    return top + ph * (hi - l) / (hi - lo);
  };
  h += "<h2>Relative difference per op</h2>\n";
  h += "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      fixed(width, 0) + "\" height=\"" + fixed(height, 0) +
      "\" viewBox=\"0 0 " + fixed(width, 0) + " " + fixed(height, 0) + "\">\n";
  // Phase bands.
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && in.a[j].phase == in.a[i].phase) {
      ++j;
    }
    h += "<rect class=\"phase\" data-phase=\"" + in.a[i].phase + "\" x=\"" +
        fixed(x_of(double(i))) + "\" y=\"" + fixed(top) + "\" width=\"" +
        fixed(std::max(0.5, x_of(double(j)) - x_of(double(i)))) +
        "\" height=\"" + fixed(ph) + "\" fill=\"" + phase_color(in.a[i].phase) +
        "\"/>\n";
    i = j;
  }
  // Axes and decades.
  for (int e = int(lo); e <= int(hi); e += 2) {
    const double y = y_of(std::pow(10.0, e));
    h += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(y) + "\" x2=\"" +
        fixed(left + pw) + "\" y2=\"" + fixed(y) +
        "\" stroke=\"#dadce0\" stroke-width=\"0.5\"/>\n";
    h += "<text x=\"" + fixed(left - 6) + "\" y=\"" + fixed(y + 4) +
        "\" font-size=\"11\" text-anchor=\"end\">1e" + std::to_string(e) +
        "</text>\n";
  }
  for (int q = 0; q <= 4; ++q) {
    const size_t pos = span * size_t(q) / 4;
    h += "<text x=\"" + fixed(x_of(double(pos))) + "\" y=\"" +
        fixed(top + ph + 14) + "\" font-size=\"11\" text-anchor=\"middle\">" +
        std::to_string(pos) + "</text>\n";
  }
  h += "<text x=\"" + fixed(left + pw / 2) + "\" y=\"" + fixed(height - 8) +
      "\" font-size=\"12\" text-anchor=\"middle\">op position in the run (" +
      std::to_string(n) + " ops compared)</text>\n";
  // Points: differing ops (red), differing below the samples' resolution
  // (orange, at the bottom).
  for (size_t i = 0; i < n; ++i) {
    const Difference& d = c.per_op[i];
    if (d.max_rel == 0 && !d.below_samples) {
      continue;
    }
    h += "<circle class=\"op\" data-pos=\"" + std::to_string(i) + "\" cx=\"" +
        fixed(x_of(double(i) + 0.5)) + "\" cy=\"" +
        fixed(y_of(d.below_samples ? 0 : d.max_rel)) + "\" r=\"2.5\" fill=\"" +
        (d.below_samples ? "#f29900" : "#d93025") + "\"><title>#" +
        std::to_string(i) + " " + escape_html(in.a[i].op) + ": " +
        number(d.max_rel) + "</title></circle>\n";
  }
  if (c.first) {
    const double x = x_of(double(c.first->position) + 0.5);
    h += "<line id=\"first-divergence\" x1=\"" + fixed(x) + "\" y1=\"" +
        fixed(top) + "\" x2=\"" + fixed(x) + "\" y2=\"" + fixed(top + ph) +
        "\" stroke=\"#d93025\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n";
    h += "<text x=\"" + fixed(std::min(x + 4, left + pw - 150)) + "\" y=\"" +
        fixed(top + ph - 8) +
        "\" font-size=\"12\" fill=\"#d93025\">first divergence: #" +
        std::to_string(c.first->position) + "</text>\n";
  }
  h += "<rect x=\"" + fixed(left) + "\" y=\"" + fixed(top) + "\" width=\"" +
      fixed(pw) + "\" height=\"" + fixed(ph) +
      "\" fill=\"none\" stroke=\"#5f6368\"/>\n</svg>\n";
  h += "<p class=\"legend\">";
  for (const char* p : {"data", "forward", "backward", "optimizer", "eval"}) {
    h += "<span style=\"background:" + std::string(phase_color(p)) + "\">" + p +
        "</span>";
  }
  h += " Red: largest relative difference of the op's outputs over the "
       "compared values (log scale, clamped to [1e-16, 1]); orange: "
       "fingerprints differ between the sampled values.</p>\n";

  // The table of the first 20 differing ops.
  h += "<h2>First differing ops</h2>\n<table id=\"ops\">\n<tr><th>#</th>"
       "<th>op</th><th>module</th><th>phase</th><th>step</th>"
       "<th>output</th><th>max abs</th><th>max rel</th></tr>\n";
  int shown = 0;
  for (size_t i = 0; i < n && shown < 20; ++i) {
    const Difference& d = c.per_op[i];
    if (d.max_rel == 0 && !d.below_samples) {
      continue;
    }
    const TraceRecord& r = in.a[i];
    std::string out;
    for (const auto& o : r.outputs) {
      if (o) {
        out = o->dtype + " " + shape_text(o->shape);
        break;
      }
    }
    h += "<tr><td>" + std::to_string(i) + "</td><td>" + escape_html(r.op) +
        "</td><td>" +
        escape_html(r.module.empty() ? "" : r.module + " (" + r.type + ")") +
        "</td><td>" + r.phase + "</td><td>" + std::to_string(r.step) +
        "</td><td>" + escape_html(out) + "</td><td>" +
        (d.below_samples ? "&lt; sampled" : number(d.max_abs)) + "</td><td>" +
        (d.below_samples ? "&lt; sampled" : number(d.max_rel)) +
        (d.exact ? " (exact)" : "") + "</td></tr>\n";
    ++shown;
  }
  h += "</table>\n";
  if (shown == 0) {
    h += "<p>No op differs.</p>\n";
  }
  h += "</body>\n</html>\n";
  return h;
}

} // namespace ditto::trace
