// LibTorch compile coverage (issue 36): ordinary LibTorch C++ usage,
// written from LibTorch's documentation (the C++ frontend's module,
// container and OrderedDict pages), never from ditto's headers. Built
// against ditto with only the include and the alias below, and, where
// Debian's libtorch-dev is installed, against LibTorch itself (the CMake
// target libtorch_coverage_torch): the file stays valid LibTorch. It runs
// too, and checks what LibTorch documents. It grows with every gap closed.

#ifdef DITTO_COVERAGE_USE_LIBTORCH
#include <torch/torch.h>
#else
#include <ditto/ditto.h>
namespace torch = ditto;
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

int failures = 0;

#define COVERAGE_CHECK(cond)                                                  \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

// ---- A module with holders as members, registered in the constructor
// (the MNIST example's layout).
struct NetImpl : torch::nn::Module {
  NetImpl(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, out))) {
    bn = register_module("bn", torch::nn::BatchNorm1d(hidden));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn(fc1(x)));
    return fc2->forward(x);
  }

  torch::nn::Linear fc1, fc2;
  torch::nn::BatchNorm1d bn{nullptr};
};
TORCH_MODULE(Net);

// ---- A module held by std::shared_ptr, members assigned after
// registration (the autograd tour's layout).
struct Plain : torch::nn::Module {
  Plain() {
    linear = register_module("linear", torch::nn::Linear(4, 2));
    weight = register_parameter("weight", torch::ones({2}));
    register_buffer("steps", torch::zeros({1}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return linear(x) * weight;
  }
  torch::nn::Linear linear{nullptr};
  torch::Tensor weight;
};

void holders() {
  Net net(3, 5, 2);
  COVERAGE_CHECK(!net.is_empty());
  COVERAGE_CHECK(static_cast<bool>(net));
  torch::Tensor x = torch::randn({4, 3});
  torch::Tensor y = net(x);
  COVERAGE_CHECK(y.size(0) == 4 && y.size(1) == 2);
  COVERAGE_CHECK(net->forward(x).sizes() == y.sizes());
  COVERAGE_CHECK((*net).fc1->weight.size(0) == 5);
  COVERAGE_CHECK(net.get() == net.ptr().get());

  // Copies share the module.
  Net same = net;
  COVERAGE_CHECK(same.get() == net.get());
  Net empty{nullptr};
  COVERAGE_CHECK(empty.is_empty());
  empty = net;
  COVERAGE_CHECK(!empty.is_empty());

  // parameters, named_parameters (an OrderedDict), buffers.
  COVERAGE_CHECK(net->parameters().size() == 6);
  auto named = net->named_parameters();
  COVERAGE_CHECK(named.size() == 6);
  COVERAGE_CHECK(named.contains("fc1.weight"));
  COVERAGE_CHECK(named["fc2.bias"].size(0) == 2);
  COVERAGE_CHECK(named.keys()[0] == "fc1.weight");
  for (const auto& item : named) {
    COVERAGE_CHECK(!item.key().empty());
    COVERAGE_CHECK(item.value().defined());
  }
  for (auto& pair : net->named_parameters(/*recurse=*/false)) {
    COVERAGE_CHECK(pair.key().empty()); // NetImpl owns none itself
  }
  COVERAGE_CHECK(net->named_buffers().size() == 3);
  COVERAGE_CHECK(net->buffers().size() == 3);
  COVERAGE_CHECK(net->named_buffers().contains("bn.running_mean"));
  const torch::Tensor* found = net->named_parameters().find("fc1.bias");
  COVERAGE_CHECK(found != nullptr);
  COVERAGE_CHECK(net->named_parameters().find("nope") == nullptr);

  // children, modules, named_children, named_modules.
  COVERAGE_CHECK(net->children().size() == 3);
  COVERAGE_CHECK(net->modules().size() == 4);
  COVERAGE_CHECK(net->modules(/*include_self=*/false).size() == 3);
  auto children = net->named_children();
  COVERAGE_CHECK(
      children.keys() == std::vector<std::string>({"fc1", "fc2", "bn"}));
  std::shared_ptr<torch::nn::Module> first = children["fc1"];
  COVERAGE_CHECK(first->as<torch::nn::Linear>() != nullptr);
  COVERAGE_CHECK(first->as<torch::nn::LinearImpl>() == net->fc1.get());
  COVERAGE_CHECK(first->as<torch::nn::BatchNorm1d>() == nullptr);
  auto all = net->named_modules();
  COVERAGE_CHECK(all.size() == 4);
  COVERAGE_CHECK(all.keys()[1] == "fc1");

  // train/eval, zero_grad, apply, to.
  COVERAGE_CHECK(net->is_training());
  net->eval();
  COVERAGE_CHECK(!net->is_training());
  COVERAGE_CHECK(!net->fc1->is_training());
  net->train();
  COVERAGE_CHECK(net->bn->is_training());
  net(x).sum().backward();
  COVERAGE_CHECK(net->fc1->weight.grad().defined());
  net->zero_grad();
  // LibTorch 1.13 zeroes the gradients in place.
  COVERAGE_CHECK(net->fc1->weight.grad().defined());
  COVERAGE_CHECK(net->fc1->weight.grad().abs().sum().item<float>() == 0.0f);
  int visited = 0;
  net->apply([&](torch::nn::Module& m) {
    (void)m;
    ++visited;
  });
  COVERAGE_CHECK(visited == 4);
  std::vector<std::string> order;
  net->apply(
      [&](const std::string& name, torch::nn::Module& m) {
        (void)m;
        order.push_back(name);
      },
      "net");
  COVERAGE_CHECK(order.front() == "net");
  COVERAGE_CHECK(order.back() == "net.bn");
  net->apply([](torch::nn::Module& m) {
    if (auto* linear = m.as<torch::nn::Linear>()) {
      torch::NoGradGuard no_grad;
      linear->bias.fill_(0.5);
    }
  });
  COVERAGE_CHECK(net->fc2->bias[0].item<float>() == 0.5f);
  net->to(torch::kFloat64);
  COVERAGE_CHECK(net->fc1->weight.dtype() == torch::kFloat64);
  net->to(torch::kFloat32);

  // Printing.
  std::ostringstream printed;
  printed << *net;
  COVERAGE_CHECK(printed.str().find("(anonymous namespace)::NetImpl") == 0);
  std::ostringstream holder_printed;
  holder_printed << net;
  COVERAGE_CHECK(holder_printed.str() == printed.str());
  std::ostringstream pretty;
  net->pretty_print(pretty);
  COVERAGE_CHECK(!pretty.str().empty());
  COVERAGE_CHECK(net->name() == "(anonymous namespace)::NetImpl");

  // A module in a std::shared_ptr, as the autograd tour writes it.
  auto plain = std::make_shared<Plain>();
  COVERAGE_CHECK(plain->forward(torch::ones({3, 4})).size(1) == 2);
  COVERAGE_CHECK(plain->named_parameters().size() == 3);
  COVERAGE_CHECK(plain->named_buffers().size() == 1);
  COVERAGE_CHECK(plain->modules().front().get() == plain.get());
  COVERAGE_CHECK(plain->name() == "(anonymous namespace)::Plain");

  // replace_module and unregister_module.
  plain->replace_module("linear", torch::nn::Linear(4, 2));
  plain->unregister_module("linear");
  COVERAGE_CHECK(plain->children().empty());
}

void sequential() {
  torch::nn::Sequential seq(
      torch::nn::Linear(3, 4),
      torch::nn::ReLU(),
      torch::nn::Dropout(0.5),
      torch::nn::Linear(4, 1));
  COVERAGE_CHECK(seq->size() == 4);
  torch::Tensor x = torch::randn({2, 3});
  COVERAGE_CHECK(seq->forward(x).size(1) == 1);
  seq->push_back(torch::nn::Sigmoid());
  seq->push_back("tanh", torch::nn::Tanh());
  COVERAGE_CHECK(seq->size() == 6);
  COVERAGE_CHECK(seq->named_children().keys().back() == "tanh");
  std::shared_ptr<torch::nn::Module> m = seq[0];
  COVERAGE_CHECK(m->as<torch::nn::Linear>() != nullptr);
  COVERAGE_CHECK(seq->ptr(0) == m);
  COVERAGE_CHECK(seq->ptr<torch::nn::LinearImpl>(3)->weight.size(0) == 1);
  COVERAGE_CHECK(seq->at<torch::nn::LinearImpl>(0).weight.size(1) == 3);
  COVERAGE_CHECK(!seq->is_empty());
  size_t n = 0;
  for (const auto& module : *seq) {
    COVERAGE_CHECK(!module.is_empty());
    ++n;
  }
  COVERAGE_CHECK(n == 6);
  COVERAGE_CHECK(seq->named_parameters().contains("3.weight"));

  // Named entries.
  torch::nn::Sequential named({
      {"fc", torch::nn::Linear(3, 2)},
      {"act", torch::nn::ReLU()},
  });
  COVERAGE_CHECK(named->named_parameters().contains("fc.weight"));
  COVERAGE_CHECK(named->forward(x).size(1) == 2);

  // A user module and a shared_ptr in a Sequential.
  torch::nn::Sequential mixed(
      Net(3, 4, 2), std::make_shared<torch::nn::ReLUImpl>());
  COVERAGE_CHECK(mixed->forward(x).size(1) == 2);
  torch::nn::Sequential ext;
  ext->extend(*seq);
  COVERAGE_CHECK(ext->size() == seq->size());

  // Functional: a function as a module.
  torch::nn::Sequential with_fn(
      torch::nn::Linear(3, 3), torch::nn::Functional(torch::relu));
  COVERAGE_CHECK(with_fn->forward(x).min().item<float>() >= 0.0f);

  // AnyModule: any module behind one type.
  torch::nn::AnyModule any(torch::nn::Linear(3, 2));
  COVERAGE_CHECK(any.forward(x).size(1) == 2);
  COVERAGE_CHECK(any.get<torch::nn::Linear>()->weight.size(0) == 2);
  COVERAGE_CHECK(!any.is_empty());
}

void module_list_and_dict() {
  torch::nn::ModuleList list(torch::nn::Linear(3, 4), torch::nn::ReLU());
  list->push_back(torch::nn::Linear(4, 2));
  COVERAGE_CHECK(list->size() == 3);
  COVERAGE_CHECK(list[0]->as<torch::nn::Linear>() != nullptr);
  COVERAGE_CHECK(list->ptr<torch::nn::LinearImpl>(2)->weight.size(0) == 2);
  COVERAGE_CHECK(list->at<torch::nn::LinearImpl>(0).weight.size(0) == 4);
  torch::Tensor x = torch::randn({2, 3});
  for (const auto& module : *list) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      x = linear->forward(x);
    }
  }
  COVERAGE_CHECK(x.size(1) == 2);
  COVERAGE_CHECK(list->named_parameters().contains("2.bias"));

