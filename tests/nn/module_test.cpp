// nn::Module mechanics: PyTorch's names and order, state_dict round trips
// and errors, printing, modes, conversion, user-defined modules.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ditto/ditto.h"
#include "examples/models/cnn.h"
#include "tests/error_of.h"

namespace ditto {
namespace {

namespace nn = ditto::nn;

// The registration-order example of pytorch-training.md section 1: child
// a, then parameter p, then child b.
struct Mixed : nn::Module {
  Mixed() : Module("Mixed") {}
  nn::Linear a = register_module("a", nn::Linear(2, 3));
  Tensor p = register_parameter("p", zeros({4}));
  nn::Sequential b = register_module(
      "b",
      nn::Sequential(nn::Linear(3, 3), nn::ReLU(), nn::Linear(3, 1)));
  Tensor running = register_buffer("running", ones({2}));
  Tensor scratch = register_buffer("scratch", ones({1}), false);
  Tensor forward(const Tensor& x) const {
    return b->forward(a->forward(x));
  }
};

std::vector<std::string> names(const nn::NamedTensors& v) {
  std::vector<std::string> out;
  for (auto& [n, t] : v) {
    out.push_back(n);
  }
  return out;
}

TEST(NnModule, NamesAndOrderArePyTorchs) {
  Mixed m;
  EXPECT_EQ(
      names(m.named_parameters()),
      (std::vector<std::string>{
          "p",
          "a.weight",
          "a.bias",
          "b.0.weight",
          "b.0.bias",
          "b.2.weight",
          "b.2.bias"}));
  EXPECT_EQ(
      names(m.named_buffers()),
      (std::vector<std::string>{"running", "scratch"}));
  EXPECT_EQ(
      m.state_dict().keys(),
      (std::vector<std::string>{
          "p",
          "running",
          "a.weight",
          "a.bias",
          "b.0.weight",
          "b.0.bias",
          "b.2.weight",
          "b.2.bias"}));
  EXPECT_EQ(m.modules().size(), 6u);
  EXPECT_EQ(m.named_modules()[3].first, "b.0");
  EXPECT_EQ(&m.get_submodule("b.2"), m.b[2].get());
  EXPECT_THROW(m.get_submodule("b.7"), KeyError);
  EXPECT_THROW(m.register_parameter("p", zeros({1})), ValueError);
  EXPECT_THROW(m.register_buffer("x.y", zeros({1})), ValueError);
  // Moving the model keeps the references its members hold valid.
  Mixed moved = std::move(m);
  EXPECT_EQ(moved.a->weight.sizes(), (Shape{3, 2}));
  EXPECT_EQ(moved.forward(ones({5, 2})).sizes(), (Shape{5, 1}));
}

std::vector<uint64_t> prints(const nn::Module& m) {
  std::vector<uint64_t> out;
  for (auto& [name, p] : m.named_parameters()) {
    out.push_back(fingerprint(p));
  }
  return out;
}

// C++ builds function arguments in an unspecified order (GCC: right to
// left); the layers' draws are queued and Sequential takes them in source
// order, so the parenthesized form draws as statement-by-statement
// construction (and as PyTorch) does.
TEST(NnModule, ArgumentsDrawInSourceOrder) {
  manual_seed(0);
  nn::Linear a(4, 3);
  nn::Linear b(3, 3);
  nn::Linear c(3, 2);
  std::vector<uint64_t> want = prints(a);
  for (auto v : {prints(b), prints(c)}) {
    want.insert(want.end(), v.begin(), v.end());
  }
  const Tensor state = default_generator().get_state();
  manual_seed(0);
  nn::Sequential paren(
      nn::Linear(4, 3),
      nn::Sequential(nn::Linear(3, 3), nn::ReLU()),
      nn::Linear(3, 2));
  EXPECT_EQ(prints(paren), want);
  EXPECT_TRUE(equal(default_generator().get_state(), state));
  // Layers without draws between them (their ones and zeros are queued
  // too, so building them does not run the queue in the middle).
  manual_seed(0);
  nn::Linear a2(4, 3);
  nn::BatchNorm1d bn(3);
  nn::LayerNorm ln(3);
  nn::GroupNorm gn(1, 3);
  nn::Embedding emb(5, 3);
  nn::Linear c2(3, 2);
  std::vector<uint64_t> want2;
  for (const nn::Module* m : std::initializer_list<const nn::Module*>{
           a2.get(), bn.get(), ln.get(), gn.get(), emb.get(), c2.get()}) {
    auto v = prints(*m);
    want2.insert(want2.end(), v.begin(), v.end());
  }
  manual_seed(0);
  nn::Sequential mixed(
      nn::Linear(4, 3),
      nn::BatchNorm1d(3),
      nn::LayerNorm(3),
      nn::GroupNorm(1, 3),
      nn::Embedding(5, 3),
      nn::Linear(3, 2));
  EXPECT_EQ(prints(mixed), want2);
  EXPECT_EQ(mixed->state_dict().at("1.running_var").sum().item<float>(), 3.0f);
  manual_seed(0);
  nn::ModuleList list(
      nn::Linear(4, 3), nn::ModuleList(nn::Linear(3, 3)), nn::Linear(3, 2));
  EXPECT_EQ(prints(list), want);
}

TEST(NnModule, QueuedDrawsHappenBeforeAnythingObservesThem) {
  // Reading the data, seeding, reading the generator or running any op
  // runs the queued draws first.
  manual_seed(0);
  nn::Linear l(3, 2);
  EXPECT_EQ(l->weight.data_ptr<float>()[0], -0.004322517663240433f);
  manual_seed(0);
  nn::Linear l2(3, 2);
  manual_seed(0); // the draws of l2 happen before this reseeds
  nn::Linear l3(3, 2);
  EXPECT_EQ(prints(l2), prints(l3));
  manual_seed(0);
  nn::Linear l4(3, 2);
  Tensor r = rand({1}); // drawn after l4's parameters
  manual_seed(0);
  nn::Linear l5(3, 2);
  EXPECT_EQ(prints(l4), prints(l5));
  EXPECT_TRUE(equal(rand({1}), r));
  // reset_parameters draws again, after the queued draws.
  manual_seed(0);
  nn::Linear l6(3, 2);
  l6->reset_parameters();
  manual_seed(0);
  nn::Linear l7(3, 2);
  nn::Linear l8(3, 2);
  EXPECT_EQ(prints(l6), prints(l8));
}

TEST(NnModule, PrintsAsPyTorch) {
  std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/nn_golden.json");
  auto j = nlohmann::json::parse(in)["extra"];
  nn::Sequential cnn = models::mnist_cnn();
  EXPECT_EQ(cnn->repr(), j["repr_cnn"].get<std::string>());
  nn::Sequential misc(
      nn::Conv2d(8, 8, 3, 2, 1, 2, 2, false),
      nn::LeakyReLU(0.2),
      nn::Conv1d(4, 6, 3),
      nn::Softmax(1),
      nn::Unflatten(1, Shape{2, 5}),
      nn::Sequential(nn::Linear(3, 2, false), nn::Tanh()));
  EXPECT_EQ(misc->repr(), j["repr_misc"].get<std::string>());
}

TEST(NnModule, StateDictRoundTripAndErrorsChangeNothing) {
  manual_seed(1);
  Mixed src;
  manual_seed(2);
  Mixed dst;
  dst.load_state_dict(src.state_dict());
  for (auto& [name, t] : src.state_dict()) {
    EXPECT_EQ(fingerprint(t), fingerprint(dst.state_dict().at(name))) << name;
  }
  // Missing, unexpected and mismatched keys in one error, nothing copied.
  manual_seed(3);
  Mixed other;
  const uint64_t before = fingerprint(other.a->weight);
  nn::StateDict bad = src.state_dict();
  nn::StateDict broken;
  for (auto& [name, t] : bad) {
    if (name == "b.0.bias") {
      continue; // missing
    }
    broken.insert(name, name == "a.weight" ? zeros({2, 2}) : t);
  }
  broken.insert("b.5.weight", zeros({1}));
  broken.insert("extra", zeros({1}));
  try {
    other.load_state_dict(broken);
    ADD_FAILURE();
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(
        msg.find("Error(s) in loading state_dict for Mixed:\n\tMissing "
                 "key(s) in state_dict: \"b.0.bias\". \n\tUnexpected key(s) "
                 "in state_dict: \"extra\", \"b.5.weight\". \n\tsize mismatch "
                 "for a.weight: copying a param with shape torch.Size([2, "
                 "2]) from checkpoint, the shape in current model is "
                 "torch.Size([3, 2])."),
        std::string::npos)
        << msg;
  }
  EXPECT_EQ(fingerprint(other.a->weight), before);
  // Non-strict: reports the keys, still refuses a shape mismatch.
  EXPECT_THROW(other.load_state_dict(broken, false), ValueError);
  nn::StateDict partial;
  partial.insert("p", full({4}, 5.0f));
  partial.insert("nope", zeros({1}));
  auto r = other.load_state_dict(partial, false);
  EXPECT_EQ(r.unexpected_keys, std::vector<std::string>{"nope"});
  EXPECT_EQ(r.missing_keys.size(), 7u);
  EXPECT_EQ(other.p[0].item<float>(), 5.0f);
}

TEST(NnModule, ModuleDictKeepsInsertionOrder) {
  manual_seed(0);
  nn::ModuleDict d;
  d->insert("enc", nn::Linear(4, 3));
  d->insert("act", nn::ReLU());
  d->insert("dec", nn::Linear(3, 4));
  EXPECT_EQ(d->keys(), (std::vector<std::string>{"enc", "act", "dec"}));
  EXPECT_TRUE(d->contains("dec"));
  EXPECT_EQ(
      names(d->named_parameters()),
      (std::vector<std::string>{
          "enc.weight", "enc.bias", "dec.weight", "dec.bias"}));
  EXPECT_EQ(d["act"]->type_name(), "ReLU");
  EXPECT_THROW(d["nope"], KeyError);
  // Inserting an existing key replaces its module in place (LibTorch's).
  d->insert("enc", nn::Tanh());
  EXPECT_EQ(d->keys(), (std::vector<std::string>{"enc", "act", "dec"}));
  EXPECT_EQ(d["enc"]->name(), "Tanh");
  EXPECT_EQ(d->named_children()[0].value()->name(), "Tanh");
  EXPECT_EQ(
      names(d->named_parameters()),
      (std::vector<std::string>{"dec.weight", "dec.bias"}));
  EXPECT_EQ(d->pop("act")->name(), "ReLU");
  EXPECT_EQ(d->keys(), (std::vector<std::string>{"enc", "dec"}));
  EXPECT_THROW(d->pop("act"), KeyError);
}

TEST(NnModule, ModesGradsAndDtype) {
  manual_seed(0);
  nn::Sequential m(nn::Linear(4, 4), nn::Dropout(0.5));
  Tensor x = ones({2, 4});
  EXPECT_TRUE(m->is_training());
  m->eval();
  EXPECT_FALSE(m[1]->is_training());
  const uint64_t a = fingerprint(m->forward(x)), b = fingerprint(m->forward(x));
  EXPECT_EQ(a, b); // no dropout in eval
  m->train();
  EXPECT_TRUE(m[1]->is_training());
  m->forward(x).sum().backward();
  Tensor w = m->parameters()[0];
  ASSERT_TRUE(w.grad().defined());
  // LibTorch 1.13's default zeroes the gradients in place.
  m->zero_grad();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().abs().sum().item<float>(), 0.0f);
  m->zero_grad(/*set_to_none=*/true);
  EXPECT_FALSE(w.grad().defined());
  // to(float64) converts in place: the handle taken before sees it.
  m->to(kFloat64);
  EXPECT_EQ(w.dtype(), kFloat64);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(m->forward(x.to(kFloat64)).dtype(), kFloat64);
  int visited = 0;
  m->apply([&](nn::Module&) { ++visited; });
  EXPECT_EQ(visited, 3);
}

TEST(NnModule, OptimizerSkipsParametersWithoutGradAndValidates) {
  manual_seed(0);
  nn::Linear a(3, 2), b(3, 2);
  optim::SGD opt(
      {{a->parameters(), optim::SGDOptions(0.1)},
       {b->parameters(), optim::SGDOptions(0.5).weight_decay(0.1)}});
  const uint64_t bw = fingerprint(b->weight);
  a->forward(ones({1, 3})).sum().backward();
  opt.step();
  EXPECT_EQ(fingerprint(b->weight), bw); // no grad: no decay either
  EXPECT_EQ(opt.lr(1), 0.5);
  EXPECT_THROW(optim::SGD({a->weight}, optim::SGDOptions(-1)), ValueError);
  EXPECT_THROW(
      optim::SGD({a->weight}, optim::SGDOptions(0.1).nesterov(true)),
      ValueError);
  EXPECT_THROW(
      optim::Adam({a->weight}, optim::AdamOptions().betas(1.0, 0.9)),
      ValueError);
  Tensor nonleaf = a->weight.mul(2.0);
  EXPECT_THROW(optim::SGD({nonleaf}, optim::SGDOptions(0.1)), ValueError);
}

// add_param_group checks a group as the constructors do, and Adagrad gives
// the added parameters their state (sum from initial_accumulator_value).
TEST(NnModule, AddParamGroupChecksAndInitializes) {
  manual_seed(0);
  nn::Linear a(3, 2), b(3, 2);
  optim::SGD sgd(a->parameters(), optim::SGDOptions(0.1));
  EXPECT_THROW(
      sgd.add_param_group({b->parameters(), optim::SGDOptions(-1)}),
      ValueError);
  EXPECT_EQ(sgd.num_groups(), 1u);
  sgd.add_param_group({b->parameters(), optim::SGDOptions(0.5)});
  EXPECT_EQ(sgd.num_groups(), 2u);
  EXPECT_EQ(sgd.lr(1), 0.5);

  optim::Adagrad ada({{a->parameters(), optim::AdagradOptions(0.1)}});
  EXPECT_EQ(ada.param_state(b->weight).size(), 0u);
  ada.add_param_group(
      {b->parameters(),
       optim::AdagradOptions(0.1).initial_accumulator_value(2)});
  auto st = ada.param_state(b->weight);
  ASSERT_EQ(st.count("sum"), 1u);
  EXPECT_EQ(st["sum"].max().item<float>(), 2.0f);
  EXPECT_EQ(st["step"].item<float>(), 0.0f);
  b->forward(ones({1, 3})).sum().backward();
  ada.step();
  EXPECT_EQ(ada.param_state(b->weight)["step"].item<float>(), 1.0f);
  // The state tensors are the optimizer's own, not copies.
  EXPECT_TRUE(ada.param_state(b->weight)["sum"].is_same(
      ada.param_state(b->weight)["sum"]));

  optim::RMSprop rms({{a->parameters(), optim::RMSpropOptions(0.01)}});
  EXPECT_THROW(
      rms.add_param_group(
          {b->parameters(), optim::RMSpropOptions(0.01).alpha(-1)}),
      ValueError);
}

// The path a module shows in traces: its registration names from the root,
// kept through moves of its parents, cleared when a parent dies first.
TEST(NnModule, TracePathsFollowRegistrationMovesAndLifetimes) {
  struct Block : nn::Module {
    Block() : Module("Block") {}
    nn::Linear fc = register_module("fc", nn::Linear(2, 2));
    Tensor forward(const Tensor& x) const {
      return fc->forward(x);
    }
  };
  nn::Sequential inner(nn::Linear(2, 2), Block());
  nn::Sequential outer;
  nn::Sequential moved = outer->register_module("features", std::move(inner));
  const auto& block = dynamic_cast<const Block&>(*moved->children()[1]);
  EXPECT_EQ(block.fc->trace_module()->path, "features.1.fc");
  EXPECT_EQ(block.fc->trace_module()->type, "Linear");
  EXPECT_EQ(outer->trace_module()->path, "");
  // Moving the root keeps its children's paths.
  nn::Sequential outer2 = std::move(outer);
  EXPECT_EQ(block.fc->trace_module()->path, "features.1.fc");
  // A child held elsewhere outlives its parent: a root again.
  auto shared = std::make_shared<nn::LinearImpl>(2, 2);
  {
    nn::Sequential holder;
    holder->register_module("kept", shared);
    EXPECT_EQ(shared->trace_module()->path, "kept");
  }
  EXPECT_EQ(shared->trace_module()->path, "");
  // Traced ops carry the path of the module they run in.
  std::vector<std::string> seen;
  const Tensor input = ditto::ones({1, 2});
  trace::set_hook([&](const trace::Event& e) {
    const trace::ModuleRef& m = trace::current_module();
    seen.push_back(std::string(e.op) + "@" + (m ? m->path : "-"));
  });
  (void)moved->forward(input);
  trace::set_hook({});
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0], "linear@features.0");
  EXPECT_EQ(seen[1], "linear@features.1.fc");
}

} // namespace
namespace F = ditto::nn::functional;
using test::error_of;

