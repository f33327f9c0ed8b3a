// The library GPT (ditto/nn/models/gpt.h) and R8 on it: a sequence's logits
// have the same bits alone or at any place in a batch, computed to t or to
// any T > t, and step by step through the cache after a prefill of any
// length; generate() gives each prompt of a mixed-length batch the tokens
// and log-probabilities it gets alone (greedy and top-k / top-p sampling),
// those log-probabilities are a training-mode forward's, bit for bit, and
// none of it depends on the thread count. Bad input is a ValueError that
// changes nothing.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "ditto/ditto.h"
#include "ditto/nn/models/gpt.h"
#include "tests/cpu_caps.h"
#include "tests/error_of.h"

namespace ditto {
namespace {

namespace nn = ditto::nn;

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    return false;
  }
  const Tensor x = a.detach().contiguous(), y = b.detach().contiguous();
  return std::memcmp(
             x.raw_data(),
             y.raw_data(),
             size_t(x.numel()) * x.element_size()) == 0;
}

nn::GPTOptions small() {
  return nn::GPTOptions()
      .vocab_size(50)
      .block_size(48)
      .n_layer(2)
      .n_head(4)
      .n_embd(32);
}

nn::GPT make_model() {
  manual_seed(7);
  nn::GPT m(small());
  m->eval();
  return m;
}

Tensor some_tokens(int64_t b, int64_t t) {
  return randint(0, 50, {b, t}, kInt64, Generator().manual_seed(3));
}

TEST(Gpt, PositionsBeforeTDoNotDependOnTheLengthOrTheBatch) {
  nn::GPT m = make_model();
  NoGradGuard no_grad;
  const Tensor tokens = some_tokens(4, 41);
  const Tensor full = m->forward(tokens);
  ASSERT_EQ(full.sizes(), (Shape{4, 41, 50}));
  for (int64_t t : {1, 7, 16, 17, 33, 40}) {
    EXPECT_TRUE(
        same_bits(m->forward(tokens.narrow(1, 0, t)), full.narrow(1, 0, t)))
        << "t = " << t;
  }
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_TRUE(
        same_bits(m->forward(tokens.narrow(0, r, 1)), full.narrow(0, r, 1)))
        << "row " << r;
  }
  EXPECT_TRUE(same_bits(
      m->forward(tokens.narrow(0, 1, 3).narrow(1, 0, 20)),
      full.narrow(0, 1, 3).narrow(1, 0, 20)));
}

TEST(Gpt, TheCacheGivesTheFullForwardsBits) {
  nn::GPT m = make_model();
  NoGradGuard no_grad;
  const Tensor tokens = some_tokens(3, 40);
  const Tensor full = m->forward(tokens);
  for (int64_t prefill : {1, 5, 16, 40}) {
    nn::GPTCache cache = m->make_cache(3);
    std::vector<Tensor> got{m->forward(tokens.narrow(1, 0, prefill), cache)};
    for (int64_t p = prefill; p < 40; ++p) {
      got.push_back(m->forward(tokens.narrow(1, p, 1), cache));
    }
    EXPECT_EQ(cache.lengths(), (std::vector<int64_t>{40, 40, 40}));
    EXPECT_TRUE(same_bits(cat(got, 1), full)) << "prefill " << prefill;
  }
}

// Rows of different lengths in one cache: each row's logits are its own
// full forward's.
TEST(Gpt, RowsAtDifferentLengthsShareACache) {
  nn::GPT m = make_model();
  NoGradGuard no_grad;
  const Tensor tokens = some_tokens(3, 30);
  const Tensor full = m->forward(tokens);
  nn::GPTCache cache = m->make_cache(3);
  const std::vector<int64_t> counts{3, 11, 1};
  const Tensor first = m->forward(tokens.narrow(1, 0, 11), cache, counts);
  EXPECT_EQ(cache.lengths(), counts);
  for (int64_t r = 0; r < 3; ++r) {
    const int64_t n = counts[size_t(r)];
    EXPECT_TRUE(same_bits(
        first.select(0, r).narrow(0, 0, n), full.select(0, r).narrow(0, 0, n)))
        << "row " << r;
  }
  // Every row one more token, each at its own position.
  std::vector<int64_t> next;
  for (int64_t r = 0; r < 3; ++r) {
    next.push_back(tokens[r][counts[size_t(r)]].item<int64_t>());
  }
  const Tensor step = m->forward(tensor(next, Shape{3, 1}), cache);
  for (int64_t r = 0; r < 3; ++r) {
    const int64_t n = counts[size_t(r)];
    EXPECT_TRUE(same_bits(step.select(0, r), full.select(0, r).narrow(0, n, 1)))
        << "row " << r;
  }
}

