#include "ditto/nn/models/gpt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/nn/functional.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/random.h"
#include "ditto/ops/reduce.h"
#include "ditto/random/generator.h"

namespace ditto::nn {

namespace {

constexpr const char* kOp = "GPT";

void check_options(const GPTOptions& o) {
  DITTO_CHECK(
      o.vocab_size() > 0 && o.block_size() > 0 && o.n_layer() > 0 &&
          o.n_head() > 0 && o.n_embd() > 0,
      ValueError,
      kOp,
      "vocab_size, block_size, n_layer, n_head and n_embd must be positive, "
      "got ",
      o.vocab_size(),
      ", ",
      o.block_size(),
      ", ",
      o.n_layer(),
      ", ",
      o.n_head(),
      ", ",
      o.n_embd());
  DITTO_CHECK(
      o.n_embd() % o.n_head() == 0,
      ValueError,
      kOp,
      "n_embd must be divisible by n_head, got ",
      o.n_embd(),
      " and ",
      o.n_head());
  DITTO_CHECK(
      o.dropout() >= 0.0 && o.dropout() < 1.0,
      ValueError,
      kOp,
      "dropout must be in [0, 1), got ",
      o.dropout());
}

// ValueError unless tokens is an int64 [B, T] of vocabulary indices with
// 1 <= T <= limit.
void check_tokens(const Tensor& tokens, const GPTOptions& o, int64_t limit) {
  DITTO_CHECK(tokens.defined(), ValueError, kOp, "undefined tokens");
  DITTO_CHECK(
      tokens.dim() == 2 && tokens.dtype() == kInt64,
      ValueError,
      kOp,
      "expected int64 tokens of shape [batch, time], got ",
      tokens.dtype(),
      " ",
      shape_str(tokens.sizes()));
  DITTO_CHECK(
      tokens.size(1) >= 1,
      ValueError,
      kOp,
      "an empty sequence (time 0) has no positions to compute");
  DITTO_CHECK(
      tokens.size(1) <= limit,
      ValueError,
      kOp,
      "a sequence of ",
      tokens.size(1),
      " tokens is longer than the ",
      limit,
      " positions left (block_size ",
      o.block_size(),
      ")");
  if (tokens.numel() > 0) {
    // Indices are read on the CPU (a device may have no int64 reductions).
    const Tensor host = tokens.cpu();
    const int64_t lo = min(host).item<int64_t>();
    const int64_t hi = max(host).item<int64_t>();
    DITTO_CHECK(
        lo >= 0 && hi < o.vocab_size(),
        ValueError,
        kOp,
        "token ",
        lo < 0 ? lo : hi,
        " is outside the vocabulary of ",
        o.vocab_size());
  }
}

} // namespace

void GPTCache::reset() {
  std::fill(lengths_.begin(), lengths_.end(), 0);
}

GPTBlockImpl::GPTBlockImpl(const GPTOptions& o)
    : Module("GPTBlock"), options(o) {
  check_options(o);
  const int64_t c = o.n_embd();
  // nanoGPT's order: ln_1, attention (c_attn, c_proj), ln_2, MLP (c_fc,
  // c_proj).
  ln_1 = register_module("ln_1", LayerNorm(LayerNormOptions({c})));
  c_attn = register_module("c_attn", Linear(c, 3 * c));
  attn_proj = register_module("attn_proj", Linear(c, c));
  ln_2 = register_module("ln_2", LayerNorm(LayerNormOptions({c})));
  c_fc = register_module("c_fc", Linear(c, 4 * c));
  mlp_proj = register_module("mlp_proj", Linear(4 * c, c));
  resid_dropout = register_module("resid_dropout", Dropout(o.dropout()));
}

Tensor GPTBlockImpl::forward(
    const Tensor& x,
    Tensor* cache_keys,
    Tensor* cache_values,
    const std::vector<int64_t>* starts,
    const Tensor& mask) const {
  ForwardScope scope(*this);
  const int64_t b = x.size(0), t = x.size(1), c = options.n_embd();
  const int64_t nh = options.n_head(), d = c / nh;
  const Tensor qkv = c_attn(ln_1(x));
  auto heads = [&](int64_t part) {
    return qkv.narrow(2, part * c, c).reshape({b, t, nh, d}).transpose(1, 2);
  };
  const Tensor q = heads(0), k = heads(1), v = heads(2);
  const double p = is_training() ? options.dropout() : 0.0;
  Tensor a;
  if (cache_keys == nullptr) {
    a = scaled_dot_product_attention(q, k, v, std::nullopt, p, true);
  } else {
    // Each row's new keys and values at its own position; the rows attend
    // to the longest extent, a row's keys past its own masked out.
    const int64_t capacity = cache_keys->size(2);
    const std::vector<int64_t>& at0 = *starts;
    const bool aligned = std::all_of(
        at0.begin(), at0.end(), [&](int64_t s) { return s == at0[0]; });
    // Writes rows [r0, r0 + n) of k and v at position at; returns the end.
    auto write = [&](int64_t r0, int64_t n, int64_t at) {
      const int64_t w = std::min(t, capacity - at);
      if (w > 0) {
        cache_keys->narrow(0, r0, n).narrow(2, at, w).copy_(
            k.narrow(0, r0, n).narrow(2, 0, w));
        cache_values->narrow(0, r0, n).narrow(2, at, w).copy_(
            v.narrow(0, r0, n).narrow(2, 0, w));
      }
      return at + std::max<int64_t>(w, 0);
    };
    int64_t extent = 0;
    if (aligned) {
      // A prefill, or rows of one length: one copy for the batch.
      extent = write(0, b, at0[0]);
    } else {
      for (int64_t r = 0; r < b; ++r) {
        extent = std::max(extent, write(r, 1, at0[size_t(r)]));
      }
    }
    a = scaled_dot_product_attention(
        q,
        cache_keys->narrow(2, 0, extent),
        cache_values->narrow(2, 0, extent),
        mask.narrow(3, 0, extent),
        p,
        false);
  }
  const Tensor y = a.transpose(1, 2).reshape({b, t, c});
  Tensor out = add(x, resid_dropout(attn_proj(y)));
  return add(out, resid_dropout(mlp_proj(functional::gelu(c_fc(ln_2(out))))));
}

GPTImpl::GPTImpl(const GPTOptions& o) : Module("GPT"), options(o) {
  check_options(o);
  wte = register_module("wte", Embedding(o.vocab_size(), o.n_embd()));
  wpe = register_module("wpe", Embedding(o.block_size(), o.n_embd()));
  drop = register_module("drop", Dropout(o.dropout()));
  h = register_module("h", ModuleList());
  for (int64_t i = 0; i < o.n_layer(); ++i) {
    h->push_back(GPTBlock(o));
  }
  ln_f = register_module("ln_f", LayerNorm(LayerNormOptions({o.n_embd()})));
  lm_head = register_module(
      "lm_head", Linear(LinearOptions(o.n_embd(), o.vocab_size()).bias(false)));
}

Tensor GPTImpl::forward(const Tensor& tokens) const {
  ForwardScope scope(*this);
  check_tokens(tokens, options, options.block_size());
  const int64_t t = tokens.size(1);
  const Tensor pos = arange(0, t, 1, kInt64).to(tokens.device());
  Tensor x = drop(add(wte(tokens), wpe(pos)));
  for (size_t i = 0; i < h->size(); ++i) {
    x = h->at<GPTBlock>(i).forward(x);
  }
  return lm_head(ln_f(x));
}

GPTCache GPTImpl::make_cache(int64_t batch) const {
  DITTO_CHECK(
      batch >= 1, ValueError, kOp, "a cache needs a batch of at least 1");
  GPTCache cache;
  cache.owner_ = this;
  cache.capacity_ = options.block_size();
  const Tensor w = lm_head->weight;
  const int64_t nh = options.n_head(), d = options.n_embd() / nh;
  for (int64_t i = 0; i < options.n_layer(); ++i) {
    cache.keys_.push_back(
        zeros({batch, nh, cache.capacity_, d}, w.dtype()).to(w.device()));
    cache.values_.push_back(
        zeros({batch, nh, cache.capacity_, d}, w.dtype()).to(w.device()));
  }
  // After the tensors: a batch too large for memory is their typed
  // OutOfMemoryError, not this vector's bad_alloc.
  cache.lengths_.assign(size_t(batch), 0);
  return cache;
}

Tensor GPTImpl::forward(
    const Tensor& tokens,
    GPTCache& cache,
    const std::vector<int64_t>& counts) const {
  ForwardScope scope(*this);
  DITTO_CHECK(
      cache.owner_ == this,
      ValueError,
      kOp,
      "the cache was made for another model (make one with make_cache)");
  check_tokens(tokens, options, cache.capacity_);
  const int64_t b = tokens.size(0), t = tokens.size(1);
  DITTO_CHECK(
      b == cache.batch(),
      ValueError,
      kOp,
      "tokens have a batch of ",
      b,
      " but the cache ",
      cache.batch());
  DITTO_CHECK(
      counts.empty() || int64_t(counts.size()) == b,
      ValueError,
      kOp,
      "counts has ",
      counts.size(),
      " entries for a batch of ",
      b);
  std::vector<int64_t> real(size_t(b), t);
  for (int64_t r = 0; r < b; ++r) {
    if (!counts.empty()) {
      const int64_t n = counts[size_t(r)];
      DITTO_CHECK(
          n >= 0 && n <= t,
          ValueError,
          kOp,
          "counts[",
          r,
          "] = ",
          n,
          " is outside [0, ",
          t,
          "]");
      real[size_t(r)] = n;
    }
    const int64_t end = cache.lengths_[size_t(r)] + real[size_t(r)];
    DITTO_CHECK(
        end <= cache.capacity_,
        ValueError,
        kOp,
        "row ",
        r,
        " would reach position ",
        end,
        ", past block_size ",
        cache.capacity_);
  }
  // Row r's token j sits at position start_r + j (padding past the block
  // reuses the last position: nothing real sees it).
  std::vector<int64_t> positions(static_cast<size_t>(b * t));
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < t; ++j) {
      positions[size_t(r * t + j)] =
          std::min(cache.lengths_[size_t(r)] + j, cache.capacity_ - 1);
    }
  }
  const Tensor pos = tensor(positions, Shape{b, t});
  // Query j of row r sees the keys at positions <= start_r + j.
  const Tensor key_pos =
      arange(0, cache.capacity_, 1, kInt64).reshape({1, 1, 1, -1});
  const Tensor mask = le(key_pos, pos.reshape({b, 1, t, 1}));
  Tensor x = drop(add(wte(tokens), wpe(pos)));
  for (size_t i = 0; i < h->size(); ++i) {
    x = h->at<GPTBlock>(i).forward(
        x, &cache.keys_[i], &cache.values_[i], &cache.lengths_, mask);
  }
  for (int64_t r = 0; r < b; ++r) {
    cache.lengths_[size_t(r)] += real[size_t(r)];
  }
  return lm_head(ln_f(x));
}

