// The scatter/index family against serial definitions written here as plain
// loops: the deterministic variant equals them bit for bit with 1, 2, 3 and
// 8 threads, on heavy-duplicate and no-duplicate indices; the fast variant
// equals them within a stated tolerance; bad input changes nothing.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "ditto/ditto.h"
#include "test_util.h"
#include "tests/cpu_caps.h"

using namespace ditto;

using ditto::test::same_bits;

class ScatterFamily : public ::testing::Test {
 protected:
  void TearDown() override {
    use_deterministic_algorithms(false);
    set_num_threads(saved_);
  }
  // The deterministic variant with every thread count equals expected; the
  // fast variant (2 threads) is within rtol 1e-4 / atol 1e-3 of it.
  void check(const std::function<Tensor()>& run, const Tensor& expected) {
    use_deterministic_algorithms(true);
    for (int threads : test::test_thread_counts()) {
      set_num_threads(threads);
      EXPECT_TRUE(same_bits(run(), expected)) << threads << " threads";
    }
    use_deterministic_algorithms(false);
    set_num_threads(2);
    Tensor fast = run();
    EXPECT_TRUE(allclose(fast, expected, 1e-4, 1e-3, true));
  }
  int saved_ = get_num_threads();
};

namespace {

template <typename F>
float apply(const std::string& r, float d, float s, F) {
  if (r == "sum" || r == "mean") {
    return d + s;
  }
  if (r == "prod") {
    return d * s;
  }
  if (r == "amax") {
    return std::isnan(s) ? s : std::max(d, s);
  }
  return std::isnan(s) ? s : std::min(d, s);
}

// scatter_reduce_ along dim 0 of an [rows, cols] float tensor, serially in
// row-major order of the index.
Tensor scatter_reduce_reference(
    const Tensor& self,
    const Tensor& index,
    const Tensor& src,
    const std::string& r,
    bool include_self) {
  Tensor out = self.clone();
  float* o = out.data_ptr<float>();
  const float* s = src.data_ptr<float>();
  const int64_t* ip = index.data_ptr<int64_t>();
  const int64_t n = index.size(0), cols = index.size(1), w = self.size(1);
  std::vector<int64_t> count(size_t(self.numel()), include_self ? 1 : 0);
  if (!include_self) {
    const float id = r == "prod" ? 1.0f
        : r == "amax"            ? -std::numeric_limits<float>::infinity()
        : r == "amin"            ? std::numeric_limits<float>::infinity()
                                 : 0.0f;
    for (int64_t k = 0; k < n * cols; ++k) {
      o[ip[k] * w + k % cols] = id;
    }
  }
  for (int64_t k = 0; k < n * cols; ++k) {
    const int64_t at = ip[k] * w + k % cols;
    o[at] = apply(r, o[at], s[(k / cols) * src.size(1) + k % cols], 0);
    count[size_t(at)] += 1;
  }
  if (r == "mean") {
    for (int64_t k = 0; k < out.numel(); ++k) {
      o[k] = count[size_t(k)] > 0 ? o[k] / float(count[size_t(k)]) : o[k];
    }
  }
  return out;
}

} // namespace

// rows: 3 (every destination takes thousands of values) or 40000 (few
// duplicates); cols 3 sorts element updates by destination, cols 80 runs
// columns in parallel.
TEST_F(ScatterFamily, ScatterReduceEveryReduction) {
  for (int64_t rows : {3, 40000}) {
    for (int64_t cols : {3, 80}) {
      Generator g;
      g.manual_seed(rows + cols);
      // A quarter of the updates where the suite is thinned
      // (test::test_thinned()): the same blocks and parallel chunks.
      const int64_t n =
          (cols == 3 ? 60000 : 3000) / (test::test_thinned() ? 4 : 1);
      Tensor src = randn({n, cols + 1}, kFloat32, g);
      Tensor index = randint(0, rows, {n, cols}, kInt64, g);
      Tensor self = randn({rows, cols + 2}, kFloat32, g);
      for (const char* r : {"sum", "prod", "mean", "amax", "amin"}) {
        for (bool include_self : {true, false}) {
          SCOPED_TRACE(
              std::string(r) + " rows " + std::to_string(rows) + " cols " +
              std::to_string(cols) + (include_self ? " self" : ""));
          // Products of thousands of values: keep them near 1.
          Tensor s = std::string(r) == "prod" ? add(mul(src, 1e-3), 1.0) : src;
          Tensor expected =
              scatter_reduce_reference(self, index, s, r, include_self);
          check(
              [&] {
                Tensor t = self.clone();
                return t.scatter_reduce_(0, index, s, r, include_self);
              },
              expected);
        }
      }
    }
  }
}