std::vector<std::vector<int64_t>> prompts() {
  const Tensor t = some_tokens(1, 23);
  std::vector<std::vector<int64_t>> p;
  for (int64_t n : {1, 5, 23, 12}) {
    std::vector<int64_t> row;
    for (int64_t j = 0; j < n; ++j) {
      row.push_back(t[0][(j * 7 + n) % 23].item<int64_t>());
    }
    p.push_back(row);
  }
  return p;
}

std::vector<Generator> generators(const std::vector<int64_t>& ids) {
  std::vector<Generator> g;
  for (int64_t id : ids) {
    g.push_back(Generator::philox(uint64_t(100 + id)));
  }
  return g;
}

void expect_same_floats(
    const std::vector<float>& a,
    const std::vector<float>& b,
    const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
      << what;
}

TEST(Gpt, EachPromptGeneratesAsItWouldAlone) {
  nn::GPT m = make_model();
  const auto p = prompts();
  for (bool sample : {false, true}) {
    nn::GenerateOptions o;
    o.max_new_tokens(20).do_sample(sample).top_k(10).top_p(0.9);
    o.temperature(0.8);
    if (sample) {
      o.generators(generators({0, 1, 2, 3}));
    }
    const nn::Generation batch = nn::generate(m, p, o);
    ASSERT_EQ(batch.tokens.size(), 4u);
    for (size_t r = 0; r < p.size(); ++r) {
      nn::GenerateOptions alone = o;
      if (sample) {
        alone.generators(generators({int64_t(r)}));
      }
      const nn::Generation one = nn::generate(m, {p[r]}, alone);
      const std::string what = (sample ? "sampled" : "greedy") +
          std::string(", prompt ") + std::to_string(r);
      EXPECT_EQ(one.tokens[0], batch.tokens[r]) << what;
      expect_same_floats(one.log_probs[0], batch.log_probs[r], what);
      ASSERT_EQ(batch.tokens[r].size(), 20u);
    }
  }
}

// On-policy RL: the log-probabilities generation reports are those of a
// training-mode forward (gradients recorded) on the same tokens.
TEST(Gpt, GenerationsLogProbsAreTheTrainersBits) {
  nn::GPT m = make_model();
  const auto p = prompts();
  nn::GenerateOptions o;
  o.max_new_tokens(16).do_sample(true).generators(generators({0, 1, 2, 3}));
  const nn::Generation g = nn::generate(m, p, o);
  m->train(); // dropout 0: the training forward draws nothing
  for (size_t r = 0; r < p.size(); ++r) {
    std::vector<int64_t> seq = p[r];
    seq.insert(seq.end(), g.tokens[r].begin(), g.tokens[r].end());
    const int64_t n = int64_t(seq.size());
    const Tensor lp = nn::sequence_log_probs(m, tensor(seq, Shape{1, n}));
    ASSERT_TRUE(lp.requires_grad());
    const Tensor gen = lp.select(0, 0).narrow(0, int64_t(p[r].size()) - 1, 16);
    std::vector<float> trainer(16);
    std::memcpy(trainer.data(), gen.contiguous().data_ptr<float>(), 64);
    expect_same_floats(g.log_probs[r], trainer, "prompt " + std::to_string(r));
  }
}

