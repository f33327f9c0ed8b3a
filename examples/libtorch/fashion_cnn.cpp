// LibTorch's MNIST example (pytorch/examples, cpp/mnist) in LibTorch's own
// style, on Fashion-MNIST, with the tutorial's custom autograd function as
// the last layer. One source for both libraries: built against LibTorch
// with -DEXAMPLE_WITH_LIBTORCH, against ditto without (docs/libtorch.md).
//
//   fashion_cnn DATA_DIR [EPOCHS [THREADS [BATCHES]]]
//
// DATA_DIR holds the four IDX files (LibTorch reads them unpacked; ditto
// also reads the .gz files of Debian's dataset-fashion-mnist). BATCHES > 0
// stops each epoch after that many training batches. Seeded: both
// libraries print the same losses (to rounding), and ditto prints the same
// bits for any THREADS.

#ifdef EXAMPLE_WITH_LIBTORCH
#include <torch/torch.h>
#else
#include <ditto/ditto.h>
namespace torch = ditto;
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// The mean and standard deviation of Fashion-MNIST's training pixels.
constexpr double kMean = 0.2860;
constexpr double kStd = 0.3530;
constexpr int64_t kTrainBatchSize = 64;
constexpr int64_t kTestBatchSize = 1000;
constexpr int64_t kLogInterval = 50;

// y = x W^T + b with a hand-written backward (the custom autograd
// function tutorial's LinearFunction).
class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static torch::Tensor forward(
      torch::autograd::AutogradContext* ctx,
      torch::Tensor input,
      torch::Tensor weight,
      torch::Tensor bias) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    output += bias.unsqueeze(0).expand_as(output);
    return output;
  }

  static torch::autograd::tensor_list backward(
      torch::autograd::AutogradContext* ctx,
      torch::autograd::tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = grad_output.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

struct NetImpl : torch::nn::Module {
  NetImpl()
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
    x = LinearFunction::apply(x, fc2->weight, fc2->bias);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Net);

template <typename DataLoader>
void train(
    size_t epoch,
    Net& model,
    torch::Device device,
    DataLoader& data_loader,
    torch::optim::Optimizer& optimizer,
    int64_t max_batches) {
  model->train();
  int64_t batch_idx = 0;
  for (auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model->forward(data);
    auto loss = torch::nll_loss(output, targets);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
    if (batch_idx % kLogInterval == 0) {
      std::printf(
          "Train Epoch: %zu batch %4ld Loss: %.6f\n",
          epoch,
          long(batch_idx),
          loss.template item<float>());
    }
    if (++batch_idx == max_batches) {
      break;
    }
  }
}

template <typename DataLoader>
void test(
    Net& model,
    torch::Device device,
    DataLoader& data_loader,
    size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model->eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model->forward(data);
    test_loss += torch::nll_loss(
                     output,
                     targets,
                     /*weight=*/{},
                     torch::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }
  test_loss /= double(dataset_size);
  std::printf(
      "Test set: Average loss: %.6f | Accuracy: %.4f\n",
      test_loss,
      double(correct) / double(dataset_size));
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr, "usage: fashion_cnn DATA_DIR [EPOCHS [THREADS [BATCHES]]]\n");
    return 2;
  }
  const std::string root = argv[1];
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 1;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
  const int64_t max_batches = argc > 4 ? std::atoll(argv[4]) : 0;
  if (threads > 0) {
    torch::set_num_threads(threads);
  }
  torch::manual_seed(1);

  torch::Device device(torch::kCPU);
  if (torch::cuda::is_available()) {
    device = torch::Device(torch::kCUDA);
  }
  Net model;
  model->to(device);

  auto train_dataset =
      torch::data::datasets::MNIST(root)
          .map(torch::data::transforms::Normalize<>(kMean, kStd))
          .map(torch::data::transforms::Stack<>());
  auto train_loader = torch::data::make_data_loader(
      std::move(train_dataset),
      torch::data::DataLoaderOptions().batch_size(kTrainBatchSize).workers(2));

  auto test_dataset =
      torch::data::datasets::MNIST(
          root, torch::data::datasets::MNIST::Mode::kTest)
          .map(torch::data::transforms::Normalize<>(kMean, kStd))
          .map(torch::data::transforms::Stack<>());
  const size_t test_dataset_size = test_dataset.size().value();
  auto test_loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          std::move(test_dataset), kTestBatchSize);

  torch::optim::SGD optimizer(
      model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));

  for (int epoch = 1; epoch <= epochs; ++epoch) {
    train(size_t(epoch), model, device, *train_loader, optimizer, max_batches);
    test(model, device, *test_loader, test_dataset_size);
  }
}