  torch::OrderedDict<std::string, std::shared_ptr<torch::nn::Module>> ordered;
  ordered.insert("linear", std::make_shared<torch::nn::LinearImpl>(3, 4));
  ordered.insert("relu", std::make_shared<torch::nn::ReLUImpl>());
  torch::nn::ModuleDict dict(ordered);
  COVERAGE_CHECK(dict->size() == 2);
  COVERAGE_CHECK(dict->contains("relu"));
  COVERAGE_CHECK(dict->keys() == std::vector<std::string>({"linear", "relu"}));
  COVERAGE_CHECK(dict["linear"]->as<torch::nn::Linear>() != nullptr);
  COVERAGE_CHECK(dict->values().size() == 2);
  dict->update({{"tanh", std::make_shared<torch::nn::TanhImpl>()}});
  COVERAGE_CHECK(dict->size() == 3);
  for (const auto& item : *dict) {
    COVERAGE_CHECK(!item.key().empty() && item.value() != nullptr);
  }
  std::shared_ptr<torch::nn::Module> popped = dict->pop("relu");
  COVERAGE_CHECK(popped->as<torch::nn::ReLU>() != nullptr);
  COVERAGE_CHECK(dict->size() == 2);
  dict->clear();
  COVERAGE_CHECK(dict->empty());
}