// ---- LibTorch's front end (issue 36): what tests/libtorch/coverage.cpp
// compiles, checked here for its errors and edge cases.

TEST(LibTorchFrontEnd, EmptyHoldersAndWrongTypesAreClearErrors) {
  nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_NE(
      error_of<ValueError>([&] {
        empty->weight.sizes();
      }).find("Accessing empty ModuleHolder"),
      std::string::npos);
  nn::AnyModule any(nn::Linear(3, 2));
  // forward takes one Tensor: two arguments, or an int, are TypeErrors
  // naming the module.
  EXPECT_NE(
      error_of<TypeError>([&] {
        any.forward(ones({1, 3}), ones({1, 3}));
      }).find("Linear's forward() expects 1 argument(s), but received 2"),
      std::string::npos);
  EXPECT_NE(
      error_of<TypeError>([&] { any.forward(int64_t(3)); }).find("AnyValue"),
      std::string::npos);
  EXPECT_THROW(any.ptr<nn::ReLUImpl>(), TypeError);
  nn::Sequential seq(nn::Linear(3, 2));
  EXPECT_THROW(seq->ptr(1), IndexError);
  EXPECT_THROW(nn::Sequential()->forward(ones({1, 3})), ValueError);
  EXPECT_THROW(seq->unregister_module("7"), KeyError);
  // A failed registration changes nothing.
  EXPECT_THROW(seq->register_module("0", nn::ReLU()), ValueError);
  EXPECT_EQ(seq->children().size(), 1u);
}

