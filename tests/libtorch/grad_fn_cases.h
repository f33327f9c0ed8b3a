#pragma once
// Expressions whose grad_fn()->name() tests/libtorch/grad_fn.json holds, in
// LibTorch's C++: tests/libtorch/gen_grad_fn.cpp evaluates them against
// libtorch-dev, tests/nn/module_test.cpp (LibTorchFrontEnd.GradFnNames)
// against ditto with `namespace torch = ditto;`. The including file defines
// the torch namespace.
#include <string>
#include <utility>
#include <vector>

namespace grad_fn_cases {

inline std::vector<std::pair<std::string, torch::Tensor>> cases() {
  torch::manual_seed(0);
  auto x = torch::rand({3, 4}, torch::requires_grad());
  auto y = torch::rand({3, 4}, torch::requires_grad());
  auto v = torch::rand({4}, torch::requires_grad());
  auto m = torch::rand({4, 5}, torch::requires_grad());
  auto img = torch::rand({1, 2, 6, 6}, torch::requires_grad());
  auto w = torch::rand({3, 2, 3, 3}, torch::requires_grad());
  auto tgt = torch::tensor({0, 2, 1}, torch::kLong);
  namespace F = torch::nn::functional;
  return {
      {"x + y", x + y},
      {"x + 2", x + 2},
      {"x - y", x - y},
      {"x - 2", x - 2},
      {"x * y", x * y},
      {"x * 2", x * 2},
      {"x / y", x / y},
      {"x / 2", x / 2},
      {"-x", -x},
      {"x.pow(2)", x.pow(2)},
      {"x.pow(y)", x.pow(y)},
      {"x.exp()", x.exp()},
      {"x.log()", x.log()},
      {"x.log1p()", x.log1p()},
      {"x.sqrt()", x.sqrt()},
      {"x.tanh()", x.tanh()},
      {"x.sigmoid()", x.sigmoid()},
      {"torch::relu(x)", torch::relu(x)},
      {"x.abs()", x.abs()},
      {"x.sum()", x.sum()},
      {"x.sum(1)", x.sum(1)},
      {"x.mean()", x.mean()},
      {"x.mean(1)", x.mean(1)},
      {"x.max()", x.max()},
      {"std::get<0>(x.max(1))", std::get<0>(x.max(1))},
      {"x.mm(m)", x.mm(m)},
      {"x.matmul(m)", x.matmul(m)},
      {"x.matmul(v)", x.matmul(v)},
      {"v.matmul(v)", v.matmul(v)},
      {"x.t()", x.t()},
      {"x.view({12})", x.view({12})},
      {"x.unsqueeze(0)", x.unsqueeze(0)},
      {"x.unsqueeze(0).squeeze()", x.unsqueeze(0).squeeze()},
      {"x.transpose(0, 1)", x.transpose(0, 1)},
      {"x.permute({1, 0})", x.permute({1, 0})},
      {"x[0]", x[0]},
      {"x.select(1, 0)", x.select(1, 0)},
      {"x.slice(1, 0, 2)", x.slice(1, 0, 2)},
      {"x.narrow(1, 0, 2)", x.narrow(1, 0, 2)},
      {"torch::cat({x, y})", torch::cat({x, y})},
      {"x.clone()", x.clone()},
      {"x.t().contiguous()", x.t().contiguous()},
      {"x.expand({2, 3, 4})", x.expand({2, 3, 4})},
      {"torch::log_softmax(x, 1)", torch::log_softmax(x, 1)},
      {"torch::softmax(x, 1)", torch::softmax(x, 1)},
      {"torch::nll_loss(log_softmax, tgt)",
       torch::nll_loss(torch::log_softmax(x, 1), tgt)},
      {"F::cross_entropy(x, tgt)", F::cross_entropy(x, tgt)},
      {"torch::conv2d(img, w)", torch::conv2d(img, w)},
      {"torch::max_pool2d(img, 2)", torch::max_pool2d(img, 2)},
      {"x.norm()", x.norm()},
      {"x.clamp(0.2, 0.8)", x.clamp(0.2, 0.8)},
      {"x.clone().add_(1)", x.clone().add_(1)},
      {"x.clone().mul_(y)", x.clone().mul_(y)},
      {"x.to(torch::kDouble)", x.to(torch::kDouble)},
      {"torch::where(x > 0.5, x, y)", torch::where(x > 0.5, x, y)},
      {"x.masked_fill(x > 0.5, 0)", x.masked_fill(x > 0.5, 0)},
      {"x.cumsum(1)", x.cumsum(1)},
      {"x.prod()", x.prod()},
      // ditto composes these from other ops: the last op's node shows
      // (docs/autograd.md, "Node names").
      {"torch::stack({x, y})", torch::stack({x, y})},
      {"x.reshape({12})", x.reshape({12})},
      {"torch::mse_loss(x, y)", torch::mse_loss(x, y)},
      {"F::linear(x, m.t(), bias)",
       F::linear(x, m.t(), torch::ones({5}, torch::requires_grad()))},
  };
}

// The cases whose name differs, because ditto composes the op (the rest
// must match LibTorch's).
inline std::vector<std::string> composed() {
  return {
      "torch::stack({x, y})",
      "x.reshape({12})",
      "torch::mse_loss(x, y)",
      "F::linear(x, m.t(), bias)"};
}

} // namespace grad_fn_cases
