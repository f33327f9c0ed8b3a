// The declared ops' C++ surface and records agree with their declarations
// (ditto/ops/*.ops.toml, Note [One declaration per op] in record.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>

#include "ditto/ditto.h"
#include "ditto/ops/detail/declaration.h"
#include "ditto/ops/record.h"
#include "tests/error_of.h"

namespace ditto {
namespace {

bool has_variant(const detail::OpDeclaration& d, const std::string& v) {
  return ("," + d.variants + ",").find(v) != std::string::npos;
}

TEST(Declarations, EveryDeclaredOpHasItsRecordsAndCallables) {
  const auto& decls = detail::op_declarations();
  ASSERT_GE(decls.size(), 11u);
  std::set<std::string> seen;
  // An overload may have fewer forms than its name (where.ScalarSelf is a
  // function only): the record has the forms of the name's overloads.
  std::map<std::string, std::string> variants_of_name;
  for (const auto& d : decls) {
    variants_of_name[d.name] += "," + d.variants;
  }
  for (const auto& d : decls) {
    SCOPED_TRACE(d.name);
    // name(...) or name.overload(...): each declared once (in a namespace,
    // sparse::mm, under the qualified name)
    const size_t qualified = d.name.rfind("::");
    const std::string ns =
        qualified == std::string::npos ? "" : d.name.substr(0, qualified + 2);
    const std::string head = ns + d.schema.substr(0, d.schema.find('('));
    EXPECT_TRUE(seen.insert(head).second) << "declared twice";
    EXPECT_TRUE(head == d.name || head.rfind(d.name + ".", 0) == 0) << d.schema;
    const OpRecord* r = find_op_record(d.record);
    ASSERT_NE(r, nullptr) << "no record";
    if (d.record != d.name) {
      // a form recorded under another op's name (max_pool2d_with_indices)
      EXPECT_EQ(find_op_record(d.name), nullptr) << "recorded twice";
      bool named = false;
      for (const auto& c : r->callables) {
        named |= c.rfind("ditto::" + d.name + "(", 0) == 0 ||
            c.rfind("Tensor::" + d.name + "(", 0) == 0;
      }
      EXPECT_TRUE(named) << d.record << " names no form of " << d.name;
      continue;
    }
    bool function = false, method = false;
    for (const auto& c : r->callables) {
      function |= c.rfind("ditto::" + d.name + "(", 0) == 0;
      method |= c.rfind("Tensor::" + d.name + "(", 0) == 0;
    }
    detail::OpDeclaration all = d;
    all.variants = variants_of_name[d.name];
    EXPECT_EQ(function, has_variant(all, "function"));
    EXPECT_EQ(method, has_variant(all, "method"));
    if (d.schema.find("Tensor(a!) self") != std::string::npos) {
      // a mutating method (uniform_): its record is an in-place one
      EXPECT_TRUE(r->inplace);
      EXPECT_EQ(d.name.back(), '_');
    }
    const OpRecord* ri = find_op_record(d.name + "_");
    if (variants_of_name.count(d.name + "_")) {
      continue; // bernoulli_: a mutating method of its own schemas
    }
    EXPECT_EQ(ri != nullptr, has_variant(all, "inplace"));
    if (ri != nullptr) {
      EXPECT_TRUE(ri->inplace);
    }
  }
}

// Every op record is declared: as an op's own record, a form's (record =),
// an in-place form's (abs_), or the sparse layout's kernel of a declared op
// (sparse =). Three records are not ops a schema can declare, each named here
// with why (the list cannot go stale: each must stay a record without a
// declaration).
TEST(Declarations, EveryRecordIsDeclared) {
  const std::map<std::string, std::string> undeclared = {
      {"tensor",
       "the factory from C++ or Python data: variadic, not a schema "
       "(torch.tensor is not in native_functions.yaml either)"},
      {"recurrent_step", "an internal frame of the recurrent layers"},
      {"recurrent_weight_carrier",
       "an internal frame of the recurrent layers (takes a shared_ptr)"},
  };
  std::set<std::string> declared;
  for (const auto& d : detail::op_declarations()) {
    declared.insert(d.record);
    if (has_variant(d, "inplace")) {
      declared.insert(d.name + "_"); // abs_: abs's in-place form
    }
    for (const std::string& k : d.sparse) {
      SCOPED_TRACE(d.name + "'s sparse kernel " + k);
      const OpRecord* r = find_op_record(k);
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->family, "sparse");
      EXPECT_TRUE(declared.insert(k).second) << "declared twice";
    }
  }
  for (const OpRecord* r : op_records()) {
    SCOPED_TRACE(r->name);
    EXPECT_NE(declared.count(r->name), undeclared.count(r->name))
        << (declared.count(r->name) ? "declared, yet listed as undeclared"
                                    : "no declaration");
  }
  for (const auto& [name, why] : undeclared) {
    EXPECT_NE(find_op_record(name), nullptr) << name << ": " << why;
  }
}

// A kernel op runs under its own name: its errors name it (a form recorded
// under another op's name, that name; a record's bad samples call any of
// the forms recorded under it: values() under _values's).
TEST(Declarations, KernelOpsRunUnderTheirNames) {
  std::map<std::string, std::vector<std::string>> names_of_record;
  for (const auto& d : detail::op_declarations()) {
    names_of_record[d.record].push_back(d.name);
  }
  for (const auto& d : detail::op_declarations()) {
    SCOPED_TRACE(d.name);
    const OpRecord* r = find_op_record(d.record);
    ASSERT_NE(r, nullptr);
    if (!r->bad_samples) {
      ADD_FAILURE() << "no bad samples";
      continue;
    }
    for (const Sample& s : r->bad_samples()) {
      try {
        s.call(s.inputs);
        ADD_FAILURE() << "accepted " << s.label;
      } catch (const Error& e) {
        const std::string what = e.what();
        bool named = what.find(d.record) != std::string::npos;
        for (const std::string& n : names_of_record[d.record]) {
          named |= what.find(n) != std::string::npos;
        }
        EXPECT_TRUE(named) << what;
      }
    }
  }
}

// Note [Device kernels are declared]: the devices a declaration names (a
// shader code, `devices`) reach the op's record, in-place forms included,
// and the device's op list is the records' (no list of its own).
TEST(Declarations, DeclaredDevicesReachTheRecords) {
  ASSERT_FALSE(detail::declared_devices().empty());
  for (const auto& [name, device] : detail::declared_devices()) {
    SCOPED_TRACE(name);
    ASSERT_NE(find_op_record(name), nullptr);
    EXPECT_TRUE(has_device_kernel(name, device));
  }
  EXPECT_TRUE(has_device_kernel("mm", kVulkan)); // a body's `devices`
  EXPECT_TRUE(has_device_kernel("exp_", kVulkan)); // a shader code's
  EXPECT_TRUE(has_device_kernel("sum", kVulkan)); // a record's
  EXPECT_FALSE(has_device_kernel("pow", kVulkan));
  EXPECT_FALSE(has_device_kernel("no_such_op", kVulkan));
  EXPECT_TRUE(has_device_kernel("pow", kCPU));
  std::vector<std::string> on_device = device_ops(kVulkan);
  EXPECT_TRUE(std::is_sorted(on_device.begin(), on_device.end()));
  int with_record_devices = 0;
  for (const OpRecord* r : op_records()) {
    with_record_devices += !r->devices.empty();
  }
  EXPECT_EQ(size_t(with_record_devices), on_device.size());
}

// The LibTorch-style free functions, methods and in-place forms the
// declarations give, called as a C++ user would.
TEST(Declarations, GeneratedFormsAgree) {
  Tensor x = linspace(0.25, 2.5, 37, kFloat64);
  Tensor f = exp(x);
  Tensor m = x.exp();
  Tensor y = x.clone();
  Tensor& r = y.exp_();
  EXPECT_TRUE(r.is_same(y));
  EXPECT_TRUE(equal(f, m));
  EXPECT_TRUE(equal(f, y));
  EXPECT_TRUE(equal(negative(x), neg(x)));
  EXPECT_TRUE(equal(absolute(neg(x)), x));
}

// The arithmetic, reductions and scans declared with bodies: LibTorch's
// signatures (one add with alpha = 1, sum's optional dims and dtype,
// max's overloads) as a C++ user calls them.
TEST(Declarations, ArithmeticAndReductionsTakeLibTorchsForms) {
  Tensor x = linspace(-2.0, 3.5, 12, kFloat32).reshape({3, 4});
  Tensor y = linspace(0.5, 1.5, 12, kFloat32).reshape({3, 4});
  EXPECT_TRUE(equal(add(x, y), add(x, y, 1)));
  EXPECT_TRUE(equal(sub(x, y, 2), sub(x, mul(y, 2))));
  EXPECT_TRUE(equal(x.add(3, 2), add(x, 6)));
  EXPECT_TRUE(equal(subtract(x, y), x - y));
  EXPECT_TRUE(equal(divide(x, y), true_divide(x, y)));
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  // alpha * other wraps on integers: 2^62 * 4 is 0 mod 2^64
  EXPECT_TRUE(equal(add(i, int64_t(1) << 62, 4), i));
  Tensor z = y.clone();
  z.add_(x.abs(), 0.5).sub_(1, 0.25).pow_(y);
  EXPECT_TRUE(equal(z, pow(sub(add(y, x.abs(), 0.5), 0.25), y)));
  EXPECT_EQ(sum(x, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(sum(x, std::nullopt, true).sizes(), (Shape{1, 1}));
  EXPECT_TRUE(equal(sum(x, 1), x.sum({1})));
  EXPECT_TRUE(equal(sum(x, {0, 1}), sum(x)));
  EXPECT_EQ(mean(x, 0, true, kFloat64).sizes(), (Shape{1, 4}));
  EXPECT_EQ(x.prod(1, false, kFloat64).dtype(), kFloat64);
  EXPECT_TRUE(equal(max(x, y), maximum(x, y)));
  EXPECT_TRUE(equal(x.min(y), minimum(x, y)));
  auto [values, indices] = x.max(1, true);
  EXPECT_EQ(values.sizes(), (Shape{3, 1}));
  EXPECT_TRUE(equal(norm(x, std::nullopt, {1}), norm(x, 2, 1)));
  EXPECT_THROW(x.clone().cumsum_(0, kFloat64), TypeError);
  EXPECT_TRUE(equal(x.clone().cumsum_(1), cumsum(x, 1)));
  EXPECT_TRUE(equal(clip(x, 0, 1), x.clamp(0, 1)));
  EXPECT_TRUE(equal(x.flip({0, 1}), flip(x, {0, 1})));
  EXPECT_TRUE(equal(x.sum_to_size({1, 4}), sum(x, 0, true)));
  Tensor w = tensor({0.1, 0.2, 0.3, 0.4});
  Generator g1, g2;
  g1.manual_seed(7);
  g2.manual_seed(7);
  EXPECT_TRUE(equal(multinomial(w, 3, false, g1), w.multinomial(3, false, g2)));
}

// Bodies whose schema has self elsewhere (where.self) or none
// (repeat_interleave.Tensor), masked_fill's two values, the new_* methods.
TEST(Declarations, SelfElsewhereAndMethodFactories) {
  Tensor x = tensor({1.0, -2.0, 3.0, -4.0}).reshape({2, 2});
  Tensor c = gt(x, 0);
  EXPECT_TRUE(equal(x.where(c, 0.0), where(c, x, 0.0)));
  EXPECT_TRUE(
      equal(where(c, 5.0, x), tensor({5.0, -2.0, 5.0, -4.0}).reshape({2, 2})));
  Tensor y = x.clone();
  y.masked_fill_(c, tensor(7.0));
  EXPECT_TRUE(equal(y, masked_fill(x, c, 7.0)));
  EXPECT_THROW(y.masked_fill_(c, tensor({1.0, 2.0})), ValueError);
  EXPECT_TRUE(equal(
      repeat_interleave(tensor(std::vector<int64_t>{2, 1})),
      tensor(std::vector<int64_t>{0, 0, 1})));
  EXPECT_EQ(x.repeat_interleave(2, 0).sizes(), (Shape{4, 2}));
  Tensor z = x.new_zeros({2, 3}, kInt64);
  EXPECT_EQ(z.dtype(), kInt64);
  EXPECT_EQ(x.new_full({3}, 2).dtype(), x.dtype());
  EXPECT_THROW(x.new_ones({-1}), ValueError);
  // LibTorch's options: self's dtype and device unless given, requires_grad
  Tensor g = x.new_zeros({2}, dtype(kFloat64).requires_grad(true));
  EXPECT_EQ(g.dtype(), kFloat64);
  EXPECT_TRUE(g.requires_grad());
  EXPECT_EQ(
      x.new_ones({2}, TensorOptions().requires_grad(true)).dtype(), x.dtype());
  EXPECT_EQ(x.new_empty({3}, kCPU).sizes(), (Shape{3}));
  EXPECT_TRUE(equal(x.new_full({2}, 1.5, kFloat64), full({2}, 1.5, kFloat64)));
  EXPECT_TRUE(equal(new_zeros(x, {2}), zeros({2}, x.dtype())));
}

// Note [Factory options] (tools/opgen.py): the factories declared with
// torch's options are LibTorch's torch::zeros(size, options), ... as a C++
// user calls them; the forms without options stay ditto's.
TEST(Declarations, FactoriesTakeLibTorchsOptions) {
  const TensorOptions f64 = dtype(kFloat64).requires_grad(true);
  Tensor z = zeros({2, 3}, f64);
  EXPECT_EQ(z.dtype(), kFloat64);
  EXPECT_TRUE(z.requires_grad());
  EXPECT_TRUE(equal(z.detach(), zeros({2, 3}, kFloat64)));
  EXPECT_EQ(full({2}, 3, TensorOptions()).dtype(), kInt64); // the value's
  EXPECT_EQ(full({2}, 1.5, TensorOptions(kFloat64)).dtype(), kFloat64);
  Tensor x = ones({2, 2}, kFloat64);
  EXPECT_EQ(zeros_like(x, TensorOptions()).dtype(), kFloat64);
  EXPECT_EQ(ones_like(x, TensorOptions(kInt32)).dtype(), kInt32);
  EXPECT_TRUE(
      equal(full_like(x, 2, TensorOptions()), full({2, 2}, 2.0, kFloat64)));
  EXPECT_EQ(empty_like(x, TensorOptions()).sizes(), x.sizes());
  EXPECT_EQ(
      empty_strided({2, 3}, {1, 2}, TensorOptions()).strides(), (Shape{1, 2}));
  EXPECT_TRUE(equal(arange(4, TensorOptions()), arange(4)));
  EXPECT_EQ(arange(4, TensorOptions()).dtype(), kInt64);
  EXPECT_EQ(arange(0, 2, 0.5, TensorOptions(kFloat64)).dtype(), kFloat64);
  EXPECT_TRUE(equal(arange(1, 4, TensorOptions()), arange(1, 4)));
  EXPECT_TRUE(equal(
      linspace(0, 1, 5, TensorOptions(kFloat64)), linspace(0, 1, 5, kFloat64)));
  EXPECT_TRUE(equal(eye(2, 3, TensorOptions()), eye(2, 3)));
  EXPECT_TRUE(equal(eye(2, TensorOptions(kInt64)), eye(2, kInt64)));
  EXPECT_EQ(scalar_tensor(2.5, TensorOptions(kFloat64)).item<double>(), 2.5);
  // the random factories: the same draws as ditto's forms, with LibTorch's
  // generator argument before the options
  manual_seed(4);
  Tensor r = rand({5}, kFloat64);
  manual_seed(4);
  EXPECT_TRUE(equal(rand({5}, std::nullopt, TensorOptions(kFloat64)), r));
  manual_seed(4);
  EXPECT_TRUE(equal(rand({5}, dtype(kFloat64)), r));
  manual_seed(4);
  EXPECT_TRUE(equal(rand_like(zeros({5}, kFloat64), TensorOptions()), r));
  Generator g = Generator::philox(9);
  Tensor a = randn({7}, g, TensorOptions());
  EXPECT_TRUE(equal(a, randn({7}, kFloat32, Generator::philox(9))));
  EXPECT_TRUE(equal(
      randint(10, {6}, Generator::philox(2), TensorOptions()),
      randint(0, 10, {6}, kInt64, Generator::philox(2))));
  EXPECT_EQ(
      randint(-3, 3, {4}, std::nullopt, TensorOptions(kInt32)).dtype(), kInt32);
  EXPECT_EQ(randint_like(x, 5, TensorOptions()).dtype(), kFloat64);
  EXPECT_TRUE(equal(
      randperm(6, Generator::philox(1), TensorOptions()),
      randperm(6, kInt64, Generator::philox(1))));
  EXPECT_THROW(rand({2}, std::nullopt, TensorOptions(kInt64)), TypeError);
  EXPECT_THROW(zeros({-1}, TensorOptions()), ValueError);
}

// Issue 59: every operator of PyTorch's Core ATen set
// (ditto/ops/core_aten.toml, 193 from PyTorch's IRs page) is answered by op
// records that exist, or is a metadata read; the two FFT operators (complex
// dtypes) are the only ones ditto lacks, so a record removed or renamed fails
// here.
TEST(Declarations, EveryCoreAtenOperatorHasItsRecords) {
  const auto& aten = detail::core_aten_ops();
  EXPECT_EQ(aten.size(), 193u);
  // The backward ops that have a fast variant are in the determinism
  // registry (`ditto ops` lists both).
  std::set<std::string> registry;
  for (const auto& op : determinism::registered_ops()) {
    registry.insert(op.name);
  }
  std::set<std::string> names, missing, metadata;
  for (const auto& a : aten) {
    SCOPED_TRACE(a.name);
    EXPECT_TRUE(names.insert(a.name).second) << "listed twice";
    EXPECT_EQ(a.name.rfind("aten.", 0), 0u);
    const int answers = int(!a.ops.empty()) + int(!a.metadata.empty()) +
        int(!a.missing.empty());
    EXPECT_EQ(answers, 1);
    for (const auto& op : a.ops) {
      EXPECT_TRUE(find_op_record(op) != nullptr || registry.count(op))
          << "no record " << op;
    }
    if (!a.missing.empty()) {
      missing.insert(a.name);
    }
    if (!a.metadata.empty()) {
      metadata.insert(a.name);
    }
  }
  EXPECT_EQ(missing, (std::set<std::string>{"aten._fft_c2r", "aten._fft_r2c"}));
  EXPECT_EQ(
      metadata,
      (std::set<std::string>{
          "aten._local_scalar_dense",
          "aten.sym_is_contiguous",
          "aten.sym_numel",
          "aten.sym_size.int",
          "aten.sym_storage_offset",
          "aten.sym_stride.int"}));
}

// The integer and bool kernels: torch's results, and floating tensors
// refused without a result.
TEST(Declarations, BitwiseOpsOnIntegersAndBool) {
  Tensor a = tensor(std::vector<int64_t>{5, 3, -2, 0});
  Tensor b = tensor(std::vector<int64_t>{3, 6, 7, -1});
  EXPECT_TRUE(
      equal(bitwise_and(a, b), tensor(std::vector<int64_t>{1, 2, 6, 0})));
  EXPECT_TRUE(
      equal(bitwise_or(a, b), tensor(std::vector<int64_t>{7, 7, -1, -1})));
  EXPECT_TRUE(
      equal(bitwise_xor(a, b), tensor(std::vector<int64_t>{6, 5, -7, -1})));
  EXPECT_TRUE(
      equal(bitwise_not(a), tensor(std::vector<int64_t>{-6, -4, 1, -1})));
  Tensor t = tensor({true, false, true});
  EXPECT_TRUE(equal(bitwise_not(t), tensor({false, true, false})));
  EXPECT_TRUE(equal(
      bitwise_xor(t, tensor({true, true, false})),
      tensor({false, true, true})));
  EXPECT_TRUE(equal(
      bitwise_and(a.to(kInt32), 6), tensor(std::vector<int32_t>{4, 2, 6, 0})));
  Tensor f = tensor({1.5, 2.0, 3.0, 4.0});
  EXPECT_THROW(bitwise_and(f, f), TypeError);
  EXPECT_THROW(bitwise_not(f), TypeError);
  Tensor c = a.clone();
  EXPECT_THROW(c.bitwise_and_(f), TypeError);
  EXPECT_TRUE(equal(c, a));
}

// The mutating methods (torch's Tensor(a!) self: the fills with their
// overloads) and Tensor?[] (index's indices, an undefined Tensor for None),
// called as a LibTorch user calls them.
TEST(Declarations, MutatingMethodsAndOptionalTensorLists) {
  Tensor a = empty({64}, kInt64);
  Tensor b = empty({64}, kInt64);
  manual_seed(3);
  a.random_(10); // random_.to
  manual_seed(3);
  b.random_(0, 10); // random_.from
  EXPECT_TRUE(equal(a, b));
  Tensor& self = b.random_(Generator::philox(2)); // random_(generator)
  EXPECT_TRUE(self.is_same(b));
  EXPECT_GE(b.min().item<int64_t>(), 0);
  Tensor u = empty({100}, kFloat64);
  u.uniform_(); // from = 0, to = 1
  EXPECT_GE(u.min().item<double>(), 0.0);
  EXPECT_LT(u.max().item<double>(), 1.0);
  Tensor n1 = empty({20}), n2 = empty({20});
  n1.normal_(1.0, 2.0, Generator::philox(4));
  n2.normal_(1.0, 2.0, Generator::philox(4));
  EXPECT_TRUE(equal(n1, n2));
  // bernoulli.p: empty_like(self).bernoulli_(p), as PyTorch's
  Tensor z = zeros({200});
  manual_seed(4);
  Tensor p = bernoulli(z, 0.3);
  manual_seed(4);
  Tensor q = z.bernoulli(0.3);
  manual_seed(4);
  Tensor r = empty({200}).bernoulli_(0.3);
  EXPECT_TRUE(equal(p, q));
  EXPECT_TRUE(equal(p, r));
  EXPECT_TRUE(equal(z, zeros({200})));
  // index_put: the function, the method and the in-place form agree
  Tensor x = arange(12, kFloat32).reshape({3, 4});
  const Tensor x0 = x.clone();
  Tensor rows = tensor<int64_t>({0, 2});
  Tensor v = full({2, 4}, 7.0);
  Tensor f = index_put(x, {rows}, v);
  Tensor m = x.index_put({rows}, v, true);
  EXPECT_TRUE(equal(x, x0)); // out of place
  Tensor w = x.clone();
  w.index_put_(std::vector<Tensor>{rows}, v);
  EXPECT_TRUE(equal(f, w));
  EXPECT_TRUE(equal(m, x0 + index_put(zeros({3, 4}), {rows}, v)));
  // an undefined Tensor is None (a whole dim): x[:, [1, 3]]
  Tensor cols = tensor<int64_t>({1, 3});
  Tensor g = index(x, {Tensor(), cols});
  EXPECT_EQ(g.sizes(), Shape({3, 2}));
  EXPECT_TRUE(equal(g, x.index_select(1, cols)));
  EXPECT_TRUE(equal(x.index(std::vector<Tensor>{Tensor(), cols}), g));
}

// The activations with bodies (composite/activation.ops.toml): ATen's
// functions in namespace ditto, nn::functional's names for them, softmax's
// dtype and method forms.
TEST(Declarations, ActivationsAreAtensAndNnFunctionals) {
  namespace F = nn::functional;
  Tensor x = linspace(-3.0, 3.0, 24, kFloat32).reshape({4, 6});
  EXPECT_TRUE(equal(gelu(x, "tanh"), F::gelu(x, "tanh")));
  EXPECT_TRUE(equal(leaky_relu(x), F::leaky_relu(x, 0.01)));
  EXPECT_TRUE(equal(silu(x), mul(x, sigmoid(x))));
  EXPECT_TRUE(equal(x.softmax(1), F::softmax(x, 1)));
  Tensor d = softmax(x, 1, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_TRUE(equal(d, softmax(x.to(kFloat64), 1)));
  EXPECT_TRUE(
      equal(x.log_softmax(0, kFloat64), log_softmax(x.to(kFloat64), 0)));
}

// The losses' ATen forms (composite/loss.ops.toml): LibTorch's reduction
// ints, nn::functional's bits.
TEST(Declarations, LossesTakeLibTorchsReductionInts) {
  namespace F = nn::functional;
  Tensor x = linspace(-2.0, 2.0, 12, kFloat32).reshape({3, 4});
  Tensor y = linspace(1.5, -1.0, 12, kFloat32).reshape({3, 4});
  EXPECT_TRUE(equal(ditto::mse_loss(x, y), F::mse_loss(x, y, kMean)));
  EXPECT_TRUE(
      equal(ditto::l1_loss(x, y, Reduction::Sum), F::l1_loss(x, y, kSum)));
  EXPECT_TRUE(equal(
      ditto::smooth_l1_loss(x, y, Reduction::None, 0.5),
      F::smooth_l1_loss(x, y, kNone, 0.5)));
  Tensor p = sigmoid(x), t = sigmoid(y);
  Tensor w = linspace(0.5, 1.5, 4, kFloat32);
  EXPECT_TRUE(equal(
      ditto::binary_cross_entropy(p, t, w, Reduction::Sum),
      F::binary_cross_entropy(
          p, t, F::BinaryCrossEntropyFuncOptions(kSum).weight(w))));
  EXPECT_TRUE(equal(
      ditto::binary_cross_entropy_with_logits(x, t, std::nullopt, w),
      F::binary_cross_entropy_with_logits(
          x, t, F::BCEWithLogitsOptions().pos_weight(w))));
  Tensor lp = log_softmax(x, 1);
  Tensor target = tensor(std::vector<int64_t>{3, 0, 1});
  EXPECT_TRUE(equal(
      ditto::nll_loss(lp, target, w, Reduction::Mean, 0),
      F::nll_loss(lp, target, F::NLLLossOptions().weight(w).ignore_index(0))));
  EXPECT_TRUE(equal(
      ditto::kl_div(lp, t, Reduction::Sum, false),
      F::kl_div(lp, t, F::KLDivReduction::Sum)));
  // ctc_loss with the lengths as tensors or lists.
  Tensor lpc =
      log_softmax(linspace(-1.0, 1.0, 30, kFloat32).reshape({5, 2, 3}), 2);
  Tensor tc = tensor(std::vector<int64_t>{1, 2, 1, 0});
  Tensor a = ditto::ctc_loss(
      lpc,
      tc.reshape({2, 2}),
      tensor(std::vector<int64_t>{5, 4}),
      tensor(std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(equal(
      a, ditto::ctc_loss(lpc, tc.reshape({2, 2}), IntArg{5, 4}, IntArg{2, 1})));
  EXPECT_TRUE(equal(
      a,
      F::ctc_loss(
          lpc,
          tc.reshape({2, 2}),
          std::vector<int64_t>{5, 4},
          std::vector<int64_t>{2, 1})));
  // A reduction outside torch::Reduction names the op and the value, for
  // each form.
  for (int64_t r : {int64_t(-1), int64_t(3), int64_t(Reduction::END)}) {
    const std::string e =
        test::error_of<ValueError>([&] { ditto::mse_loss(x, y, r); });
    EXPECT_NE(e.find("[mse_loss]"), std::string::npos) << e;
    EXPECT_NE(e.find(std::to_string(r)), std::string::npos) << e;
    EXPECT_NE(
        test::error_of<ValueError>([&] {
          ditto::kl_div(lp, t, r);
        }).find("[kl_div]"),
        std::string::npos);
    EXPECT_NE(
        test::error_of<ValueError>([&] {
          ditto::ctc_loss(
              lpc, tc.reshape({2, 2}), IntArg{5, 4}, IntArg{2, 1}, 0, r);
        }).find("[ctc_loss]"),
        std::string::npos);
  }
}

// The poolings' ATen forms (composite/pooling.ops.toml): ATen's tuples
// (adaptive_max_pool2d gives values and indices), LibTorch's
// nn::functional names over them (its adaptive_max_pool2d the values), the
// *_with_indices forms recorded under their pooling's name.
TEST(Declarations, PoolingsAreAtensAndLibTorchs) {
  namespace F = nn::functional;
  Tensor x =
      sin(linspace(-9.0, 9.0, 2 * 3 * 7 * 8, kFloat32)).reshape({2, 3, 7, 8});
  static_assert(std::is_same_v<
                decltype(max_pool2d_with_indices(x, {2})),
                std::tuple<Tensor, Tensor>>);
  static_assert(std::is_same_v<
                decltype(ditto::adaptive_max_pool2d(x, {2})),
                std::tuple<Tensor, Tensor>>);
  static_assert(
      std::is_same_v<decltype(F::adaptive_max_pool2d(x, {2})), Tensor>);
  // (std::tie: clang 14 cannot capture a structured binding)
  Tensor v, i;
  std::tie(v, i) = max_pool2d_with_indices(x, {3}, {2}, {1});
  EXPECT_TRUE(equal(v, max_pool2d(x, {3}, {2}, {1})));
  EXPECT_TRUE(equal(v, F::max_pool2d(x, {3, 3}, {2, 2}, {1, 1})));
  EXPECT_EQ(i.dtype(), kInt64);
  auto [v1, i1] = max_pool1d_with_indices(x[0], {3}, {}, {1}, {2}, true);
  EXPECT_TRUE(equal(v1, max_pool1d(x[0], {3}, {3}, {1}, {2}, true)));
  EXPECT_EQ(i1.sizes(), v1.sizes());
  Tensor x5 = x.reshape({1, 2, 3, 7, 8});
  EXPECT_TRUE(equal(
      std::get<0>(max_pool3d_with_indices(x5, {2})), max_pool3d(x5, {2})));
  auto [av, ai] = ditto::adaptive_max_pool2d(x, {3, 4});
  EXPECT_TRUE(equal(av, F::adaptive_max_pool2d(x, {3, 4})));
  EXPECT_TRUE(
      equal(ai, std::get<1>(F::adaptive_max_pool2d_with_indices(x, {3, 4}))));
  EXPECT_TRUE(equal(avg_pool2d(x, {2}), F::avg_pool2d(x, {2}, {2})));
  EXPECT_FALSE(
      equal(avg_pool3d(x5, {2}, {}, {0}, false, true, 3), avg_pool3d(x5, {2})));
  EXPECT_TRUE(
      equal(adaptive_avg_pool1d(x[0], {4}), F::adaptive_avg_pool1d(x[0], {4})));
  EXPECT_TRUE(equal(
      adaptive_avg_pool3d(x5, {1, 2, 3}),
      F::adaptive_avg_pool3d(x5, {1, 2, 3})));
  // ATen's max pooling gradient: grad_output of the pooled sizes (checked)
  // placed at the indices, nn::functional's backward.
  Tensor go = cos(v);
  EXPECT_TRUE(equal(
      max_pool2d_with_indices_backward(go, x, {3}, {2}, {1}, {1}, false, i),
      F::max_pool2d_backward(go, i, x.sizes())));
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        max_pool2d_with_indices_backward(go, x, {2}, {2}, {0}, {1}, false, i);
      }).find("[max_pool2d_with_indices_backward] expected grad_output"),
      std::string::npos);
  // ATen's max unpooling: the output size given (nn::functional's computes
  // it from kernel_size, stride and padding).
  EXPECT_TRUE(equal(
      max_unpool2d(v, i, {7, 8}),
      F::max_unpool2d(v, i, {3}, {2}, {1}, {7, 8})));
  Tensor v5, i5;
  std::tie(v5, i5) = max_pool3d_with_indices(x5, {1, 2, 2});
  EXPECT_TRUE(equal(
      max_unpool3d(v5, i5, {3, 7, 8}, {1, 2, 2}, {0, 0, 0}),
      F::max_unpool3d(v5, i5, {1, 2, 2}, {}, {0}, {3, 7, 8})));
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        max_unpool3d(v5, i5, {3, 7, 8}, {2, 2}, {0, 0, 0});
      }).find("[max_unpool3d] There should be exactly three"),
      std::string::npos);
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        max_unpool2d(v, i, {0, 8});
      }).find("[max_unpool2d] output_size must be positive"),
      std::string::npos);
  // ATen's fractional max pooling: output_size given; random_samples drawn
  // as nn::functional's draws them when none.
  Tensor u = rand({2, 3, 2}, kFloat32);
  auto [fv, fi] = fractional_max_pool2d(x, {2}, {3, 4}, u);
  EXPECT_TRUE(equal(fv, F::fractional_max_pool2d(x, {2}, {3, 4}, {}, u)));
  manual_seed(7);
  Tensor drawn = std::get<1>(fractional_max_pool2d(x, {2}, {3, 4}));
  manual_seed(7);
  EXPECT_TRUE(equal(
      drawn,
      std::get<1>(F::fractional_max_pool2d_with_indices(x, {2}, {3, 4}))));
  // The with_indices forms have no record of their own and run under
  // their pooling's name.
  EXPECT_EQ(find_op_record("max_pool2d_with_indices"), nullptr);
  EXPECT_NE(
      test::error_of<ValueError>([] {
        max_pool2d_with_indices(randn({2, 3}), {2});
      }).find("[max_pool2d]"),
      std::string::npos);
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        ditto::adaptive_max_pool3d(x5, {1, -1, 2});
      }).find("[adaptive_max_pool3d]"),
      std::string::npos);
}

