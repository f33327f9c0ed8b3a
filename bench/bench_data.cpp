// One epoch of Fashion-MNIST train (60,000 images from Debian's
// dataset-fashion-mnist) through a DataLoader: batch 64, shuffled,
// RandomCrop(28, padding 4) then Normalize, in PerSample mode, with
// "threads" worker threads. compare.py times PyTorch 1.13's DataLoader with
// torchvision's transforms and as many worker processes.

#include <benchmark/benchmark.h>

#include <memory>

#include "ditto/ditto.h"

namespace {

using namespace ditto::data;

void run_epoch(benchmark::State& state) {
  std::shared_ptr<const Dataset> ds;
  try {
    static auto fashion = std::make_shared<FashionMNIST>();
    ds = std::make_shared<MapDataset>(
        fashion, Compose({RandomCrop(28, 4), Normalize({0.2860}, {0.3530})}));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  DataLoaderOptions o;
  o.batch_size(64);
  o.shuffle(true);
  o.num_workers(int(state.range(1)));
  DataLoader loader(ds, o);
  int64_t samples = 0;
  for (auto _ : state) {
    for (const Batch& b : loader) {
      samples += b.data.size(0);
    }
  }
  state.SetItemsProcessed(samples);
  state.SetBytesProcessed(samples * 28 * 28 * 4);
}

} // namespace

void register_data_benchmarks() {
  auto* b = benchmark::RegisterBenchmark("fashion_mnist_epoch", run_epoch);
  b->ArgNames({"n", "threads"});
  b->Args({60000, 2});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
