// `make demo`: ditto's promise in one screen. The same computation runs with
// 1, 2, 3 and 8 threads and under every CPU capability this machine has; the
// fingerprints of the results must all be equal.

#include <cstdio>
#include <string>
#include <vector>

#include "ditto/ditto.h"

namespace {

// Seeded input: the same values as torch.rand after torch.manual_seed(seed).
ditto::Tensor make_input(int64_t n) {
  using namespace ditto;
  manual_seed(42);
  return sub(mul(rand({n}), 6.0), 3.0); // uniform on [-3, 3)
}

} // namespace

int main() {
  using namespace ditto;
  std::printf("%s\n", config_report().c_str());
  const int64_t n = 3'000'001; // not a multiple of any chunk size
  Tensor x = make_input(n);
  std::printf(
      "input: %lld float32 values, first ones %s\n",
      static_cast<long long>(n),
      x.narrow(0, 0, 4).to_string().c_str());

  auto run = [&] {
    Tensor y = add(mul(exp(neg(abs(x))), 3.0f), log1p(abs(x)));
    Tensor s = sum(y);
    Tensor m = mean(y.narrow(0, 0, n - 1).view({-1, 1000}), {1});
    return std::vector<uint64_t>{
        fingerprint(y), fingerprint(s), fingerprint(m)};
  };

  std::vector<uint64_t> reference;
  bool all_equal = true;
  std::printf(
      "%-8s %-8s %-18s %-18s %-18s\n",
      "isa",
      "threads",
      "elementwise",
      "sum",
      "row means");
  for (CpuCapability cap : supported_cpu_capabilities()) {
    set_cpu_capability(cap);
    for (int threads : {1, 2, 3, 8}) {
      set_num_threads(threads);
      std::vector<uint64_t> f = run();
      if (reference.empty()) {
        reference = f;
      }
      all_equal = all_equal && f == reference;
      std::printf(
          "%-8s %-8d %016llx   %016llx   %016llx\n",
          std::string(cpu_capability_name(cap)).c_str(),
          threads,
          static_cast<unsigned long long>(f[0]),
          static_cast<unsigned long long>(f[1]),
          static_cast<unsigned long long>(f[2]));
    }
  }
  std::printf(
      "sum = %s\n",
      sum(add(mul(exp(neg(abs(x))), 3.0f), log1p(abs(x)))).to_string().c_str());
  std::printf(
      all_equal ? "all results are bit-identical\n" : "RESULTS DIFFER\n");
  return all_equal ? 0 : 1;
}
