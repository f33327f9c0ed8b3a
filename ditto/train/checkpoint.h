#pragma once

// Checkpoint directories, written atomically: every file goes into a
// temporary directory beside the final one, each file and the directory are
// fsync'ed, then the directory is renamed to its name and the parent
// fsync'ed. A crash at any moment leaves either the complete checkpoint or
// no directory of that name (a leftover ".tmp-" directory is ignored and
// removed by the next save). See docs/train.md.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ditto/core/api.h"

namespace ditto::train {

struct CheckpointFile {
  std::string name; // a plain file name, no '/'
  std::vector<uint8_t> bytes;
};

// The name of the checkpoint of a step: "step-00000123".
DITTO_API std::string checkpoint_name(int64_t step);

// Writes files as dir/name, atomically (see above). An existing checkpoint
// of that name is replaced only once the new one is complete. ValueError
// naming the path when a write fails; nothing is left under the name then.
DITTO_API void write_checkpoint(
    const std::string& root,
    const std::string& name,
    const std::vector<CheckpointFile>& files);

// The files a checkpoint directory must hold to be complete (its
// tuning_cache is optional: checkpoints from before it existed lack it).
inline constexpr const char* kCheckpointRequiredFiles[] = {
    "model.safetensors",
    "train_state.safetensors"};

// True when dir holds every required file, each a regular file.
DITTO_API bool checkpoint_complete(const std::string& dir);

// The complete checkpoints under root ("step-N" directories), oldest (the
// smallest step) first, as full paths. Empty when root does not exist. A
// "step-N" directory without all its files (empty, or a crash's leftover
// made by hand) is not listed; with incomplete, those are returned there,
// oldest first.
DITTO_API std::vector<std::string> list_checkpoints(
    const std::string& root,
    std::vector<std::string>* incomplete = nullptr);

// Removes all but the keep newest checkpoints, incomplete "step-N"
// directories and leftover temporary directories; each goes by a rename to
// a temporary name first, so a kill during pruning leaves no empty
// "step-N". keep <= 0 keeps everything (temporary directories still go).
DITTO_API void prune_checkpoints(const std::string& root, int keep);

// A test hook: with DITTO_TRAIN_FAULT=checkpoint-between-files in the
// environment, write_checkpoint kills the process (SIGKILL, as kill -9)
// after the first file, to show that a crash mid-save leaves the previous
// checkpoint loadable.
inline constexpr const char* kFaultEnv = "DITTO_TRAIN_FAULT";

} // namespace ditto::train
