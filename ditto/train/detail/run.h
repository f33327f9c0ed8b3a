#pragma once

// A training run of ditto::train (trainer.h) as trainer.cpp (setup,
// resume, checkpoints, run.json, metrics) and train_loop.cpp (the steps,
// evaluation, the GPT's sample) share it. Internal.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ditto/data/loader.h"
#include "ditto/data/mnist.h"
#include "ditto/optim/optimizer.h"
#include "ditto/optim/schedulers.h"
#include "ditto/train/checkpoint.h"
#include "ditto/train/micro_batch.h"
#include "ditto/train/models.h"
#include "ditto/train/state.h"
#include "ditto/train/trainer.h"

namespace ditto::train::run_detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kTrainerOp = "train";
constexpr int64_t kEvalBatch = 1000;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0);
const char* seed_mode_name(data::SeedMode m);
// The settings a checkpoint must share with the run that resumes it: every
// one changes the bits. Threads and (in per-sample mode) workers do not.
json bit_settings(const TrainOptions& o);
// The flag a bit setting comes from, for error messages.
std::string flag_of(const std::string& key);
// A setting as the user wrote it: the exact-bit settings (bit_settings'
// lr, momentum, weight_decay) as numbers.
std::string setting_text(const std::string& key, const json& v);
std::unique_ptr<optim::Optimizer> make_optimizer(
    const TrainOptions& o,
    const std::vector<Tensor>& params);
// Schedulers step once per optimizer step (make_scheduler's note).
std::unique_ptr<optim::LRScheduler> make_scheduler(
    const TrainOptions& o,
    optim::Optimizer& opt,
    int64_t steps_per_epoch,
    int64_t total_steps);
// The loss and accuracy of model over loader's batches, on device.
EvalResult evaluate(
    const Model& model,
    data::DataLoader& loader,
    Device device);
// Bytes as printable ASCII: others (newlines too) as \xNN.
std::string escaped(const std::string& bytes);

// Everything a run carries from step to step besides the tensors.
using Progress = CheckpointProgress;

class Run {
 public:
  // Only rank 0 of a process group reports and writes files.
  Run(const TrainOptions& o, const Reporter& r)
      : o_(o),
        r_(o.group.rank == 0 || o.report_on_every_rank ? r : Reporter{}),
        lead_(o.group.rank == 0) {}

  TrainResult go();

 private:
  void validate() const;
  void setup();
  void sample(TrainResult& res);
  // bit_settings, and a language model's text (its size and hash: another
  // text changes the bits).
  json bit_settings_now() const {
    json j = bit_settings(o_);
    if (model_.text_block > 0) {
      j["text"] = text_identity_;
    }
    return j;
  }
  void resume(const std::string& dir);
  void save_checkpoint();
  json run_json(bool finished) const;
  void write_run_json(bool finished) const;
  void log_metrics(const StepInfo& s);
  void flush_metrics();
  std::string checkpoint_root() const {
    return o_.checkpoint_dir.empty()
        ? (fs::path(o_.out) / "checkpoints").string()
        : o_.checkpoint_dir;
  }

  const TrainOptions& o_;
  const Reporter r_;
  const bool lead_;
  // --micro-batches / a process group: R6's step (micro_batch.h).
  std::unique_ptr<MicroBatchSum> micro_;
  std::shared_ptr<data::MNIST> train_images_, test_images_;
  std::shared_ptr<const data::Dataset> train_set_, test_set_;
  double mean_ = 0, std_ = 1;
  int64_t text_bytes_ = 0; // a language model's text
  std::string text_identity_; // "N bytes, xxh3 H"
  std::string prompt_; // the first bytes of its evaluation part
  json sample_; // what sample() generated
  Model model_;
  std::unique_ptr<optim::Optimizer> opt_;
  std::unique_ptr<optim::LRScheduler> sched_;
  std::unique_ptr<data::DataLoader> train_loader_, test_loader_;
  std::unique_ptr<TrainState> state_;
  int64_t steps_per_epoch_ = 0, total_steps_ = 0;
  Progress p_;
  std::string resumed_from_;
  int64_t last_saved_step_ = -1;
  // The tuning cache's file is written at the end only if it was new or
  // was read as a cache: a file that is not one is never replaced.
  bool tuning_cache_writable_ = false;
  std::ofstream metrics_;
  std::string metrics_path_;
};

} // namespace ditto::train::run_detail
