// Tensor printing in LibTorch's C++ form (`std::cout << t`,
// `t.print()`): at::print of ATen/core/Formatting.cpp, 1.13. print.cpp has
// Python's repr.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <ios>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "ditto/core/array_ref.h"
#include "ditto/core/dtype.h"
#include "ditto/core/env.h"
#include "ditto/core/print.h"
#include "ditto/core/tensor.h"

namespace ditto {

// ---- LibTorch's C++ form (at::print in ATen/core/Formatting.cpp, 1.13):
// the same iostream formatting, quirks included, so the text is LibTorch's.
namespace {

// set_print_style's choice; until it is called, DITTO_PRINT_STYLE's.
std::atomic<bool> g_print_style_set{false};
std::atomic<PrintStyle> g_print_style{PrintStyle::kPython};

// Restores the stream's format flags, precision and fill on exit.
class StreamFormat {
 public:
  explicit StreamFormat(std::ostream& out) : out_(out), saved_(nullptr) {
    saved_.copyfmt(out);
  }
  ~StreamFormat() {
    out_.copyfmt(saved_);
  }
  StreamFormat(const StreamFormat&) = delete;
  StreamFormat& operator=(const StreamFormat&) = delete;

 private:
  std::ostream& out_;
  std::ios saved_;
};

void default_float(std::ostream& out) {
  out.unsetf(std::ios_base::floatfield);
}

// The values of a float64 contiguous tensor.
std::vector<double> values_of(const Tensor& t) {
  const double* p = t.data_ptr<double>();
  return std::vector<double>(p, p + t.numel());
}

// LibTorch's common format of values: sets the stream's float format and
// returns the scale the values are divided by and the column width.
std::pair<double, int64_t> column_format(
    std::ostream& out,
    const std::vector<double>& v) {
  if (v.empty()) {
    return {1.0, 0};
  }
  bool integers = true;
  for (double z : v) {
    if (std::isfinite(z) && z != std::ceil(z)) {
      integers = false;
      break;
    }
  }
  size_t first = 0;
  while (first < v.size() && !std::isfinite(v[first])) {
    ++first;
  }
  double exp_min = 1, exp_max = 1;
  if (first < v.size()) {
    exp_min = std::fabs(v[first]);
    exp_max = std::fabs(v[first]);
    for (size_t i = first; i < v.size(); ++i) {
      const double z = std::fabs(v[i]);
      if (std::isfinite(z)) {
        exp_min = std::min(exp_min, z);
        if (v[i] > exp_max) { // LibTorch compares the signed value here
          exp_max = z;
        }
      }
    }
    exp_min = exp_min != 0 ? std::floor(std::log10(exp_min)) + 1 : 1;
    exp_max = exp_max != 0 ? std::floor(std::log10(exp_max)) + 1 : 1;
  }
  double scale = 1;
  int64_t width = 0;
  if (integers) {
    if (exp_max > 9) {
      width = 11;
      out << std::scientific << std::setprecision(4);
    } else {
      width = int64_t(exp_max) + 1;
      default_float(out);
    }
  } else if (exp_max - exp_min > 4) {
    width = 11;
    if (std::fabs(exp_max) > 99 || std::fabs(exp_min) > 99) {
      ++width;
    }
    out << std::scientific << std::setprecision(4);
  } else if (exp_max > 5 || exp_max < 0) {
    width = 7;
    scale = std::pow(10, exp_max - 1);
    out << std::fixed << std::setprecision(4);
  } else {
    width = exp_max == 0 ? 7 : int64_t(exp_max) + 6;
    out << std::fixed << std::setprecision(4);
  }
  return {scale, width};
}

void indent(std::ostream& out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out << ' ';
  }
}

void print_scale(std::ostream& out, double scale) {
  StreamFormat keep(out);
  default_float(out);
  out << scale << " *" << std::endl;
}

// A [rows, cols] float64 contiguous matrix in column blocks.
void print_matrix(
    std::ostream& out,
    const Tensor& m,
    int64_t linesize,
    int64_t ind) {
  const std::vector<double> v = values_of(m);
  auto [scale, width] = column_format(out, v);
  const int64_t rows = m.size(0), cols = m.size(1);
  indent(out, ind);
  const int64_t per_line = (linesize - ind) / (width + 1);
  int64_t first = 0;
  while (first < cols) {
    const int64_t last =
        first + per_line <= cols ? first + per_line - 1 : cols - 1;
    if (per_line < cols) {
      if (first != 0) {
        out << std::endl;
      }
      // (LibTorch ends this line with the block's first row.)
      out << "Columns " << first + 1 << " to " << last + 1;
      indent(out, ind);
    }
    if (scale != 1) {
      print_scale(out, scale);
      indent(out, ind);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = first; c <= last; ++c) {
        out << std::setw(int(width)) << v[size_t(r * cols + c)] / scale;
        if (c == last) {
          out << std::endl;
          if (r != rows - 1) {
            indent(out, ind);
            if (scale != 1) {
              out << " ";
            }
          }
        } else {
          out << " ";
        }
      }
    }
    first = last + 1;
  }
}

