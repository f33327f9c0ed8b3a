// Sparse-dense bmm, the reproducibility note's example: batch 8 of n x n
// sparse matrices at 1% density (coalesced, as a user passes them) times
// dense n x 256 ones, forward, and forward + the dense operand's gradient;
// the deterministic variant ("_det": each output row adds its entries in
// stored order) and the fast one ("_fast": threads add into shared rows).

#include <benchmark/benchmark.h>

#include "ditto/ditto.h"
#include "ditto/ops/sparse.h"

namespace {

using ditto::Tensor;

void run(benchmark::State& state, bool det, bool backward) {
  const int64_t n = state.range(0), batch = 8, m = 256;
  ditto::set_num_threads(int(state.range(1)));
  ditto::manual_seed(1);
  const int64_t nnz = batch * n * n / 100;
  Tensor idx = ditto::stack(
      {ditto::randint(0, batch, {nnz}),
       ditto::randint(0, n, {nnz}),
       ditto::randint(0, n, {nnz})});
  Tensor s = ditto::sparse_coo_tensor(idx, ditto::randn({nnz}), {batch, n, n})
                 .coalesce();
  Tensor d = ditto::randn({batch, n, m}).requires_grad_(backward);
  Tensor go = ditto::randn({batch, n, m});
  ditto::use_deterministic_algorithms(det);
  for (auto _ : state) {
    Tensor y = ditto::bmm(s, d);
    if (backward) {
      y.backward(go);
      benchmark::DoNotOptimize(d.grad().raw_data());
      d.mutable_grad() = Tensor();
    }
    benchmark::DoNotOptimize(y.raw_data());
  }
  ditto::use_deterministic_algorithms(false);
}

} // namespace

void register_sparse_benchmarks() {
  for (bool backward : {false, true}) {
    for (bool det : {true, false}) {
      const std::string name = std::string("sparse_bmm") +
          (backward ? "_fwd_bwd" : "") + (det ? "_det" : "_fast");
      auto* b = benchmark::RegisterBenchmark(
          name.c_str(), [det, backward](benchmark::State& state) {
            run(state, det, backward);
          });
      b->ArgNames({"n", "threads"});
      b->Args({1024, 1});
      b->Args({1024, 2});
      b->UseRealTime()->Unit(benchmark::kMillisecond);
    }
  }
}
