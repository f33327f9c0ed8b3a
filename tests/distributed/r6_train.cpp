// R6 end to end on a small model: an MLP with BatchNorm and dropout trained by
// data-parallel SGD with momentum under mpirun, each step's gradient made by
// distributed::MicroBatchGradient over k micro-batches of 4 samples (8
// unless --micro-batches says otherwise).
// Prints the weights' fingerprint (rank 0); tests/distributed/same_bits runs
// it with 1, 2 and 4 processes and across a checkpoint written by one world
// size and resumed by another, and expects one fingerprint.
//
//   r6_train STEPS [--micro-batches K] [--save-after S ROOT] [--resume ROOT]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace dist = ditto::distributed;
using namespace ditto;

namespace {

constexpr int64_t kMicro = 4, kSamples = 256;
constexpr uint64_t kSeed = 7;

// Samples of a fixed synthetic task (20 features, 4 classes).
struct Data {
  Tensor x, y;
};

Data make_data() {
  Generator g;
  g.manual_seed(kSeed);
  Tensor x = randn({kSamples, 20}, kFloat32, g);
  Tensor y = randint(0, 4, {kSamples}, kInt64, g);
  return {x, y};
}

} // namespace

int main(int argc, char** argv) {
  dist::init();
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: r6_train STEPS [--micro-batches K] [--save-after S DIR] "
        "[--resume DIR]\n");
    return 2;
  }
  const int64_t steps = std::atoll(argv[1]);
  int64_t save_after = -1, micro_batches = 8;
  std::string save_dir, resume_dir;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--micro-batches" && i + 1 < argc) {
      micro_batches = std::atoll(argv[++i]);
    } else if (a == "--save-after" && i + 2 < argc) {
      save_after = std::atoll(argv[++i]);
      save_dir = argv[++i];
    } else if (a == "--resume" && i + 1 < argc) {
      resume_dir = argv[++i];
    }
  }

  const Data data = make_data();
  manual_seed(kSeed);
  nn::Sequential model(
      nn::Linear(20, 32),
      nn::BatchNorm1d(32),
      nn::ReLU(),
      nn::Dropout(0.2),
      nn::Linear(32, 4));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  train::TrainState state(*model, opt);
  int64_t first = 0;
  if (!resume_dir.empty()) {
    train::TrainState::Checkpoint c =
        train::TrainState::read("latest", resume_dir);
    state.restore(c);
    first = std::stoll(c.metadata().at("step"));
  }
  dist::MicroBatchGradient grad(model->parameters(), micro_batches);
  for (int64_t step = first; step < steps; ++step) {
    opt.zero_grad();
    // The step's global batch: samples [step * k * m, ...) mod kSamples.
    for (int64_t j = grad.begin(); j < grad.end(); ++j) {
      const int64_t start = (step * micro_batches + j) * kMicro % kSamples;
      Tensor xb = data.x.narrow(0, start, kMicro);
      Tensor yb = data.y.narrow(0, start, kMicro);
      // Dropout draws from a stream keyed by the step and the micro-batch,
      // not by the rank that computes it.
      Generator g = Generator::philox(random::derive_seed(
          kSeed, "dropout:" + std::to_string(step) + ":" + std::to_string(j)));
      GeneratorGuard guard(g);
      nn::functional::cross_entropy(model->forward(xb), yb).backward();
      grad.add(j);
    }
    grad.reduce();
    opt.step();
    if (step + 1 == save_after && dist::rank() == 0) {
      state.save(save_dir, step + 1, {{"step", std::to_string(step + 1)}});
    }
  }
  if (dist::rank() == 0) {
    // The weights and BatchNorm's running statistics.
    std::vector<Tensor> state = model->parameters();
    for (const auto& [name, t] : model->named_buffers()) {
      if (name.find("running_") != std::string::npos) {
        state.push_back(t);
      }
    }
    std::printf(
        "fingerprint %s world %d\n",
        train::hex64(train::weights_fingerprint(state)).c_str(),
        dist::world_size());
  }
  return 0;
}
