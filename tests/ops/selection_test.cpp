// kthvalue, median, nanmedian, mode, topk and quantile against PyTorch
// 1.13: values and indices on rows with many ties and with NaNs (the index
// among ties is the algorithm's: tests/ops/gen_selection_golden.py wrote the
// fixture), at 1 and 2 threads; and the gradient of the median of every
// element, spread over the tied elements.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"

namespace ditto {
namespace {

using nlohmann::json;

const json& selection_golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/ops/selection_golden.json");
    return json::parse(in);
  }();
  return j;
}

Tensor input_of(const json& in) {
  std::vector<double> v;
  for (const json& e : in["values"]) {
    v.push_back(e.is_null() ? std::nan("") : e.get<double>());
  }
  Tensor t = tensor(v).view(in["sizes"].get<Shape>());
  return in["int"].get<bool>() ? t.to(kInt64) : t.to(kFloat32);
}

std::pair<Tensor, Tensor> run(const json& c, const Tensor& x) {
  const std::string op = c["op"];
  const json& a = c["args"];
  if (op == "kthvalue") {
    return kthvalue(x, a["k"].get<int64_t>(), -1);
  }
  if (op == "kthvalue_dim0") {
    return kthvalue(x, a["k"].get<int64_t>(), 0);
  }
  if (op == "median") {
    return median(x, -1);
  }
  if (op == "median_dim0") {
    return median(x, 0);
  }
  if (op == "nanmedian") {
    return nanmedian(x, -1);
  }
  if (op == "mode") {
    return mode(x, -1);
  }
  if (op == "quantile" || op == "quantile_all") {
    const Tensor q = tensor(a["q"].get<std::vector<double>>()).to(x.dtype());
    const std::string mode = a["interp"];
    const std::optional<int64_t> dim =
        op == "quantile" ? std::optional<int64_t>(-1) : std::nullopt;
    return {
        a["nan"].get<bool>() ? nanquantile(x, q, dim, false, mode)
                             : quantile(x, q, dim, false, mode),
        Tensor()};
  }
  if (op == "median_all") {
    return {median(x), Tensor()};
  }
  if (op == "nanmedian_all") {
    return {nanmedian(x), Tensor()};
  }
  return topk(
      x,
      a["k"].get<int64_t>(),
      -1,
      a["largest"].get<bool>(),
      a["sorted"].get<bool>());
}

TEST(Selection, ValuesAndTieIndicesArePyTorchs) {
  const json& g = selection_golden();
  ASSERT_GE(g["cases"].size(), 200u);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const json& c : g["cases"]) {
      const std::string what = c["op"].get<std::string>() + " " +
          c["args"].dump() + " on " + c["input"].get<std::string>();
      const Tensor x = input_of(g["inputs"][c["input"].get<std::string>()]);
      auto [v, i] = run(c, x);
      const Tensor vd = v.to(kFloat64).contiguous();
      const double* vp = vd.data_ptr<double>();
      ASSERT_EQ(vd.numel(), int64_t(c["values"].size())) << what;
      for (int64_t k = 0; k < vd.numel(); ++k) {
        const json& w = c["values"][size_t(k)];
        if (w.is_null()) {
          EXPECT_TRUE(std::isnan(vp[k])) << what << " at " << k;
        } else {
          EXPECT_EQ(vp[k], w.get<double>()) << what << " at " << k;
        }
      }
      if (i.defined()) {
        const Tensor ic = i.contiguous();
        const int64_t* ip = ic.data_ptr<int64_t>();
        EXPECT_EQ(
            std::vector<int64_t>(ip, ip + ic.numel()),
            c["indices"].get<std::vector<int64_t>>())
            << what;
      }
    }
  }
  set_num_threads(2);
}

TEST(Selection, MedianOfAllSpreadsItsGradientOverTies) {
  Tensor x = tensor(std::vector<double>{3, 1, 2, 2, 5, 2}).requires_grad_(true);
  Tensor m = median(x);
  EXPECT_EQ(m.item<double>(), 2.0);
  m.backward();
  const std::vector<double> want = {0, 0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3};
  const Tensor gr = x.grad().contiguous();
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_DOUBLE_EQ(gr.data_ptr<double>()[k], want[k]) << k;
  }
  // The chosen element alone gets the gradient along a dim.
  Tensor y =
      tensor(std::vector<double>{1, 1, 1, 0}).view({1, 4}).requires_grad_(true);
  auto [v, i] = kthvalue(y, 3, 1);
  v.sum().backward();
  EXPECT_EQ(y.grad().sum().item<double>(), 1.0);
  EXPECT_EQ(y.grad().view({4})[i.item<int64_t>()].item<double>(), 1.0);
}

} // namespace
} // namespace ditto