TEST_F(ScatterFamily, ScatterWithDuplicatesKeepsTheLastInIndexOrder) {
  for (int64_t rows : {3, 40000}) {
    Generator g;
    g.manual_seed(rows);
    Tensor src = randn({50000, 2}, kFloat32, g);
    Tensor index = randint(0, rows, {50000, 2}, kInt64, g);
    Tensor self = zeros({rows, 2});
    Tensor expected = self.clone();
    for (int64_t k = 0; k < index.numel(); ++k) {
      expected.data_ptr<float>()[index.data_ptr<int64_t>()[k] * 2 + k % 2] =
          src.data_ptr<float>()[k];
    }
    use_deterministic_algorithms(true);
    for (int threads : test::test_thread_counts()) {
      set_num_threads(threads);
      Tensor t = self.clone();
      EXPECT_TRUE(same_bits(t.scatter_(0, index, src), expected));
    }
    // The fast variant writes one of the duplicates' values.
    use_deterministic_algorithms(false);
    Tensor t = self.clone();
    t.scatter_(0, index, src);
    std::vector<std::vector<float>> written(size_t(self.numel()));
    for (int64_t k = 0; k < index.numel(); ++k) {
      written[size_t(index.data_ptr<int64_t>()[k] * 2 + k % 2)].push_back(
          src.data_ptr<float>()[k]);
    }
    for (int64_t e = 0; e < t.numel(); ++e) {
      const auto& w = written[size_t(e)];
      const float v = t.data_ptr<float>()[e];
      EXPECT_TRUE(
          w.empty() ? v == 0.0f : std::find(w.begin(), w.end(), v) != w.end());
    }
  }
}

// self[index] += values through index_put_ (rows on dim 0, and columns on
// dim 1 with a full slice before), put_ on the flat tensor, index_copy_.
TEST_F(ScatterFamily, IndexPutPutIndexCopy) {
  for (int64_t rows : {3, 30000}) {
    SCOPED_TRACE(rows);
    Generator g;
    g.manual_seed(10 + rows);
    const int64_t n = 40000;
    Tensor self = randn({rows, 16}, kFloat32, g);
    Tensor idx = randint(-rows, rows, {n}, kInt64, g);
    Tensor vals = randn({n, 16}, kFloat32, g);
    Tensor acc = self.clone(), last = self.clone();
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = idx.data_ptr<int64_t>()[i];
      r = r < 0 ? r + rows : r;
      for (int64_t c = 0; c < 16; ++c) {
        acc.data_ptr<float>()[r * 16 + c] += vals.data_ptr<float>()[i * 16 + c];
        last.data_ptr<float>()[r * 16 + c] = vals.data_ptr<float>()[i * 16 + c];
      }
    }
    check(
        [&] {
          Tensor t = self.clone();
          return t.index_put_({idx}, vals, true);
        },
        acc);
    use_deterministic_algorithms(true);
    for (int threads : test::test_thread_counts()) {
      set_num_threads(threads);
      Tensor t = self.clone();
      EXPECT_TRUE(same_bits(t.index_put_({idx}, vals), last));
      Tensor nonneg = where(lt(idx, 0), add(idx, rows), idx);
      Tensor u = self.clone();
      EXPECT_TRUE(same_bits(u.index_copy_(0, nonneg, vals), last));
    }
    use_deterministic_algorithms(false);

    // Columns: self [16, rows], index on dim 1 behind a full slice.
    Tensor selfT = self.t().contiguous();
    Tensor valsT = vals.t().contiguous();
    check(
        [&] {
          Tensor t = selfT.clone();
          return t.index_put_({Tensor(), idx}, valsT, true);
        },
        acc.t().contiguous());

    // put_: flat positions of the whole tensor.
    Tensor flat_idx = randint(-rows * 16, rows * 16, {n}, kInt64, g);
    Tensor flat_vals = randn({n}, kFloat32, g);
    Tensor pexp = self.clone();
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = flat_idx.data_ptr<int64_t>()[i];
      pexp.data_ptr<float>()[r < 0 ? r + rows * 16 : r] +=
          flat_vals.data_ptr<float>()[i];
    }
    check(
        [&] {
          Tensor t = self.clone();
          return t.put_(flat_idx, flat_vals, true);
        },
        pexp);
  }
}