TEST(LibTorchFrontEnd, OrderedDictKeepsOrderAndRefusesBadKeys) {
  OrderedDict<std::string, int> d("Parameter");
  d.insert("b", 1);
  d.insert("a", 2);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_NE(
      error_of<ValueError>([&] {
        d.insert("a", 3);
      }).find("Parameter 'a' already defined"),
      std::string::npos);
  EXPECT_EQ(d["a"], 2); // unchanged
  EXPECT_NE(
      error_of<KeyError>([&] { d["c"]; }).find("Parameter 'c' is not defined"),
      std::string::npos);
  EXPECT_THROW(d[size_t(2)], IndexError);
  d.erase("b");
  EXPECT_EQ(d[size_t(0)].key(), "a");
  EXPECT_EQ(d["a"], 2); // the index follows the erase
  d.insert("b", 4);
  EXPECT_EQ(d["b"], 4);
  EXPECT_THROW(d.erase("zz"), KeyError);
  OrderedDict<std::string, int> empty;
  EXPECT_THROW(empty.front(), IndexError);
  // Items read as pairs too.
  auto [k, v] = d[size_t(1)];
  EXPECT_EQ(k, "b");
  EXPECT_EQ(v, 4);
}

TEST(LibTorchFrontEnd, HoldersDrawAsTheModulesTheyHold) {
  // Building through holders, register_module and named Sequentials draws
  // the same bits as the layers built in the same order.
  manual_seed(3);
  nn::Linear a(4, 3), b(3, 2);
  const std::vector<uint64_t> want = [&] {
    auto v = prints(*a);
    auto w = prints(*b);
    v.insert(v.end(), w.begin(), w.end());
    return v;
  }();
  manual_seed(3);
  nn::Sequential named(
      {{"first", nn::Linear(4, 3)}, {"second", nn::Linear(3, 2)}});
  EXPECT_EQ(prints(*named), want);
  EXPECT_EQ(
      named->named_parameters().keys(),
      (std::vector<std::string>{
          "first.weight", "first.bias", "second.weight", "second.bias"}));
  // insert keeps the children in the modules' order.
  named->insert(1, "act", nn::ReLU());
  EXPECT_EQ(
      named->named_children().keys(),
      (std::vector<std::string>{"first", "act", "second"}));
  EXPECT_EQ(named->forward(ones({2, 4})).sizes(), (Shape{2, 2}));
}