void ordered_dict() {
  torch::OrderedDict<std::string, int> d;
  d.insert("a", 1);
  d.insert("b", 2);
  COVERAGE_CHECK(d.size() == 2);
  COVERAGE_CHECK(d["b"] == 2);
  COVERAGE_CHECK(d[0].key() == "a");
  COVERAGE_CHECK(d[1].value() == 2);
  COVERAGE_CHECK(d.front().value() == 1 && d.back().key() == "b");
  COVERAGE_CHECK(d.keys() == std::vector<std::string>({"a", "b"}));
  COVERAGE_CHECK(d.values() == std::vector<int>({1, 2}));
  COVERAGE_CHECK(d.contains("a") && !d.contains("c"));
  COVERAGE_CHECK(d.find("c") == nullptr);
  COVERAGE_CHECK(!d.is_empty());
  d.erase("a");
  COVERAGE_CHECK(d.size() == 1 && d[0].key() == "b");
  torch::OrderedDict<std::string, int> other;
  other.insert("c", 3);
  d.update(other);
  COVERAGE_CHECK(d.keys() == std::vector<std::string>({"b", "c"}));
  int sum = 0;
  for (const auto& item : d) {
    sum += item.value();
  }
  COVERAGE_CHECK(sum == 5);
  COVERAGE_CHECK(d.items().size() == 2);
  d.clear();
  COVERAGE_CHECK(d.is_empty());
}

