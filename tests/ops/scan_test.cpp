// cumsum, cumprod, logcumsumexp, cummax and cummin against PyTorch 1.13
// (tests/ops/gen_scan_golden.py wrote the fixture): values, indices and
// input gradients, at 1 and 2 threads. Bit-exact where ditto runs
// PyTorch's chain (rows up to a scan block, integers, the running
// max/min, cumsum's and nonzero cumprod's gradients); within stated
// bounds where it does not (logcumsumexp's exp and log1p are ditto's, not
// glibc's; cumprod's gradient past a zero sums as ditto's sum does; a row
// longer than a block continues each block from the folded totals).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"

namespace ditto {
namespace {

using nlohmann::json;

const json& scan_golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/ops/scan_golden.json");
    return json::parse(in);
  }();
  return j;
}

double scan_decode(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return s == "nan" ? std::nan("") : s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

Dtype scan_dtype(const std::string& torch_name) {
  if (torch_name == "torch.float32") {
    return kFloat32;
  }
  if (torch_name == "torch.float64") {
    return kFloat64;
  }
  if (torch_name == "torch.int32") {
    return kInt32;
  }
  if (torch_name == "torch.int64") {
    return kInt64;
  }
  return kBool;
}

// gen_scan_golden.py's pattern(n, seed).
Tensor scan_pattern(int64_t n, int64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[size_t(i)] = double((i * 37 + seed * 11) % 17) / 8 - 1;
  }
  return tensor(v);
}

Tensor scan_input(const json& g, const json& c) {
  const std::string name = c["input"];
  Tensor x;
  if (name == "long") {
    x = scan_pattern(40001, 0).mul(4.0).to(kFloat32);
  } else {
    const json& in = g["inputs"][name];
    std::vector<double> v;
    for (const json& e : in["values"]) {
      v.push_back(scan_decode(e));
    }
    x = tensor(v)
            .view(in["sizes"].get<Shape>())
            .to(scan_dtype(in["dtype"].get<std::string>()));
  }
  return c["float64"].get<bool>() ? x.to(kFloat64) : x;
}

std::pair<Tensor, Tensor> scan_run(const json& c, const Tensor& x) {
  const std::string op = c["op"];
  const int64_t dim = c["dim"];
  std::optional<Dtype> dt;
  if (!c["dtype"].is_null()) {
    dt = scan_dtype("torch." + c["dtype"].get<std::string>());
  }
  if (op == "cumsum") {
    return {cumsum(x, dim, dt), {}};
  }
  if (op == "cumprod") {
    return {cumprod(x, dim, dt), {}};
  }
  if (op == "logcumsumexp") {
    return {logcumsumexp(x, dim), {}};
  }
  return op == "cummax" ? cummax(x, dim) : cummin(x, dim);
}

// Elements of t (every every-th, and the last) as doubles.
std::vector<double> scan_sampled(const Tensor& t, int64_t every) {
  const Tensor d = t.to(kFloat64).contiguous().reshape({-1});
  const double* p = d.data_ptr<double>();
  std::vector<double> out;
  for (int64_t i = 0; i < d.numel(); i += every) {
    out.push_back(p[i]);
  }
  if (every > 1) {
    out.push_back(p[d.numel() - 1]);
  }
  return out;
}

// Compares got with the fixture's want: exactly for positions below
// exact_until (in the sampled sequence), else within rel * |want| + abs.
void scan_compare(
    const std::vector<double>& got,
    const json& want,
    const std::string& what,
    size_t exact_until,
    double rel,
    double abs) {
  EXPECT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < std::min(got.size(), want.size()); ++k) {
    const double w = scan_decode(want[k]), v = got[k];
    if (std::isnan(w) || std::isinf(w) || k < exact_until) {
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(v)) << what << " at " << k;
      } else {
        EXPECT_EQ(v, w) << what << " at " << k;
      }
      continue;
    }
    EXPECT_LE(std::fabs(v - w), rel * std::fabs(w) + abs)
        << what << " at " << k << ": " << v << " against " << w;
  }
}

TEST(Scan, ValuesIndicesAndGradientsArePyTorchs) {
  const json& g = scan_golden();
  ASSERT_GE(g["cases"].size(), 50u);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const json& c : g["cases"]) {
      const std::string op = c["op"], input = c["input"];
      const bool f64 = c["float64"];
      const std::string what = op + " dim " + c["dim"].dump() + " on " + input +
          (f64 ? " (float64)" : "") + " dtype " + c["dtype"].dump() + ", " +
          std::to_string(threads) + " threads";
      Tensor x = scan_input(g, c);
      const bool grad = c.contains("grad_in");
      if (grad) {
        x.requires_grad_(true);
      }
      auto [v, i] = scan_run(c, x);
      EXPECT_EQ(
          std::string(dtype_name(v.dtype())),
          c["out_dtype"].get<std::string>().substr(6))
          << what;
      const int64_t every = c["every"];
      // The long row: exact through the first block (sampled positions
      // below kScanBlock), then the blocked scan's own rounding.
      const size_t first_block =
          every > 1 ? size_t((kScanBlock + every - 1) / every) : SIZE_MAX;
      const bool lse = op == "logcumsumexp";
      // logcumsumexp's chain in float32 drifts from glibc's over a long
      // row (each step's exp and log1p differ by up to an ulp).
      const double rel = lse ? (f64 ? 4e-15 : (every > 1 ? 2e-4 : 5e-7))
                             : (f64 ? 1e-15 : 1e-7);
      const double abs = lse ? (f64 ? 1e-15 : 1e-6) : 0;
      scan_compare(
          scan_sampled(v, every),
          c["values"],
          what + " values",
          lse ? 0 : first_block,
          rel,
          abs);
      if (i.defined()) {
        EXPECT_EQ(
            scan_sampled(i, every), c["indices"].get<std::vector<double>>())
            << what;
      }
      if (grad) {
        const Tensor go = scan_pattern(v.numel(), c["grad_seed"])
                              .to(v.dtype())
                              .view(v.sizes());
        v.backward(go);
        // cumprod past a zero sums its part as ditto's sum does; the
        // logcumsumexp gradient runs through exp and log.
        const bool loose = lse || input == "zeros";
        scan_compare(
            scan_sampled(x.grad(), every),
            c["grad_in"],
            what + " gradient",
            loose ? 0 : first_block,
            lse ? (f64 ? 1e-13 : 1e-5) : rel,
            loose ? (f64 ? 1e-13 : (every > 1 ? 1e-4 : 1e-5)) : 0);
      }
    }
  }
  set_num_threads(2);
}

// A long integer row's blocked scan is exact, so it equals one serial
// chain; the same for every thread count.
TEST(Scan, LongIntegerRowsEqualOneChain) {
  const int64_t n = 3 * kScanBlock + 77;
  Tensor x = scan_pattern(n, 3).mul(8.0).to(kInt64).mul(1 << 28);
  std::vector<int64_t> want(static_cast<size_t>(n));
  uint64_t acc = 0;
  const int64_t* xp = x.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    acc += uint64_t(xp[i]);
    want[size_t(i)] = int64_t(acc);
  }
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const Tensor y = cumsum(x, 0);
    EXPECT_EQ(
        std::vector<int64_t>(y.data_ptr<int64_t>(), y.data_ptr<int64_t>() + n),
        want)
        << threads << " threads";
  }
  set_num_threads(2);
}

} // namespace
} // namespace ditto
