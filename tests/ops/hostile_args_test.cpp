// Hostile arguments for the public ops (issue 17): dims and sizes at the
// int64 edges, negative values, zero-size inputs, mismatched dtypes and
// aliasing outputs. Each call succeeds or raises a typed ditto error; either
// way every input keeps its fingerprint (in-place ops: unchanged on error).

#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <string>
#include <vector>

#include "ditto/ditto.h"

namespace ditto {
namespace {

const std::vector<int64_t> kDims =
    {INT64_MIN, -100, -3, -1, 0, 1, 2, 100, INT64_MAX};
const std::vector<int64_t> kSizes =
    {INT64_MIN, -2, -1, 0, 1, 7, int64_t(1) << 40, int64_t(1) << 62, INT64_MAX};

struct Inputs {
  Tensor a = arange(0, 12, 1, kFloat32).view({3, 4});
  Tensor b = arange(0, 12, 1, kInt64).view({3, 4});
  Tensor empty = zeros({0, 4});
  Tensor scalar = full({}, 2.5);
  Tensor idx = tensor<int64_t>({2, 0, 1});
  Tensor probs = tensor<float>({0.1f, 0.2f, 0.7f});
  std::vector<Tensor> all() const {
    return {a, b, empty, scalar, idx, probs};
  }
};

std::vector<uint64_t> prints(const Inputs& in) {
  std::vector<uint64_t> p;
  for (const Tensor& t : in.all()) {
    p.push_back(fingerprint(t));
  }
  return p;
}

// Runs f; fails the test on any exception that is not a ditto::Error, and
// if an input changed.
void hostile(const std::string& what, const std::function<void(Inputs&)>& f) {
  Inputs in;
  const std::vector<uint64_t> before = prints(in);
  try {
    f(in);
  } catch (const Error&) {
    // A typed error: fine.
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": an untyped exception: " << e.what();
  }
  EXPECT_EQ(prints(in), before) << what << " changed an input";
}

TEST(HostileArgs, DimsAtTheEdges) {
  for (int64_t d : kDims) {
    const std::string at = " dim " + std::to_string(d);
    hostile("sum" + at, [d](Inputs& in) { sum(in.a, {d}); });
    hostile("mean" + at, [d](Inputs& in) { mean(in.a, {d, d}); });
    hostile("prod" + at, [d](Inputs& in) { prod(in.b, d); });
    hostile("max" + at, [d](Inputs& in) { max(in.a, d, true); });
    hostile("argmin" + at, [d](Inputs& in) { argmin(in.empty, d); });
    hostile("sort" + at, [d](Inputs& in) { sort(in.a, d); });
    hostile("cumsum" + at, [d](Inputs& in) { cumsum(in.a, d); });
    hostile("cummax" + at, [d](Inputs& in) { cummax(in.empty, d); });
    hostile("logcumsumexp" + at, [d](Inputs& in) { logcumsumexp(in.a, d); });
    hostile("quantile" + at, [d](Inputs& in) { quantile(in.a, 0.5, d); });
    hostile("repeat_interleave" + at, [d](Inputs& in) {
      repeat_interleave(in.a, 2, d);
    });
    hostile("flip" + at, [d](Inputs& in) { flip(in.a, {d}); });
    hostile("cat" + at, [d](Inputs& in) { cat({in.a, in.a}, d); });
    hostile("stack" + at, [d](Inputs& in) { stack({in.a, in.a}, d); });
    hostile("index_select" + at, [d](Inputs& in) {
      index_select(in.a, d, in.idx);
    });
    hostile("gather" + at, [d](Inputs& in) {
      gather(in.a, d, in.idx.view({3, 1}));
    });
    hostile("narrow" + at, [d](Inputs& in) { in.a.narrow(d, 0, 1); });
    hostile("select" + at, [d](Inputs& in) { in.a.select(d, d); });
    hostile("slice" + at, [d](Inputs& in) {
      in.a.slice(d, d, d == INT64_MIN ? INT64_MAX : -d, 1);
    });
    hostile("unsqueeze" + at, [d](Inputs& in) { in.scalar.unsqueeze(d); });
    hostile("squeeze" + at, [d](Inputs& in) { in.a.squeeze(d); });
    hostile("transpose" + at, [d](Inputs& in) { in.a.transpose(d, 0); });
    hostile("flatten" + at, [d](Inputs& in) { in.a.flatten(d, -1); });
    hostile("permute" + at, [d](Inputs& in) { in.a.permute({d, 0}); });
    hostile("index_add_" + at, [d](Inputs& in) {
      Tensor t = in.a.clone();
      t.index_add_(d, in.idx, in.a);
    });
    hostile("scatter_add_" + at, [d](Inputs& in) {
      Tensor t = in.a.clone();
      t.scatter_add_(d, in.idx.view({3, 1}), in.a);
    });
    hostile("scatter_reduce_" + at, [d](Inputs& in) {
      Tensor t = in.a.clone();
      t.scatter_reduce_(d, in.idx.view({3, 1}), in.a, "amax");
    });
    hostile("index_copy_" + at, [d](Inputs& in) {
      Tensor t = in.a.clone();
      t.index_copy_(d, in.idx, in.a);
    });
  }
}

TEST(HostileArgs, SizesAtTheEdges) {
  for (int64_t n : kSizes) {
    const std::string at = " size " + std::to_string(n);
    hostile("zeros" + at, [n](Inputs&) { zeros({n, n}); });
    hostile("full" + at, [n](Inputs&) { full({n}, 1.0); });
    hostile("empty" + at, [n](Inputs&) { empty({2, n}); });
    // Counts whose sum overflows or cannot be allocated; a wrong
    // output_size.
    hostile("repeat_interleave" + at, [n](Inputs& in) {
      repeat_interleave(in.a, n, 0);
    });
    hostile("repeat_interleave counts" + at, [n](Inputs& in) {
      repeat_interleave(in.idx, full({3}, n, kInt64), 0, n);
    });
    hostile("repeat_interleave indices" + at, [n](Inputs&) {
      repeat_interleave(full({2}, n, kInt64));
    });
    hostile("arange" + at, [n](Inputs&) { arange(0, n, 1, kInt64); });
    hostile("linspace" + at, [n](Inputs&) { linspace(0, 1, n); });
    hostile("eye" + at, [n](Inputs&) { eye(n, n); });
    hostile("randn" + at, [n](Inputs&) { randn({n}); });
    hostile("randint" + at, [n](Inputs&) { randint(0, n, {3}); });
    hostile("randperm" + at, [n](Inputs&) { randperm(n); });
    hostile("multinomial" + at, [n](Inputs& in) {
      multinomial(in.probs, n, true);
    });
    hostile("expand" + at, [n](Inputs& in) { in.a.expand({n, 3, 4}); });
    hostile("view" + at, [n](Inputs& in) { in.a.view({n, -1}); });
    hostile("reshape" + at, [n](Inputs& in) { in.empty.reshape({n, -1}); });
    hostile("as_strided" + at, [n](Inputs& in) {
      in.a.as_strided({n, 2}, {n, 1}, n);
    });
    hostile("pad" + at, [n](Inputs& in) { pad(in.a, {n, n}); });
    hostile("pad_reflect" + at, [n](Inputs& in) {
      pad(in.a, {n, 1}, "reflect");
    });
    hostile("bincount" + at, [n](Inputs& in) { bincount(in.idx, {}, n); });
    hostile("histc" + at, [n](Inputs& in) { histc(in.a, n); });
    hostile("conv2d stride" + at, [n](Inputs&) {
      conv2d(ones({1, 1, 4, 4}), ones({1, 1, 2, 2}), {}, {n, 1});
    });
    hostile("conv2d padding" + at, [n](Inputs&) {
      conv2d(ones({1, 1, 4, 4}), ones({1, 1, 2, 2}), {}, {1, 1}, {n, 0});
    });
    hostile("conv1d dilation" + at, [n](Inputs&) {
      conv1d(ones({1, 1, 4}), ones({1, 1, 2}), {}, {1}, {0}, {n});
    });
    hostile("svd_lowrank" + at, [n](Inputs& in) {
      linalg::svd_lowrank(in.a, n, 1);
    });
    hostile("embedding_bag offsets" + at, [n](Inputs& in) {
      embedding_bag(in.idx, in.a, tensor<int64_t>({0, n}), "sum");
    });
    hostile("take" + at, [n](Inputs& in) { take(in.a, tensor<int64_t>({n})); });
    hostile("put_" + at, [n](Inputs& in) {
      Tensor t = in.a.clone();
      t.put_(tensor<int64_t>({n}), tensor<float>({1.0f}));
    });
    hostile("index_put_" + at, [n](Inputs& in) {
      Tensor t = in.a.clone();
      t.index_put_({tensor<int64_t>({n})}, tensor<float>({1.0f}));
    });
  }
}

// The nn ops' window arithmetic (pooling, interpolation, transposed
// convolution, padding, embedding): sizes, strides, paddings and dilations
// at the int64 edges. adaptive_avg_pool2d with an output of 2^62 rows once
// threw std::length_error from a vector of windows.
TEST(HostileArgs, NnWindowsAtTheEdges) {
  namespace F = nn::functional;
  for (int64_t v : kSizes) {
    const std::string at = " size " + std::to_string(v);
    auto x4 = [](Inputs& in) { return in.a.view({1, 1, 3, 4}); };
    hostile(
        "max_pool2d kernel" + at, [&](Inputs& in) { max_pool2d(x4(in), {v}); });
    hostile("max_pool2d stride" + at, [&](Inputs& in) {
      max_pool2d(x4(in), {2}, {v});
    });
    hostile("max_pool2d padding" + at, [&](Inputs& in) {
      max_pool2d(x4(in), {2}, {2}, {v});
    });
    hostile("max_pool2d dilation" + at, [&](Inputs& in) {
      max_pool2d(x4(in), {2}, {2}, {0}, {v});
    });
    hostile("avg_pool2d kernel" + at, [&](Inputs& in) {
      F::avg_pool2d(x4(in), {v});
    });
    hostile("avg_pool2d stride" + at, [&](Inputs& in) {
      F::avg_pool2d(x4(in), {2}, {v});
    });
    hostile("avg_pool2d padding" + at, [&](Inputs& in) {
      F::avg_pool2d(x4(in), {2}, {2}, {v});
    });
    hostile("adaptive_avg_pool2d" + at, [&](Inputs& in) {
      F::adaptive_avg_pool2d(x4(in), {v, 2});
    });
    hostile("interpolate size" + at, [&](Inputs& in) {
      F::interpolate(x4(in), F::InterpolateOptions().size({v, 3}));
    });
    hostile("interpolate scale" + at, [&](Inputs& in) {
      F::interpolate(x4(in), F::InterpolateOptions().scale_factor({double(v)}));
    });
    hostile("conv_transpose2d stride" + at, [&](Inputs& in) {
      conv_transpose2d(x4(in), ones({1, 1, 2, 2}), {}, {v});
    });
    hostile("conv_transpose2d output_padding" + at, [&](Inputs& in) {
      conv_transpose2d(x4(in), ones({1, 1, 2, 2}), {}, {1}, {0}, {v});
    });
    hostile("pad reflect" + at, [&](Inputs& in) {
      F::pad(x4(in), {v, 1, 1, 1}, "reflect");
    });
    hostile("pad replicate" + at, [&](Inputs& in) {
      F::pad(x4(in), {1, v, 1, 1}, "replicate");
    });
    hostile("embedding" + at, [&](Inputs& in) {
      F::embedding(tensor<int64_t>({v}), in.a);
    });
    // The 1-d/3-d poolings, unpooling, the other interpolation modes and
    // the order statistics (issue 35).
    auto x5 = [](Inputs& in) { return in.a.view({1, 1, 1, 3, 4}); };
    hostile("max_pool3d kernel" + at, [&](Inputs& in) {
      F::max_pool3d(x5(in), {v});
    });
    hostile("avg_pool1d stride" + at, [&](Inputs& in) {
      F::avg_pool1d(in.a.view({1, 3, 4}), {2}, {v});
    });
    hostile("adaptive_max_pool3d" + at, [&](Inputs& in) {
      F::adaptive_max_pool3d(x5(in), {1, v, 2});
    });
    hostile("max_unpool2d kernel" + at, [&](Inputs& in) {
      F::max_unpool2d(x4(in), zeros({1, 1, 3, 4}, kInt64), {v});
    });
    hostile("max_unpool2d output_size" + at, [&](Inputs& in) {
      F::max_unpool2d(
          x4(in), zeros({1, 1, 3, 4}, kInt64), {2}, {}, {0}, {v, 8});
    });
    hostile("interpolate trilinear size" + at, [&](Inputs& in) {
      F::interpolate(
          x5(in),
          F::InterpolateOptions().size({2, v, 3}).mode(
              F::InterpolateMode::Trilinear));
    });
    hostile("interpolate bicubic antialias" + at, [&](Inputs& in) {
      F::interpolate(
          x4(in),
          F::InterpolateOptions()
              .size({v, 3})
              .mode(F::InterpolateMode::Bicubic)
              .antialias(true));
    });
    hostile("conv3d stride" + at, [&](Inputs& in) {
      conv3d(x5(in), ones({1, 1, 1, 2, 2}), {}, {1, v, 1});
    });
    hostile("conv3d padding" + at, [&](Inputs& in) {
      conv3d(x5(in), ones({1, 1, 1, 2, 2}), {}, {1}, {v, 0, 1});
    });
    hostile("conv3d dilation" + at, [&](Inputs& in) {
      conv3d(x5(in), ones({1, 1, 1, 2, 2}), {}, {1}, {0}, {1, 1, v});
    });
    hostile("conv3d_backward_weight padding" + at, [&](Inputs& in) {
      conv3d_backward_weight(x5(in), x5(in), {1, 1, 1, 1, 1}, {1}, {0, v, 0});
    });
    hostile("conv_transpose3d stride" + at, [&](Inputs& in) {
      conv_transpose3d(x5(in), ones({1, 1, 1, 2, 2}), {}, {v});
    });
    hostile("conv_transpose3d padding" + at, [&](Inputs& in) {
      conv_transpose3d(x5(in), ones({1, 1, 1, 2, 2}), {}, {1}, {0, v, 0});
    });
    hostile("fractional_max_pool2d kernel" + at, [&](Inputs& in) {
      F::fractional_max_pool2d(x4(in), {v}, {1});
    });
    hostile("fractional_max_pool2d output_size" + at, [&](Inputs& in) {
      F::fractional_max_pool2d(x4(in), {2}, {v, 1});
    });
    hostile("fractional_max_pool3d output_size" + at, [&](Inputs& in) {
      F::fractional_max_pool3d(x5(in), {1}, {1, 1, v});
    });
    hostile("grid_sample 3d grid" + at, [&](Inputs& in) {
      F::grid_sample(x5(in), zeros({1, 1, 1, v > 0 && v < 64 ? v : 1, 3}));
    });
    hostile("index_reduce_ dim" + at, [&](Inputs&) {
      Tensor self = zeros({3, 4});
      self.index_reduce_(v, tensor<int64_t>({0}), zeros({1, 4}), "amax");
    });
    hostile("index_reduce_ index" + at, [&](Inputs&) {
      Tensor self = zeros({3, 4});
      self.index_reduce_(0, tensor<int64_t>({v}), zeros({1, 4}), "prod");
    });
    hostile("kthvalue k" + at, [&](Inputs& in) { kthvalue(in.a, v); });
    hostile("topk k" + at, [&](Inputs& in) { topk(in.a, v); });
  }
}

// The Core ATen ops' shape arithmetic (ditto/ops/composite/aten.ops.toml):
// indices, slice bounds, windows and sizes at the int64 edges.
TEST(HostileArgs, CoreAtenOpsAtTheEdges) {
  for (int64_t v : kSizes) {
    const std::string at = " value " + std::to_string(v);
    hostile("select_scatter" + at, [&](Inputs& in) {
      select_scatter(in.a, in.a.select(0, 0), 0, v);
    });
    hostile("select_scatter dim" + at, [&](Inputs& in) {
      select_scatter(in.a, in.a.select(0, 0), v, 0);
    });
    hostile("slice_scatter start" + at, [&](Inputs& in) {
      slice_scatter(in.a, in.a, 0, v, std::nullopt, 1);
    });
    hostile("slice_scatter end" + at, [&](Inputs& in) {
      slice_scatter(in.a, in.a, 1, 0, v, 1);
    });
    hostile("slice_scatter step" + at, [&](Inputs& in) {
      slice_scatter(in.a, in.a.narrow(0, 0, 1), 0, 0, std::nullopt, v);
    });
    for (int which = 0; which < 4; ++which) {
      IntArg k{2, 2}, d{1, 1}, p{0, 0}, st{1, 1};
      IntArg* arg[] = {&k, &d, &p, &st};
      *arg[which] = IntArg{v, 1};
      const std::string w = " argument " + std::to_string(which) + at;
      hostile("im2col" + w, [&](Inputs& in) {
        im2col(in.a.view({1, 1, 3, 4}), k, d, p, st);
      });
      hostile("col2im" + w, [&](Inputs& in) {
        col2im(in.a.view({1, 4, 3}), {3, 4}, k, d, p, st);
      });
    }
    hostile("col2im output_size" + at, [&](Inputs& in) {
      col2im(in.a.view({1, 4, 3}), {v, v}, {2, 2}, {1, 1}, {0, 0}, {1, 1});
    });
    hostile("rms_norm" + at, [&](Inputs& in) {
      rms_norm(in.a, {v}, std::nullopt, std::nullopt);
    });
  }
  // Sizes far beyond memory through zero-stride views: typed errors.
  hostile("pdist of 2^40 rows", [](Inputs& in) {
    pdist(in.a.select(0, 0).unsqueeze(0).expand({int64_t(1) << 40, 4}), 2.0);
  });
  hostile("cdist of 2^31 x 2^31 rows", [](Inputs& in) {
    const Tensor rows =
        in.a.select(0, 0).unsqueeze(0).expand({int64_t(1) << 31, 4});
    cdist(rows, rows, 2.0, std::nullopt);
  });
  hostile("nonzero of 2^40 elements", [](Inputs& in) {
    nonzero(in.a.select(0, 0).select(0, 1).expand({int64_t(1) << 40}));
  });
  hostile("masked_scatter, a short source", [](Inputs& in) {
    masked_scatter(in.a, gt(in.a, -1.0), in.a.narrow(0, 0, 1));
  });
  hostile("convolution, a 2-d weight", [](Inputs& in) {
    convolution(in.a, in.a, std::nullopt, {1}, {0}, {1}, false, {0}, 1);
  });
}

TEST(HostileArgs, ZeroSizeInputs) {
  hostile("reductions of empty", [](Inputs& in) {
    EXPECT_EQ(sum(in.empty).item<float>(), 0.0f);
    EXPECT_EQ(prod(in.empty).item<float>(), 1.0f);
    EXPECT_THROW(max(in.empty), Error);
    EXPECT_EQ(mean(in.empty, {0}).sizes(), Shape({4}));
  });
  hostile("ops on empty", [](Inputs& in) {
    EXPECT_EQ(mm(in.empty, ones({4, 2})).sizes(), Shape({0, 2}));
    EXPECT_EQ(exp(in.empty).numel(), 0);
    EXPECT_EQ(cat({in.empty, in.empty}).sizes(), Shape({0, 4}));
    EXPECT_EQ(index_select(in.empty, 1, in.idx).sizes(), Shape({0, 3}));
    EXPECT_EQ(sort(in.empty, 0).first.numel(), 0);
    EXPECT_EQ(
        conv2d(zeros({0, 1, 3, 3}), ones({2, 1, 2, 2})).sizes(),
        Shape({0, 2, 2, 2}));
  });
}

TEST(HostileArgs, MismatchedDtypes) {
  hostile("mm int", [](Inputs& in) { mm(in.a, in.b.t()); });
  hostile("matmul bool", [](Inputs& in) { matmul(in.a, ne(in.b, 0).t()); });
  hostile("index float", [](Inputs& in) {
    index_select(in.a, 0, in.idx.to(kFloat32));
  });
  hostile("conv int", [](Inputs&) {
    conv2d(ones({1, 1, 3, 3}, kInt64), ones({1, 1, 2, 2}, kInt64));
  });
  hostile("where float cond", [](Inputs& in) { where(in.a, in.a, in.a); });
  hostile("index_add_ int into float", [](Inputs& in) {
    Tensor t = in.a.clone();
    t.index_add_(0, in.idx, in.b);
  });
  hostile("masked_fill_ int mask", [](Inputs& in) {
    Tensor t = in.a.clone();
    t.masked_fill_(in.b, 1.0);
  });
  hostile("bincount float", [](Inputs& in) { bincount(in.a.flatten()); });
  hostile("requires_grad on ints", [](Inputs& in) {
    Tensor t = in.b.clone();
    t.requires_grad_();
  });
}

// Outputs aliasing inputs: the result is as if the inputs were copied first.
TEST(HostileArgs, AliasingOutputs) {
  Tensor a = arange(0, 12, 1, kFloat32).view({3, 4});
  Tensor idx = tensor<int64_t>({2, 0, 1});
  {
    Tensor t = a.clone(), want = a.clone();
    want.index_add_(0, idx, a.clone());
    t.index_add_(0, idx, t);
    EXPECT_TRUE(equal(t, want));
  }
  {
    Tensor t = a.clone(), want = a.clone();
    want.scatter_(1, idx.view({3, 1}), a.clone());
    t.scatter_(1, idx.view({3, 1}), t);
    EXPECT_TRUE(equal(t, want));
  }
  {
    Tensor t = a.clone(), want = a.clone();
    want.copy_(a.clone().t().contiguous().view({3, 4}));
    t.copy_(t.t().contiguous().view({3, 4}));
    EXPECT_TRUE(equal(t, want));
  }
  {
    Tensor t = a.clone(), want = a.clone();
    want.add_(a.clone().flip({0}));
    t.add_(t.flip({0}));
    EXPECT_TRUE(equal(t, want));
  }
  // An expanded output cannot be written.
  Tensor e = zeros({1, 4}).expand({3, 4});
  EXPECT_THROW(e.add_(1.0), ValueError);
  EXPECT_THROW(e.index_add_(0, idx, a), ValueError);
}

} // namespace
} // namespace ditto

