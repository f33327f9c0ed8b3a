// The Vulkan device side by side with the CPU (`make gpu-check`, and
// docs/device.md): the device and its arithmetic, float32 GEMM at several
// sizes in GFLOP/s with a bit comparison against the CPU's product, an
// elementwise add and the copies in GB/s. A benchmark, not a test: it
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
  std::printf(
      "\n%s\n",
      all_same ? "every result has the CPU's bits"
               : "SOME RESULTS DIFFER FROM THE CPU'S");
  return all_same ? 0 : 2;
}
