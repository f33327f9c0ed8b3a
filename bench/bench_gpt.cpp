// Decoding with the library GPT (ditto/nn/models/gpt.h), `--model gpt`'s
// size (64 positions, 2 blocks, 4 heads, 64 wide), greedy, 1 thread:
//   gpt_decode/cache:C/batch:B  48 new tokens after prompts of 16, for B
//     prompts in one batch; C = 1: nn::generate (KV cache), C = 0: the
//     whole sequence again for every token. Items: tokens made.
//   gpt_decode_alone/B  the same B prompts one at a time through the
//     cache: what a batch saves, at the same bits (R8).

#include <benchmark/benchmark.h>

#include "ditto/ditto.h"
#include "ditto/nn/models/gpt.h"

namespace {

using namespace ditto;

nn::GPT bench_model() {
  manual_seed(0);
  nn::GPT m(nn::GPTOptions().block_size(64).n_layer(2).n_head(4).n_embd(64));
  m->eval();
  return m;
}

std::vector<std::vector<int64_t>> bench_prompts(int64_t b) {
  std::vector<std::vector<int64_t>> p(static_cast<size_t>(b));
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < 16; ++j) {
      p[size_t(r)].push_back((r * 31 + j * 7) % 256);
    }
  }
  return p;
}

constexpr int64_t kNew = 48;

void decode(benchmark::State& state) {
  set_num_threads(1);
  const bool cache = state.range(0) != 0;
  const int64_t b = state.range(1);
  nn::GPT m = bench_model();
  const auto prompts = bench_prompts(b);
  for (auto _ : state) {
    if (cache) {
      nn::Generation g =
          nn::generate(m, prompts, nn::GenerateOptions().max_new_tokens(kNew));
      benchmark::DoNotOptimize(g.tokens.data());
    } else {
      NoGradGuard no_grad;
      std::vector<int64_t> flat;
      for (const auto& p : prompts) {
        flat.insert(flat.end(), p.begin(), p.end());
      }
      Tensor seq = tensor(flat, Shape{b, 16});
      for (int64_t t = 0; t < kNew; ++t) {
        Tensor logits = m->forward(seq);
        Tensor next = argmax(logits.select(1, seq.size(1) - 1), 1, true);
        seq = cat({seq, next}, 1);
      }
      benchmark::DoNotOptimize(seq.raw_data());
    }
  }
  state.SetItemsProcessed(state.iterations() * b * kNew);
}

void decode_alone(benchmark::State& state) {
  set_num_threads(1);
  const int64_t b = state.range(0);
  nn::GPT m = bench_model();
  const auto prompts = bench_prompts(b);
  for (auto _ : state) {
    for (const auto& p : prompts) {
      nn::Generation g =
          nn::generate(m, {p}, nn::GenerateOptions().max_new_tokens(kNew));
      benchmark::DoNotOptimize(g.tokens.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * b * kNew);
}

} // namespace

void register_gpt_benchmarks() {
  benchmark::RegisterBenchmark("gpt_decode", decode)
      ->ArgNames({"cache", "batch"})
      ->Args({1, 1})
      ->Args({0, 1})
      ->Args({1, 8})
      ->Args({0, 8})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("gpt_decode_alone", decode_alone)
      ->Arg(8)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}
