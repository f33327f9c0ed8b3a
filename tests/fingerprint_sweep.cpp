// ditto_fingerprints: one line per op and dtype, "<op> <dtype> <xxh3-64>",
// over elementwise ops, transcendentals, reductions, shape ops, random
// draws (mt19937 and Philox), GEMM, convolutions (every algorithm, forward
// and both gradients), the deterministic scatter/index family and the
// decompositions, and gradients (an MLP, a conv net, an index/scatter
// chain, recorded deterministic), and nn layers and training steps. The sweep
// runs with 1, 2 and 3 threads and exits 1 if any fingerprint depends on the
// thread count; the printed lines are then compared across CPU capabilities
// (DITTO_CPU_CAPABILITY), emulated CPUs
// (`make cpu-check`) and architectures (`make cross-arch-check`).
//
// Lines that end in " libm" come from the PyTorch-compatible mt19937 paths
// that call glibc's log/sin/cos (Note [Whose libm] in ditto/ops/random.cpp):
// their bits may differ between glibc's FMA and non-FMA variants and
// between architectures, exactly as PyTorch's do. The checks list every
// such difference by name instead of failing on it.
//
// Sizes are small (emulated CPUs run this) but cross the chunk sizes of
// elementwise loops and reductions, the GEMM panels and register tiles.

#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ditto/ditto.h"
#include "tests/record_util.h"

using namespace ditto;

namespace {

struct Line {
  std::string op, dtype;
  uint64_t print;
  bool libm;
};

struct Sweep {
  std::vector<Line> lines;
  void add(const std::string& op, const Tensor& t, bool libm = false) {
    lines.push_back(
        {op, std::string(dtype_name(t.dtype())), fingerprint(t), libm});
  }
};

// Varied values from a fixed integer recurrence (no generator involved).
Tensor varied(int64_t n, Dtype dtype, double scale, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = seed;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = (double(s >> 11) / double(1ull << 53) - 0.5) * scale;
  }
  return tensor(v).to(dtype);
}

// n indices in [0, mod), each value many times, in a scrambled order.
Tensor remainder_index(int64_t n, int64_t mod) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[size_t(i)] = (i * 37 + i / 7) % mod;
  }
  return tensor(v);
}

void elementwise_and_reductions(Sweep& r, Dtype dt) {
  const int64_t n = 2 * 32768 + 4321; // two elementwise chunks and a bit
  Tensor x = varied(n, dt, 40.0, 1), y = varied(n, dt, 6.0, 2);
  Tensor pos = add(abs(y), 1e-3);
  Tensor m = x.narrow(0, 0, 211 * 307).view({211, 307});
  r.add("add", add(x, y));
  r.add("mul", mul(x, y));
  r.add("div", div(x, pos));
  r.add("maximum", maximum(x, y));
  r.add("clamp", clamp(x, -1.5, 2.5));
  r.add("where", where(gt(x, y), x, y));
  r.add("broadcast", add(m, m.select(0, 3)));
  r.add("to_int32", mul(x, 100.0).to(kInt32));
  r.add("sum", sum(x));
  r.add("sum_dim0", sum(m, {0}));
  r.add("sum_dim1", sum(m, {1}));
  r.add("max_dim", max(m, 1).first);
  r.add("argmax", argmax(m, 0));
  r.add("sort", sort(m, 1).first);
  r.add("flip_pad", pad(flip(m, {0}), {2, 3, 1, 1}, "reflect"));
  if (is_floating(dt)) {
    r.add("exp", exp(x));
    r.add("log", log(pos));
    r.add("log1p", log1p(abs(x)));
    r.add("sqrt", sqrt(pos));
    r.add("tanh", tanh(x));
    r.add("sigmoid", sigmoid(x));
    r.add("pow", pow(pos, y));
    r.add("mean", mean(x));
    r.add("prod", prod(add(mul(y, 0.01), 1.0)));
  }
}

void random_draws(Sweep& r, Dtype dt) {
  const bool f64 = dt == kFloat64;
  manual_seed(7);
  r.add("rand", rand({40000}, dt));
  r.add("randn_block", randn({40007}, dt), f64); // glibc in float64
  r.add("randn_scalar", randn({13}, dt), f64);
  r.add("exponential", empty({1000}, dt).exponential_(2.0), true);
  r.add("bernoulli", bernoulli(full({5000}, 0.3, dt)));
  r.add("dropout", dropout(ones({5000}, dt), 0.25));
  r.add("multinomial_repl", multinomial(arange(1, 9, 1, dt), 500, true));
  r.add("multinomial", multinomial(arange(1, 9, 1, dt), 8), true);
  Generator g = Generator::philox(11);
  r.add("philox_rand", rand({40000}, dt, g));
  r.add("philox_randn_block", randn({40007}, dt, g));
  r.add("philox_randn_scalar", randn({13}, dt, g));
  r.add("philox_exponential", empty({1000}, dt).exponential_(2.0, g));
  r.add("philox_bernoulli", bernoulli(full({5000}, 0.3, dt), g));
}

