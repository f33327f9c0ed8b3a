// ditto_fingerprints: one line per result, "<name> <dtype> <xxh3-64>": every
// op record's full-sized samples, forward and backward (records(), Note [Op
// records] in ditto/ops/record.cpp), then what no single op's samples hold:
// every convolution algorithm forced in turn, gradients through chains (an
// MLP, a conv net, an index/scatter chain, recorded deterministic), and nn
// layers and training steps. The sweep
// runs with 1, 2 and 3 threads and exits 1 if any fingerprint depends on the
// thread count; the printed lines are then compared across CPU capabilities
// (DITTO_CPU_CAPABILITY), emulated CPUs
// (`make cpu-check`) and architectures (`make cross-arch-check`).
//
// Lines that end in " libm" come from the PyTorch-compatible mt19937 paths
// that call glibc's log/sin/cos (Note [Whose libm] in
// ditto/ops/detail/random_fill.h): their bits may differ between glibc's FMA
// and non-FMA variants and between architectures, exactly as PyTorch's do. The
// checks list every such difference by name instead of failing on it.
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
#include "ditto/nn/models/gpt.h"
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
    model->to(dt);
    std::unique_ptr<optim::Optimizer> opt;
    std::unique_ptr<optim::LRScheduler> sched;
    if (adam) {
      opt = std::make_unique<optim::AdamW>(model->parameters());
      sched = std::make_unique<optim::OneCycleLR>(
          *opt, optim::OneCycleLROptions(0.01, 10));
    } else {
      opt = std::make_unique<optim::SGD>(
          model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
      sched = std::make_unique<optim::StepLR>(
          *opt, 2, 0.5, optim::StepLRSteps::kPython);
    }
    Tensor loss;
    for (int step = 0; step < 3; ++step) {
      loss = F::cross_entropy(model->forward(x), y);
      opt->zero_grad();
      loss.backward();
      nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      opt->step();
      sched->step();
    }
    const std::string name = adam ? "nn_train_adamw" : "nn_train_sgd";
    r.add(
        name + "_params",
        nn::utils::parameters_to_vector(model->parameters()),
        adam);
    r.add(name + "_loss", loss.detach(), adam);
  }
  {
    // The library GPT (issue 60): three SGD steps with dropout, then
    // greedy and top-p generation from prompts of three lengths (no libm:
    // the sampler's probabilities are ditto's softmax).
    manual_seed(11);
    nn::GPT gpt(nn::GPTOptions()
                    .vocab_size(40)
                    .block_size(24)
                    .n_layer(2)
                    .n_head(2)
                    .n_embd(16)
                    .dropout(0.1));
    gpt->to(dt);
    optim::SGD opt(gpt->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    const Tensor tokens = remainder_index(4 * 25, 40).view({4, 25});
    for (int step = 0; step < 3; ++step) {
      Tensor logits = gpt->forward(tokens.narrow(1, 0, 24));
      Tensor loss = F::cross_entropy(
          logits.reshape({-1, 40}), tokens.narrow(1, 1, 24).reshape({-1}));
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    r.add(
        "gpt_train_params", nn::utils::parameters_to_vector(gpt->parameters()));
    for (bool sample : {false, true}) {
      nn::GenerateOptions o;
      o.max_new_tokens(8).do_sample(sample).top_p(0.9);
      if (sample) {
        o.generators(
            {Generator::philox(1), Generator::philox(2), Generator::philox(3)});
      }
      const nn::Generation g =
          nn::generate(gpt, {{1}, {2, 3, 4, 5}, {6, 7, 8, 9, 10, 11, 12}}, o);
      std::vector<float> lp;
      std::vector<int64_t> tok;
      for (size_t i = 0; i < g.tokens.size(); ++i) {
        lp.insert(lp.end(), g.log_probs[i].begin(), g.log_probs[i].end());
        tok.insert(tok.end(), g.tokens[i].begin(), g.tokens[i].end());
      }
      const std::string name = sample ? "gpt_sampled" : "gpt_greedy";
      r.add(name + "_tokens", tensor(tok));
      r.add(name + "_log_probs", tensor(lp));
    }
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
                  F::InterpolateMode::Bilinear));
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
  r.add("grad_grid_sample", grad_of([&](const Tensor& t) {
          return F::grid_sample(
              t,
              grid,
              F::GridSampleOptions().padding_mode(
                  F::GridSamplePadding::Reflection));
        }));
  Tensor ctw = varied(3 * 2 * 3 * 3, dt, 0.5, 34).view({3, 2, 3, 3});
  r.add("grad_conv_transpose", grad_of([&](const Tensor& t) {
          return conv_transpose2d(t, ctw, {}, {2}, {1}, {1});
        }));
}

