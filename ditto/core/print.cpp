// Tensor printing: a port of PyTorch 1.13's torch/_tensor_str.py under the
// default print options, so that to_string() matches repr(t) character for
// character.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <ios>
#include <iostream>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "ditto/core/array_ref.h"
#include "ditto/core/dtype.h"
#include "ditto/core/env.h"
#include "ditto/core/print.h"
#include "ditto/core/tensor.h"

namespace ditto {
namespace {

// PyTorch's default PRINT_OPTS. The format strings below hard-code
// precision 4.
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// snprintf into a std::string. Python formats floats with correctly rounded,
// round-half-even conversion, as glibc's printf does, so the digits match.
std::string format_double(const char* spec, double v) {
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), spec, v);
  if (n < int(sizeof(buf))) {
    return std::string(buf, size_t(n));
  }
  std::string s(size_t(n), '\0');
  std::snprintf(s.data(), size_t(n) + 1, spec, v);
  return s;
}

// Python prints every NaN as "nan"; printf would print "-nan" for a NaN
// with the sign bit set.
std::string py_format(const char* spec, double v) {
  return std::isnan(v) ? std::string("nan") : format_double(spec, v);
}

std::string pad_left(const std::string& s, int64_t width) {
  int64_t pad = width - int64_t(s.size());
  return pad > 0 ? std::string(size_t(pad), ' ') + s : s;
}

// _Formatter for floating dtypes. `values` are the elements that will be
// printed (the summarized data when summarizing), already widened to double
// as Tensor.item() / tolist() do.
class FloatFormatter {
 public:
  explicit FloatFormatter(const std::vector<double>& values) {
    std::vector<double> finite; // nonzero finite values
    for (double v : values) {
      if (std::isfinite(v) && v != 0.0) {
        finite.push_back(v);
      }
    }
    if (finite.empty()) {
      return; // int_mode with width 1, as PyTorch
    }
    double min_abs = std::abs(finite[0]);
    double max_abs = min_abs;
    for (double v : finite) {
      min_abs = std::min(min_abs, std::abs(v));
      max_abs = std::max(max_abs, std::abs(v));
      if (v != std::ceil(v)) {
        int_mode_ = false;
      }
    }
    if (int_mode_) {
      if (max_abs / min_abs > 1000.0 || max_abs > 1.0e8) {
        sci_mode_ = true;
        widen(finite, "%.4e", 0);
      } else {
        // One more for the "." that marks a float.
        widen(finite, "%.0f", 1);
      }
    } else if (
        max_abs / min_abs > 1000.0 || max_abs > 1.0e8 || min_abs < 1.0e-4) {
      sci_mode_ = true;
      widen(finite, "%.4e", 0);
    } else {
      widen(finite, "%.4f", 0);
    }
  }

  int64_t width() const {
    return max_width_;
  }

  std::string format(double v) const {
    std::string s;
    if (sci_mode_) {
      s = py_format("%.4e", v);
    } else if (int_mode_) {
      s = py_format("%.0f", v);
      if (std::isfinite(v)) {
        s += '.';
      }
    } else {
      s = py_format("%.4f", v);
    }
    return pad_left(s, max_width_);
  }

 private:
  void widen(const std::vector<double>& vals, const char* spec, int64_t extra) {
    for (double v : vals) {
      max_width_ =
          std::max(max_width_, int64_t(format_double(spec, v).size()) + extra);
    }
  }

  bool int_mode_ = true;
  bool sci_mode_ = false;
  int64_t max_width_ = 1;
};

// str() of a Python int or bool, as Tensor.item() would give it.
template <typename T>
std::string py_str(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_unsigned_v<T>) {
    return std::to_string(uint64_t(v));
  } else {
    return std::to_string(int64_t(v));
  }
}

// Which indices of each dim are printed: all of them, or the first and last
// kEdgeItems around an ellipsis when summarizing (get_summarized_data).
struct PrintLayout {
  std::vector<std::vector<int64_t>> shown;
  std::vector<bool> elided;
};

PrintLayout make_layout(const Shape& sizes, bool summarize) {
  PrintLayout l;
  for (int64_t n : sizes) {
    bool elide = summarize && n > 2 * kEdgeItems;
    // O(shown elements): an elided dim lists only its edges (a huge
    // expanded tensor prints at once).
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < n; ++i) {
      if (elide && i == kEdgeItems) {
        i = n - kEdgeItems;
      }
      idx.push_back(i);
    }
    l.shown.push_back(std::move(idx));
    l.elided.push_back(elide);
  }
  return l;
}