void integer_draws(Sweep& r) {
  manual_seed(8);
  r.add("randint", randint(-50, 1000, {20000}));
  r.add("randperm", randperm(5000));
  Generator g = Generator::philox(12);
  r.add("philox_randint", randint(-50, 1000, {20000}, kInt64, g));
}

void products(Sweep& r, Dtype dt) {
  Tensor a = varied(70 * 300, dt, 2.0, 3).view({70, 300});
  Tensor b = varied(300 * 45, dt, 2.0, 4).view({300, 45});
  r.add("mm", mm(a, b));
  r.add("mm_transposed", mm(b.t(), a.t()));
  r.add(
      "matmul_batched",
      matmul(a.narrow(1, 0, 60).reshape({3, 70, 20}), b.narrow(0, 0, 20)));
  r.add("linear", linear(a, b.t(), varied(45, dt, 1.0, 5)));
  namespace conv = backends::conv;
  Tensor x = varied(2 * 8 * 12 * 12, dt, 2.0, 6).view({2, 8, 12, 12});
  Tensor w = varied(16 * 8 * 3 * 3, dt, 1.0, 7).view({16, 8, 3, 3});
  Tensor bias = varied(16, dt, 1.0, 8);
  for (const char* algo : {"im2col_gemm", "direct", "winograd_f2x2_3x3"}) {
    conv::force_algorithm("forward", algo);
    r.add(std::string("conv2d_") + algo, conv2d(x, w, bias, {1, 1}, {1, 1}));
  }
  conv::force_algorithm("forward", "");
  r.add("conv2d_strided", conv2d(x, w, {}, {2, 2}, {0, 1}, {1, 2}));
  Tensor go = varied(2 * 16 * 12 * 12, dt, 1.0, 9).view({2, 16, 12, 12});
  r.add(
      "conv2d_backward_input",
      conv2d_backward_input(go, w, x.sizes(), {1, 1}, {1, 1}));
  {
    DeterministicGuard det(true);
    r.add(
        "conv2d_backward_weight",
        conv2d_backward_weight(go, x, w.sizes(), {1, 1}, {1, 1}));
  }
  r.add("conv1d", conv1d(x.view({2, 8, 144}), w.view({16, 8, 9})));
}

void index_family(Sweep& r, Dtype dt) {
  DeterministicGuard det(true);
  Tensor src = varied(3000 * 16, dt, 10.0, 10).view({3000, 16});
  Tensor idx = remainder_index(3000, 97);
  Tensor dst = zeros({97, 16}, dt);
  dst.index_add_(0, idx, src);
  r.add("index_add_", dst);
  Tensor sidx = idx.view({3000, 1}).expand({3000, 16}).contiguous();
  Tensor sdst = zeros({97, 16}, dt);
  sdst.scatter_add_(0, sidx, src);
  r.add("scatter_add_", sdst);
  Tensor rdst = full({97, 16}, 1.0, dt);
  rdst.scatter_reduce_(0, sidx, src, "amax");
  r.add("scatter_reduce_amax", rdst);
  r.add("index_select", index_select(src, 0, idx.narrow(0, 0, 500)));
  r.add("gather", gather(src, 0, sidx.narrow(0, 0, 40)));
  r.add(
      "embedding_bag",
      embedding_bag(idx.narrow(0, 0, 600).view({60, 10}), dst, {}, "mean"));
}

void decompositions(Sweep& r, Dtype dt) {
  Tensor a = varied(60 * 40, dt, 2.0, 11).view({60, 40});
  auto [q, rr] = linalg::qr(a);
  r.add("qr_q", q);
  r.add("qr_r", rr);
  linalg::SVD s = linalg::svd_lowrank(a, 6, 2, Generator::philox(13));
  r.add("svd_lowrank_s", s.S);
  r.add("svd_lowrank_u", s.U);
}