TEST_F(ScatterFamily, BincountWithWeights) {
  for (int64_t bins : {4, 50000}) {
    Generator g;
    g.manual_seed(bins);
    Tensor input = randint(0, bins, {80000}, kInt64, g);
    Tensor w = randn({80000}, kFloat32, g);
    Tensor expected = zeros({bins});
    Tensor counts = zeros({bins}, kInt64);
    for (int64_t i = 0; i < 80000; ++i) {
      const int64_t b = input.data_ptr<int64_t>()[i];
      expected.data_ptr<float>()[b] += w.data_ptr<float>()[i];
      counts.data_ptr<int64_t>()[b] += 1;
    }
    check([&] { return bincount(input, w); }, expected);
    check([&] { return bincount(input); }, counts);
  }
}

// Bags of 1 to 300 rows (few, large bags: the fast variant races inside a
// bag) with padding entries; sum, mean and max.
TEST_F(ScatterFamily, EmbeddingBag) {
  Generator g;
  g.manual_seed(5);
  const int64_t n = 30000, dim = 24, vocab = 1000;
  Tensor weight = randn({vocab, dim}, kFloat32, g);
  Tensor input = randint(0, vocab, {n}, kInt64, g);
  for (int64_t bag_len : {1, 300}) {
    std::vector<int64_t> offs;
    for (int64_t o = 0; o < n; o += bag_len) {
      offs.push_back(o);
    }
    Tensor offsets = tensor<int64_t>(offs, {int64_t(offs.size())});
    const int64_t bags = int64_t(offs.size());
    for (const char* mode : {"sum", "mean", "max"}) {
      SCOPED_TRACE(std::string(mode) + " bag " + std::to_string(bag_len));
      Tensor expected = zeros({bags, dim});
      float* e = expected.data_ptr<float>();
      const float* w = weight.data_ptr<float>();
      const int64_t* ip = input.data_ptr<int64_t>();
      for (int64_t b = 0; b < bags; ++b) {
        int64_t cnt = 0;
        for (int64_t i = offs[size_t(b)];
             i < std::min(n, offs[size_t(b)] + bag_len);
             ++i) {
          if (ip[i] == 7) {
            continue; // padding_idx
          }
          for (int64_t c = 0; c < dim; ++c) {
            float& d = e[b * dim + c];
            const float v = w[ip[i] * dim + c];
            if (std::string(mode) == "max") {
              d = cnt == 0 || v > d ? v : d;
            } else {
              d += v;
            }
          }
          ++cnt;
        }
        if (std::string(mode) == "mean" && cnt > 1) {
          for (int64_t c = 0; c < dim; ++c) {
            e[b * dim + c] /= float(cnt);
          }
        }
      }
      check(
          [&] {
            return embedding_bag(input, weight, offsets, mode, {}, false, 7);
          },
          expected);
    }
  }
}

// Integer accumulation is exact in any order: the fast variant gives the
// serial bits, and nothing in the family alerts (every op has its
// deterministic variant).
TEST_F(ScatterFamily, IntegersAreExactAndNothingAlerts) {
  Generator g;
  g.manual_seed(9);
  Tensor index = randint(0, 5, {50000, 3}, kInt64, g);
  Tensor src = randint(-1000, 1000, {50000, 3}, kInt64, g);
  Tensor self = zeros({5, 3}, kInt64);
  Tensor det, fast;
  {
    DeterministicGuard guard(true);
    Tensor d0 = self.clone();
    det = d0.scatter_add_(0, index, src);
  }
  set_num_threads(2);
  Tensor t = self.clone();
  fast = t.scatter_add_(0, index, src);
  EXPECT_TRUE(same_bits(det, fast));
  std::vector<std::string> warned;
  determinism::set_warning_handler(
      [&](std::string_view op, std::string_view) { warned.emplace_back(op); });
  use_deterministic_algorithms(true, true);
  Tensor f = randn({100, 4}, kFloat32, g);
  Tensor i100 = randint(0, 10, {100}, kInt64, g);
  Tensor d = zeros({10, 4});
  d.index_add_(0, i100, f);
  d.index_copy_(0, i100, f);
  d.index_put_({i100}, f, true);
  d.put_(i100, f.select(1, 0).contiguous(), true);
  d.scatter_reduce_(
      0, i100.view({100, 1}).expand({100, 4}).contiguous(), f, "prod");
  bincount(i100, f.select(1, 0).contiguous());
  embedding_bag(i100, f, tensor<int64_t>({0, 50}, {2}), "sum");
  histc(f);
  determinism::set_warning_handler({});
  EXPECT_TRUE(warned.empty());
}

