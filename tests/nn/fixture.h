// Reading the PyTorch fixtures of the nn tests (gen_nn_golden.py,
// gen_rnn_golden.py) and comparing with their values.

#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "ditto/ditto.h"

namespace ditto::test {

// A fixture's numbers; null stands for NaN (JSON has none).
inline std::vector<double> fixture_doubles(const nlohmann::json& v) {
  std::vector<double> out;
  for (const auto& e : v) {
    out.push_back(e.is_null() ? std::nan("") : e.get<double>());
  }
  return out;
}

inline Tensor f64(const nlohmann::json& v, const Shape& shape) {
  return tensor(fixture_doubles(v)).view(shape);
}

// got's elements within tol (relative, for magnitudes over 1) of want's, NaN
// where want has null.
inline void expect_close(
    const Tensor& got,
    const nlohmann::json& want,
    double tol = 1e-12) {
  const std::vector<double> w = fixture_doubles(want);
  Tensor g = got.detach().contiguous().to(kFloat64).flatten();
  ASSERT_EQ(g.numel(), int64_t(w.size()));
  const double* p = g.data_ptr<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(p[i])) << i;
    } else {
      EXPECT_NEAR(p[i], w[i], tol * std::max(1.0, std::abs(w[i]))) << i;
    }
  }
}

} // namespace ditto::test
