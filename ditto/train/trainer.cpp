#include "ditto/train/trainer.h"
#include "ditto/train/detail/run.h"

#include "ditto/device/device.h"

#include "ditto/train/micro_batch.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ditto/autograd/graph.h"
#include "ditto/config.h"
#include "ditto/core/cpu_capability.h"
#include "ditto/core/file_io.h"
#include "ditto/core/json_int.h"
#include "ditto/core/json_read.h"
#include "ditto/core/parallel.h"
#include "ditto/data/transforms.h"
#include "ditto/determinism/context.h"
#include "ditto/io/safetensors.h"
#include "ditto/nn/functional.h"
#include "ditto/nn/models/gpt.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/reduce.h"
#include "ditto/optim/optimizer.h"
#include "ditto/optim/schedulers.h"
#include "ditto/random/generator.h"
#include "ditto/random/streams.h"
#include "ditto/trace/trace.h"
#include "ditto/train/checkpoint.h"
#include "ditto/train/detail/progress.h"
#include "ditto/train/models.h"
#include "ditto/train/state.h"

namespace ditto::train {

using progress_json::epoch_json_value;
using progress_json::exact;
using progress_json::from_exact;
using progress_json::kFormat;
using progress_json::kFormatVersion;

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace run_detail {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

const char* seed_mode_name(data::SeedMode m) {
  return m == data::SeedMode::PyTorch ? "pytorch" : "per-sample";
}

// The settings a checkpoint must share with the run that resumes it: every
// one changes the bits. Threads and (in per-sample mode) workers do not.
json bit_settings(const TrainOptions& o) {
  json j{
      {"model", o.model},
      {"normalize", o.normalize},
      {"seed", o.seed},
      {"epochs", o.epochs},
      {"batch_size", o.batch_size},
      {"lr", exact(o.lr)},
      {"optimizer", o.optimizer},
      {"momentum", exact(o.momentum)},
      {"weight_decay", exact(o.weight_decay)},
      {"scheduler", o.scheduler},
      {"seed_mode", seed_mode_name(o.seed_mode)},
      {"deterministic", o.deterministic}};
  if (o.micro_batches > 1 || o.group.world_size > 1) {
    j["micro_batches"] = o.micro_batches; // not the world size: R6
  }
  if (o.seed_mode == data::SeedMode::PyTorch) {
    j["workers"] = o.workers;
  }
  return j;
}

// The flag a bit setting comes from, for error messages.
std::string flag_of(const std::string& key) {
  std::string f = "--" + key;
  for (char& c : f) {
    c = c == '_' ? '-' : c;
  }
  return f;
}

// A setting as the user wrote it: the exact-bit settings (bit_settings'
// lr, momentum, weight_decay) as numbers.
std::string setting_text(const std::string& key, const json& v) {
  if (v.is_string() &&
      (key == "lr" || key == "momentum" || key == "weight_decay")) {
    std::ostringstream os;
    os << from_exact(v.get<std::string>(), "setting " + key);
    return os.str();
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::unique_ptr<optim::Optimizer> make_optimizer(
    const TrainOptions& o,
    const std::vector<Tensor>& params) {
  if (o.optimizer == "sgd") {
    return std::make_unique<optim::SGD>(
        params,
        optim::SGDOptions(o.lr)
            .momentum(o.momentum)
            .weight_decay(o.weight_decay));
  }
  if (o.optimizer == "adam") {
    return std::make_unique<optim::Adam>(
        params, optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  }
  if (o.optimizer == "adamw") {
    optim::AdamOptions a = optim::AdamWOptions(o.lr);
    a.weight_decay(o.weight_decay);
    return std::make_unique<optim::AdamW>(params, a);
  }
  detail::throw_error<ValueError>(
      kTrainerOp,
      "--optimizer: unknown optimizer '",
      o.optimizer,
      "' (sgd, adam, adamw)");
}

// Schedulers step once per optimizer step. step: the lr times 0.7 after
// every epoch (PyTorch's MNIST example); cosine: to 0 over the whole run;
// onecycle: PyTorch's defaults with max_lr = --lr.
std::unique_ptr<optim::LRScheduler> make_scheduler(
    const TrainOptions& o,
    optim::Optimizer& opt,
    int64_t steps_per_epoch,
    int64_t total_steps) {
  if (o.scheduler == "none") {
    return nullptr;
  }
  if (o.scheduler == "step") {
    return std::make_unique<optim::StepLR>(
        opt,
        std::max<int64_t>(1, steps_per_epoch),
        0.7,
        optim::StepLRSteps::kPython);
  }
  if (o.scheduler == "cosine") {
    return std::make_unique<optim::CosineAnnealingLR>(
        opt, std::max<int64_t>(1, total_steps));
  }
  if (o.scheduler == "onecycle") {
    return std::make_unique<optim::OneCycleLR>(
        opt, optim::OneCycleLROptions(o.lr, std::max<int64_t>(1, total_steps)));
  }
  detail::throw_error<ValueError>(
      kTrainerOp,
      "--scheduler: unknown scheduler '",
      o.scheduler,
      "' (none, step, cosine, onecycle)");
}

EvalResult evaluate(
    const Model& model,
    data::DataLoader& loader,
    Device device) {
  autograd::NoGradGuard no_grad;
  trace::PhaseGuard phase(trace::Phase::kEval);
  model.module->eval();
  double loss_sum = 0;
  int64_t correct = 0, count = 0;
  for (const data::Batch& b : loader) {
    Tensor logits = model.forward(b.data.to(device));
    // A language model's positions are samples too.
    logits = logits.reshape({-1, logits.size(-1)});
    const Tensor target = b.target.reshape({-1});
    loss_sum += nn::functional::cross_entropy(
                    logits,
                    target.to(device),
                    nn::functional::CrossEntropyOptions().reduction(
                        nn::functional::Reduction::Sum))
                    .item<double>();
    // The predicted classes come back to compare (a count, not a value).
    correct += sum(eq(argmax(logits, 1).cpu(), target)).item<int64_t>();
    count += target.numel();
  }
  model.module->train();
  EvalResult r;
  r.loss = count == 0 ? 0 : loss_sum / double(count);
  r.accuracy = count == 0 ? 0 : double(correct) / double(count);
  return r;
}

// Bytes as printable ASCII: others (newlines too) as \xNN.
std::string escaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 32 && c < 127 && c != '\\') {
      out.push_back(char(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

void Run::validate() const {
  auto at_least = [](const char* flag, double value, double min) {
    DITTO_CHECK(
        value >= min,
        ValueError,
        kTrainerOp,
        flag,
        " must be at least ",
        min,
        ", got ",
        value);
  };
  at_least("--epochs", double(o_.epochs), 1);
  at_least("--batch-size", double(o_.batch_size), 1);
  at_least("--workers", o_.workers, 0);
  at_least("--threads", o_.threads, 0);
  at_least("--max-steps", double(o_.max_steps), 0);
  at_least("--log-every", double(o_.log_every), 1);
  at_least("--keep", o_.keep, 0);
  if (o_.device.type == DeviceType::Vulkan) {
    const int count = is_vulkan_available() ? vulkan_device_count() : 0;
    DITTO_CHECK(
        o_.device.resolved_index() < count,
        ValueError,
        kTrainerOp,
        "--device ",
        o_.device,
        ": ",
        count == 0 ? vulkan_unavailable_reason()
                   : detail::str_cat(
                         "no such device (",
                         count,
                         " Vulkan device",
                         count == 1 ? "" : "s",
                         ")"));
  }
  DITTO_CHECK(
      std::isfinite(o_.lr) && o_.lr > 0,
      ValueError,
      kTrainerOp,
      "--lr must be positive, got ",
      o_.lr);
  DITTO_CHECK(
      !o_.out.empty(), ValueError, kTrainerOp, "--out must not be empty");
}

void Run::setup() {
  if (o_.threads > 0) {
    set_num_threads(o_.threads);
  }
  use_deterministic_algorithms(o_.deterministic);
  backends::conv::benchmark(o_.benchmark);
  // A loaded cache's choices are replayed (keys it lacks are still timed).
  if (!o_.tuning_cache.empty()) {
    std::error_code ec;
    const fs::file_status target = fs::status(o_.tuning_cache, ec);
    if (!fs::exists(target)) {
      tuning_cache_writable_ = true; // new (or a symlink to a new file)
    } else {
      const bool loaded = backends::conv::load_tuning_cache(o_.tuning_cache);
      if (loaded) {
        backends::conv::replay_only(true);
      }
      // A FIFO or a device is written in place: nothing is replaced.
      tuning_cache_writable_ =
          loaded || (!fs::is_regular_file(target) && !fs::is_directory(target));
    }
  }
  // The model right after the seed, as a PyTorch script builds it.
  seed_everything(o_.seed);
  model_ = make_model(o_.model);
  if (!o_.init_from.empty()) {
    io::SafetensorsFile f = io::load_safetensors(o_.init_from);
    try {
      model_.module->load_state_dict(f.tensors);
    } catch (const Error& e) {
      detail::throw_error<ValueError>(
          kTrainerOp, "--init-from ", o_.init_from, ": ", e.what());
    }
  }
  if (model_.text_block > 0) {
    // Bytes of text: the first 90% train, the rest evaluate.
    const std::string text = data::read_text(o_.text);
    const size_t split = text.size() / 10 * 9;
    text_bytes_ = int64_t(text.size());
    text_identity_ = std::to_string(text.size()) + " bytes, xxh3 " +
        hex64(XXH3_64bits(text.data(), text.size()));
    prompt_ = text.substr(split, 16);
    try {
      train_set_ = std::make_shared<data::ByteWindows>(
          text.substr(0, split), model_.text_block);
      test_set_ = std::make_shared<data::ByteWindows>(
          text.substr(split), model_.text_block);
    } catch (const ValueError& e) {
      detail::throw_error<ValueError>(
          kTrainerOp, "--text ", o_.text, ": ", e.what());
    }
  } else {
    train_images_ = std::make_shared<data::MNIST>(o_.data_root, true);
    test_images_ = std::make_shared<data::MNIST>(o_.data_root, false);
    train_set_ = train_images_;
    test_set_ = test_images_;
    if (o_.normalize) {
      // The training pixels' mean and (population) standard deviation, from
      // exact integer sums of the bytes: no float copy of the images.
      const Tensor& img = train_images_->images();
      const uint8_t* px = img.data_ptr<uint8_t>();
      const int64_t count = img.numel();
      __int128 s1 = 0, s2 = 0;
      for (int64_t i = 0; i < count; ++i) {
        s1 += px[i];
        s2 += int64_t(px[i]) * px[i];
      }
      DITTO_CHECK(
          count > 0,
          ValueError,
          kTrainerOp,
          o_.data_root,
          ": no training images");
      // var * count^2 * 255^2 = s2 * count - s1^2, exactly.
      const __int128 var_num = s2 * count - s1 * s1;
      mean_ = double(s1) / (double(count) * 255.0);
      std_ = std::sqrt(double(var_num)) / (double(count) * 255.0);
      DITTO_CHECK(
          std_ > 0,
          ValueError,
          kTrainerOp,
          o_.data_root,
          ": the training images are all one value");
      data::Transform norm = data::Normalize({mean_}, {std_});
      train_set_ = std::make_shared<data::MapDataset>(train_images_, norm);
      test_set_ = std::make_shared<data::MapDataset>(test_images_, norm);
    }
  }

  model_.module->train();
  model_.module->to(o_.device);
  opt_ = make_optimizer(o_, model_.module->parameters());

  // The loaders shuffle and seed from their own generators: evaluating more
  // or less often never shifts the training's random numbers.
  data::DataLoaderOptions lo;
  lo.batch_size(o_.batch_size);
  lo.shuffle(true);
  lo.num_workers(o_.workers);
  lo.generator(
      Generator().manual_seed(random::derive_seed(o_.seed, "train.loader")));
  lo.seed_mode(o_.seed_mode);
  if (o_.micro_batches > 1 || o_.group.world_size > 1) {
    // Whole global batches only: every step has its k micro-batches.
    micro_ = std::make_unique<MicroBatchSum>(o_.micro_batches, o_.group);
    DITTO_CHECK(
        o_.batch_size % o_.micro_batches == 0,
        ValueError,
        kTrainerOp,
        "--batch-size ",
        o_.batch_size,
        " is not a multiple of --micro-batches ",
        o_.micro_batches);
    lo.drop_last(true);
  }
  train_loader_ = std::make_unique<data::DataLoader>(train_set_, lo);
  data::DataLoaderOptions to;
  to.batch_size(kEvalBatch);
  to.num_workers(o_.workers);
  to.generator(
      Generator().manual_seed(random::derive_seed(o_.seed, "test.loader")));
  to.seed_mode(o_.seed_mode);
  test_loader_ = std::make_unique<data::DataLoader>(test_set_, to);

  steps_per_epoch_ = train_loader_->size();
  total_steps_ = steps_per_epoch_ * o_.epochs;
  sched_ = make_scheduler(o_, *opt_, steps_per_epoch_, total_steps_);
  state_ = std::make_unique<TrainState>(
      *model_.module, *opt_, sched_.get(), train_loader_.get());
}

void Run::resume(const std::string& where) {
  std::vector<std::string> incomplete;
  TrainState::Checkpoint c;
  try {
    c = TrainState::read(where, checkpoint_root(), &incomplete);
  } catch (const Error& e) {
    detail::throw_error<ValueError>(
        kTrainerOp, "--resume ", where, ": ", e.what());
  }
  if (!incomplete.empty() && r_.message) {
    std::string skipped;
    for (const std::string& d : incomplete) {
      skipped += (skipped.empty() ? "" : ", ") + d;
    }
    r_.message(detail::str_cat(
        "--resume latest: skipped incomplete checkpoint directories "
        "(without model.safetensors and train_state.safetensors): ",
        skipped));
  }
  const std::string& dir = c.dir;
  const std::string state_path =
      (fs::path(dir) / "train_state.safetensors").string();

  // Every check first: nothing is restored from a checkpoint that does not
  // fit.
  Progress saved_progress = read_train_state(c.state, state_path);
  const json saved = json::parse(saved_progress.settings_json);
  const json now = bit_settings_now();
  for (const auto& [key, value] : now.items()) {
    DITTO_CHECK(
        saved.contains(key) && saved[key] == value,
        ValueError,
        kTrainerOp,
        dir,
        ": the checkpoint was trained with ",
        flag_of(key),
        " ",
        saved.contains(key) ? setting_text(key, saved[key]) : "(unset)",
        ", this run has ",
        setting_text(key, value));
  }
  // Both ways: a setting the checkpoint has and this run does not set (a
  // --micro-batches 4 checkpoint resumed without the flag) changes the
  // bits too. One micro-batch is the default, unset.
  for (const auto& [key, value] : saved.items()) {
    const bool default_value = key == "micro_batches" && value == 1;
    DITTO_CHECK(
        now.contains(key) || default_value,
        ValueError,
        kTrainerOp,
        dir,
        ": the checkpoint was trained with ",
        flag_of(key),
        " ",
        setting_text(key, value),
        ", this run has it unset");
  }
  state_->restore(c); // ValueError naming the directory
  p_ = std::move(saved_progress);
  resumed_from_ = dir;
  last_saved_step_ = p_.step;
  if (r_.message) {
    r_.message(detail::str_cat("resumed from ", dir, " at step ", p_.step));
  }
}

void Run::save_checkpoint() {
  last_saved_step_ = p_.step;
  if (!lead_) {
    return; // every rank holds the same state: rank 0's is the checkpoint
  }
  // The parameters' names in named_parameters() order: the order of the
  // weights' fingerprint.
  json names = json::array();
  for (const auto& [name, t] : model_.module->named_parameters()) {
    names.push_back(name);
  }
  const Metadata model_meta{
      {"format", kFormat},
      {"model", o_.model},
      {"ditto_version", version()},
      {"parameters", names.dump()}};
  json progress{
      {"step", p_.step},
      {"epoch", p_.epoch},
      {"epoch_loss_sum", exact(p_.epoch_loss_sum)},
      {"epoch_loss_count", p_.epoch_loss_count},
      {"epoch_seconds", p_.epoch_seconds},
      {"history", json::array()}};
  for (const EpochRecord& e : p_.history) {
    progress["history"].push_back(epoch_json_value(e));
  }
  const Metadata state_meta{
      {"format", kFormat},
      {"version", std::to_string(kFormatVersion)},
      {"settings", bit_settings_now().dump()},
      {"progress", progress.dump()}};
  const std::string run = run_json(false).dump(2) + "\n";
  const std::string dir = state_->save(
      checkpoint_root(),
      p_.step,
      state_meta,
      model_meta,
      {{"run.json", std::vector<uint8_t>(run.begin(), run.end())}},
      o_.keep);
  last_saved_step_ = p_.step;
  if (r_.checkpoint) {
    r_.checkpoint(dir);
  }
}

json Run::run_json(bool finished) const {
  json caps = json::array();
  for (CpuCapability c : compiled_cpu_capabilities()) {
    caps.push_back(std::string(cpu_capability_name(c)));
  }
  const json tuning = json::parse(backends::conv::tuning_cache_json());
  json j;
  j["ditto_version"] = version();
  j["command_line"] = o_.command_line;
  j["status"] = finished ? "done" : "running";
  j["model"] = o_.model;
  if (model_.text_block > 0) {
    j["text"] = o_.text;
    j["text_bytes"] = text_bytes_;
  } else {
    j["data_root"] = o_.data_root;
  }
  if (!sample_.is_null()) {
    j["generated"] = sample_;
  }
  j["normalize"] = o_.normalize;
  if (o_.normalize && model_.text_block == 0) {
    j["normalize_mean"] = mean_;
    j["normalize_std"] = std_;
  }
  j["seed"] = o_.seed;
  j["epochs"] = o_.epochs;
  j["batch_size"] = o_.batch_size;
  j["lr"] = o_.lr;
  j["optimizer"] = o_.optimizer;
  j["momentum"] = o_.momentum;
  j["weight_decay"] = o_.weight_decay;
  j["scheduler"] = o_.scheduler;
  j["max_steps"] = o_.max_steps;
  j["threads"] = get_num_threads();
  j["device"] = o_.device.str(); // not a bit setting: R7
  j["workers"] = o_.workers;
  j["seed_mode"] = seed_mode_name(o_.seed_mode);
  j["determinism"]["deterministic_algorithms"] =
      are_deterministic_algorithms_enabled();
  j["determinism"]["warn_only"] =
      is_deterministic_algorithms_warn_only_enabled();
  j["determinism"]["fill_uninitialized_memory"] =
      determinism::fill_uninitialized_memory();
  j["tuning"]["conv_benchmark"] = backends::conv::benchmark();
  j["tuning"]["conv_deterministic"] = backends::conv::deterministic();
  j["tuning"]["replay_only"] = backends::conv::replay_only();
  j["tuning"]["gemm_workspace_config"] = backends::gemm::workspace_config();
  j["tuning"]["tuning_cache"] = o_.tuning_cache;
  j["tuning"]["decisions"] = tuning;
  j["build"]["compiled_capabilities"] = caps;
#ifdef NDEBUG
  j["build"]["type"] = "release";
#else
  j["build"]["type"] = "debug";
#endif
  j["cpu_capability"] = std::string(cpu_capability_name(get_cpu_capability()));
  j["resumed_from"] = resumed_from_;
  j["init_from"] = o_.init_from;
  j["step"] = p_.step;
  j["epochs_done"] = json::array();
  for (const EpochRecord& e : p_.history) {
    j["epochs_done"].push_back(epoch_json_value(e));
  }
  j["fingerprint"] = hex64(weights_fingerprint(*model_.module));
  return j;
}

void Run::write_run_json(bool finished) const {
  if (!lead_) {
    return;
  }
  detail::write_file_atomic(
      (fs::path(o_.out) / "run.json").string(),
      run_json(finished).dump(2) + "\n",
      kTrainerOp);
}

void Run::log_metrics(const StepInfo& s) {
  if (!lead_) {
    return;
  }
  metrics_
      << json{{"step", s.step}, {"epoch", s.epoch}, {"loss", s.loss}, {"lr", s.lr}, {"samples_per_second", s.samples_per_second}}
             .dump()
      << "\n";
  flush_metrics();
}

// A metrics line that cannot be written stops the run (a full disk is not
// ignored): the last checkpoint stays the one to resume from.
void Run::flush_metrics() {
  metrics_.flush();
  DITTO_CHECK(
      metrics_.good(),
      ValueError,
      kTrainerOp,
      "cannot write ",
      metrics_path_,
      ": ",
      errno != 0 ? std::strerror(errno) : "write error");
}

} // namespace run_detail

using run_detail::Run;

TrainResult run_training(
    const TrainOptions& options,
    const Reporter& reporter) {
  Run run(options, reporter);
  return run.go();
}

} // namespace ditto::train