// The transposed convolutions', embedding's and one_hot's ATen forms
// (conv/conv.ops.toml, composite/embedding.ops.toml): torch's argument
// orders, nn::functional's bits.
TEST(Declarations, TransposedConvolutionsAndLookupsAreAtens) {
  namespace F = nn::functional;
  Tensor x = sin(linspace(-5.0, 5.0, 2 * 4 * 9, kFloat32)).reshape({2, 4, 9});
  Tensor w = cos(linspace(-2.0, 2.0, 4 * 3 * 3, kFloat32)).reshape({4, 3, 3});
  Tensor b = linspace(-1.0, 1.0, 3, kFloat32);
  Tensor y = conv_transpose1d(x, w, b, {2}, {1}, {1});
  EXPECT_TRUE(equal(
      y,
      conv_transpose2d(
          x.unsqueeze(2), w.unsqueeze(2), b, {1, 2}, {0, 1}, {0, 1})
          .squeeze(2)));
  EXPECT_TRUE(equal(y, F::conv_transpose1d(x, w, b, {2}, {1}, {1})));
  EXPECT_TRUE(equal(
      conv_transpose1d(x, w, std::nullopt), conv_transpose1d(x, w, Tensor())));
  Tensor x5 = x.reshape({2, 4, 1, 3, 3});
  EXPECT_EQ(
      conv_transpose3d(x5, w.reshape({4, 3, 1, 1, 3})).sizes(),
      (Shape{2, 3, 1, 3, 5}));
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        conv_transpose1d(x.unsqueeze(2), w);
      }).find("[conv_transpose1d]"),
      std::string::npos);
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        conv_transpose1d(x, w, b, {1}, {0}, {1});
      }).find("[conv_transpose1d]"),
      std::string::npos);
  // embedding: weight first; a negative padding_idx is none.
  Tensor table = linspace(-1.0, 1.0, 12, kFloat32).reshape({4, 3});
  Tensor idx = tensor(std::vector<int64_t>{3, 0, 1, 3});
  EXPECT_TRUE(equal(embedding(table, idx, 3), F::embedding(idx, table, 3)));
  EXPECT_TRUE(equal(embedding(table, idx), F::embedding(idx, table)));
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        embedding(table, idx, -1, true);
      }).find("[embedding] scale_grad_by_freq"),
      std::string::npos);
  Tensor hot = one_hot(tensor(std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(hot.sizes(), (Shape{3, 3}));
  EXPECT_TRUE(equal(hot.argmax(1), tensor(std::vector<int64_t>{0, 2, 1})));
  EXPECT_TRUE(equal(F::one_hot(idx, 5), one_hot(idx, 5)));
}

// F::cross_entropy's ATen form, cross_entropy_loss: LibTorch's reduction
// int, recorded and erring as cross_entropy (its record's name).
TEST(Declarations, CrossEntropyLossIsFsCrossEntropy) {
  namespace F = nn::functional;
  Tensor x = sin(linspace(-4.0, 4.0, 4 * 5, kFloat32)).reshape({4, 5});
  Tensor t = tensor(std::vector<int64_t>{4, 0, 2, 2});
  Tensor w = linspace(0.5, 1.5, 5, kFloat32);
  EXPECT_TRUE(equal(cross_entropy_loss(x, t), F::cross_entropy(x, t)));
  EXPECT_TRUE(equal(
      cross_entropy_loss(x, t, w, Reduction::Sum, 0, 0.1),
      F::cross_entropy(
          x,
          t,
          F::CrossEntropyOptions()
              .weight(w)
              .reduction(F::Reduction::Sum)
              .ignore_index(0)
              .label_smoothing(0.1))));
  Tensor p = x.softmax(1);
  EXPECT_TRUE(equal(
      cross_entropy_loss(x, p, std::nullopt, Reduction::None),
      F::cross_entropy(
          x, p, F::CrossEntropyOptions().reduction(F::Reduction::None))));
  EXPECT_EQ(find_op_record("cross_entropy_loss"), nullptr);
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        cross_entropy_loss(x, t, std::nullopt, 7);
      }).find("[cross_entropy] reduction"),
      std::string::npos);
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        cross_entropy_loss(x, t, std::nullopt, Reduction::Mean, -100, 1.5);
      }).find("[cross_entropy] label_smoothing"),
      std::string::npos);
}

