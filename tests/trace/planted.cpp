// A program with a planted divergence, for the tests of `ditto verify`: a
// custom op (CustomOp), planted_noise, declared nondeterministic, whose
// backward adds noise that depends on the thread count. It sits in the module
// "1" (type Noisy) of a small model trained for three SGD steps.
//
//   planted            train; print the weights' fingerprint
//   planted crash      abort() after the first step
//   planted fail       exit with status 5 and a message
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ditto/ditto.h"

using namespace ditto;
namespace nn = ditto::nn;

namespace {

// y = x; dx = dy + 1e-3 * (threads - 1): a custom op (ditto/ops/custom.h)
// whose record declares the nondeterministic path, with no deterministic
// variant.
const CustomOp& planted_op() {
  static const CustomOp op(
      {.name = "planted_noise",
       .family = "custom",
       .callables = {"planted_noise(x)"},
       .nondeterministic =
           {{.entry = "planted_noise",
             .reason = "its backward adds noise that depends on the thread "
                       "count (a test fixture)",
             .has_deterministic_variant = false}},
       .samples =
           [](const SampleSpec& spec) {
             return std::vector<Sample>{
                 {"vector",
                  {ones({4}, spec.dtype)},
                  [](const std::vector<Tensor>& in) {
                    return planted_op()(in);
                  }}};
           }},
      [](CustomOpContext&, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0].clone()};
      },
      [](CustomOpContext&, const std::vector<Tensor>& g) {
        return std::vector<Tensor>{g[0] + 1e-3 * double(get_num_threads() - 1)};
      });
  return op;
}

Tensor planted_noise(const Tensor& x) {
  return planted_op()({x})[0];
}

struct Noisy : nn::Module {
  Noisy() : Module("Noisy") {}
  Tensor forward(const Tensor& x) const {
    nn::ForwardScope scope(*this);
    return planted_noise(x);
  }
};

} // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "fail") {
    std::fprintf(stderr, "planted: failing on purpose\n");
    return 5;
  }
  manual_seed(0);
  nn::Sequential model(
      nn::Linear(8, 16), Noisy(), nn::ReLU(), nn::Linear(16, 4));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  Tensor x = randn({32, 8});
  Tensor target = randint(0, 4, {32});
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    Tensor loss = nn::functional::cross_entropy(model->forward(x), target);
    loss.backward();
    opt.step();
    if (mode == "crash") {
      std::abort();
    }
  }
  uint64_t h = 0;
  for (const Tensor& p : model->parameters()) {
    h = h * 1000003u ^ fingerprint(p);
  }
  std::printf("fingerprint %016llx\n", static_cast<unsigned long long>(h));
  return 0;
}