TEST(LibTorchFrontEnd, IntArgumentsExpandAndCudaIsRefused) {
  manual_seed(0);
  const Tensor x = randn({1, 2, 6, 6});
  EXPECT_TRUE(equal(F::max_pool2d(x, 2), F::max_pool2d(x, {2, 2})));
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).stride(2).padding(1));
  EXPECT_EQ(conv->options.kernel_size(), (IntList{3}));
  EXPECT_EQ(conv(x).sizes(), (Shape{1, 3, 3, 3}));
  EXPECT_FALSE(cuda::is_available());
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_EQ(Device(kCUDA).str(), "cuda:0");
  EXPECT_NE(
      error_of<DeviceError>([] {
        zeros({2}, kFloat32, Device(kCUDA));
      }).find("no CUDA backend"),
      std::string::npos);
  Tensor y = ones({2});
  EXPECT_THROW(y.to(Device(kCUDA)), DeviceError);
  EXPECT_TRUE(y.is_cpu());
  EXPECT_EQ(kLong, kInt64);
  EXPECT_EQ(kFloat, kFloat32);
  EXPECT_EQ(kDouble, kFloat64);
  EXPECT_EQ(kInt, kInt32);
  EXPECT_EQ(kByte, kUInt8);
}

TEST(LibTorchFrontEnd, TopLevelNllLossTakesLibTorchsArguments) {
  manual_seed(0);
  const Tensor logp = F::log_softmax(randn({4, 3}), 1);
  const Tensor t = tensor(std::vector<int64_t>{0, 2, 1, 2});
  const Tensor w = tensor(std::vector<float>{1.0f, 2.0f, 0.5f});
  EXPECT_TRUE(equal(ditto::nll_loss(logp, t), F::nll_loss(logp, t)));
  EXPECT_TRUE(equal(
      ditto::nll_loss(logp, t, w, Reduction::Sum, 2),
      F::nll_loss(
          logp,
          t,
          F::NLLLossOptions()
              .weight(w)
              .reduction(F::Reduction::Sum)
              .ignore_index(2))));
  EXPECT_NE(
      error_of<ValueError>([&] {
        ditto::nll_loss(logp, t, {}, 3);
      }).find("got 3"),
      std::string::npos);
}