// torch::dropout (composite/dropout.ops.toml): p and train required, the
// bits of nn::functional's.
TEST(Declarations, DropoutIsTorchsDropout) {
  namespace F = nn::functional;
  Tensor x = linspace(-3.0, 3.0, 64, kFloat32);
  manual_seed(11);
  Tensor a = ditto::dropout(x, 0.3, true);
  manual_seed(11);
  EXPECT_TRUE(equal(a, F::dropout(x, 0.3)));
  EXPECT_FALSE(equal(a, x));
  EXPECT_TRUE(ditto::dropout(x, 0.3, false).is_same(x));
  Generator g, h;
  g.manual_seed(5);
  h.manual_seed(5);
  EXPECT_TRUE(
      equal(ditto::dropout(x, 0.5, true, g), F::dropout(x, 0.5, true, h)));
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        ditto::dropout(x, 1.5, true);
      }).find("[dropout] dropout probability"),
      std::string::npos);
  // feature_dropout: dropout2d's draws for any input of two dims or more.
  Tensor x4 = x.reshape({2, 4, 2, 4});
  manual_seed(3);
  Tensor c = feature_dropout(x4, 0.5, true);
  manual_seed(3);
  EXPECT_TRUE(equal(c, F::dropout2d(x4, 0.5)));
  manual_seed(3);
  EXPECT_TRUE(equal(
      feature_dropout(x.reshape({2, 4, 2, 2, 2}), 0.5, true),
      c.reshape({2, 4, 2, 2, 2})));
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        feature_dropout(x, 0.5, true);
      }).find("[feature_dropout] Feature dropout requires at least 2"),
      std::string::npos);
}