// Calls f on each shown element in row-major order, reading through the
// strides so that views print without a copy.
template <typename T, typename F>
void for_each_shown(const Tensor& t, const PrintLayout& l, F&& f) {
  const T* base = static_cast<const T*>(t.raw_data());
  const Shape& strides = t.strides();
  size_t nd = l.shown.size();
  std::vector<size_t> pos(nd, 0);
  while (true) {
    int64_t off = 0;
    for (size_t k = 0; k < nd; ++k) {
      off += l.shown[k][pos[k]] * strides[k];
    }
    f(base[off]);
    size_t k = nd;
    while (k > 0 && ++pos[k - 1] == l.shown[k - 1].size()) {
      pos[k - 1] = 0;
      --k;
    }
    if (k == 0) {
      return;
    }
  }
}

// Lays out the formatted cells (all of the same width, in row-major order)
// as _tensor_str_with_formatter does; `next` walks through the cells.
class Renderer {
 public:
  Renderer(
      const PrintLayout& l,
      const std::vector<std::string>& cells,
      int64_t w)
      : layout_(l), cells_(cells), width_(w) {}

  std::string render(size_t d, int64_t indent) {
    size_t nd = layout_.shown.size();
    if (nd == 0) {
      return cells_[next_++];
    }
    if (d + 1 == nd) {
      return vector_str(d, indent);
    }
    std::vector<std::string> slices;
    const auto& shown = layout_.shown[d];
    for (size_t i = 0; i < shown.size(); ++i) {
      if (layout_.elided[d] && i == size_t(kEdgeItems)) {
        slices.push_back("...");
      }
      slices.push_back(render(d + 1, indent + 1));
    }
    // Blank lines between blocks grow with the remaining rank.
    std::string sep = ",";
    sep.append(nd - d - 1, '\n');
    sep.append(size_t(indent + 1), ' ');
    return bracket(join(slices, sep));
  }

 private:
  std::string vector_str(size_t d, int64_t indent) {
    int64_t element_length = width_ + 2; // ", " between elements
    // Python floors the true quotient; max(1, ...) hides the difference.
    int64_t per_line = std::max<int64_t>(
        1, int64_t(std::floor(double(kLineWidth - indent) / element_length)));
    std::vector<std::string> data;
    const auto& shown = layout_.shown[d];
    for (size_t i = 0; i < shown.size(); ++i) {
      if (layout_.elided[d] && i == size_t(kEdgeItems)) {
        data.push_back(" ...");
      }
      data.push_back(cells_[next_++]);
    }
    std::vector<std::string> lines;
    for (size_t i = 0; i < data.size(); i += size_t(per_line)) {
      size_t end = std::min(data.size(), i + size_t(per_line));
      lines.push_back(join(
          std::vector<std::string>(data.begin() + i, data.begin() + end),
          ", "));
    }
    return bracket(join(lines, ",\n" + std::string(size_t(indent + 1), ' ')));
  }

  // Appends rather than `"[" + s`, which trips a GCC 12 -Wrestrict false
  // positive.
  static std::string bracket(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '[';
    out += s;
    out += ']';
    return out;
  }

  static std::string join(
      const std::vector<std::string>& parts,
      const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) {
        out += sep;
      }
      out += parts[i];
    }
    return out;
  }

  const PrintLayout& layout_;
  const std::vector<std::string>& cells_;
  int64_t width_;
  size_t next_ = 0;
};

// The bracketed body, _tensor_str, for a tensor with at least one element.
std::string body_str(const Tensor& t, int64_t indent) {
  if (!has_kernels(t.dtype())) {
    // Note [Storage dtypes]: the values, exactly, in the compute dtype.
    return body_str(t.to(compute_dtype(t.dtype())), indent);
  }
  bool summarize = t.numel() > kThreshold;
  PrintLayout layout = make_layout(t.sizes(), summarize);
  std::vector<std::string> cells;
  int64_t width = 1;
  dispatch_dtype(t.dtype(), "print", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<double> values;
      for_each_shown<T>(t, layout, [&](T v) { values.push_back(double(v)); });
      FloatFormatter f(values);
      width = f.width();
      for (double v : values) {
        cells.push_back(f.format(v));
      }
    } else {
      if constexpr (std::is_same_v<T, bool>) {
        // The bytes, not bools: memory from empty() (or a byte view) may
        // hold any value, and loading one other than 0 or 1 as a bool is
        // undefined (UBSan found it through the binding fuzzer). Nonzero
        // prints True.
        for_each_shown<uint8_t>(
            t, layout, [&](uint8_t v) { cells.push_back(py_str(v != 0)); });
      } else {
        for_each_shown<T>(t, layout, [&](T v) { cells.push_back(py_str(v)); });
      }
      for (const auto& s : cells) {
        width = std::max(width, int64_t(s.size()));
      }
      for (auto& s : cells) {
        s = pad_left(s, width);
      }
    }
  });
  return Renderer(layout, cells, width).render(0, indent);
}