TEST(LibTorchFrontEnd, TensorOptionsAndBracedTensorsFollowLibTorch) {
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat32);
  EXPECT_EQ(tensor({1, 2}).dtype(), kInt64);
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(tensor(3.5).dim(), 0);
  EXPECT_EQ(tensor(int64_t(3)).dtype(), kInt64);
  EXPECT_EQ(tensor({{1.0, 2.0}, {3.0, 4.0}}).sizes(), (Shape{2, 2}));
  EXPECT_THROW(tensor({{1.0, 2.0}, {3.0}}), ValueError);
  // The typed forms keep their type.
  EXPECT_EQ(tensor<double>({1.0, 2.0}).dtype(), kFloat64);
  EXPECT_EQ(tensor(std::vector<double>{1.0}).dtype(), kFloat64);
  const Tensor z = zeros({2, 3}, dtype(kFloat64).requires_grad(true));
  EXPECT_EQ(z.dtype(), kFloat64);
  EXPECT_TRUE(z.requires_grad());
  EXPECT_FALSE(zeros({2}, kFloat32).requires_grad());
  EXPECT_EQ(ones({2}, kLong).dtype(), kInt64);
  EXPECT_EQ(randint(0, 5, {3}, TensorOptions()).dtype(), kInt64);
  EXPECT_EQ(full({2}, 3, TensorOptions()).dtype(), kInt64);
  EXPECT_EQ(arange(0, 4, TensorOptions()).dtype(), kInt64);
  EXPECT_EQ(empty({1}, z.options()).dtype(), kFloat64);
  EXPECT_FALSE(z.options().requires_grad());
  std::ostringstream os;
  os << dtype(kFloat64).requires_grad(true);
  EXPECT_EQ(
      os.str(), "TensorOptions(dtype=float64, device=cpu, requires_grad=true)");
  // The same draws as the Dtype forms.
  manual_seed(1);
  const Tensor a = randn({4}, requires_grad());
  manual_seed(1);
  EXPECT_TRUE(equal(a.detach(), randn({4})));
  EXPECT_TRUE(a.requires_grad());
}

TEST(LibTorchFrontEnd, LossModulesAreTheFunctionalLosses) {
  manual_seed(2);
  const Tensor x = randn({5, 4}), y = randn({5, 4});
  const Tensor t = tensor({0, 3, 1, 2, 3});
  EXPECT_TRUE(equal(nn::MSELoss()(x, y), F::mse_loss(x, y)));
  EXPECT_TRUE(equal(
      nn::MSELoss(nn::MSELossOptions(kSum))(x, y),
      F::mse_loss(x, y, F::Reduction::Sum)));
  EXPECT_TRUE(
      equal(nn::L1Loss(kNone)(x, y), F::l1_loss(x, y, F::Reduction::None)));
  EXPECT_TRUE(equal(
      nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(x, y),
      F::smooth_l1_loss(x, y, F::Reduction::Mean, 0.5)));
  const Tensor w = tensor({1.0, 2.0, 0.5, 1.5});
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(w));
  EXPECT_TRUE(equal(
      ce(x, t), F::cross_entropy(x, t, F::CrossEntropyOptions().weight(w))));
  EXPECT_EQ(ce->named_buffers().keys(), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(ce->repr(), "CrossEntropyLoss()");
  EXPECT_TRUE(equal(
      nn::NLLLoss()(F::log_softmax(x, 1), t), nn::CrossEntropyLoss()(x, t)));
  const Tensor p = rand({5, 4});
  EXPECT_TRUE(equal(
      nn::BCEWithLogitsLoss()(x, p),
      F::binary_cross_entropy_with_logits(x, p)));
}

struct Scale : autograd::Function<Scale> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double c) {
    ctx->saved_data["c"] = c;
    ctx->save_for_backward({x});
    return x * c;
  }
  static autograd::variable_list backward(
      autograd::AutogradContext* ctx,
      autograd::variable_list g) {
    EXPECT_TRUE(ctx->needs_input_grad(0));
    EXPECT_FALSE(ctx->needs_input_grad(1));
    EXPECT_EQ(ctx->get_saved_variables().size(), 1u);
    return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};
  }
};

struct TwoOut : autograd::Function<TwoOut> {
  static autograd::variable_list forward(
      autograd::AutogradContext*,
      Tensor a,
      Tensor b) {
    return {a * 2, b * 3};
  }
  static autograd::variable_list backward(
      autograd::AutogradContext*,
      autograd::variable_list g) {
    // The second output got no gradient: it arrives as zeros.
    EXPECT_TRUE(g[1].defined());
    return {g[0] * 2, g[1] * 3};
  }
};

struct WrongCount : autograd::Function<WrongCount> {
  static Tensor forward(autograd::AutogradContext*, Tensor a) {
    return a * 1;
  }
  static autograd::variable_list backward(
      autograd::AutogradContext*,
      autograd::variable_list g) {
    return {g[0], g[0]};
  }
};

// LibTorch's sort-with-indices pattern: the second output is marked.
struct WithMask : autograd::Function<WithMask> {
  static autograd::variable_list forward(
      autograd::AutogradContext* ctx,
      Tensor a) {
    Tensor mask = gt(a, 0.0).to(a.dtype());
    ctx->mark_non_differentiable({mask});
    return {a * 2, mask};
  }
  static autograd::variable_list backward(
      autograd::AutogradContext*,
      autograd::variable_list g) {
    EXPECT_EQ(g[1].sum().item<double>(), 0.0);
    return {g[0] * 2};
  }
};

struct MarksAStranger : autograd::Function<MarksAStranger> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor a) {
    ctx->mark_non_differentiable({a * 3});
    return a * 2;
  }
  static autograd::variable_list backward(
      autograd::AutogradContext*,
      autograd::variable_list g) {
    return {g[0]};
  }
};

TEST(LibTorchFrontEnd, MarkNonDifferentiable) {
  Tensor a = tensor({-1.0, 2.0}).requires_grad_();
  auto outs = WithMask::apply(a);
  EXPECT_TRUE(outs[0].requires_grad());
  EXPECT_FALSE(outs[1].requires_grad());
  EXPECT_TRUE(equal(outs[1], tensor({0.0, 1.0})));
  (outs[0] * outs[1]).sum().backward();
  EXPECT_TRUE(equal(a.grad(), tensor({0.0, 2.0})));
  EXPECT_NE(
      error_of<ValueError>([&] {
        MarksAStranger::apply(a);
      }).find("not one of the outputs"),
      std::string::npos);
}

// LibTorch's in-place Function: doubles its input and marks it dirty.
struct DoubleInPlace : autograd::Function<DoubleInPlace> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x, bool keep) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    return keep ? x : x * 1.0;
  }
  static autograd::variable_list backward(
      autograd::AutogradContext*,
      autograd::variable_list g) {
    return {g[0] * 2, Tensor()};
  }
};