namespace {

// The next token of one row: greedy (the first of the largest logits), or
// a draw from probs (the tempered softmax, a ditto op: the same bits on
// every CPU) cut to the top_k largest logits and then to the fewest whose
// mass reaches top_p, with one uniform of gen. Plain scalar code on the
// row's own numbers (no libm), so the choice depends on nothing else.
int64_t pick(
    const float* logits,
    const float* probs,
    int64_t n,
    const GenerateOptions& o,
    const Generator* gen) {
  if (!o.do_sample()) {
    return int64_t(std::max_element(logits, logits + n) - logits);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by index.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return logits[a] > logits[b];
  });
  int64_t keep = o.top_k() > 0 ? std::min(o.top_k(), n) : n;
  double total = 0;
  for (int64_t i = 0; i < keep; ++i) {
    total += double(probs[order[size_t(i)]]);
  }
  DITTO_CHECK(
      std::isfinite(total) && total > 0,
      ValueError,
      "generate",
      "temperature ",
      o.temperature(),
      " makes the probabilities not finite (the logits divided by it "
      "overflow)");
  if (o.top_p() < 1.0) {
    double mass = 0;
    int64_t i = 0;
    while (i < keep) {
      mass += double(probs[order[size_t(i)]]);
      ++i;
      if (mass >= o.top_p() * total) {
        break;
      }
    }
    keep = i;
    total = mass;
  }
  const double u = rand({1}, kFloat64, *gen).item<double>() * total;
  double acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += double(probs[order[size_t(i)]]);
    if (u < acc) {
      return order[size_t(i)];
    }
  }
  return order[size_t(keep - 1)];
}

} // namespace