// str(tuple(shape)): "(0, 3)", "(0,)".
std::string tuple_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(s[i]);
  }
  return out + (s.size() == 1 ? ",)" : ")");
}

// _add_suffixes, including its count of the last line (two more than its
// length), which decides where a suffix wraps.
std::string add_suffixes(
    std::string str,
    const std::vector<std::string>& suffixes,
    int64_t indent,
    bool force_newline = false) {
  size_t nl = str.rfind('\n');
  int64_t last_line_len =
      int64_t(str.size()) - (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  for (const auto& suffix : suffixes) {
    int64_t len = int64_t(suffix.size());
    if (force_newline || last_line_len + len + 2 > kLineWidth) {
      force_newline = false; // the first suffix only (sparse tensors)
      str += ",\n" + std::string(size_t(indent), ' ') + suffix;
      last_line_len = indent + len;
    } else {
      str += ", " + suffix;
      last_line_len += len + 2;
    }
  }
  return str + ")";
}

// PyTorch's sparse repr: the parts as stored, each printed as a tensor
// indented under its name, then size, nnz, dtype and layout.
std::string sparse_repr(
    const Tensor& t,
    std::string_view prefix_name,
    const std::string& dtype_suffix,
    const std::vector<std::string>& extra_suffixes) {
  const std::string prefix = "tensor(";
  const int64_t indent = int64_t(prefix.size());
  std::vector<std::string> suffixes;
  if (!t.is_cpu()) {
    suffixes.push_back("device='" + t.device().str() + "'");
  }
  suffixes.push_back("size=" + tuple_str(t.sizes()));
  suffixes.push_back("nnz=" + std::to_string(t._nnz()));
  if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool) {
    suffixes.push_back(dtype_suffix);
  }
  suffixes.push_back("layout=" + std::string(prefix_name) + "sparse_coo");
  auto part = [&](const std::string& name, const Tensor& p) {
    const std::string head = name + "=tensor(";
    if (p.numel() == 0) {
      return head + "[], size=" + tuple_str(p.sizes()) + ")";
    }
    return head + body_str(p, indent + int64_t(head.size())) + ")";
  };
  std::string body = part("indices", t._indices()) + ",\n" +
      std::string(size_t(indent), ' ') +
      part("values", t.impl()->sparse()->values);
  suffixes.insert(suffixes.end(), extra_suffixes.begin(), extra_suffixes.end());
  return add_suffixes(prefix + body, suffixes, indent, true);
}

} // namespace

std::string Tensor::to_string() const {
  return detail::tensor_repr(*this, "torch.", {});
}

std::string detail::tensor_repr(
    const Tensor& t,
    std::string_view dtype_prefix,
    const std::vector<std::string>& extra_suffixes) {
  if (!t.defined()) {
    return "tensor(undefined)";
  }
  const std::string prefix = "tensor(";
  const int64_t indent = int64_t(prefix.size());
  std::string dtype_suffix =
      "dtype=" + std::string(dtype_prefix) + std::string(dtype_name(t.dtype()));
  if (t.is_sparse()) {
    return sparse_repr(t, dtype_prefix, dtype_suffix, extra_suffixes);
  }
  std::vector<std::string> suffixes;
  std::string body;
  if (!t.is_cpu()) {
    suffixes.push_back("device='" + t.device().str() + "'");
  }
  if (t.numel() == 0) {
    // No values to infer the dtype from, so only float32 goes unnamed.
    if (t.dim() != 1) {
      suffixes.push_back("size=" + tuple_str(t.sizes()));
    }
    if (t.dtype() != kFloat32) {
      suffixes.push_back(dtype_suffix);
    }
    body = "[]";
  } else {
    if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool) {
      suffixes.push_back(dtype_suffix);
    }
    body = body_str(t.is_cpu() ? t : t.cpu(), indent);
  }
  suffixes.insert(suffixes.end(), extra_suffixes.begin(), extra_suffixes.end());
  return add_suffixes(prefix + body, suffixes, indent);
}

} // namespace ditto
