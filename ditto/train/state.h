#pragma once

// The bit-exact state of a training loop (R4), for any loop: `ditto train`
// uses it, and so can a program's own loop (examples/char_lstm.cpp). A
// checkpoint of it holds the model's parameters and buffers, the
// optimizer's and the scheduler's state, the default generator, every named
// stream, every registered generator (random::register_generator), the data
// loader's position and the convolution tuning cache, with the loop's own
// progress as metadata. Resuming from it continues the run with the same
// bits as a run that never stopped. See docs/train.md.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ditto/io/safetensors.h"
#include "ditto/train/checkpoint.h"

namespace ditto {
namespace nn {
class Module;
}
namespace optim {
class Optimizer;
class LRScheduler;
} // namespace optim
namespace data {
class DataLoader;
}
} // namespace ditto

namespace ditto::train {

using Metadata = std::map<std::string, std::string>;

class DITTO_API TrainState {
 public:
  // The parts a checkpoint holds; scheduler and loader are optional. They
  // are held by reference and must outlive this object.
  TrainState(
      nn::Module& model,
      optim::Optimizer& optimizer,
      optim::LRScheduler* scheduler = nullptr,
      data::DataLoader* loader = nullptr);

  // The checkpoint's files: model.safetensors (model_metadata in its
  // header), train_state.safetensors (the optimizer's and scheduler's
  // tensors, every generator, and metadata plus the loader's position under
  // "loader"), tuning_cache.
  std::vector<CheckpointFile> files(
      const Metadata& metadata,
      const Metadata& model_metadata = {}) const;
  // Writes files() and extra as root/step-<step>, atomically
  // (write_checkpoint), then keeps the newest keep (0: all). Returns the
  // directory.
  std::string save(
      const std::string& root,
      int64_t step,
      const Metadata& metadata,
      const Metadata& model_metadata = {},
      const std::vector<CheckpointFile>& extra = {},
      int keep = 0) const;

  // A checkpoint read and checked, not applied: its metadata is there for
  // the loop to check against its own settings before restore().
  struct Checkpoint {
    std::string dir;
    io::SafetensorsFile model;
    io::SafetensorsFile state;
    const Metadata& metadata() const {
      return state.metadata;
    }
  };
  // where: a checkpoint directory, or "latest": the newest complete one
  // under root (incomplete ones are skipped and listed in skipped). Reads
  // both files and checks the generator states. ValueError naming the path
  // for anything missing or malformed; nothing is changed.
  static Checkpoint read(
      const std::string& where,
      const std::string& root = {},
      std::vector<std::string>* skipped = nullptr);
  // Restores c: the model, the optimizer, the scheduler and the loader
  // (each checks everything before it changes anything; the loader keeps
  // its own number of workers), then every generator and stream, and the
  // tuning cache (replayed, so a benchmarking run picks the same
  // algorithms). ValueError naming c.dir when a part does not fit.
  void restore(const Checkpoint& c) const;

  // Checks that file's generator tensors ("rng.default", "rng.stream.*",
  // "rng.external.*") are states the generators accept; applies nothing.
  static void check_generator_states(
      const io::SafetensorsFile& file,
      const std::string& source);

 private:
  nn::Module& model_;
  optim::Optimizer& optimizer_;
  optim::LRScheduler* scheduler_;
  data::DataLoader* loader_;
};

} // namespace ditto::train