Generation generate(
    const GPT& model,
    const std::vector<std::vector<int64_t>>& prompts,
    const GenerateOptions& o) {
  const char* op = "generate";
  const GPTOptions& mo = model->options;
  const int64_t b = int64_t(prompts.size());
  DITTO_CHECK(b >= 1, ValueError, op, "no prompts");
  DITTO_CHECK(
      o.max_new_tokens() >= 0,
      ValueError,
      op,
      "max_new_tokens must be at least 0, got ",
      o.max_new_tokens());
  if (o.do_sample()) {
    DITTO_CHECK(
        std::isfinite(o.temperature()) && o.temperature() > 0,
        ValueError,
        op,
        "temperature must be positive, got ",
        o.temperature());
    DITTO_CHECK(
        o.top_k() >= 0, ValueError, op, "top_k must be >= 0, got ", o.top_k());
    DITTO_CHECK(
        o.top_p() > 0 && o.top_p() <= 1,
        ValueError,
        op,
        "top_p must be in (0, 1], got ",
        o.top_p());
    DITTO_CHECK(
        int64_t(o.generators().size()) == b,
        ValueError,
        op,
        "sampling needs one generator per prompt (",
        b,
        "), got ",
        o.generators().size());
  }
  int64_t longest = 0;
  for (int64_t r = 0; r < b; ++r) {
    const auto& pr = prompts[size_t(r)];
    DITTO_CHECK(!pr.empty(), ValueError, op, "prompt ", r, " is empty");
    for (int64_t tok : pr) {
      DITTO_CHECK(
          tok >= 0 && tok < mo.vocab_size(),
          ValueError,
          op,
          "prompt ",
          r,
          " has token ",
          tok,
          ", outside the vocabulary of ",
          mo.vocab_size());
    }
    DITTO_CHECK(
        o.max_new_tokens() <= mo.block_size() - int64_t(pr.size()),
        ValueError,
        op,
        "prompt ",
        r,
        " of ",
        pr.size(),
        " tokens and ",
        o.max_new_tokens(),
        " new ones exceed block_size ",
        mo.block_size());
    longest = std::max(longest, int64_t(pr.size()));
  }

  NoGradGuard no_grad;
  const std::shared_ptr<GPTImpl> m = model.ptr();
  const bool was_training = m->is_training();
  m->eval();
  struct Restore {
    GPTImpl& m;
    bool training;
    ~Restore() {
      m.train(training);
    }
  } restore{*m, was_training};

  Generation out;
  out.tokens.resize(size_t(b));
  out.log_probs.resize(size_t(b));
  if (o.max_new_tokens() == 0) {
    return out;
  }
  GPTCache cache = model->make_cache(b);
  // The prefill: the prompts right-padded (with token 0) to the longest.
  std::vector<int64_t> flat(static_cast<size_t>(b * longest), 0),
      counts(static_cast<size_t>(b));
  for (int64_t r = 0; r < b; ++r) {
    const auto& pr = prompts[size_t(r)];
    std::copy(pr.begin(), pr.end(), flat.begin() + r * longest);
    counts[size_t(r)] = int64_t(pr.size());
  }
  Tensor logits =
      model->forward(tensor(flat, Shape{b, longest}), cache, counts);
  // Each row's last real position.
  std::vector<int64_t> last(static_cast<size_t>(b));
  for (int64_t r = 0; r < b; ++r) {
    last[size_t(r)] = counts[size_t(r)] - 1;
  }
  for (int64_t step = 0; step < o.max_new_tokens(); ++step) {
    std::vector<int64_t> rows(static_cast<size_t>(b));
    for (int64_t r = 0; r < b; ++r) {
      rows[size_t(r)] = r * logits.size(1) + last[size_t(r)];
    }
    const Tensor next_logits = index_select(
        logits.reshape({b * logits.size(1), mo.vocab_size()}), 0, tensor(rows));
    const Tensor lp = functional::log_softmax(next_logits, -1)
                          .cpu()
                          .to(kFloat32)
                          .contiguous();
    const Tensor lg = next_logits.cpu().to(kFloat32).contiguous();
    const Tensor pr = o.do_sample()
        ? functional::softmax(div(next_logits, o.temperature()), -1)
              .cpu()
              .to(kFloat32)
              .contiguous()
        : lg;
    std::vector<int64_t> chosen(static_cast<size_t>(b));
    for (int64_t r = 0; r < b; ++r) {
      const int64_t v = mo.vocab_size();
      const int64_t tok = pick(
          lg.data_ptr<float>() + r * v,
          pr.data_ptr<float>() + r * v,
          v,
          o,
          o.do_sample() ? &o.generators()[size_t(r)] : nullptr);
      chosen[size_t(r)] = tok;
      out.tokens[size_t(r)].push_back(tok);
      out.log_probs[size_t(r)].push_back(lp.data_ptr<float>()[r * v + tok]);
    }
    if (step + 1 == o.max_new_tokens()) {
      break;
    }
    logits = model->forward(tensor(chosen, Shape{b, 1}), cache, {});
    std::fill(last.begin(), last.end(), 0);
  }
  return out;
}

Tensor sequence_log_probs(const GPT& model, const Tensor& tokens) {
  const Tensor logits = model->forward(tokens);
  const int64_t t = tokens.size(1);
  const Tensor lp = functional::log_softmax(logits.narrow(1, 0, t - 1), -1);
  return gather(lp, 2, tokens.narrow(1, 1, t - 1).unsqueeze(2)).squeeze(2);
}

} // namespace ditto::nn
