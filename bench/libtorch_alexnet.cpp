// An AlexNet-sized model (torchvision's AlexNet with 10 classes: five
// convolutions from 11x11 stride 4 to 3x3 with up to 384 channels, three
// max pools, Linear 9216->4096->4096->10) trained with SGD momentum on
// random 224x224 images, in LibTorch's C++. One source built against ditto
// and, with -DEXAMPLE_WITH_LIBTORCH, against LibTorch 1.13; timed by
// bench/compare_libtorch_examples.py (make bench).
//   libtorch_alexnet BATCH STEPS THREADS
// prints each step's loss and the mean forward, backward and optimizer
// times of the steps after the first.
#ifdef EXAMPLE_WITH_LIBTORCH
#include <torch/torch.h>
#else
#include <ditto/ditto.h>
namespace torch = ditto;
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>

struct AlexNetImpl : torch::nn::Module {
  AlexNetImpl() {
    using namespace torch::nn;
    features = register_module(
        "features",
        Sequential(
            Conv2d(Conv2dOptions(3, 64, 11).stride(4).padding(2)),
            ReLU(),
            MaxPool2d(MaxPool2dOptions(3).stride(2)),
            Conv2d(Conv2dOptions(64, 192, 5).padding(2)),
            ReLU(),
            MaxPool2d(MaxPool2dOptions(3).stride(2)),
            Conv2d(Conv2dOptions(192, 384, 3).padding(1)),
            ReLU(),
            Conv2d(Conv2dOptions(384, 256, 3).padding(1)),
            ReLU(),
            Conv2d(Conv2dOptions(256, 256, 3).padding(1)),
            ReLU(),
            MaxPool2d(MaxPool2dOptions(3).stride(2))));
    classifier = register_module(
        "classifier",
        Sequential(
            Linear(256 * 6 * 6, 4096),
            ReLU(),
            Linear(4096, 4096),
            ReLU(),
            Linear(4096, 10)));
  }
  torch::Tensor forward(torch::Tensor x) {
    return classifier->forward(features->forward(x).flatten(1));
  }
  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE(AlexNet);

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 4;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  if (batch < 1 || steps < 2 || threads < 1) {
    std::fprintf(stderr, "usage: %s BATCH STEPS>=2 THREADS\n", argv[0]);
    return 2;
  }
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  AlexNet net;
  torch::optim::SGD opt(
      net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto x = torch::randn({batch, 3, 224, 224});
  auto y = torch::randint(0, 10, {batch}, torch::kLong);
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  double fwd = 0, bwd = 0, upd = 0;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = clock::now();
    opt.zero_grad();
    auto loss = torch::nll_loss(torch::log_softmax(net->forward(x), 1), y);
    const auto t1 = clock::now();
    loss.backward();
    const auto t2 = clock::now();
    opt.step();
    const auto t3 = clock::now();
    if (s > 0) {
      fwd += ms(t0, t1);
      bwd += ms(t1, t2);
      upd += ms(t2, t3);
    }
    std::printf("step %d loss %.6f\n", s, loss.item<float>());
  }
  const double n = steps - 1;
  std::printf(
      "ms per step: forward %.1f backward %.1f step %.1f total %.1f\n",
      fwd / n,
      bwd / n,
      upd / n,
      (fwd + bwd + upd) / n);
}
