// LibTorch's autograd tutorial ("Autograd in C++ Frontend") as a program:
// gradients of tensor expressions, vector-Jacobian products, higher-order
// gradients and a custom function (MulConstant, with saved data), then a
// regression trained through the tutorial's LinearFunction. One source for
// both libraries: built against LibTorch with -DEXAMPLE_WITH_LIBTORCH,
// against ditto without (docs/libtorch.md). Seeded: both print the same
// numbers (to rounding).

#ifdef EXAMPLE_WITH_LIBTORCH
#include <torch/torch.h>
#else
#include <ditto/ditto.h>
namespace torch = ditto;
#endif

#include <cstdio>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class MulConstant : public torch::autograd::Function<MulConstant> {
 public:
  static torch::Tensor forward(
      AutogradContext* ctx,
      torch::Tensor tensor,
      double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    // One gradient per input of forward: none for the constant.
    return {
        grad_outputs[0] * ctx->saved_data["constant"].toDouble(),
        torch::Tensor()};
  }
};

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static torch::Tensor forward(
      AutogradContext* ctx,
      torch::Tensor input,
      torch::Tensor weight,
      torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) {
      output += bias.unsqueeze(0).expand_as(output);
    }
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto bias = saved[2];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) {
      grad_bias = grad_output.sum(0);
    }
    return {grad_input, grad_weight, grad_bias};
  }
};

void print(const char* name, const torch::Tensor& t) {
  auto flat = t.reshape({-1}).to(torch::kFloat64).contiguous();
  std::printf("%s:", name);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    std::printf(" %.6f", flat[i].item<double>());
  }
  std::printf("\n");
}

} // namespace

int main() {
  torch::manual_seed(0);

  // Basic gradients.
  auto x = torch::ones({2, 2}, torch::requires_grad());
  auto y = x + 2;
  auto z = y * y * 3;
  auto out = z.mean();
  out.backward();
  print("x.grad", x.grad());

  // A vector-Jacobian product.
  x = torch::randn(3, torch::requires_grad());
  y = x * 2;
  while (y.norm().item<double>() < 1000) {
    y = y * 2;
  }
  auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
  y.backward(v);
  print("vjp", x.grad());

  // Higher-order: the gradient penalty.
  auto model = torch::nn::Linear(4, 3);
  auto input = torch::randn({3, 4}).requires_grad_(true);
  auto output = model(input);
  auto loss = torch::nn::functional::mse_loss(output, torch::zeros({3, 3}));
  auto grad_output = torch::ones_like(output);
  auto gradient = torch::autograd::grad(
      {output},
      {input},
      /*grad_outputs=*/{grad_output},
      /*create_graph=*/true)[0];
  auto gradient_penalty =
      torch::pow((gradient.norm(2, /*dim=*/1) - 1), 2).mean();
  auto combined_loss = loss + gradient_penalty;
  combined_loss.backward();
  print("input.grad", input.grad());

  // Custom functions.
  auto a = torch::randn({2, 3}).requires_grad_();
  auto weight = torch::randn({4, 3}).requires_grad_();
  auto b = LinearFunction::apply(a, weight);
  b.sum().backward();
  print("LinearFunction a.grad", a.grad());
  print("LinearFunction weight.grad", weight.grad());
  auto c = torch::randn({2}).requires_grad_();
  auto d = MulConstant::apply(c, 5.5);
  d.sum().backward();
  print("MulConstant c.grad", c.grad());

  // A regression through LinearFunction: y = 3x - 2 plus noise.
  auto w = torch::zeros({1, 1}, torch::requires_grad());
  auto bias = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD optimizer({w, bias}, torch::optim::SGDOptions(0.1));
  for (int step = 0; step < 50; ++step) {
    auto xs = torch::rand({32, 1});
    auto ys = xs * 3 - 2 + 0.01 * torch::randn({32, 1});
    optimizer.zero_grad();
    auto loss2 = torch::mse_loss(LinearFunction::apply(xs, w, bias), ys);
    loss2.backward();
    optimizer.step();
    if (step % 10 == 9) {
      std::printf("step %d loss %.6f\n", step + 1, loss2.item<double>());
    }
  }
  print("w", w);
  print("b", bias);
}
