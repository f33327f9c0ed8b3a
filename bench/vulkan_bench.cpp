// The Vulkan device side by side with the CPU (`make gpu-check`, and
// docs/device.md): the device and its arithmetic, float32 GEMM at several
// sizes in GFLOP/s with a bit comparison against the CPU's product, an
// elementwise add and the copies in GB/s, the CNN's convolutions and one
// training step against the CPU, and what determinism costs (each
// deterministic variant against its atomic one). A benchmark, not a test: it
// prints and exits 0 unless a product's bits differ from the CPU's.
//
//   ditto_vulkan_bench [device index] [largest n, default 4096; 0: the
//   device only]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ditto/ditto.h"
#include "examples/models/cnn.h"

using namespace ditto;

namespace {

template <typename F>
double best_seconds(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  const int index = argc > 1 ? std::atoi(argv[1]) : 0;
  const int64_t largest = argc > 2 ? std::atoll(argv[2]) : 4096;
  if (!is_vulkan_available()) {
    std::printf("no Vulkan device: %s\n", vulkan_unavailable_reason().c_str());
    return 1;
  }
  const Device dev(kVulkan, int16_t(index));
  const VulkanDeviceInfo info = vulkan_device_info(index);
  std::printf(
      "device %s: %s (%s), driver %s, Vulkan %s, %.1f GiB\n",
      dev.str().c_str(),
      info.name.c_str(),
      info.type.c_str(),
      info.driver.c_str(),
      info.api_version.c_str(),
      double(info.memory_bytes) / double(1ull << 30));
  std::printf(
      "arithmetic: fma %s, float32 denormals %s (DenormPreserve %s), "
      "float64 %s\n",
      info.fma_fused ? "rounds once" : "rounds twice (emulated exactly)",
      info.denormals_kept ? "kept" : "FLUSHED",
      info.denorm_preserve_float32 ? "on" : "unavailable",
      info.float64 ? "yes" : "no");
  std::printf("cpu threads: %d\n\n", get_num_threads());
  if (largest <= 0) {
    return 0; // the device and its arithmetic only
  }
  bool all_same = true;
  std::printf(
      "%-22s %12s %12s %10s %s\n",
      "op",
      "device ms",
      "cpu ms",
      "GFLOP/s",
      "bits");
  for (int64_t n = 256; n <= largest; n *= 2) {
    Generator g = Generator::philox(uint64_t(n));
    Tensor a = randn({n, n}, kFloat32, g), b = randn({n, n}, kFloat32, g);
    Tensor da = a.to(dev), db = b.to(dev);
    Tensor dc = mm(da, db); // warm-up: pipeline creation
    const int reps = n <= 1024 ? 10 : 5;
    const double td = best_seconds(reps, [&] { dc = mm(da, db); });
    Tensor c;
    const double tc = best_seconds(n <= 2048 ? 2 : 1, [&] { c = mm(a, b); });
    const bool same = fingerprint(c) == fingerprint(dc);
    all_same = all_same && same;
    std::printf(
        "mm %5lldx%-5lldx%-5lld %12.3f %12.3f %10.1f %s\n",
        (long long)n,
        (long long)n,
        (long long)n,
        td * 1e3,
        tc * 1e3,
        2.0 * double(n) * double(n) * double(n) / td * 1e-9,
        same ? "same as the CPU" : "DIFFER");
  }
  {
    const int64_t n = int64_t(1) << 24;
    Generator g = Generator::philox(7);
    Tensor a = randn({n}, kFloat32, g), b = randn({n}, kFloat32, g);
    Tensor da = a.to(dev), db = b.to(dev);
    Tensor dc = add(da, db);
    const double td = best_seconds(10, [&] { dc = add(da, db); });
    Tensor c;
    const double tc = best_seconds(3, [&] { c = add(a, b); });
    const bool same = fingerprint(c) == fingerprint(dc);
    all_same = all_same && same;
    std::printf(
        "add 16M %26s %6.1f GB/s on the device, %s\n",
        "",
        3.0 * 4.0 * double(n) / td * 1e-9,
        same ? "same as the CPU" : "DIFFER");
    std::printf("   device %.3f ms, cpu %.3f ms\n", td * 1e3, tc * 1e3);
    const double up = best_seconds(3, [&] { da = a.to(dev); });
    const double down = best_seconds(3, [&] { c = da.cpu(); });
    std::printf(
        "copy 64 MiB: to the device %.2f GB/s, back %.2f GB/s\n",
        4.0 * double(n) / up * 1e-9,
        4.0 * double(n) / down * 1e-9);
  }
  // The CNN of `ditto train` (examples/models/cnn.cpp) at batch 64: its two
  // convolutions in each direction, and one training step.
  std::printf(
      "\n%-34s %10s %10s %s\n", "cnn, batch 64", "device ms", "cpu ms", "bits");
  auto row = [&](const char* what, auto&& run) {
    Tensor on_device = run(dev);
    const double td = best_seconds(3, [&] { on_device = run(dev); });
    Tensor on_cpu = run(kCPU);
    const double tc = best_seconds(3, [&] { on_cpu = run(kCPU); });
    const bool same = fingerprint(on_cpu) == fingerprint(on_device);
    all_same = all_same && same;
    std::printf(
        "%-34s %10.3f %10.3f %s\n",
        what,
        td * 1e3,
        tc * 1e3,
        same ? "same as the CPU" : "DIFFER");
  };
  struct Layer {
    const char* name;
    Shape x, w;
  };
  for (const Layer& l :
       {Layer{"conv 1->32 28x28", {64, 1, 28, 28}, {32, 1, 3, 3}},
        Layer{"conv 32->64 14x14", {64, 32, 14, 14}, {64, 32, 3, 3}}}) {
    Generator g = Generator::philox(11);
    Tensor x = randn(l.x, kFloat32, g), w = randn(l.w, kFloat32, g);
    Tensor go = randn({l.x[0], l.w[0], l.x[2], l.x[3]}, kFloat32, g);
    const std::string n = l.name;
    row((n + " forward").c_str(), [&](Device d) {
      return conv2d(x.to(d), w.to(d), {}, {1, 1}, {1, 1});
    });
    if (l.x[1] > 1) {
      row((n + " input grad").c_str(), [&](Device d) {
        return conv2d_backward_input(
            go.to(d), w.to(d), l.x, {1, 1}, {1, 1}, {1, 1}, 1);
      });
    }
    row((n + " weight grad").c_str(), [&](Device d) {
      return conv2d_backward_weight(
          go.to(d), x.to(d), l.w, {1, 1}, {1, 1}, {1, 1}, 1);
    });
  }
  {
    Generator g = Generator::philox(12);
    Tensor x = randn({64, 1, 28, 28}, kFloat32, g);
    Tensor t = randint(0, 10, {64}, kInt64, g);
    row("training step (sgd)", [&](Device d) {
      manual_seed(1);
      // Dropout draws from the CPU's generator on both, as in ditto train.
      GeneratorGuard cpu_draws(default_generator());
      nn::Sequential m = models::mnist_cnn();
      m->to(d);
      optim::SGD opt(m->parameters(), optim::SGDOptions(0.01).momentum(0.9));
      Tensor loss = nn::functional::cross_entropy(m->forward(x.to(d)), t.to(d));
      loss.backward();
      opt.step();
      return m->parameters()[0];
    });
  }
  // What determinism costs on the device: each op's deterministic variant
  // against its fast (atomic) one.
  std::printf(
      "\n%-34s %10s %10s\n", "determinism's cost", "det. ms", "fast ms");
  auto cost = [&](const char* what, auto&& run) {
    double t[2];
    for (bool det : {true, false}) {
      DeterministicGuard guard(det);
      run();
      t[det ? 0 : 1] = best_seconds(3, run);
    }
    std::printf("%-34s %10.3f %10.3f\n", what, t[0] * 1e3, t[1] * 1e3);
  };
  {
    Generator g = Generator::philox(13);
    Tensor src = randn({1 << 20, 16}, kFloat32, g).to(dev);
    Tensor idx = randint(0, 1000, {1 << 20}, kInt64, g).to(dev);
    Tensor w = zeros({1000, 16}, kFloat32, dev);
    cost("index_add_ 1M x 16 into 1000 rows", [&] {
      w.index_add_(0, idx, src);
    });
    Tensor x = randn({64, 32, 28, 28}, kFloat32, g).to(dev);
    const auto pooled = nn::functional::max_pool2d_with_indices(x, {2, 2});
    Tensor gp = randn(std::get<0>(pooled).sizes(), kFloat32, g).to(dev);
    cost("max_pool2d backward 64x32x28x28", [&] {
      nn::functional::max_pool2d_backward(gp, std::get<1>(pooled), x.sizes());
    });
  }
  std::printf(
      "\n%s\n",
      all_same ? "every result has the CPU's bits"
               : "SOME RESULTS DIFFER FROM THE CPU'S");
  return all_same ? 0 : 2;
}