struct DirtiesAStranger : autograd::Function<DirtiesAStranger> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x) {
    Tensor y = x * 3.0;
    ctx->mark_dirty({y});
    return y;
  }
  static autograd::variable_list backward(
      autograd::AutogradContext*,
      autograd::variable_list g) {
    return {g[0]};
  }
};

TEST(LibTorchFrontEnd, MarkDirty) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = a * 3.0; // not a leaf
  Tensor c = DoubleInPlace::apply(b, true);
  // The input itself comes back, its history now the Function's node.
  EXPECT_EQ(c.impl(), b.impl());
  EXPECT_TRUE(equal(b.detach(), tensor({6.0, 12.0})));
  const std::string op =
      autograd::function_detail::function_op_name(typeid(DoubleInPlace).name());
  EXPECT_EQ(b.grad_fn()->name(), "torch::autograd::CppNode<" + op + ">");
  // Its gradient flows through the Function, then b's old history.
  (b * b).sum().backward();
  EXPECT_TRUE(equal(a.grad(), tensor({72.0, 144.0})));
  // A leaf that requires grad is refused (forward has run, as in LibTorch).
  Tensor leaf = tensor({1.0}).requires_grad_();
  EXPECT_NE(
      error_of<ValueError>([&] {
        DoubleInPlace::apply(leaf, true);
      }).find("a leaf Variable that requires grad"),
      std::string::npos);
  {
    autograd::NoGradGuard no_grad; // allowed, as any in-place op
    Tensor out = DoubleInPlace::apply(leaf, true);
    EXPECT_EQ(out.impl(), leaf.impl());
  }
  // Marked but not returned, and marked but not an input.
  Tensor d = tensor({1.0}).requires_grad_() * 1.0;
  EXPECT_NE(
      error_of<ValueError>([&] {
        DoubleInPlace::apply(d, false);
      }).find("were not returned as output"),
      std::string::npos);
  EXPECT_NE(
      error_of<ValueError>([&] {
        DirtiesAStranger::apply(d);
      }).find("not one of forward's tensor arguments"),
      std::string::npos);
}

TEST(LibTorchFrontEnd, CustomFunctionsRunAsOneOpEach) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = Scale::apply(x, 2.5);
  y.sum().backward();
  EXPECT_TRUE(equal(x.grad(), tensor({2.5, 2.5})));
  // One record per class, named after it; its node is LibTorch's CppNode<T>.
  const std::string op =
      autograd::function_detail::function_op_name(typeid(Scale).name());
  EXPECT_NE(find_op_record(op), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "torch::autograd::CppNode<" + op + ">");
  Tensor a = tensor({1.0}).requires_grad_(), b = tensor({1.0}).requires_grad_();
  auto outs = TwoOut::apply(a, b);
  outs[0].sum().backward();
  EXPECT_TRUE(equal(a.grad(), tensor({2.0})));
  EXPECT_TRUE(equal(b.grad(), tensor({0.0})));
  Tensor c = tensor({1.0}).requires_grad_();
  EXPECT_NE(
      error_of<ValueError>([&] {
        WrongCount::apply(c).sum().backward();
      }).find("expected 1, got 2"),
      std::string::npos);
  autograd::IValue v = 2;
  EXPECT_EQ(v.toDouble(), 2.0);
  EXPECT_NE(
      error_of<TypeError>([&] { v.toTensor(); }).find("expected Tensor"),
      std::string::npos);
}

TEST(LibTorchFrontEnd, SaveAndLoadWriteSafetensorsAndFailWithoutChanges) {
  const std::string dir =
      testing::TempDir() + "/ditto_libtorch_save_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  manual_seed(0);
  nn::Sequential a(nn::Linear(3, 2), nn::BatchNorm1d(2));
  save(a, dir + "/a.pt");
  // The file is the state_dict, as safetensors (which orders its tensors by
  // dtype, then name).
  auto file_keys = io::load_safetensors(dir + "/a.pt").tensors.keys();
  auto state_keys = a->state_dict().keys();
  std::sort(file_keys.begin(), file_keys.end());
  std::sort(state_keys.begin(), state_keys.end());
  EXPECT_EQ(file_keys, state_keys);
  nn::Sequential b(nn::Linear(3, 2), nn::BatchNorm1d(2));
  load(b, dir + "/a.pt");
  EXPECT_TRUE(equal(b->parameters()[0], a->parameters()[0]));
  // A model the file does not fit: a ValueError, nothing copied.
  nn::Sequential c(nn::Linear(3, 2), nn::Linear(2, 2));
  const Tensor before = c->parameters()[0].clone();
  EXPECT_THROW(load(c, dir + "/a.pt"), ValueError);
  EXPECT_TRUE(equal(c->parameters()[0], before));
  std::vector<Tensor> ts = {randn({2}), tensor({1, 2})};
  save(ts, dir + "/ts.pt");
  std::vector<Tensor> back;
  load(back, dir + "/ts.pt");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(equal(back[1], ts[1]));
  Tensor one;
  EXPECT_THROW(load(one, dir + "/ts.pt"), ValueError);
  EXPECT_THROW(load(one, dir + "/missing.pt"), Error);
  serialize::InputArchive in;
  in.load_from(dir + "/ts.pt");
  EXPECT_THROW(in.read("9", one), KeyError);
  std::filesystem::remove_all(dir);
}