// The ops whose PyTorch-compatible paths call glibc (docs/numerics.md, "The
// libm calls left"; Note [Whose libm] in ditto/ops/detail/random_fill.h).
bool libm_record(const OpRecord& rec, Dtype dt) {
  const std::string& n = rec.name;
  return n == "exponential_" || n == "multinomial" || n == "erfinv" ||
      ((n == "randn" || n == "normal_") && dt == kFloat64);
}

// Every op record's full-sized samples, forward (each output) and, for a
// differentiable op, backward (the gradient of a weighted sum of its
// floating outputs with respect to each input), with the deterministic
// variant pinned: the sweep covers every op without a list here.
// Part `part` of `parts` (Note [Sweep parts]): the records from
// index size * part / parts up to the next part's first.
void records(Sweep& r, int part, int parts) {
  const std::vector<const OpRecord*> all = op_records();
  const size_t first = all.size() * size_t(part) / size_t(parts);
  const size_t last = all.size() * size_t(part + 1) / size_t(parts);
  for (size_t i = first; i < last; ++i) {
    const OpRecord* rec = all[i];
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

// Note [Sweep parts]: `--part K/N` prints the K-th of N parts of the
// sweep (K from 1): the records in N runs of about equal length by count,
// then, in the last part, the products, gradients and nn layers. The N
// parts' lines, concatenated in order, are the whole sweep's, so that an
// emulated CPU can run the parts on several cores (scripts/cpu_check): a
// record's samples are its own (the random records reseed, test::run), so
// no line depends on the parts before it.
Sweep run(int part, int parts) {
  Sweep r;
  records(r, part, parts);
  if (part + 1 < parts) {
    return r;
  }
  for (Dtype dt : {kFloat32, kFloat64}) {
    products(r, dt);
    gradients(r, dt);
    nn_layers(r, dt);
  }
  return r;
}

// "K/N" with 1 <= K <= N, as the part's index from 0 and the count.
bool parse_part(const std::string& text, int& part, int& parts) {
  int k = 0, n = 0;
  char slash = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &k, &slash, &n, &rest) != 3 ||
      slash != '/' || n < 1 || n > 64 || k < 1 || k > n) {
    return false;
  }
  part = k - 1;
  parts = n;
  return true;
}

} // namespace

// ditto_fingerprints [--once] [--part K/N]: --once runs the sweep with one
// thread only (emulated CPUs: the thread counts are checked natively, and
// the sweep is the slow part of `make cpu-check` and `make
// cross-arch-check`); --part K/N prints the K-th of N parts (Note [Sweep
// parts]).
int main(int argc, char** argv) {
  bool once = false;
  int part = 0, parts = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--once") {
      once = true;
    } else if (a == "--part") {
      if (i + 1 >= argc || !parse_part(argv[i + 1], part, parts)) {
        std::fprintf(
            stderr,
            "ditto_fingerprints: --part wants K/N, 1 <= K <= N <= 64, got "
            "'%s'\n",
            i + 1 < argc ? argv[i + 1] : "");
        return 2;
      }
      ++i;
    } else {
      std::fprintf(
          stderr,
          "ditto_fingerprints: unknown argument '%s' (usage: "
          "ditto_fingerprints [--once] [--part K/N])\n",
          a.c_str());
      return 2;
    }
  }
  try {
    set_num_threads(1);
    const Sweep ref = run(part, parts);
    int bad = 0;
    for (int threads : {2, 3}) {
      if (once) {
        break;
      }
      set_num_threads(threads);
      const Sweep got = run(part, parts);
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