// torch::batch_norm and the other normalizations' ATen forms
// (composite/normalization.ops.toml): ATen's order, nn::functional's bits.
TEST(Declarations, NormalizationsTakeAtensOrder) {
  namespace F = nn::functional;
  Tensor x = linspace(-2.0, 3.0, 24, kFloat32).reshape({2, 3, 4});
  Tensor w = linspace(0.5, 2.0, 3, kFloat32),
         b = linspace(-1.0, 0.25, 3, kFloat32);
  Tensor rm = zeros({3}), rv = ones({3});
  Tensor rm2 = rm.clone(), rv2 = rv.clone();
  EXPECT_TRUE(equal(
      ditto::batch_norm(x, w, b, rm2, rv2, true, 0.2, 1e-3, false),
      F::batch_norm(x, rm.clone(), rv.clone(), w, b, true, 0.2, 1e-3)));
  EXPECT_FALSE(equal(rm2, rm)); // the running mean moved
  EXPECT_TRUE(equal(
      ditto::instance_norm(
          x, w, b, std::nullopt, std::nullopt, true, 0.1, 1e-5, false),
      F::instance_norm(x, {}, {}, w, b)));
  EXPECT_TRUE(equal(ditto::layer_norm(x, {4}), F::layer_norm(x, {4})));
  EXPECT_TRUE(equal(ditto::group_norm(x, 3, w, b), F::group_norm(x, 3, w, b)));
  // The bodies' checks name the op.
  const std::string e =
      test::error_of<ValueError>([&] { ditto::layer_norm(x, {5}); });
  EXPECT_NE(e.find("layer_norm"), std::string::npos) << e;
}