// Gradients through autograd: each node's backward runs under the policy
// recorded with it (deterministic here).
void gradients(Sweep& r, Dtype dt) {
  DeterministicGuard det(true);
  Tensor x = varied(32 * 48, dt, 2.0, 20).view({32, 48});
  Tensor w1 = varied(40 * 48, dt, 0.3, 21).view({40, 48}).requires_grad_();
  Tensor b1 = varied(40, dt, 0.1, 22).requires_grad_();
  Tensor w2 = varied(10 * 40, dt, 0.3, 23).view({10, 40}).requires_grad_();
  Tensor out = linear(linear(x, w1, b1).tanh(), w2).sigmoid();
  (out * out).mean().backward();
  r.add("grad_mlp_w1", w1.grad());
  r.add("grad_mlp_b1", b1.grad());
  r.add("grad_mlp_w2", w2.grad());
  Tensor img = varied(2 * 3 * 12 * 12, dt, 2.0, 24).view({2, 3, 12, 12});
  Tensor cw = varied(8 * 3 * 3 * 3, dt, 0.4, 25).view({8, 3, 3, 3});
  cw.requires_grad_();
  Tensor cw2 = varied(4 * 8 * 3 * 3, dt, 0.2, 27).view({4, 8, 3, 3});
  cw2.requires_grad_();
  Tensor y = conv2d(img, cw, {}, {1, 1}, {1, 1}).relu();
  y = conv2d(y, cw2, {}, {2, 2}, {0, 0});
  y.pow(2).sum().backward();
  r.add("grad_conv_w", cw.grad());
  r.add("grad_conv_w2", cw2.grad());
  Tensor table = varied(50 * 8, dt, 1.0, 26).view({50, 8}).requires_grad_();
  Tensor idx = remainder_index(400, 50);
  Tensor e = index_select(table, 0, idx);
  Tensor s = zeros({50, 8}, dt).index_add(0, idx, e.exp());
  (s.log1p() * e.sum({0}, true)).sum().backward();
  r.add("grad_index_chain", table.grad());
}

// nn layers and optimizers: a few training steps of a small conv net with
// batch norm, pooling and dropout, and the backward of the layers whose
// gradient scatters. The AdamW/OneCycleLR run is marked libm: Adam's
// beta^step and the scheduler's cosine are glibc's pow and cos, as in
// PyTorch.
void nn_layers(Sweep& r, Dtype dt) {
  namespace F = nn::functional;
  DeterministicGuard det(true);
  Tensor x = varied(4 * 3 * 12 * 12, dt, 2.0, 30).view({4, 3, 12, 12});
  Tensor y = remainder_index(4, 10);
  for (bool adam : {false, true}) {
    manual_seed(7);
    nn::Sequential model(
        nn::Conv2d(3, 6, 3, 1, 1),
        nn::BatchNorm2d(6),
        nn::ReLU(),
        nn::MaxPool2d(2),
        nn::Conv2d(6, 4, 3),
        nn::Flatten(),
        nn::Dropout(0.2),
        nn::Linear(64, 10));
    model.to(dt);
    std::unique_ptr<optim::Optimizer> opt;
    std::unique_ptr<optim::LRScheduler> sched;
    if (adam) {
      opt = std::make_unique<optim::AdamW>(model.parameters());
      sched = std::make_unique<optim::OneCycleLR>(
          *opt, optim::OneCycleLROptions(0.01, 10));
    } else {
      opt = std::make_unique<optim::SGD>(
          model.parameters(), optim::SGDOptions(0.05).momentum(0.9));
      sched = std::make_unique<optim::StepLR>(*opt, 2, 0.5);
    }
    Tensor loss;
    for (int step = 0; step < 3; ++step) {
      loss = F::cross_entropy(model.forward(x), y);
      opt->zero_grad();
      loss.backward();
      nn::utils::clip_grad_norm_(model.parameters(), 1.0);
      opt->step();
      sched->step();
    }
    const std::string name = adam ? "nn_train_adamw" : "nn_train_sgd";
    r.add(
        name + "_params",
        nn::utils::parameters_to_vector(model.parameters()),
        adam);
    r.add(name + "_loss", loss.detach(), adam);
  }
  Tensor wide = varied(20000, dt, 16.0, 35);
  r.add("erf", erf(wide));
  r.add("gelu", F::gelu(wide));
  r.add("gelu_tanh", F::gelu(wide, "tanh"));
  Tensor img = varied(2 * 3 * 9 * 11, dt, 2.0, 31).view({2, 3, 9, 11});
  auto grad_of = [&](const std::function<Tensor(const Tensor&)>& fn) {
    Tensor leaf = img.clone().requires_grad_();
    Tensor out = fn(leaf);
    out.mul(varied(out.numel(), dt, 1.0, 32).view(out.sizes()))
        .sum()
        .backward();
    return leaf.grad();
  };
  r.add("grad_upsample_bilinear", grad_of([](const Tensor& t) {
          return F::interpolate(
              t,
              F::InterpolateOptions().size({20, 17}).mode(
                  InterpolateMode::Bilinear));
        }));
  r.add("grad_avg_pool", grad_of([](const Tensor& t) {
          return F::avg_pool2d(t, {3}, {2}, {1}, true, false);
        }));
  r.add("grad_adaptive_pool", grad_of([](const Tensor& t) {
          return F::adaptive_avg_pool2d(t, {4, 5});
        }));
  r.add("grad_max_pool", grad_of([](const Tensor& t) {
          return F::max_pool2d(t, {3}, {2}, {1});
        }));
  r.add("grad_pad_reflect", grad_of([](const Tensor& t) {
          return F::pad(t, {3, 2, 1, 4}, "reflect");
        }));
  Tensor grid = varied(2 * 6 * 7 * 2, dt, 2.4, 33).view({2, 6, 7, 2});
  r.add(
      "grad_grid_sample", grad_of([&](const Tensor& t) {
        return F::grid_sample(
            t,
            grid,
            F::GridSampleOptions().padding_mode(GridSamplePadding::Reflection));
      }));
  Tensor ctw = varied(3 * 2 * 3 * 3, dt, 0.5, 34).view({3, 2, 3, 3});
  r.add("grad_conv_transpose", grad_of([&](const Tensor& t) {
          return conv_transpose2d(t, ctw, {}, {2}, {1}, {1});
        }));
}

