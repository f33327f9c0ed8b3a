#include "ditto/train/state.h"

#include <cstring>
#include <filesystem>

#include "ditto/core/error.h"
#include "ditto/data/loader.h"
#include "ditto/nn/module.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/factories.h"
#include "ditto/optim/optimizer.h"
#include "ditto/optim/schedulers.h"
#include "ditto/random/generator.h"
#include "ditto/random/streams.h"
#include "ditto/trace/trace.h"

namespace ditto::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateOp = "TrainState";

void add_prefixed(
    StateDict& into,
    const std::string& prefix,
    const StateDict& sd) {
  for (const auto& [k, t] : sd) {
    into.insert(prefix + k, t);
  }
}

StateDict take_prefixed(const StateDict& from, const std::string& prefix) {
  StateDict out;
  for (const auto& [k, t] : from) {
    if (k.compare(0, prefix.size(), prefix) == 0) {
      out.insert(k.substr(prefix.size()), t);
    }
  }
  return out;
}

std::vector<uint8_t> tensor_bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  const auto* p = static_cast<const uint8_t*>(c.raw_data());
  return std::vector<uint8_t>(p, p + c.numel());
}

Tensor bytes_tensor(const std::vector<uint8_t>& v) {
  Tensor t = empty({int64_t(v.size())}, kUInt8);
  if (!v.empty()) {
    std::memcpy(t.raw_data(), v.data(), v.size());
  }
  return t;
}

} // namespace

TrainState::TrainState(
    nn::Module& model,
    optim::Optimizer& optimizer,
    optim::LRScheduler* scheduler,
    data::DataLoader* loader)
    : model_(model),
      optimizer_(optimizer),
      scheduler_(scheduler),
      loader_(loader) {}

std::vector<CheckpointFile> TrainState::files(
    const Metadata& metadata,
    const Metadata& model_metadata) const {
  // Saving copies tensors out; a run that saves does the same computation
  // as one that does not, so the trace shows neither.
  trace::Suppress untraced;
  StateDict state;
  add_prefixed(state, "optimizer.", optimizer_.state_dict());
  if (scheduler_ != nullptr) {
    add_prefixed(state, "scheduler.", scheduler_->state_dict());
  }
  state.insert("rng.default", default_generator().get_state());
  for (const std::string& name : random::stream_names()) {
    state.insert("rng.stream." + name, random::stream(name).get_state());
  }
  for (const auto& [name, bytes] : registered_generator_states()) {
    state.insert("rng.external." + name, bytes_tensor(bytes));
  }
  Metadata meta = metadata;
  if (loader_ != nullptr) {
    meta["loader"] = loader_->state_dict().to_json();
  }
  const std::string cache = backends::conv::tuning_cache_json();
  return {
      {"model.safetensors",
       io::serialize_safetensors(model_.state_dict(), model_metadata)},
      {"train_state.safetensors", io::serialize_safetensors(state, meta)},
      {"tuning_cache", std::vector<uint8_t>(cache.begin(), cache.end())},
  };
}

std::string TrainState::save(
    const std::string& root,
    int64_t step,
    const Metadata& metadata,
    const Metadata& model_metadata,
    const std::vector<CheckpointFile>& extra,
    int keep) const {
  std::vector<CheckpointFile> all = files(metadata, model_metadata);
  all.insert(all.end(), extra.begin(), extra.end());
  const std::string name = checkpoint_name(step);
  write_checkpoint(root, name, all);
  prune_checkpoints(root, keep);
  return (fs::path(root) / name).string();
}

