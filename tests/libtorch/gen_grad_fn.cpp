// Writes tests/libtorch/grad_fn.json: grad_fn()->name() in LibTorch 1.13 for
// the expressions of grad_fn_cases.h, and the name of a leaf's node.
//   g++ -std=c++17 -I/usr/include/torch/csrc/api/include -I. \
//     tests/libtorch/gen_grad_fn.cpp -o /tmp/gen_grad_fn \
//     -ltorch -ltorch_cpu -lc10
//   /tmp/gen_grad_fn > tests/libtorch/grad_fn.json

#include <torch/torch.h>

#include <cstdio>

#include "tests/libtorch/grad_fn_cases.h"

int main() {
  const auto cases = grad_fn_cases::cases();
  std::printf("{\n");
  for (const auto& [expr, t] : cases) {
    std::printf(
        "  \"%s\": \"%s\",\n", expr.c_str(), t.grad_fn()->name().c_str());
  }
  auto x = torch::ones({2}, torch::requires_grad());
  std::printf(
      "  \"leaf\": \"%s\"\n}\n",
      (x * x).grad_fn()->next_edge(0).function->name().c_str());
}
