#include "ditto/train/checkpoint.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "ditto/core/error.h"
#include "ditto/core/file_io.h"

namespace ditto::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCheckpointOp = "checkpoint";
constexpr std::string_view kPrefix = "step-";
constexpr std::string_view kTmpPrefix = ".tmp-";

// The step of a checkpoint directory's name, nullopt for other names.
std::optional<int64_t> step_of(const std::string& name) {
  if (name.size() <= kPrefix.size() ||
      name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return std::nullopt;
  }
  int64_t step = 0;
  for (size_t i = kPrefix.size(); i < name.size(); ++i) {
    const char c = name[i];
    if (c < '0' || c > '9' || step > (INT64_MAX - 9) / 10) {
      return std::nullopt;
    }
    step = step * 10 + (c - '0');
  }
  return step;
}

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

bool fault_between_files() {
  const char* v = std::getenv(kFaultEnv);
  return v != nullptr && std::strcmp(v, "checkpoint-between-files") == 0;
}

} // namespace

std::string checkpoint_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

void write_checkpoint(
    const std::string& root,
    const std::string& name,
    const std::vector<CheckpointFile>& files) {
  DITTO_CHECK(
      !name.empty() && name.find('/') == std::string::npos && name[0] != '.',
      ValueError,
      kCheckpointOp,
      "invalid checkpoint name '",
      name,
      "'");
  std::error_code ec;
  fs::create_directories(root, ec);
  DITTO_CHECK(
      !ec,
      ValueError,
      kCheckpointOp,
      "cannot create ",
      root,
      ": ",
      ec.message());
  const fs::path final_dir = fs::path(root) / name;
  const fs::path tmp =
      fs::path(root) / detail::str_cat(kTmpPrefix, name, ".", ::getpid());
  remove_quietly(tmp);
  try {
    fs::create_directory(tmp, ec);
    DITTO_CHECK(
        !ec,
        ValueError,
        kCheckpointOp,
        "cannot create ",
        tmp.string(),
        ": ",
        ec.message());
    for (size_t i = 0; i < files.size(); ++i) {
      const CheckpointFile& f = files[i];
      DITTO_CHECK(
          !f.name.empty() && f.name.find('/') == std::string::npos,
          ValueError,
          kCheckpointOp,
          "invalid file name '",
          f.name,
          "'");
      detail::write_file_synced(
          (tmp / f.name).string(),
          std::string_view(
              reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size()),
          kCheckpointOp);
      if (i == 0 && fault_between_files()) {
        ::kill(::getpid(), SIGKILL);
      }
    }
    detail::fsync_directory(tmp.string(), kCheckpointOp);
    // An existing checkpoint of that name moves aside first (rename cannot
    // replace a non-empty directory) and is removed once the new one is in
    // place.
    const fs::path old =
        fs::path(root) / detail::str_cat(kTmpPrefix, name, ".old.", ::getpid());
    const bool had_old = fs::exists(final_dir);
    if (had_old) {
      remove_quietly(old);
      fs::rename(final_dir, old, ec);
      DITTO_CHECK(
          !ec,
          ValueError,
          kCheckpointOp,
          "cannot replace ",
          final_dir.string(),
          ": ",
          ec.message());
    }
    fs::rename(tmp, final_dir, ec);
    DITTO_CHECK(
        !ec,
        ValueError,
        kCheckpointOp,
        "cannot write ",
        final_dir.string(),
        ": ",
        ec.message());
    detail::fsync_directory(root, kCheckpointOp);
    if (had_old) {
      remove_quietly(old);
    }
  } catch (...) {
    remove_quietly(tmp);
    throw;
  }
}

bool checkpoint_complete(const std::string& dir) {
  for (const char* name : kCheckpointRequiredFiles) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::path(dir) / name, ec)) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> list_checkpoints(
    const std::string& root,
    std::vector<std::string>* incomplete) {
  std::vector<std::pair<int64_t, std::string>> found, partial;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return {};
  }
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (auto step = step_of(name); step && e.is_directory(ec)) {
      (checkpoint_complete(e.path().string()) ? found : partial)
          .emplace_back(*step, e.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  std::sort(partial.begin(), partial.end());
  std::vector<std::string> out;
  for (auto& f : found) {
    out.push_back(std::move(f.second));
  }
  if (incomplete != nullptr) {
    incomplete->clear();
    for (auto& f : partial) {
      incomplete->push_back(std::move(f.second));
    }
  }
  return out;
}

namespace {

// A checkpoint leaves by a rename to a temporary name, then its removal: a
// kill during the removal leaves a ".tmp-" directory, which the next prune
// removes, never an empty or partial "step-N" (issue 61, item 18).
void retire(const std::string& root, const fs::path& dir) {
  const fs::path tmp =
      fs::path(root) /
      detail::str_cat(
          kTmpPrefix, "pruned-", dir.filename().string(), ".", ::getpid());
  std::error_code ec;
  fs::rename(dir, tmp, ec);
  remove_quietly(ec ? dir : tmp);
}

} // namespace

void prune_checkpoints(const std::string& root, int keep) {
  std::error_code ec;
  if (fs::is_directory(root, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
      const std::string name = e.path().filename().string();
      if (name.compare(0, kTmpPrefix.size(), kTmpPrefix) == 0) {
        remove_quietly(e.path());
      }
    }
  }
  if (keep <= 0) {
    return;
  }
  // Saves rename complete directories into place, so an incomplete
  // "step-N" is a leftover of an older prune that was killed: it goes too.
  std::vector<std::string> incomplete;
  const std::vector<std::string> all = list_checkpoints(root, &incomplete);
  for (const std::string& dir : incomplete) {
    retire(root, dir);
  }
  for (size_t i = 0; i + size_t(keep) < all.size(); ++i) {
    retire(root, all[i]);
  }
}

} // namespace ditto::train
