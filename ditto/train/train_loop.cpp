// A run's steps (TrainResult Run::go: epochs, micro-batches, evaluation,
// checkpoints at their steps, the end) and the GPT's sample after training.

#include <cmath>
#include <cstdio>
#include <string>

#include "ditto/autograd/graph.h"
#include "ditto/core/json_read.h"
#include "ditto/determinism/context.h"
#include "ditto/nn/models/gpt.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/reduce.h"
#include "ditto/random/generator.h"
#include "ditto/random/streams.h"
#include "ditto/trace/trace.h"
#include "ditto/train/detail/run.h"

namespace ditto::train {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace run_detail {

TrainResult Run::go() {
  validate();
  std::error_code ec;
  fs::create_directories(o_.out, ec);
  DITTO_CHECK(
      !ec,
      ValueError,
      kTrainerOp,
      "--out: cannot create ",
      o_.out,
      ": ",
      ec.message());
  setup();
  if (!o_.resume.empty()) {
    resume(o_.resume);
  }
  // metrics.jsonl: a resumed run keeps the lines up to its checkpoint.
  metrics_path_ = (fs::path(o_.out) / "metrics.jsonl").string();
  const std::string& metrics_path = metrics_path_;
  if (lead_) {
    std::vector<std::string> keep;
    if (p_.step > 0) {
      std::ifstream in(metrics_path);
      for (std::string line; std::getline(in, line);) {
        if (!detail::json_nesting_at_most(line, detail::kJsonMaxDepth)) {
          continue; // not a line this trainer wrote
        }
        json j = json::parse(line, nullptr, false);
        if (j.is_object() && j.contains("step") &&
            j["step"].is_number_integer() &&
            j["step"].get<int64_t>() <= p_.step) {
          keep.push_back(line);
        }
      }
    }
    metrics_.open(metrics_path, std::ios::trunc);
    DITTO_CHECK(
        metrics_.good(), ValueError, kTrainerOp, "cannot write ", metrics_path);
    for (const std::string& l : keep) {
      metrics_ << l << "\n";
    }
    flush_metrics();
  }

  const int64_t stop_at =
      o_.max_steps > 0 ? std::min(o_.max_steps, total_steps_) : total_steps_;
  const Clock::time_point t0 = Clock::now();
  const int64_t first_step = p_.step;
  // A checkpoint already at or past --max-steps: nothing more to train.
  bool stopped = p_.step >= stop_at && p_.epoch < o_.epochs;
  while (p_.epoch < o_.epochs && !stopped) {
    Clock::time_point epoch_t0 = Clock::now();
    const double epoch_seconds_before = p_.epoch_seconds;
    int64_t epoch_step = p_.step - p_.epoch * steps_per_epoch_;
    for (const data::Batch& b : *train_loader_) {
      // The trace tags this step's ops with its index and shows the batch
      // it starts from (loading itself is not traced).
      trace::set_step(p_.step);
      trace::record_value("batch", trace::Phase::kData, {b.data, b.target});
      // Gradients to none (not zeros): a resumed run, whose fresh model has
      // none yet, then runs the same ops as the straight one (ditto verify
      // compares their traces).
      opt_->zero_grad(/*set_to_none=*/true);
      double l = 0;
      const Tensor data = b.data.to(o_.device);
      const Tensor target = b.target.to(o_.device);
      // On a device too, dropout draws from the CPU's default generator
      // (the micro-batches' Philox streams set their own).
      GeneratorGuard cpu_draws(default_generator());
      if (micro_) {
        l = micro_batch_step(
            *micro_,
            model_.module->parameters(),
            [&](const Tensor& x) { return model_.forward(x); },
            data,
            target,
            o_.seed,
            p_.step);
      } else {
        Tensor loss = class_loss(model_.forward(data), target);
        loss.backward();
        l = loss.item<double>();
      }
      opt_->step();
      const double lr = opt_->lr(0);
      if (sched_) {
        sched_->step();
      }
      ++p_.step;
      ++epoch_step;
      p_.epoch_loss_sum += l;
      ++p_.epoch_loss_count;
      p_.epoch_seconds = epoch_seconds_before + seconds_since(epoch_t0);

      StepInfo s;
      s.step = p_.step;
      s.epoch = p_.epoch + 1;
      s.epochs = o_.epochs;
      s.epoch_step = epoch_step;
      s.steps_per_epoch = steps_per_epoch_;
      s.total_steps = stop_at;
      s.loss = l;
      s.lr = lr;
      s.elapsed = seconds_since(t0);
      s.run_steps = p_.step - first_step;
      s.samples_per_second = s.elapsed > 0
          ? double((p_.step - first_step) * o_.batch_size) / s.elapsed
          : 0;
      if (r_.step) {
        r_.step(s);
      }
      if (p_.step % o_.log_every == 0) {
        log_metrics(s);
        if (r_.log) {
          r_.log(s);
        }
      }
      if (o_.eval_every > 0 && p_.step % o_.eval_every == 0 &&
          epoch_step != steps_per_epoch_) {
        EvalResult ev =
            lead_ ? evaluate(model_, *test_loader_, o_.device) : EvalResult{};
        if (r_.eval) {
          r_.eval(s, ev);
        }
      }
      if (p_.step >= stop_at && epoch_step != steps_per_epoch_) {
        stopped = true;
        break;
      }
      if (o_.checkpoints && o_.checkpoint_every > 0 &&
          p_.step % o_.checkpoint_every == 0 &&
          epoch_step != steps_per_epoch_) {
        save_checkpoint();
      }
    }
    if (stopped) {
      break;
    }
    EpochRecord rec;
    rec.epoch = p_.epoch + 1;
    rec.step = p_.step;
    rec.train_loss = p_.epoch_loss_count == 0
        ? 0
        : p_.epoch_loss_sum / double(p_.epoch_loss_count);
    rec.seconds = p_.epoch_seconds;
    rec.test =
        lead_ ? evaluate(model_, *test_loader_, o_.device) : EvalResult{};
    rec.fingerprint = weights_fingerprint(*model_.module);
    p_.history.push_back(rec);
    ++p_.epoch;
    p_.epoch_loss_sum = 0;
    p_.epoch_loss_count = 0;
    p_.epoch_seconds = 0;
    if (r_.epoch) {
      r_.epoch(rec);
    }
    if (o_.checkpoints &&
        (o_.checkpoint_every == 0 || p_.step % o_.checkpoint_every == 0 ||
         p_.epoch == o_.epochs)) {
      save_checkpoint();
    }
    if (p_.step >= stop_at && p_.epoch < o_.epochs) {
      stopped = true;
    }
  }
  if (stopped && o_.checkpoints && last_saved_step_ != p_.step) {
    save_checkpoint();
  }
  if (!o_.tuning_cache.empty()) {
    if (tuning_cache_writable_) {
      backends::conv::save_tuning_cache(o_.tuning_cache);
    } else {
      determinism::warn(
          "conv tuning cache (not saved)",
          detail::str_cat(
              "[train] ",
              o_.tuning_cache,
              " was not read as a tuning cache, so it is not replaced; the "
              "choices of this run are not saved"));
    }
  }
  TrainResult res;
  if (model_.text_block > 0 && o_.generate > 0 && lead_) {
    sample(res);
  }
  write_run_json(!stopped);
  res.epochs = p_.history;
  res.steps = p_.step;
  res.stopped_early = stopped;
  res.fingerprint = weights_fingerprint(*model_.module);
  return res;
}

void Run::sample(TrainResult& res) {
  auto gpt = std::dynamic_pointer_cast<nn::GPTImpl>(model_.module);
  if (!gpt) {
    if (r_.message) {
      r_.message("generate: only the library GPT generates");
    }
    return;
  }
  // Sampling runs on the CPU (top-p's sort and the draws have no device
  // kernels); the weights trained on a device are the CPU's bits, so the
  // text is the CPU run's.
  if (o_.device.type != DeviceType::CPU) {
    gpt->to(Device(DeviceType::CPU));
  }
  const nn::GPT model(gpt);
  const int64_t n = std::min<int64_t>(
      o_.generate, gpt->options.block_size() - int64_t(prompt_.size()));
  std::vector<int64_t> prompt;
  for (unsigned char c : prompt_) {
    prompt.push_back(c);
  }
  nn::Generation g = nn::generate(
      model,
      {prompt},
      nn::GenerateOptions()
          .max_new_tokens(n)
          .do_sample(true)
          .top_p(0.9)
          .generators({Generator::philox(
              random::derive_seed(o_.seed, "train.generate"))}));
  res.prompt = prompt_;
  for (int64_t t : g.tokens[0]) {
    res.generated.push_back(char(t));
  }
  res.generated_log_probs = g.log_probs[0];
  double total = 0;
  for (float lp : g.log_probs[0]) {
    total += lp;
  }
  sample_ = json{
      {"prompt", escaped(res.prompt)},
      {"text", escaped(res.generated)},
      {"top_p", 0.9},
      {"log_prob_sum", total}};
  if (r_.message) {
    r_.message(
        "generated (top-p 0.9): " + escaped(res.prompt) + " | " +
        escaped(res.generated));
  }
}

} // namespace run_detail
} // namespace ditto::train