// Each matrix of a tensor of 3 or more dims, the first index fastest (as
// LibTorch counts).
void print_matrices(std::ostream& out, const Tensor& t, int64_t linesize) {
  const int64_t lead = t.dim() - 2;
  std::vector<int64_t> counter(size_t(lead), 0);
  counter[0] = -1;
  bool start = true;
  for (;;) {
    bool finished = false;
    for (int64_t i = 0;; ++i) {
      if (++counter[size_t(i)] >= t.size(i)) {
        if (i == lead - 1) {
          finished = true;
          break;
        }
        counter[size_t(i)] = 0;
      } else {
        break;
      }
    }
    if (finished) {
      break;
    }
    if (!start) {
      out << std::endl;
    }
    start = false;
    out << "(";
    Tensor m = t;
    for (int64_t i = 0; i < lead; ++i) {
      m = m.select(0, counter[size_t(i)]);
      out << counter[size_t(i)] + 1 << ",";
    }
    out << ".,.) = " << std::endl;
    print_matrix(out, m, linesize, 1);
  }
}

const char* libtorch_scalar_name(Dtype d) {
  switch (d) {
    case kUInt8:
      return "Byte";
    case kInt32:
      return "Int";
    case kInt64:
      return "Long";
    case kFloat32:
      return "Float";
    case kFloat64:
      return "Double";
    case kBool:
      return "Bool";
    case kInt8:
      return "Char";
    case kInt16:
      return "Short";
    case kFloat16:
      return "Half";
    case kBFloat16:
      return "BFloat16";
  }
  return "Unknown";
}

} // namespace

void set_print_style(PrintStyle style) {
  g_print_style.store(style);
  g_print_style_set.store(true);
}

PrintStyle print_style() {
  if (g_print_style_set.load()) {
    return g_print_style.load();
  }
  const char* name = "DITTO_PRINT_STYLE";
  const std::optional<std::string> text = detail::env_text(name);
  if (!text) {
    return PrintStyle::kPython;
  }
  DITTO_CHECK(
      *text == "python" || *text == "libtorch",
      ValueError,
      name,
      "expected python or libtorch, got '",
      *text,
      "'");
  return *text == "python" ? PrintStyle::kPython : PrintStyle::kLibTorch;
}

std::string type_string(const Tensor& t) {
  DITTO_CHECK(t.defined(), ValueError, "type_string", "undefined tensor");
  return std::string(t.is_cpu() ? "CPU" : "Vulkan") +
      libtorch_scalar_name(t.dtype()) + "Type";
}

void Tensor::print() const {
  if (!defined()) {
    std::cout << "[UndefinedTensor]" << std::endl;
    return;
  }
  std::cout << "[" << type_string(*this) << " " << IntArrayRef(sizes()) << "]"
            << std::endl;
}

std::ostream& print(std::ostream& out, const Tensor& t, int64_t linesize) {
  StreamFormat keep(out);
  if (!t.defined()) {
    return out << "[ Tensor (undefined) ]";
  }
  if (t.is_sparse()) {
    return out << "[ Sparse" << type_string(t) << "{}\n"
               << t.to_string() << "\n]";
  }
  const Tensor d = t.cpu().to(kFloat64).contiguous();
  const std::string footer = "[ " + type_string(t) + "{";
  if (d.dim() == 0) {
    default_float(out);
    out << d.data_ptr<double>()[0] << std::endl << footer << "}";
  } else if (d.dim() == 1) {
    if (d.numel() > 0) {
      const std::vector<double> v = values_of(d);
      auto [scale, width] = column_format(out, v);
      if (scale != 1) {
        print_scale(out, scale);
      }
      for (double x : v) {
        out << std::setw(int(width)) << x / scale << std::endl;
      }
    }
    out << footer << d.size(0) << "}";
  } else {
    if (d.numel() > 0) {
      if (d.dim() == 2) {
        print_matrix(out, d, linesize, 0);
      } else {
        print_matrices(out, d, linesize);
      }
    }
    out << footer << d.size(0);
    for (int64_t i = 1; i < d.dim(); ++i) {
      out << "," << d.size(i);
    }
    out << "}";
  }
  return out << " ]";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (print_style() == PrintStyle::kLibTorch) {
    return print(os, t);
  }
  return os << t.to_string();
}

} // namespace ditto