// Every error names the op and the bad value, and leaves self unchanged.
TEST_F(ScatterFamily, BadInputChangesNothing) {
  Tensor t = arange(0, 12, 1, kFloat32).view({3, 4});
  const Tensor before = t.clone();
  auto expect_error = [&](const std::function<void()>& fn, const char* text) {
    try {
      fn();
      ADD_FAILURE() << "no error, expected " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(same_bits(t, before));
  };
  const Tensor i2 = tensor<int64_t>({0, 1, 0, 3, 2, 1, 0, 0}, {2, 4});
  expect_error(
      [&] {
        t.scatter_reduce_(0, i2, ones({2, 4}), "median");
      },
      "[scatter_reduce_] reduce must be one of sum, prod, mean, amax, amin, "
      "got 'median'");
  expect_error(
      [&] {
        t.scatter_reduce_(0, i2, ones({2, 4}), "sum");
      },
      "[scatter_reduce_] index 3 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        t.scatter_(1, tensor<int64_t>({0, -1}, {1, 2}), ones({1, 2}));
      },
      "[scatter_] index -1 is out of bounds for dimension 1 with size 4");
  expect_error(
      [&] {
        t.scatter_(0, tensor<float>({0}, {1, 1}), ones({1, 1}));
      },
      "[scatter_] expected an int64 or int32 index but got float32");
  expect_error(
      [&] {
        t.scatter_(0, tensor<int64_t>({0}, {1, 1}), Scalar(1e300));
      },
      "[scatter_]");
  expect_error(
      [&] {
        t.index_copy_(0, tensor<int64_t>({0, 5}), ones({2, 4}));
      },
      "[index_copy_] index 5 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        t.index_put_({tensor<int64_t>({1, -4})}, ones({4}), true);
      },
      "[index_put_] index -4 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        t.index_put_(
            {tensor<int64_t>({0, 1}), tensor<int64_t>({0, 1, 2})}, ones({1}));
      },
      "[index_put_]");
  expect_error(
      [&] {
        t.index_put_({tensor<int64_t>({0, 1})}, ones({3, 4}));
      },
      "[index_put_] shape mismatch: values of shape {3, 4} cannot be "
      "broadcast to the indexing result of shape {2, 4}");
  expect_error(
      [&] {
        t.index_put_({ones({3, 3}, kBool)}, ones({1}));
      },
      "[index_put_] the shape of the mask {3, 3} at index 1 does not match "
      "the shape of the indexed tensor {3, 4} at index 1");
  expect_error(
      [&] {
        t.index_put_({Tensor(), Tensor(), tensor<int64_t>({0})}, ones({1}));
      },
      "[index_put_] too many indices for tensor of dimension 2");
  // The vector form (with accumulate) keeps index_put_'s own check.
  expect_error(
      [&] {
        t.index_put_(
            std::vector<Tensor>{Tensor(), Tensor(), tensor<int64_t>({0})},
            ones({1}),
            true);
      },
      "[index_put_] too many indices for a tensor of dimension 2 (got 3)");
  expect_error(
      [&] {
        t.put_(tensor<int64_t>({0, 12}), ones({2}));
      },
      "[put_] index 12 is out of bounds for dimension 0 with size 12");
  expect_error(
      [&] {
        t.put_(tensor<int64_t>({0, 1}), ones({3}));
      },
      "[put_] index has 2 elements but source has 3");
  expect_error(
      [&] { t.put_(tensor<int64_t>({0}), ones({1}, kFloat64)); },
      "[put_] self (float32) and source (float64) must have the same dtype");
  expect_error(
      [&] {
        t.masked_fill_(ones({4, 4}, kBool), 1.0);
      },
      "[masked_fill_]");
  expect_error(
      [&] { t.masked_fill_(ones({4}), 1.0); },
      "[masked_fill_] expected a bool mask but got float32");
  expect_error(
      [&] { take(t, tensor<int64_t>({-13})); },
      "[take] index -13 is out of bounds for dimension 0 with size 12");
  Tensor it = zeros({3}, kInt64);
  EXPECT_THROW(
      it.index_add_(0, tensor<int64_t>({0}), ones({1}, kInt64), 0.5),
      TypeError);
  EXPECT_EQ(sum(it).item<int64_t>(), 0);
  EXPECT_THROW(bincount(tensor<int64_t>({1, -2})), ValueError);
  EXPECT_THROW(bincount(tensor<float>({1})), ValueError);
  EXPECT_THROW(bincount(tensor<int64_t>({1}), ones({2})), ValueError);
  EXPECT_THROW(histc(tensor<int64_t>({1})), TypeError);
  EXPECT_THROW(histc(ones({3}), 0), ValueError);
  EXPECT_THROW(histc(ones({3}), 10, 2.0, 1.0), ValueError);
  EXPECT_THROW(
      histc(tensor<float>({1, std::numeric_limits<float>::infinity()})),
      ValueError);
  const Tensor w = ones({4, 2});
  EXPECT_THROW(
      embedding_bag(tensor<int64_t>({0, 4}), w, tensor<int64_t>({0})),
      IndexError);
  EXPECT_THROW(
      embedding_bag(tensor<int64_t>({0, 1}), w, tensor<int64_t>({1})),
      ValueError);
  EXPECT_THROW(
      embedding_bag(tensor<int64_t>({0, 1}), w, tensor<int64_t>({0}), "min"),
      ValueError);
  EXPECT_THROW(
      embedding_bag(
          tensor<int64_t>({0, 1}), w, tensor<int64_t>({0}), "mean", ones({2})),
      ValueError);
}