// ---- Tensor creation as the "Tensor Creation API" page writes it.
void tensor_creation() {
  torch::Tensor a =
      torch::zeros({2, 3}, torch::dtype(torch::kFloat64).requires_grad(true));
  COVERAGE_CHECK(a.dtype() == torch::kFloat64 && a.requires_grad());
  auto options = torch::TensorOptions()
                     .dtype(torch::kFloat32)
                     .device(torch::kCPU)
                     .requires_grad(true);
  torch::Tensor b = torch::ones({2}, options);
  COVERAGE_CHECK(b.requires_grad() && b.dtype() == torch::kFloat32);
  COVERAGE_CHECK(torch::randn({3, 4}, torch::requires_grad()).requires_grad());
  torch::Tensor d = torch::ones({2}, torch::kLong);
  COVERAGE_CHECK(d.dtype() == torch::kInt64);
  COVERAGE_CHECK(torch::full({2, 2}, 7).dtype() == torch::kLong);
  COVERAGE_CHECK(
      torch::full({2}, 1.5, torch::kDouble).dtype() == torch::kDouble);
  COVERAGE_CHECK(torch::arange(0, 10, torch::kLong).size(0) == 10);
  COVERAGE_CHECK(torch::arange(0, 10).dtype() == torch::kLong);
  COVERAGE_CHECK(torch::arange(0.0, 1.0, 0.25).dtype() == torch::kFloat);
  COVERAGE_CHECK(torch::randint(0, 10, {5}).dtype() == torch::kLong);
  COVERAGE_CHECK(torch::randint(10, {4}).size(0) == 4);
  COVERAGE_CHECK(
      torch::randint(0, 10, {5}, torch::kInt).dtype() == torch::kInt);
  COVERAGE_CHECK(torch::tensor({1.0, 2.0}).dtype() == torch::kFloat);
  COVERAGE_CHECK(torch::tensor({1, 2, 3}).dtype() == torch::kLong);
  COVERAGE_CHECK(torch::tensor({true, false}).dtype() == torch::kBool);
  torch::Tensor grid = torch::tensor({{1.0, 2.0}, {3.0, 4.0}});
  COVERAGE_CHECK(grid.dim() == 2 && grid.size(1) == 2);
  torch::Tensor scalar = torch::tensor(3.5);
  COVERAGE_CHECK(scalar.dim() == 0 && scalar.item<float>() == 3.5f);
  COVERAGE_CHECK(
      torch::tensor({1.0, 2.0}, torch::kFloat64).dtype() == torch::kFloat64);
  COVERAGE_CHECK(
      torch::tensor(
          {1.0, 2.0}, torch::dtype(torch::kFloat64).requires_grad(true))
          .requires_grad());
  COVERAGE_CHECK(torch::zeros_like(d, torch::kFloat).dtype() == torch::kFloat);
  torch::Tensor like = torch::empty({2, 2}, d.options());
  COVERAGE_CHECK(like.dtype() == torch::kLong);
  COVERAGE_CHECK(d.options().dtype() == torch::kLong);
  COVERAGE_CHECK(torch::eye(3, torch::kFloat64).dtype() == torch::kFloat64);
  COVERAGE_CHECK(torch::linspace(0, 1, 5, torch::kFloat64).size(0) == 5);
  COVERAGE_CHECK(d.to(torch::kFloat).dtype() == torch::kFloat);
  COVERAGE_CHECK(d.to(torch::kCPU).device() == torch::Device(torch::kCPU));
  COVERAGE_CHECK(torch::randperm(5, torch::kLong).size(0) == 5);
}

// ---- Losses as modules and functions, and tensor methods.
void losses_and_methods() {
  namespace F = torch::nn::functional;
  torch::Tensor x = torch::randn({4, 3});
  torch::Tensor y = torch::randn({4, 3});
  torch::Tensor t = torch::tensor({0, 2, 1, 2});
  torch::nn::MSELoss mse;
  torch::Tensor l = mse(x, y);
  COVERAGE_CHECK(l.dim() == 0);
  torch::nn::MSELoss mse_sum(
      torch::nn::MSELossOptions().reduction(torch::kSum));
  COVERAGE_CHECK(mse_sum(x, y).item<float>() > l.item<float>());
  COVERAGE_CHECK(
      F::mse_loss(x, y, F::MSELossFuncOptions(torch::kSum)).item<float>() ==
      mse_sum(x, y).item<float>());
  COVERAGE_CHECK(
      F::mse_loss(x, y, F::MSELossFuncOptions().reduction(torch::kNone))
          .sizes() == x.sizes());
  torch::nn::L1Loss l1;
  COVERAGE_CHECK(l1(x, y).item<float>() > 0.0f);
  COVERAGE_CHECK(
      F::l1_loss(x, y, F::L1LossFuncOptions(torch::kMean)).dim() == 0);
  torch::nn::SmoothL1Loss smooth(torch::nn::SmoothL1LossOptions().beta(0.5));
  COVERAGE_CHECK(smooth(x, y).dim() == 0);
  torch::nn::CrossEntropyLoss ce;
  torch::Tensor ce_loss = ce(x, t);
  COVERAGE_CHECK(ce_loss.item<float>() == F::cross_entropy(x, t).item<float>());
  torch::nn::CrossEntropyLoss weighted(torch::nn::CrossEntropyLossOptions()
                                           .weight(torch::ones({3}))
                                           .ignore_index(1));
  COVERAGE_CHECK(weighted->named_buffers().contains("weight"));
  COVERAGE_CHECK(weighted(x, t).dim() == 0);
  COVERAGE_CHECK(
      F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(0.1))
          .dim() == 0);
  torch::nn::NLLLoss nll;
  torch::Tensor logp = torch::log_softmax(x, 1);
  COVERAGE_CHECK(nll(logp, t).item<float>() == ce_loss.item<float>());
  COVERAGE_CHECK(
      F::nll_loss(logp, t, F::NLLLossFuncOptions().reduction(torch::kSum))
          .dim() == 0);
  torch::Tensor target = torch::rand({4, 3});
  torch::nn::BCEWithLogitsLoss bce(
      torch::nn::BCEWithLogitsLossOptions().pos_weight(torch::ones({3})));
  COVERAGE_CHECK(bce(x, target).dim() == 0);
  COVERAGE_CHECK(
      F::binary_cross_entropy_with_logits(
          x, target, F::BinaryCrossEntropyWithLogitsFuncOptions())
          .dim() == 0);

  // Compound operators and the *_as methods.
  torch::Tensor z = torch::zeros({4, 3});
  z += x;
  z -= 1;
  z *= 2;
  z /= 2;
  z += torch::ones({4, 3});
  COVERAGE_CHECK(torch::allclose(z, x));
  COVERAGE_CHECK(torch::ones({3}).expand_as(x).sizes() == x.sizes());
  COVERAGE_CHECK(torch::ones({12}).view_as(x).sizes() == x.sizes());
  COVERAGE_CHECK(torch::ones({12}).reshape_as(x).size(0) == 4);
  COVERAGE_CHECK(x.toType(torch::kDouble).dtype() == torch::kDouble);
  COVERAGE_CHECK(t.type_as(x).dtype() == torch::kFloat);
  COVERAGE_CHECK(x.is_floating_point() && !t.is_floating_point());
  COVERAGE_CHECK(x.scalar_type() == torch::kFloat);
  COVERAGE_CHECK(x.numel() == 12 && x.sizes()[1] == 3);
}

