// The example in README.md, built so it stays true.
#include <ditto/ditto.h>
#include <iostream>

int main() {
  using namespace ditto;
  Tensor x = arange(0, 6, 1, kFloat32)
                 .view({2, 3}); // tensor([[0., 1., 2.], [3., 4., 5.]])
  Tensor y = sigmoid(
      x * 0.5 + tensor<float>({1, 2, 3})); // broadcasting, PyTorch's promotion
  std::cout << y << "\n";
  std::cout << sum(y, {1}) << "\n"; // reductions over dims
  std::cout << std::hex << fingerprint(y)
            << "\n"; // the same on every run, thread count and CPU

  set_num_threads(8); // results do not change
  set_cpu_capability(
      CpuCapability::Scalar); // nor here (or DITTO_CPU_CAPABILITY=scalar)
  std::cout << std::hex
            << fingerprint(sigmoid(x * 0.5 + tensor<float>({1, 2, 3}))) << "\n";
  std::cout << config_report(); // version, CPU capability, threads, determinism
                                // switches
}