// Issue 59: every op whose PyTorch kernel is nondeterministic (CPU or
// CUDA) is computed by ditto records that are deterministic on every path
// or have a deterministic variant the mode picks, never an alert.
// The views (shape/views.ops.toml): LibTorch's functions beside the methods,
// with torch's defaults and optional arguments, the same views as the
// methods give.
TEST(Declarations, ViewsAreFunctionsAndMethods) {
  Tensor x = arange(24, kFloat64).reshape({2, 3, 4});
  auto same_view = [](const Tensor& a, const Tensor& b) {
    return a.sizes() == b.sizes() && a.strides() == b.strides() &&
        a.storage_offset() == b.storage_offset() && a.storage() == b.storage();
  };
  EXPECT_TRUE(same_view(transpose(x, 0, 2), x.transpose(0, 2)));
  EXPECT_TRUE(same_view(swapaxes(x, 0, 2), x.transpose(0, 2)));
  EXPECT_TRUE(same_view(swapdims(x, 1, 2), x.transpose(1, 2)));
  EXPECT_TRUE(same_view(permute(x, {2, 0, 1}), x.permute({2, 0, 1})));
  EXPECT_TRUE(same_view(reshape(x, {6, -1}), x.view({6, 4})));
  EXPECT_TRUE(same_view(view(x, 24), x.flatten()));
  EXPECT_TRUE(same_view(flatten(x, 1), x.view({2, 12})));
  EXPECT_TRUE(same_view(narrow(x, 2, 1, 2), x.slice(2, 1, 3)));
  EXPECT_TRUE(same_view(x.select(1, -1), select(x, 1, 2)));
  EXPECT_EQ(select(x, 1, 2).sizes(), (Shape{2, 4}));
  // slice's start and end are optional: None is the whole dim
  EXPECT_TRUE(same_view(
      slice(x, 2, std::nullopt, std::nullopt, 2), x.slice(2, 0, 4, 2)));
  EXPECT_TRUE(same_view(x.slice(1, 1), slice(x, 1, 1, 3)));
  EXPECT_TRUE(same_view(x.slice(), x));
  EXPECT_TRUE(same_view(unsqueeze(x, -1), x.view({2, 3, 4, 1})));
  EXPECT_TRUE(same_view(squeeze(x.view({2, 1, 12})), x.view({2, 12})));
  EXPECT_TRUE(same_view(squeeze(x.view({2, 1, 12}), 1), x.view({2, 12})));
  EXPECT_TRUE(same_view(t(x[0]), x[0].transpose(0, 1)));
  EXPECT_TRUE(same_view(x.expand({5, 2, 3, 4}), expand(x, {5, 2, 3, 4})));
  Tensor y = empty({2, 3, 4});
  EXPECT_TRUE(same_view(x.view_as(y), x));
  EXPECT_TRUE(same_view(x[0][0].expand_as(x), x[0][0].expand({2, 3, 4})));
  EXPECT_TRUE(same_view(x.reshape_as(y.view({6, 4})), x.view({6, 4})));
  // as_strided's storage offset defaults to the tensor's own
  Tensor row = x[1];
  EXPECT_EQ(as_strided(row, {2}, {5}).storage_offset(), 12);
  EXPECT_EQ(as_strided(row, {2}, {5}, 0).storage_offset(), 0);
  EXPECT_EQ(row.as_strided({2}, {5})[1].item<double>(), 17.0);
  // the dtype view: the same bytes
  EXPECT_EQ(view(x, kInt64).dtype(), kInt64);
  EXPECT_EQ(x.view(kInt64).storage(), x.storage());
  // the errors name the op
  auto message = [](auto f) {
    try {
      f();
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(
      message([&] { (void)t(x); }).find("[t] expects a tensor with <= 2"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        (void)view_as(x, Tensor());
      }).find("[view_as] undefined tensor"),
      std::string::npos);
}

TEST(Declarations, EveryPytorchNondeterministicOpIsDeterministicHere) {
  const auto& list = detail::pytorch_nondeterministic_ops();
  EXPECT_GE(list.size(), 20u);
  std::map<std::string, bool> registry; // name -> has a deterministic variant
  for (const auto& op : determinism::registered_ops()) {
    registry[op.name] = op.has_deterministic_alternative;
  }
  for (const auto& p : list) {
    SCOPED_TRACE(p.torch);
    for (const auto& op : p.ops) {
      const OpRecord* r = find_op_record(op);
      if (r != nullptr) {
        EXPECT_NE(r->determinism(), Determinism::kAlert) << op;
      } else {
        ASSERT_TRUE(registry.count(op)) << "no record or registry entry " << op;
        EXPECT_TRUE(registry[op]) << op << " alerts";
      }
    }
  }
}

} // namespace
} // namespace ditto