// ---- Custom autograd functions, as LibTorch's autograd tutorial writes
// them.
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

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

  static variable_list backward(
      AutogradContext* ctx,
      variable_list grad_outputs) {
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

class MulConstant : public torch::autograd::Function<MulConstant> {
 public:
  static torch::Tensor forward(
      AutogradContext* ctx,
      torch::Tensor tensor,
      double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static variable_list backward(
      AutogradContext* ctx,
      variable_list grad_outputs) {
    return {
        grad_outputs[0] * ctx->saved_data["constant"].toDouble(),
        torch::Tensor()};
  }
};

void custom_functions() {
  auto x = torch::randn({2, 3}).requires_grad_();
  auto weight = torch::randn({4, 3}).requires_grad_();
  auto y = LinearFunction::apply(x, weight);
  y.sum().backward();
  COVERAGE_CHECK(y.size(1) == 4);
  COVERAGE_CHECK(torch::allclose(x.grad(), torch::ones({2, 4}).mm(weight)));
  COVERAGE_CHECK(torch::allclose(weight.grad(), torch::ones({2, 4}).t().mm(x)));

  auto bias = torch::randn({4}).requires_grad_();
  auto z = LinearFunction::apply(x, weight, bias);
  z.sum().backward();
  COVERAGE_CHECK(bias.grad().size(0) == 4);
  COVERAGE_CHECK(torch::allclose(bias.grad(), torch::full({4}, 2.0)));

  auto a = torch::randn({2}).requires_grad_();
  auto b = MulConstant::apply(a, 5.5);
  b.sum().backward();
  COVERAGE_CHECK(torch::allclose(a.grad(), torch::full({2}, 5.5)));
}

// ---- in-place functions, node names, print(), IntArrayRef.
class ScaleInPlace : public torch::autograd::Function<ScaleInPlace> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x) {
    x.mul_(3);
    ctx->mark_dirty({x});
    return x;
  }

  static variable_list backward(
      AutogradContext* ctx,
      variable_list grad_outputs) {
    (void)ctx;
    return {grad_outputs[0] * 3};
  }
};

void nodes_and_sizes() {
  auto a = torch::ones({2}).requires_grad_();
  auto b = a * 2;
  auto c = ScaleInPlace::apply(b);
  COVERAGE_CHECK(c.is_same(b));
  COVERAGE_CHECK(b[0].item<float>() == 6.0f);
  c.sum().backward();
  COVERAGE_CHECK(a.grad()[1].item<float>() == 6.0f);
  COVERAGE_CHECK((a * 2).grad_fn()->name() == "MulBackward1");
  COVERAGE_CHECK((a + a).grad_fn()->name() == "AddBackward0");
  COVERAGE_CHECK(a.sum().grad_fn()->name() == "SumBackward0");
  COVERAGE_CHECK(
      torch::relu(a).grad_fn()->name() == std::string("ReluBackward0"));
  auto t = torch::zeros({2, 3, 5});
  torch::IntArrayRef sizes = t.sizes();
  COVERAGE_CHECK(sizes.size() == 3 && sizes[2] == 5);
  COVERAGE_CHECK(sizes.slice(1).size() == 2 && sizes.slice(1)[0] == 3);
  COVERAGE_CHECK(sizes.vec() == std::vector<int64_t>({2, 3, 5}));
  std::ostringstream os;
  os << torch::IntArrayRef(t.sizes());
  COVERAGE_CHECK(os.str() == "[2, 3, 5]");
  t.print(); // [CPUFloatType [2, 3, 5]] on stdout
}

