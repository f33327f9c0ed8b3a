// Writes tests/libtorch/behaviour.json: what LibTorch 1.13 (Debian's
// libtorch-dev) does where a LibTorch program compiled against ditto must
// behave the same (issue 36, point 9). Build and run:
//   g++ -std=c++17 -I/usr/include/torch/csrc/api/include \
//     tests/libtorch/gen_behaviour.cpp -o /tmp/gen_behaviour \
//     -ltorch -ltorch_cpu -lc10
//   /tmp/gen_behaviour > tests/libtorch/behaviour.json
// tests/nn/module_test.cpp (LibTorchFrontEnd.BehaviourIsLibTorchs) reads it.

#include <torch/torch.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

std::string list(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    out += (i ? ", " : "") + std::string(buf);
  }
  return out + "]";
}

std::string names(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    out += (i ? ", \"" : "\"") + v[i] + "\"";
  }
  return out + "]";
}

} // namespace

int main() {
  // StepLR: the lr before each of 8 optimizer steps, step_size 3, gamma 0.5.
  auto p = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD opt({p}, torch::optim::SGDOptions(1.0));
  torch::optim::StepLR sched(opt, /*step_size=*/3, /*gamma=*/0.5);
  std::vector<double> lrs;
  for (int i = 0; i < 8; ++i) {
    lrs.push_back(opt.param_groups()[0].options().get_lr());
    opt.step();
    sched.step();
  }

  // zero_grad on a module and on an optimizer: defined zeros, or none.
  torch::nn::Linear lin(2, 2);
  lin(torch::ones({1, 2})).sum().backward();
  lin->zero_grad();
  const bool module_defined = lin->weight.grad().defined();
  const double module_sum = lin->weight.grad().abs().sum().item<double>();
  lin(torch::ones({1, 2})).sum().backward();
  torch::optim::SGD opt2(lin->parameters(), torch::optim::SGDOptions(0.1));
  opt2.zero_grad();
  const bool optimizer_defined = lin->weight.grad().defined();

  // apply's order over a tree.
  torch::nn::ModuleList tree(
      torch::nn::Linear(1, 1),
      torch::nn::ModuleList(torch::nn::ReLU(), torch::nn::Tanh()),
      torch::nn::Sigmoid());
  std::vector<std::string> order;
  tree->apply([&](const std::string& name, torch::nn::Module&) {
    order.push_back(name.empty() ? "<root>" : name);
  });

  std::printf("{\n");
  std::printf("  \"step_lr_3_0.5\": %s,\n", list(lrs).c_str());
  std::printf(
      "  \"module_zero_grad_defined\": %s,\n",
      module_defined ? "true" : "false");
  std::printf("  \"module_zero_grad_abs_sum\": %.17g,\n", module_sum);
  std::printf(
      "  \"optimizer_zero_grad_defined\": %s,\n",
      optimizer_defined ? "true" : "false");
  std::printf("  \"apply_order\": %s\n", names(order).c_str());
  std::printf("}\n");
  return 0;
}
