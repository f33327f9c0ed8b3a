// Peak resident memory of training the Fashion-MNIST CNN (bench/train_cnn.h)
// in ditto: builds the model, runs --steps training steps (2 threads,
// deterministic mode on unless --fast) and prints one JSON object:
//   rss_start_kib  VmRSS at the start of main (the libraries loaded)
//   max_rss_kib    getrusage(RUSAGE_SELF).ru_maxrss after the steps
//   first_loss, last_loss  the loss of the first and the last step
// bench/compare_train.py runs it next to the same steps in PyTorch 1.13
// (resource.getrusage there); the first loss is the same on both sides up
// to rounding, a check that both train the same model on the same data.
//
//   ditto_train_rss [--steps N] [--fast]

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "train_cnn.h"

namespace {

long vm_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  return -1;
}

} // namespace

int main(int argc, char** argv) {
  const long rss_start = vm_rss_kib();
  int steps = 50;
  bool deterministic = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--fast") == 0) {
      deterministic = false;
    } else {
      std::fprintf(stderr, "usage: %s [--steps N] [--fast]\n", argv[0]);
      return 2;
    }
  }
  if (steps < 1) {
    std::fprintf(stderr, "--steps must be at least 1\n");
    return 2;
  }
  ditto::set_num_threads(2);
  ditto::use_deterministic_algorithms(deterministic);
  ditto_bench::TrainCnn cnn;
  double first_loss = 0, last_loss = 0;
  for (int i = 0; i < steps; ++i) {
    last_loss = cnn.step().item<double>();
    if (i == 0) {
      first_loss = last_loss;
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "{\"deterministic\": %s, \"steps\": %d, \"rss_start_kib\": %ld, "
      "\"max_rss_kib\": %ld, \"first_loss\": %.9g, \"last_loss\": %.9g}\n",
      deterministic ? "true" : "false",
      steps,
      rss_start,
      usage.ru_maxrss,
      first_loss,
      last_loss);
  return 0;
}