// ---- torch::save and torch::load (into a temporary directory of its own).
void serialization() {
  std::string dir_template =
      (std::filesystem::temp_directory_path() / "libtorch_coverage_XXXXXX")
          .string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    COVERAGE_CHECK(false);
    return;
  }
  const std::string dir = dir_template;
  Net net(3, 4, 2);
  torch::save(net, dir + "/net.pt");
  Net other(3, 4, 2);
  torch::load(other, dir + "/net.pt");
  COVERAGE_CHECK(torch::equal(other->fc1->weight, net->fc1->weight));
  COVERAGE_CHECK(torch::equal(other->bn->running_var, net->bn->running_var));

  torch::Tensor t = torch::randn({3});
  torch::save(t, dir + "/t.pt");
  torch::Tensor u;
  torch::load(u, dir + "/t.pt");
  COVERAGE_CHECK(torch::equal(t, u));
  std::vector<torch::Tensor> ts = {t, t * 2};
  torch::save(ts, dir + "/ts.pt");
  std::vector<torch::Tensor> back;
  torch::load(back, dir + "/ts.pt");
  COVERAGE_CHECK(back.size() == 2 && torch::equal(back[1], t * 2));

  torch::optim::SGD opt(
      net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  net(torch::randn({4, 3})).sum().backward();
  opt.step();
  torch::save(opt, dir + "/opt.pt");
  torch::optim::SGD opt2(
      net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  torch::load(opt2, dir + "/opt.pt");

  torch::serialize::OutputArchive out;
  out.write("w", t);
  out.save_to(dir + "/archive.pt");
  torch::serialize::InputArchive in;
  in.load_from(dir + "/archive.pt");
  torch::Tensor w;
  in.read("w", w);
  COVERAGE_CHECK(torch::equal(w, t));
  std::filesystem::remove_all(dir);
}

// ---- LibTorch's MNIST example's model and loop, as its README has them.
struct MnistNet : torch::nn::Module {
  MnistNet()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(
        torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

void mnist_loop() {
  torch::Device device(torch::kCPU);
  if (torch::cuda::is_available()) {
    device = torch::Device(torch::kCUDA);
  }
  MnistNet model;
  model.to(device);
  torch::optim::SGD optimizer(
      model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  torch::Tensor data = torch::randn({8, 1, 28, 28}).to(device);
  torch::Tensor targets = torch::randint(0, 10, {8}, torch::kLong);
  model.train();
  float first = 0.0f;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    if (step == 0) {
      first = loss.template item<float>();
    }
    loss.backward();
    optimizer.step();
  }
  COVERAGE_CHECK(first > 0.0f);

  torch::NoGradGuard no_grad;
  model.eval();
  auto output = model.forward(data);
  double test_loss =
      torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum)
          .template item<float>();
  auto pred = output.argmax(1);
  int64_t correct = pred.eq(targets).sum().template item<int64_t>();
  COVERAGE_CHECK(test_loss > 0.0);
  COVERAGE_CHECK(correct >= 0 && correct <= 8);
}

// ---- Indexing (the tensor indexing page: Python's x[...] as x.index()).
void tensor_indexing() {
  using namespace torch::indexing;
  auto x = torch::arange(24).reshape({2, 3, 4});
  COVERAGE_CHECK(x.index({1, 2, 3}).item<int64_t>() == 23);
  COVERAGE_CHECK(x.index({0, 1, 2}).item<int64_t>() == 6);
  auto col = x.index({Slice(), 1});
  COVERAGE_CHECK(col.dim() == 2 && col.size(0) == 2 && col.size(1) == 4);
  auto even = x.index({"...", Slice(None, None, 2)});
  COVERAGE_CHECK(
      even.size(2) == 2 && even.index({0, 0, 1}).item<int64_t>() == 2);
  COVERAGE_CHECK(x.index({None}).dim() == 4);
  COVERAGE_CHECK(x.index({Ellipsis, None}).size(3) == 1);
  auto tail = x.index({Slice(1, None), Slice(-2, None)});
  COVERAGE_CHECK(tail.size(0) == 1 && tail.size(1) == 2);
  COVERAGE_CHECK(tail.index({0, 0, 0}).item<int64_t>() == 16);
  auto row = x.index({0, 0});
  COVERAGE_CHECK(row.index({row > 1}).numel() == 2);
  auto picked = x.index({torch::tensor({1, 0}), 2});
  COVERAGE_CHECK(
      picked.size(0) == 2 && picked.index({0, 0}).item<int64_t>() == 20);

  auto y = torch::zeros({3, 4});
  y.index_put_({Slice(), 0}, 1.0);
  COVERAGE_CHECK(y.sum().item<float>() == 3.0f);
  y.index_put_({1}, torch::ones({4}) * 2);
  COVERAGE_CHECK(y.sum().item<float>() == 10.0f);
  y.index_put_({torch::tensor({0, 2}), Slice(1, 3)}, 5.0);
  COVERAGE_CHECK(y.sum().item<float>() == 30.0f);
  y.index_put_({y > 4}, 0.5);
  COVERAGE_CHECK(y.sum().item<float>() == 12.0f);
}

// ---- The data API (the MNIST example's loading; a custom dataset).
struct PairDataset : torch::data::datasets::Dataset<PairDataset> {
  PairDataset(torch::Tensor x, torch::Tensor y)
      : x_(std::move(x)), y_(std::move(y)) {}
  torch::data::Example<> get(size_t index) override {
    return {x_[index], y_[index]};
  }
  torch::optional<size_t> size() const override {
    return x_.size(0);
  }
  torch::Tensor x_, y_;
};

void data_api(const char* mnist_root) {
  auto dataset =
      PairDataset(torch::randn({10, 3}), torch::arange(10))
          .map(torch::data::transforms::Lambda<torch::data::Example<>>(
              [](torch::data::Example<> e) {
                e.data = e.data * 2;
                return e;
              }))
          .map(torch::data::transforms::Stack<>());
  COVERAGE_CHECK(dataset.size().value() == 10);
  auto loader = torch::data::make_data_loader(
      std::move(dataset),
      torch::data::DataLoaderOptions().batch_size(4).workers(2));
  size_t batches = 0;
  int64_t seen = 0, target_sum = 0;
  for (auto& batch : *loader) {
    ++batches;
    seen += batch.data.size(0);
    target_sum += batch.target.sum().item<int64_t>();
    COVERAGE_CHECK(batch.data.size(1) == 3);
  }
  COVERAGE_CHECK(batches == 3 && seen == 10 && target_sum == 45);

  auto plain =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          PairDataset(torch::ones({5, 2}), torch::arange(5)),
          torch::data::DataLoaderOptions(2).drop_last(true));
  std::vector<int64_t> firsts;
  for (std::vector<torch::data::Example<>>& batch : *plain) {
    firsts.push_back(batch.front().target.item<int64_t>());
  }
  COVERAGE_CHECK((firsts == std::vector<int64_t>{0, 2}));

  auto rows =
      torch::data::datasets::TensorDataset(torch::rand({6, 2}))
          .map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto row_loader = torch::data::make_data_loader(std::move(rows), 3);
  for (auto& batch : *row_loader) {
    COVERAGE_CHECK(batch.data.size(0) == 3);
  }

  if (mnist_root == nullptr) {
    return; // LibTorch's MNIST reads unpacked files only
  }
  auto train_dataset =
      torch::data::datasets::MNIST(mnist_root)
          .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
          .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  COVERAGE_CHECK(train_dataset_size == 60000);
  auto train_loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          std::move(train_dataset), 64);
  for (auto& batch : *train_loader) {
    auto data = batch.data, targets = batch.target;
    COVERAGE_CHECK(data.size(0) == 64 && data.size(1) == 1);
    COVERAGE_CHECK(targets.size(0) == 64);
    break;
  }
  auto test_dataset = torch::data::datasets::MNIST(
      mnist_root, torch::data::datasets::MNIST::Mode::kTest);
  COVERAGE_CHECK(test_dataset.size().value() == 10000);
}

} // namespace