// Glibc's log/sin/cos on the PyTorch-compatible mt19937 paths (Note
// [Whose libm] in ditto/ops/random.cpp).
bool libm_record(const OpRecord& rec, Dtype dt) {
  const std::string& n = rec.name;
  return n == "exponential_" || n == "multinomial" ||
      ((n == "randn" || n == "normal_") && dt == kFloat64);
}

// Every op record's full-sized samples, forward (each output) and, for a
// differentiable op, backward (the gradient of a weighted sum of its
// floating outputs with respect to each input), with the deterministic
// variant pinned: the sweep covers every op without a list here.
void records(Sweep& r) {
  for (const OpRecord* rec : op_records()) {
    if (rec->determinism() == Determinism::kAlert) {
      continue; // no bits are promised
    }
    DeterministicGuard det(
        rec->determinism() == Determinism::kVariants ||
        rec->uninitialized_output);
    for (Dtype dt : rec->dtypes) {
      const bool libm = libm_record(*rec, dt);
      for (const Sample& s : rec->samples({dt, false})) {
        const std::string name =
            rec->name + "/" + s.label + "/" + std::string(dtype_name(dt));
        std::vector<Tensor> outs;
        try {
          outs = test::run(*rec, s);
        } catch (const std::exception& e) {
          throw std::runtime_error(name + ": " + e.what());
        }
        for (size_t k = 0; k < outs.size(); ++k) {
          if (outs[k].defined()) {
            r.add(name + "#" + std::to_string(k), outs[k], libm);
          }
        }
        if (!rec->not_differentiable.empty() || !is_floating(dt) ||
            !s.gradcheck) {
          continue;
        }
        std::vector<Tensor> in = test::leaves(s, true);
        Tensor out =
            test::flat_floating(test::call_differentiably(*rec, s, in));
        if (out.numel() == 0 || !out.requires_grad()) {
          continue;
        }
        Tensor w = varied(out.numel(), out.dtype(), 2.0, 40);
        try {
          (out * w).sum().backward();
        } catch (const std::exception& e) {
          throw std::runtime_error(name + " backward: " + e.what());
        }
        for (size_t k = 0; k < in.size(); ++k) {
          if (in[k].defined() && in[k].grad().defined()) {
            r.add(name + "/grad" + std::to_string(k), in[k].grad(), libm);
          }
        }
      }
    }
  }
}

Sweep run() {
  Sweep r;
  records(r);
  for (Dtype dt : {kFloat32, kFloat64, kInt64, kInt32}) {
    elementwise_and_reductions(r, dt);
  }
  for (Dtype dt : {kFloat32, kFloat64}) {
    random_draws(r, dt);
    products(r, dt);
    index_family(r, dt);
    decompositions(r, dt);
    gradients(r, dt);
    nn_layers(r, dt);
  }
  integer_draws(r);
  return r;
}

} // namespace

int main() {
  try {
    set_num_threads(1);
    const Sweep ref = run();
    int bad = 0;
    for (int threads : {2, 3}) {
      set_num_threads(threads);
      const Sweep got = run();
      for (size_t i = 0; i < ref.lines.size(); ++i) {
        if (got.lines[i].print != ref.lines[i].print) {
          std::fprintf(
              stderr,
              "ditto_fingerprints: %s %s differs with %d "
              "threads\n",
              ref.lines[i].op.c_str(),
              ref.lines[i].dtype.c_str(),
              threads);
          ++bad;
        }
      }
    }
    for (const Line& l : ref.lines) {
      std::printf(
          "%s %s %016llx%s\n",
          l.op.c_str(),
          l.dtype.c_str(),
          static_cast<unsigned long long>(l.print),
          l.libm ? " libm" : "");
    }
    return bad == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ditto_fingerprints: %s\n", e.what());
    return 1;
  }
}