// Small cases of the semantics PyTorch documents.
TEST_F(ScatterFamily, Semantics) {
  // histc counts exactly and ignores NaN and values outside the range.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(equal(
      histc(tensor<float>({0, 1, 2, 2, 5, nan}), 4, 0, 4),
      tensor<float>({1, 1, 2, 0})));
  // Data range when min == max, widened by 1 when the data is constant.
  EXPECT_TRUE(
      equal(histc(tensor<float>({1, 1}), 4), tensor<float>({0, 0, 2, 0})));
  // masked_fill_ on a strided view writes only masked elements of the view.
  Tensor a = zeros({4, 4});
  Tensor col = a.select(1, 2);
  col.masked_fill_(tensor<bool>({true, false, true, false}), 3.0);
  EXPECT_EQ(sum(a).item<float>(), 6.0f);
  EXPECT_EQ(a.data_ptr<float>()[2], 3.0f);
  EXPECT_EQ(a.data_ptr<float>()[10], 3.0f);
  // index_put_ on a strided self and a broadcast value.
  Tensor b = zeros({3, 4}).t();
  b.index_put_({tensor<int64_t>({0, 3})}, scalar_tensor(2.0, kFloat32));
  EXPECT_TRUE(equal(sum(b, {1}), tensor<float>({6, 0, 0, 6})));
  // scatter_reduce_ mean of integers floors.
  Tensor m = tensor<int64_t>({-7, 7, 9});
  m.scatter_reduce_(
      0, tensor<int64_t>({0, 1}), tensor<int64_t>({0, 0}), "mean");
  EXPECT_TRUE(equal(m, tensor<int64_t>({-4, 3, 9})));
  // A 0-d bool index selects all (true) or nothing (false).
  Tensor z = zeros({3});
  z.index_put_({scalar_tensor(false, kBool)}, scalar_tensor(5.0, kFloat32));
  EXPECT_EQ(sum(z).item<float>(), 0.0f);
  z.index_put_({scalar_tensor(true, kBool)}, scalar_tensor(5.0, kFloat32));
  EXPECT_EQ(sum(z).item<float>(), 15.0f);
  // 2-d embedding_bag: one bag per row.
  EXPECT_TRUE(equal(
      embedding_bag(tensor<int64_t>({0, 1, 1, 1}, {2, 2}), eye(2), {}, "sum"),
      tensor<float>({1, 1, 0, 2}, {2, 2})));
  // masked_select broadcasts self and mask.
  EXPECT_TRUE(equal(
      masked_select(
          tensor<float>({1, 2}),
          tensor<bool>({true, false, true, true}, {2, 2})),
      tensor<float>({1, 1, 2})));
}

TEST_F(ScatterFamily, AppearInTheRegistry) {
  std::map<std::string, std::string> dtypes;
  for (const auto& op : determinism::registered_ops()) {
    dtypes[op.name] = op.dtypes;
  }
  for (const char* name :
       {"index_add_",
        "scatter_add_",
        "scatter_reduce_",
        "bincount",
        "embedding_bag"}) {
    EXPECT_EQ(dtypes[name], "floating") << name;
  }
  for (const char* name : {"index_copy_", "scatter_", "index_put_", "put_"}) {
    EXPECT_EQ(dtypes[name], "all") << name;
  }
}