// ---- Attention (torch::nn::MultiheadAttention's documented forward).
void attention() {
  torch::nn::MultiheadAttention mha(
      torch::nn::MultiheadAttentionOptions(8, 2).dropout(0.0));
  auto params = mha->named_parameters();
  COVERAGE_CHECK(params.size() == 4);
  COVERAGE_CHECK(params.contains("in_proj_weight"));
  COVERAGE_CHECK(params.contains("out_proj.bias"));
  COVERAGE_CHECK(mha->in_proj_weight.size(0) == 24);
  torch::Tensor q = torch::randn({5, 3, 8}); // (L, N, E)
  torch::Tensor kv = torch::randn({4, 3, 8});
  torch::Tensor mask = torch::zeros({5, 4}, torch::kBool);
  auto result = mha->forward(
      q,
      kv,
      kv,
      /*key_padding_mask=*/{},
      /*need_weights=*/true,
      mask);
  torch::Tensor out = std::get<0>(result);
  torch::Tensor weights = std::get<1>(result);
  COVERAGE_CHECK(out.sizes() == q.sizes());
  COVERAGE_CHECK(
      weights.size(0) == 3 && weights.size(1) == 5 && weights.size(2) == 4);
  COVERAGE_CHECK((weights.sum(-1) - 1).abs().max().item<float>() < 1e-5);
  auto [out2, none] = mha->forward(q, kv, kv, {}, /*need_weights=*/false);
  COVERAGE_CHECK(out2.sizes() == out.sizes());
  COVERAGE_CHECK(!none.defined());
  torch::nn::TransformerEncoderLayer layer(
      torch::nn::TransformerEncoderLayerOptions(8, 2)
          .dim_feedforward(16)
          .dropout(0.0)
          .activation(torch::kGELU));
  COVERAGE_CHECK(
      layer->named_parameters().contains("self_attn.in_proj_weight"));
  COVERAGE_CHECK(layer->named_parameters().contains("linear2.bias"));
  COVERAGE_CHECK(layer->named_parameters().contains("norm2.weight"));
  torch::Tensor src = torch::randn({5, 3, 8});
  COVERAGE_CHECK(layer->forward(src).sizes() == src.sizes());
  torch::Tensor causal = torch::ones({5, 5}, torch::kBool).triu(1);
  COVERAGE_CHECK(layer->forward(src, causal).sizes() == src.sizes());

  // The stacks: copies of the layer given (the same weights), and the
  // Transformer with its causal mask.
  torch::nn::TransformerEncoder encoder(
      torch::nn::TransformerEncoderOptions(layer, 2).norm(torch::nn::AnyModule(
          torch::nn::LayerNorm(torch::nn::LayerNormOptions({8})))));
  COVERAGE_CHECK(encoder->layers->size() == 2);
  COVERAGE_CHECK(
      encoder->named_parameters().contains("layers.1.linear1.weight"));
  COVERAGE_CHECK(torch::equal(
      encoder->named_parameters()["layers.0.linear1.weight"],
      encoder->named_parameters()["layers.1.linear1.weight"]));
  torch::Tensor memory = encoder->forward(src, causal);
  COVERAGE_CHECK(memory.sizes() == src.sizes());
  torch::nn::TransformerDecoder decoder(torch::nn::TransformerDecoderOptions(
      torch::nn::TransformerDecoderLayerOptions(8, 2)
          .dim_feedforward(16)
          .dropout(0.0),
      2));
  COVERAGE_CHECK(decoder->named_parameters().contains(
      "layers.0.multihead_attn.in_proj_weight"));
  torch::Tensor tgt = torch::randn({4, 3, 8});
  torch::Tensor tgt_mask =
      torch::nn::TransformerImpl::generate_square_subsequent_mask(4);
  COVERAGE_CHECK(std::isinf(tgt_mask[0][3].item<float>()));
  COVERAGE_CHECK(tgt_mask[3][0].item<float>() == 0.0f);
  COVERAGE_CHECK(
      decoder->forward(tgt, memory, tgt_mask).sizes() == tgt.sizes());
  torch::nn::Transformer transformer(torch::nn::TransformerOptions(8, 2, 1, 1)
                                         .dim_feedforward(16)
                                         .dropout(0.0));
  COVERAGE_CHECK(
      transformer->forward(src, tgt, {}, tgt_mask).sizes() == tgt.sizes());
  COVERAGE_CHECK(transformer->named_parameters().contains(
      "decoder.layers.0.self_attn.out_proj.weight"));
}