TrainState::Checkpoint TrainState::read(
    const std::string& where,
    const std::string& root,
    std::vector<std::string>* skipped) {
  std::string dir = where;
  if (where == "latest") {
    std::vector<std::string> incomplete;
    const auto all = list_checkpoints(root, &incomplete);
    std::string list;
    for (const std::string& d : incomplete) {
      list += (list.empty() ? "" : ", ") + d;
    }
    DITTO_CHECK(
        !all.empty(),
        ValueError,
        kStateOp,
        "no complete checkpoint in ",
        root,
        incomplete.empty() ? "" : " (incomplete, skipped: ",
        list,
        incomplete.empty() ? "" : ")");
    dir = all.back();
    if (skipped != nullptr) {
      *skipped = incomplete;
    }
  }
  DITTO_CHECK(
      fs::is_directory(dir),
      ValueError,
      kStateOp,
      dir,
      " is not a checkpoint directory");
  const std::string model_path = (fs::path(dir) / "model.safetensors").string();
  const std::string state_path =
      (fs::path(dir) / "train_state.safetensors").string();
  for (const std::string& p : {model_path, state_path}) {
    DITTO_CHECK(
        fs::exists(p),
        ValueError,
        kStateOp,
        p,
        ": missing (not a complete checkpoint)");
  }
  Checkpoint c{
      dir, io::load_safetensors(model_path), io::load_safetensors(state_path)};
  check_generator_states(c.state, state_path);
  return c;
}

void TrainState::check_generator_states(
    const io::SafetensorsFile& file,
    const std::string& source) {
  DITTO_CHECK(
      file.tensors.contains("rng.default"),
      ValueError,
      kStateOp,
      source,
      ": no 'rng.default' tensor");
  for (const auto& [k, t] : file.tensors) {
    const bool is_default = k == "rng.default";
    const bool is_stream = k.compare(0, 11, "rng.stream.") == 0;
    if (!is_default && !is_stream && k.compare(0, 13, "rng.external.") != 0) {
      continue;
    }
    DITTO_CHECK(
        t.dtype() == kUInt8 && t.dim() == 1,
        ValueError,
        kStateOp,
        source,
        ": '",
        k,
        "' is not a 1-D uint8 state");
    try {
      if (is_default) {
        default_generator().clone().set_state(t);
      } else if (is_stream) {
        DITTO_CHECK(
            k.size() > 11, ValueError, kStateOp, "an empty stream name");
        Generator::philox(0).set_state(t);
      }
    } catch (const Error& e) {
      detail::throw_error<ValueError>(
          kStateOp, source, ": '", k, "': ", e.what());
    }
  }
}

void TrainState::restore(const Checkpoint& c) const {
  const StateDict& state = c.state.tensors;
  try {
    // Each of these checks everything before it changes anything; the
    // process-wide generators come last.
    model_.load_state_dict(c.model.tensors);
    optimizer_.load_state_dict(take_prefixed(state, "optimizer."));
    if (scheduler_ != nullptr) {
      scheduler_->load_state_dict(take_prefixed(state, "scheduler."));
    }
    if (loader_ != nullptr) {
      auto it = c.state.metadata.find("loader");
      DITTO_CHECK(
          it != c.state.metadata.end(),
          ValueError,
          kStateOp,
          "no loader state");
      data::LoaderState ls = data::LoaderState::from_json(it->second);
      ls.num_workers = loader_->state_dict().num_workers;
      loader_->load_state_dict(ls);
    }
  } catch (const Error& e) {
    detail::throw_error<ValueError>(kStateOp, c.dir, ": ", e.what());
  }
  default_generator().set_state(state.at("rng.default"));
  std::map<std::string, std::vector<uint8_t>> ext;
  for (const auto& [k, t] : state) {
    if (k.compare(0, 11, "rng.stream.") == 0) {
      random::stream(k.substr(11)).set_state(t);
    } else if (k.compare(0, 13, "rng.external.") == 0) {
      ext[k.substr(13)] = tensor_bytes(t);
    }
  }
  set_registered_generator_states(ext);
  // The convolution choices the run made so far, so that with benchmarking
  // on the resumed run picks the same algorithms (a cache from another CPU
  // capability is refused with a warning, and timing starts afresh).
  const std::string cache = (fs::path(c.dir) / "tuning_cache").string();
  if (fs::exists(cache) && backends::conv::load_tuning_cache(cache)) {
    backends::conv::replay_only(true);
  }
}

} // namespace ditto::train
