// Recurrent layers and CTC, forward + backward, 2 threads (the issue's
// sizes): a 2-layer LSTM and GRU with 256 hidden units on input 128, batch
// 32 x 50 steps; ctc_loss at batch 16, 200 frames, 30 classes and 40-label
// targets. bench/compare_rnn.py times PyTorch 1.13 on the same shapes.

#include <benchmark/benchmark.h>

#include "ditto/ditto.h"

namespace {

namespace nn = ditto::nn;

template <typename Layer>
void rnn_fwd_bwd(benchmark::State& state, Layer& layer) {
  ditto::set_num_threads(2);
  ditto::manual_seed(1);
  ditto::Tensor x = ditto::randn({50, 32, 128});
  for (auto _ : state) {
    layer->zero_grad(/*set_to_none=*/true);
    auto out = std::get<0>(layer->forward(x));
    ditto::sum(out).backward();
    benchmark::DoNotOptimize(layer->parameters()[0].grad().raw_data());
  }
}

void BM_lstm_fwd_bwd(benchmark::State& state) {
  ditto::manual_seed(0);
  nn::LSTM lstm(nn::LSTMOptions(128, 256).num_layers(2));
  rnn_fwd_bwd(state, lstm);
}

void BM_gru_fwd_bwd(benchmark::State& state) {
  ditto::manual_seed(0);
  nn::GRU gru(nn::GRUOptions(128, 256).num_layers(2));
  rnn_fwd_bwd(state, gru);
}

void BM_ctc_fwd_bwd(benchmark::State& state) {
  ditto::set_num_threads(2);
  ditto::manual_seed(0);
  const int64_t T = 200, N = 16, C = 30, S = 40;
  ditto::Tensor logits = ditto::randn({T, N, C}).requires_grad_();
  std::vector<int64_t> tv;
  for (int64_t i = 0; i < N * S; ++i) {
    tv.push_back(1 + (i * 7 + i / 3) % (C - 1));
  }
  ditto::Tensor targets = ditto::tensor(tv, {N, S});
  std::vector<int64_t> il(N, T), tl(N, S);
  ditto::Tensor lp = ditto::log_softmax(logits, 2).detach().requires_grad_();
  for (auto _ : state) {
    lp.mutable_grad() = ditto::Tensor();
    nn::functional::ctc_loss(lp, targets, il, tl).backward();
    benchmark::DoNotOptimize(lp.grad().raw_data());
  }
}

BENCHMARK(BM_lstm_fwd_bwd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gru_fwd_bwd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ctc_fwd_bwd)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