namespace ditto {
namespace {

// The copies and conversions declared with bodies (copies.ops.toml), as a
// LibTorch program calls them: to's three forms with non_blocking and copy,
// fill_ and zero_ as functions, resize_ with a list.
TEST(Declarations, CopiesAndConversionsKeepLibTorchsForms) {
  Tensor x = linspace(0.5, 3.0, 6, kFloat32).reshape({2, 3});
  EXPECT_TRUE(x.to(kFloat32).is_same(x));
  EXPECT_TRUE(x.to(kCPU).is_same(x));
  Tensor c = x.to(kFloat32, /*non_blocking=*/false, /*copy=*/true);
  EXPECT_FALSE(c.is_same(x));
  EXPECT_NE(c.raw_data(), x.raw_data());
  EXPECT_TRUE(equal(c, x));
  Tensor d = x.to(Device(kCPU), kFloat64, /*non_blocking=*/true);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(x.to(zeros({1}, kInt32)).dtype(), kInt32);
  EXPECT_TRUE(x.to(x).is_same(x));
  EXPECT_FALSE(x.to(x, false, /*copy=*/true).is_same(x));
  Tensor y = x.clone();
  EXPECT_TRUE(fill_(y, 2.5).is_same(y));
  EXPECT_EQ(y.sum().item<double>(), 15.0);
  EXPECT_TRUE(zero_(y).is_same(y));
  EXPECT_EQ(y.sum().item<double>(), 0.0);
  y.copy_(x, /*non_blocking=*/true);
  EXPECT_TRUE(equal(y, x));
  y.resize_({3, 2});
  EXPECT_EQ(y.sizes(), (Shape{3, 2}));
  EXPECT_EQ(test::error_of([&] { y.to(Tensor()); }).find("[to]"), 0u);
}

} // namespace
} // namespace ditto