// Found by the binding fuzzer under UBSan (make sanitize, issue 61): each
// formed an int64 past its range (undefined) or read a byte other than 0 or
// 1 as a bool. Each is now an error naming the op, or torch's wrapping or
// exact result.
namespace ditto {
namespace {

TEST(HostileArgs, Int64EdgesTheSanitizersFound) {
  const Tensor v = tensor<float>({1.0f, 2.0f});
  EXPECT_THROW(diag(v, INT64_MAX), ValueError);
  EXPECT_THROW(diag(v, INT64_MIN), ValueError);
  EXPECT_THROW(diag(v, int64_t(1) << 32), ValueError); // (2^32)^2 > 2^63
  EXPECT_EQ(diag(v, 1).sizes(), (Shape{3, 3}));
  const Tensor m = zeros({2, 2});
  EXPECT_THROW(split_with_sizes(m, {3, INT64_MAX, INT64_MAX}, 1), ValueError);
  // chunk(2^63 - 1): one chunk per element, as torch's.
  EXPECT_EQ(chunk(m, INT64_MAX, 1).size(), 2u);
  // a - alpha b with alpha = -2^63: integers wrap, floats are exact.
  const Tensor i = tensor<int64_t>({5, 7});
  const Tensor one = tensor<int64_t>({1, 1});
  Tensor r = sub(i, one, Scalar(INT64_MIN));
  EXPECT_EQ(r[0].item<int64_t>(), int64_t(uint64_t(5) + (uint64_t(1) << 63)));
  Tensor f = sub(tensor<double>({0.0}), tensor<double>({1.0}), INT64_MIN);
  EXPECT_EQ(f.item<double>(), 9223372036854775808.0);
  Tensor in_place = i.clone();
  in_place.sub_(one, Scalar(INT64_MIN));
  EXPECT_TRUE(equal(in_place, r));
}

TEST(HostileArgs, ABoolTensorOfOtherBytesPrints) {
  // A bool view of bytes other than 0 and 1 (what empty() may hold): the
  // printer reads bytes, nonzero is True.
  Tensor bytes = tensor<uint8_t>({2, 0, 190});
  Tensor b = bytes.view(kBool);
  EXPECT_EQ(b.to_string(), "tensor([ True, False,  True])");
}

} // namespace
} // namespace ditto
