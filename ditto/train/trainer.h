#pragma once

// The training loop of `ditto train`, usable from C++: an image classifier
// (a registered model, see models.h) trained on MNIST-format data, or a
// byte-level language model (`--model gpt`) on a text, with
// safetensors checkpoints and a resume that is bitwise exact (R4). See
// docs/train.md.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ditto/data/loader.h"
#include "ditto/data/mnist.h"
#include "ditto/data/text.h"
#include "ditto/io/safetensors.h"
#include "ditto/nn/module.h"
#include "ditto/train/micro_batch.h"

namespace ditto::train {

struct TrainOptions {
  std::string model = "cnn";
  std::string data_root = data::kFashionMNISTRoot;
  // A language model's text (a file, or a directory's files in name order:
  // data::read_text): its first 90% trains, the rest evaluates.
  std::string text = data::kDefaultTextRoot;
  // A language model, at the end: this many bytes sampled (top-p 0.9, a
  // generator derived from the seed) after the first 16 bytes of the
  // evaluation text, reported and written to run.json. 0: none.
  int64_t generate = 48;
  // Normalize images with the training set's mean and standard deviation
  // (of pixel / 255, over every pixel), as PyTorch's MNIST example does
  // with its constants.
  bool normalize = true;
  uint64_t seed = 0;
  int64_t epochs = 1;
  int64_t batch_size = 64;
  double lr = 0.01;
  std::string optimizer = "sgd"; // sgd, adam, adamw
  double momentum = 0.9; // SGD only
  double weight_decay = 0;
  std::string scheduler = "none"; // none, step, cosine, onecycle
  int threads = 0; // 0: leave the library's setting
  // Where the model trains (kVulkan: a Vulkan device, docs/device.md). The
  // batches are copied there; dropout still draws from the CPU's generator
  // (Note [Random numbers on a device]), so the run gives the CPU's
  // fingerprint where the device has the CPU's bits.
  Device device = kCPU;
  int workers = 0;
  data::SeedMode seed_mode = data::SeedMode::PerSample;
  bool deterministic = true;
  bool benchmark = false;
  std::string tuning_cache; // loaded at the start, saved at the end
  int64_t max_steps = 0; // 0: no limit
  int64_t eval_every = 0; // 0: at the end of each epoch only
  int64_t log_every = 50;
  std::string checkpoint_dir; // "": <out>/checkpoints
  int64_t checkpoint_every = 0; // steps; 0: at epoch ends and at the stop
  int keep = 0; // 0: keep every checkpoint
  bool checkpoints = false; // save checkpoints at all
  std::string resume; // a checkpoint directory, or "latest"
  std::string init_from; // a model.safetensors (weights only)
  std::string out = "ditto-run";
  // R6 (docs/distributed.md): each step's batch as this many micro-batches
  // (dividing batch_size; at least the world size), their gradients summed in a
  // tree fixed by the micro-batch index and dropout drawn per micro-batch; with
  // group (several processes) each rank computes its block of them. The
  // weights are then the same for any world size. 1 and one process: the
  // plain step. Only rank 0 reports and writes files.
  int64_t micro_batches = 1;
  ProcessGroup group;
  // Every rank's reporter gets the progress (for per-rank logs); only rank
  // 0 writes files either way.
  bool report_on_every_rank = false;
  std::string command_line;
};

// One evaluation on the test set.
struct EvalResult {
  double loss = 0; // mean cross entropy
  double accuracy = 0; // fraction correct
};

struct EpochRecord {
  int64_t epoch = 0; // 1-based
  int64_t step = 0; // global step at its end
  double train_loss = 0; // mean of the epoch's step losses
  EvalResult test;
  double seconds = 0; // training time of the epoch (this process' part)
  uint64_t fingerprint = 0;
};

// What the loop reports as it goes (a progress bar, log lines).
struct StepInfo {
  int64_t step = 0; // global, 1-based
  int64_t epoch = 0; // 1-based
  int64_t epochs = 0; // of the run
  int64_t epoch_step = 0; // within the epoch, 1-based
  int64_t steps_per_epoch = 0;
  int64_t total_steps = 0; // every epoch's steps (or max_steps)
  double loss = 0;
  double lr = 0;
  double samples_per_second = 0;
  double elapsed = 0; // seconds since this process started training
  int64_t run_steps = 0; // steps taken by this process (not before a resume)
};

struct Reporter {
  std::function<void(const StepInfo&)> step; // every step
  std::function<void(const StepInfo&)> log; // every log_every steps
  std::function<void(const StepInfo&, const EvalResult&)> eval;
  std::function<void(const EpochRecord&)> epoch;
  std::function<void(const std::string&)> checkpoint; // saved directory
  std::function<void(const std::string&)> message; // resumed from, etc.
};

struct TrainResult {
  std::vector<EpochRecord> epochs;
  // A language model's sample (TrainOptions::generate): prompt and the
  // bytes after it, with each byte's log-probability.
  std::string prompt, generated;
  std::vector<float> generated_log_probs;
  int64_t steps = 0;
  bool stopped_early = false; // at max_steps
  uint64_t fingerprint = 0;
};

// What a checkpoint's train_state.safetensors holds besides the optimizer
// and scheduler tensors, parsed and checked.
struct CheckpointProgress {
  int64_t step = 0; // optimizer steps taken
  int64_t epoch = 0; // epochs completed
  double epoch_loss_sum = 0; // of the current epoch's steps
  int64_t epoch_loss_count = 0;
  double epoch_seconds = 0;
  std::vector<EpochRecord> history;
  std::string settings_json; // the settings that change the bits
  data::LoaderState loader;
};

// Reads and checks file (train_state.safetensors' contents): the format
// and its version, the metadata's JSON and its types, the loader state,
// and the generator tensors (uint8 states the generators accept). Applies
// nothing. ValueError naming source for anything wrong.
DITTO_API CheckpointProgress
read_train_state(const io::SafetensorsFile& file, const std::string& source);

// Trains as options say; writes run.json and metrics.jsonl in options.out.
// ValueError (naming the file or the setting) for bad options, missing or
// corrupt data, or a checkpoint that does not fit; nothing is trained then.
DITTO_API TrainResult
run_training(const TrainOptions& options, const Reporter& reporter = {});

// xxh3-64 of every parameter's bytes (contiguous, row-major, little-endian),
// concatenated in named_parameters() order: what `ditto train` prints as
// "fingerprint". In Python: xxhash.xxh3_64(b"".join(p.detach().numpy()
// .tobytes() for _, p in model.named_parameters())).intdigest().
DITTO_API uint64_t weights_fingerprint(const nn::Module& module);
// The same over tensors in the given order (what the Python package's
// ditto.utils.weights_fingerprint(module) passes).
DITTO_API uint64_t weights_fingerprint(const std::vector<Tensor>& tensors);

// 16 lowercase hex digits.
DITTO_API std::string hex64(uint64_t v);

// An epoch's record as run.json lists it (a JSON object): epoch, step,
// train_loss, test_loss, accuracy, seconds, fingerprint, and the exact bits
// of the three results under "exact".
DITTO_API std::string epoch_json(const EpochRecord& e);

} // namespace ditto::train