// What LibTorch 1.13 does, from tests/libtorch/gen_behaviour.cpp (built
// against libtorch-dev): ditto's C++ front end does the same.
TEST(LibTorchFrontEnd, BehaviourIsLibTorchs) {
  std::ifstream in(
      std::string(DITTO_TEST_DATA_DIR) + "/libtorch/behaviour.json");
  const auto j = nlohmann::json::parse(in);
  Tensor p = zeros({1}, requires_grad());
  optim::SGD opt({p}, optim::SGDOptions(1.0));
  optim::StepLR sched(opt, /*step_size=*/3, /*gamma=*/0.5);
  std::vector<double> lrs;
  for (int i = 0; i < 8; ++i) {
    lrs.push_back(opt.lr(0));
    opt.step();
    sched.step();
  }
  EXPECT_EQ(lrs, j["step_lr_3_0.5"].get<std::vector<double>>());
  // Python's stepping, one step earlier, on request.
  Tensor q = zeros({1}, requires_grad());
  optim::SGD opt_py({q}, optim::SGDOptions(1.0));
  optim::StepLR py(opt_py, 3, 0.5, optim::StepLRSteps::kPython);
  std::vector<double> py_lrs;
  for (int i = 0; i < 8; ++i) {
    py_lrs.push_back(opt_py.lr(0));
    opt_py.step();
    py.step();
  }
  EXPECT_EQ(py_lrs, (std::vector<double>{1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25}));

  nn::Linear lin(2, 2);
  lin(ones({1, 2})).sum().backward();
  lin->zero_grad();
  EXPECT_EQ(
      lin->weight.grad().defined(), j["module_zero_grad_defined"].get<bool>());
  EXPECT_EQ(
      lin->weight.grad().abs().sum().item<double>(),
      j["module_zero_grad_abs_sum"].get<double>());
  lin(ones({1, 2})).sum().backward();
  optim::SGD opt2(lin->parameters(), optim::SGDOptions(0.1));
  opt2.zero_grad();
  EXPECT_EQ(
      lin->weight.grad().defined(),
      j["optimizer_zero_grad_defined"].get<bool>());

  nn::ModuleList tree(
      nn::Linear(1, 1), nn::ModuleList(nn::ReLU(), nn::Tanh()), nn::Sigmoid());
  std::vector<std::string> order;
  tree->apply([&](const std::string& name, nn::Module&) {
    order.push_back(name.empty() ? "<root>" : name);
  });
  EXPECT_EQ(order, j["apply_order"].get<std::vector<std::string>>());
}

} // namespace ditto

namespace ditto {
namespace {

// norm, all, any and binary_cross_entropy: values PyTorch 1.13 prints for
// the same calls (torch.tensor([[3., -4.], [0., 0.]]).norm(...) ...).
TEST(LibTorchFrontEnd, NormAllAnyAndBinaryCrossEntropy) {
  Tensor x = tensor({{3.0, -4.0}, {0.0, 0.0}}).requires_grad_(true);
  EXPECT_EQ(x.norm().item<float>(), 5.0f);
  EXPECT_EQ(x.norm(1).item<float>(), 7.0f);
  EXPECT_EQ(
      x.norm(std::numeric_limits<double>::infinity()).item<float>(), 4.0f);
  EXPECT_EQ(x.norm(0).item<float>(), 2.0f);
  Tensor rows = x.norm(2, 1);
  EXPECT_EQ(rows.sizes(), (IntList{2}));
  EXPECT_EQ(rows[0].item<float>(), 5.0f);
  EXPECT_EQ(x.norm(2, 1, true).sizes(), (IntList{2, 1}));
  // d|x|/dx = x / |x|, and 0 for the zero row (PyTorch's rule), not NaN.
  rows.sum().backward();
  std::vector<float> g(
      x.grad().data_ptr<float>(), x.grad().data_ptr<float>() + 4);
  EXPECT_EQ(g, (std::vector<float>{0.6f, -0.8f, 0.0f, 0.0f}));
  EXPECT_THROW(x.norm(-1), ValueError);
  EXPECT_THROW(tensor({1, 2}).norm(), TypeError);

  Tensor b = tensor({{1.0, 0.0}, {std::nan(""), 2.0}});
  EXPECT_FALSE(b.all().item<bool>());
  EXPECT_TRUE(b.any().item<bool>());
  EXPECT_EQ(b.all().dtype(), kBool);
  Tensor per_row = b.all(1);
  EXPECT_FALSE(per_row[0].item<bool>());
  EXPECT_TRUE(per_row[1].item<bool>()); // NaN is nonzero
  EXPECT_EQ(b.any(0, true).sizes(), (IntList{1, 2}));
  EXPECT_EQ(tensor<uint8_t>({1, 0}).any().dtype(), kUInt8);
  EXPECT_TRUE(zeros({0}).all().item<bool>());
  EXPECT_FALSE(zeros({0}).any().item<bool>());

  // -(t log p + (1 - t) log(1 - p)): PyTorch 1.13 gives 0.3669845461845398
  // (mean) and 0.7339690923690796 (sum) for p = [0.8, 0.4], t = [1, 0]; a 0
  // or 1 gives a finite loss (100).
  Tensor p = tensor({0.8, 0.4});
  Tensor t = tensor({1.0, 0.0});
  EXPECT_NEAR(
      nn::functional::binary_cross_entropy(p, t).item<float>(),
      0.3669845461845398,
      1e-7);
  nn::BCELoss sum_loss(nn::BCELossOptions().reduction(kSum));
  EXPECT_NEAR(sum_loss(p, t).item<float>(), 0.7339690923690796, 1e-7);
  EXPECT_EQ(
      nn::functional::binary_cross_entropy(tensor({0.0}), tensor({1.0}))
          .item<float>(),
      100.0f);
  EXPECT_NE(
      error_of<ValueError>([] {
        nn::functional::binary_cross_entropy(tensor({1.5}), tensor({1.0}));
      }).find("between 0 and 1"),
      std::string::npos);
}

} // namespace
} // namespace ditto