TEST(Gpt, GenerationDoesNotDependOnTheThreadCount) {
  const auto p = prompts();
  nn::GenerateOptions o;
  o.max_new_tokens(12).do_sample(true).top_p(0.95);
  std::vector<nn::Generation> runs;
  const int before = get_num_threads();
  for (int threads : test::test_thread_counts()) {
    set_num_threads(threads);
    nn::GPT m = make_model();
    o.generators(generators({0, 1, 2, 3}));
    runs.push_back(nn::generate(m, p, o));
  }
  set_num_threads(before);
  for (size_t i = 1; i < runs.size(); ++i) {
    for (size_t r = 0; r < p.size(); ++r) {
      EXPECT_EQ(runs[i].tokens[r], runs[0].tokens[r]);
      expect_same_floats(runs[i].log_probs[r], runs[0].log_probs[r], "threads");
    }
  }
}

TEST(Gpt, BadInputIsAValueErrorThatChangesNothing) {
  nn::GPT m = make_model();
  nn::GPT other = make_model();
  NoGradGuard no_grad;
  nn::GPTCache cache = m->make_cache(2);
  m->forward(some_tokens(2, 5), cache);
  const std::vector<int64_t> lengths = cache.lengths();
  auto message = [](auto&& f) { return test::error_of<ValueError>(f); };
  EXPECT_NE(
      message([&] {
        other->forward(some_tokens(2, 1), cache);
      }).find("another model"),
      std::string::npos);
  EXPECT_NE(
      message([&] { m->forward(some_tokens(3, 1), cache); }).find("batch of 3"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        m->forward(some_tokens(2, 44), cache);
      }).find("reach position 49, past block_size 48"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        m->forward(zeros({2, 0}, kInt64), cache);
      }).find("empty sequence"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        m->forward(full({2, 1}, 50, kInt64), cache);
      }).find("token 50"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        m->forward(zeros({2, 1}), cache);
      }).find("int64"),
      std::string::npos);
  EXPECT_EQ(cache.lengths(), lengths);
  EXPECT_NE(
      message([&] { m->forward(some_tokens(1, 49)); }).find("49 tokens"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        nn::GPT(nn::GPTOptions().n_embd(30).n_head(4));
      }).find("divisible"),
      std::string::npos);

  nn::GenerateOptions o;
  EXPECT_NE(
      message([&] {
        nn::generate(m, {{1, 2}, {}}, o);
      }).find("prompt 1 is empty"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        nn::generate(m, {{1, 70}}, o);
      }).find("token 70"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        nn::generate(m, {{1, 2}}, o.max_new_tokens(47));
      }).find("exceed block_size 48"),
      std::string::npos);
  o.max_new_tokens(4).do_sample(true);
  EXPECT_NE(
      message([&] {
        nn::generate(m, {{1}, {2}}, o);
      }).find("one generator per prompt"),
      std::string::npos);
  o.generators(generators({0}));
  EXPECT_NE(
      message([&] { nn::generate(m, {{1}}, o.top_p(0)); }).find("top_p"),
      std::string::npos);
  o.top_p(0.9);
  // Sizes at the edges: a typed error naming the value, never an
  // overflow or a bad_alloc.
  EXPECT_NE(
      message([&] {
        nn::generate(m, {{1}}, nn::GenerateOptions().max_new_tokens(INT64_MAX));
      }).find("exceed block_size"),
      std::string::npos);
  EXPECT_NE(
      message([&] {
        nn::generate(m, {{1}}, o.temperature(1e-300));
      }).find("temperature 1e-300"),
      std::string::npos);
  EXPECT_THROW(m->make_cache(int64_t(1) << 40), OutOfMemoryError);
  EXPECT_NE(
      message([&] {
        m->forward(some_tokens(2, 2), cache, {INT64_MAX, 0});
      }).find("outside [0, 2]"),
      std::string::npos);
  // generate() leaves the module's mode as it found it.
  EXPECT_FALSE(m->is_training());
  m->train();
  nn::generate(m, {{1}}, nn::GenerateOptions().max_new_tokens(2));
  EXPECT_TRUE(m->is_training());
}

} // namespace
} // namespace ditto