// ATen's functions with their LibTorch signatures (declared in ditto's
// ops.toml files): the resampling forms, pad and linear.
void aten_forms() {
  torch::Tensor x = torch::arange(24, torch::kFloat32).reshape({1, 2, 3, 4});
  torch::Tensor up = torch::upsample_bilinear2d(x, {6, 8}, false);
  COVERAGE_CHECK(up.sizes() == torch::IntArrayRef({1, 2, 6, 8}));
  // scales given: the index mapping of interpolate(scale_factor=2)
  torch::Tensor near = torch::upsample_nearest2d(x, {6, 8}, 2.0, 2.0);
  COVERAGE_CHECK(near[0][1][5][7].item<float>() == 23.0f);
  COVERAGE_CHECK(
      torch::upsample_nearest1d(x[0], {8}).sizes() ==
      torch::IntArrayRef({2, 3, 8}));
  // LibTorch pads 1 or 2 fewer dims than the input has in circular mode
  torch::Tensor wrapped = torch::pad(x, {1, 1, 0, 0}, "circular");
  COVERAGE_CHECK(wrapped.size(3) == 6);
  COVERAGE_CHECK(wrapped[0][0][0][0].item<float>() == 3.0f);
  COVERAGE_CHECK(
      torch::pad(x, {1, 0, 0, 1}, "constant", 7.0)[0][0][3][0].item<float>() ==
      7.0f);
  namespace F = torch::nn::functional;
  torch::Tensor unit = F::normalize(x, F::NormalizeFuncOptions().p(2).dim(-1));
  COVERAGE_CHECK(std::abs(unit[0][0][1].norm().item<float>() - 1.0f) < 1e-6f);
  torch::Tensor w = torch::ones({5, 4});
  COVERAGE_CHECK(torch::linear(x, w).size(3) == 5);
  COVERAGE_CHECK(
      torch::linear(x, w, torch::ones({5}))[0][0][0][0].item<float>() == 7.0f);
}

int main(int argc, char** argv) {
  torch::manual_seed(0);
  aten_forms();
  holders();
  sequential();
  module_list_and_dict();
  ordered_dict();
  tensor_creation();
  losses_and_methods();
  custom_functions();
  nodes_and_sizes();
  serialization();
  mnist_loop();
  tensor_indexing();
  data_api(argc > 1 ? argv[1] : nullptr);
  attention();
  if (failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("libtorch coverage: every check passed\n");
  return 0;
}