namespace ditto {
namespace {

// LibTorch 1.13's printed forms, from tests/libtorch/gen_print.cpp built
// against libtorch-dev (the same tensors, built the same way).
TEST(LibTorchFrontEnd, PrintIsLibTorchs) {
  std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/libtorch/print.json");
  const nlohmann::json want = nlohmann::json::parse(in);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto floats = [](std::vector<double> v, Shape shape) {
    return tensor<double>(v, shape).to(kFloat32);
  };
  const std::vector<std::pair<std::string, Tensor>> cases = {
      {"float_vector", floats({1.0, 2.5, -3.25}, {3})},
      {"long_matrix", arange(6).reshape({2, 3})},
      {"mixed_magnitudes", floats({0.001, 123.456, -5.5, 1e-7}, {2, 2})},
      {"small_scale", floats({1e-5, 2e-5, 3.5e-5}, {3})},
      {"large_scale", floats({123456.7, 234567.8, 1.5}, {3})},
      {"scalar", tensor(3.5)},
      {"bools", tensor({true, false, true})},
      {"three_dims", arange(24).reshape({2, 3, 4}).to(kFloat32) / 7},
      {"four_dims", arange(16).reshape({2, 2, 2, 2})},
      {"wide", arange(60).reshape({2, 30}).to(kFloat32) / 3},
      {"empty", zeros({0})},
      {"empty_matrix", zeros({0, 3})},
      {"nonfinite", floats({nan, inf, 1.5, -inf}, {4})},
      {"big_ints", tensor<int64_t>({12345678901, 1})},
      {"doubles", tensor<double>({1.0, -2.0})},
      {"bytes", tensor<uint8_t>({1, 200})},
      {"ints", tensor<int32_t>({-7, 70000})},
      {"scaled_matrix", floats({1e-6, 2e-6, -3e-6, 4.5e-6}, {2, 2})},
  };
  ASSERT_EQ(want.size(), cases.size());
  // DITTO_PRINT_STYLE decides until set_print_style is called.
  ASSERT_EQ(setenv("DITTO_PRINT_STYLE", "libtorch", 1), 0);
  for (const auto& [name, t] : cases) {
    std::ostringstream os;
    // The stream's own format comes back after (boolalpha does not change
    // how numbers print; a precision would, in LibTorch's too).
    os << std::boolalpha;
    os << t;
    EXPECT_EQ(os.str(), want.at(name).get<std::string>()) << name;
    std::ostringstream direct;
    print(direct, t);
    EXPECT_EQ(direct.str(), os.str()) << name;
    EXPECT_TRUE(os.flags() & std::ios_base::boolalpha);
    EXPECT_FALSE(os.flags() & std::ios_base::fixed);
  }
  ASSERT_EQ(setenv("DITTO_PRINT_STYLE", "fortran", 1), 0);
  EXPECT_NE(
      error_of<ValueError>([] {
        (void)print_style();
      }).find("DITTO_PRINT_STYLE"),
      std::string::npos);
  ASSERT_EQ(unsetenv("DITTO_PRINT_STYLE"), 0);
  std::ostringstream python;
  python << tensor({1.0, 2.5});
  EXPECT_EQ(python.str(), "tensor([1.0000, 2.5000])");
  set_print_style(PrintStyle::kLibTorch);
  std::ostringstream libtorch;
  libtorch << tensor({1.0, 2.5});
  EXPECT_EQ(libtorch.str(), " 1.0000\n 2.5000\n[ CPUFloatType{2} ]");
  set_print_style(PrintStyle::kPython);
  std::ostringstream undefined;
  print(undefined, Tensor());
  EXPECT_EQ(undefined.str(), "[ Tensor (undefined) ]");
  EXPECT_EQ(type_string(zeros({1}, kInt64)), "CPULongType");
}

} // namespace
} // namespace ditto

namespace torch = ditto;
#include "tests/libtorch/grad_fn_cases.h"

namespace ditto {
namespace {

// grad_fn()->name() as LibTorch 1.13 names the nodes (grad_fn.json, from
// tests/libtorch/gen_grad_fn.cpp), but for the ops ditto composes from
// others, whose names must still differ (so that the list stays true).
TEST(LibTorchFrontEnd, GradFnNamesAreLibTorchs) {
  std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/libtorch/grad_fn.json");
  const nlohmann::json want = nlohmann::json::parse(in);
  const auto cases = grad_fn_cases::cases();
  const auto composed = grad_fn_cases::composed();
  ASSERT_EQ(want.size(), cases.size() + 1);
  for (const auto& [expr, t] : cases) {
    ASSERT_TRUE(t.grad_fn()) << expr;
    const bool is_composed =
        std::find(composed.begin(), composed.end(), expr) != composed.end();
    if (is_composed) {
      EXPECT_NE(t.grad_fn()->name(), want.at(expr)) << expr;
    } else {
      EXPECT_EQ(t.grad_fn()->name(), want.at(expr)) << expr;
    }
  }
  Tensor x = ones({2}).requires_grad_();
  EXPECT_EQ(
      (x * x).grad_fn()->next_functions()[0].node->name(), want.at("leaf"));
  // The trace keeps ditto's op names.
  EXPECT_EQ((x * 2).grad_fn()->op_name(), "mul_backward");
}

// Tensor::print() and IntArrayRef print as LibTorch's (the forms checked
// against libtorch-dev by hand: "[CPUFloatType [3, 4]]").
TEST(LibTorchFrontEnd, TensorPrintAndIntArrayRef) {
  testing::internal::CaptureStdout();
  zeros({3, 4}).print();
  tensor(1.5).to(kFloat64).print();
  zeros({2}, kInt64).print();
  Tensor().print();
  EXPECT_EQ(
      testing::internal::GetCapturedStdout(),
      "[CPUFloatType [3, 4]]\n[CPUDoubleType []]\n[CPULongType [2]]\n"
      "[UndefinedTensor]\n");
  Tensor t = zeros({2, 3, 5});
  IntArrayRef sizes = t.sizes();
  std::ostringstream os;
  os << sizes << " " << sizes.slice(1) << " " << sizes.slice(1, 1);
  EXPECT_EQ(os.str(), "[2, 3, 5] [3, 5] [3]");
  EXPECT_TRUE(sizes == IntArrayRef({2, 3, 5}));
  EXPECT_FALSE(sizes.slice(1) == IntArrayRef({2, 3}));
  EXPECT_NE(
      error_of<IndexError>([&] { sizes.slice(2, 2); }).find("ArrayRef::slice"),
      std::string::npos);
}

} // namespace
} // namespace ditto
