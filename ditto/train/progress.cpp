// The checkpoint's progress records (JSON with exact bits), the reader of
// train_state.safetensors, and the weights' fingerprint.

#include "ditto/train/detail/progress.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ditto/core/error.h"
#include "ditto/core/json_int.h"
#include "ditto/core/json_read.h"
#include "ditto/nn/module.h"
#include "ditto/train/state.h"

namespace ditto::train {

using json = nlohmann::json;

namespace {
constexpr const char* kProgressOp = "train";
} // namespace

namespace progress_json {

std::string exact(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return hex64(bits);
}

// The inverse of hex64: exactly 16 lowercase hex digits.
uint64_t parse_hex64(const std::string& s, const std::string& what) {
  DITTO_CHECK(
      s.size() == 16 &&
          s.find_first_not_of("0123456789abcdef") == std::string::npos,
      ValueError,
      kProgressOp,
      what,
      ": not a 16-digit hex value: '",
      s,
      "'");
  return std::stoull(s, nullptr, 16);
}

double from_exact(const std::string& s, const std::string& what) {
  const uint64_t bits = parse_hex64(s, what);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

json epoch_json_value(const EpochRecord& e) {
  return json{
      {"epoch", e.epoch},
      {"step", e.step},
      {"train_loss", e.train_loss},
      {"test_loss", e.test.loss},
      {"accuracy", e.test.accuracy},
      {"seconds", e.seconds},
      {"fingerprint", hex64(e.fingerprint)},
      {"exact",
       {exact(e.train_loss), exact(e.test.loss), exact(e.test.accuracy)}}};
}

EpochRecord epoch_from_json(const json& j) {
  EpochRecord e;
  e.epoch = ::ditto::detail::json_int(j.at("epoch"));
  e.step = ::ditto::detail::json_int(j.at("step"));
  e.seconds = j.at("seconds").get<double>();
  e.fingerprint = parse_hex64(
      j.at("fingerprint").get<std::string>(), "history fingerprint");
  const json& x = j.at("exact");
  e.train_loss = from_exact(x.at(0).get<std::string>(), "history");
  e.test.loss = from_exact(x.at(1).get<std::string>(), "history");
  e.test.accuracy = from_exact(x.at(2).get<std::string>(), "history");
  return e;
}

} // namespace progress_json

using progress_json::epoch_from_json;
using progress_json::epoch_json_value;
using progress_json::exact;
using progress_json::from_exact;
using progress_json::kFormat;
using progress_json::kFormatVersion;
using progress_json::parse_hex64;

std::string epoch_json(const EpochRecord& e) {
  return epoch_json_value(e).dump();
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

uint64_t weights_fingerprint(const std::vector<Tensor>& tensors) {
  XXH3_state_t* st = XXH3_createState();
  DITTO_CHECK(st != nullptr, Error, "weights_fingerprint", "out of memory");
  XXH3_64bits_reset(st);
  for (const Tensor& p : tensors) {
    Tensor c = p.cpu().contiguous(); // a device's weights: their bytes
    XXH3_64bits_update(
        st, c.raw_data(), size_t(c.numel()) * element_size(c.dtype()));
  }
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

uint64_t weights_fingerprint(const nn::Module& module) {
  std::vector<Tensor> params;
  for (const auto& [name, p] : module.named_parameters()) {
    params.push_back(p);
  }
  return weights_fingerprint(params);
}

CheckpointProgress read_train_state(
    const io::SafetensorsFile& file,
    const std::string& source) {
  auto meta = [&](const std::string& key) -> const std::string& {
    auto it = file.metadata.find(key);
    DITTO_CHECK(
        it != file.metadata.end(),
        ValueError,
        kProgressOp,
        source,
        ": metadata has no '",
        key,
        "'");
    return it->second;
  };
  DITTO_CHECK(
      meta("format") == kFormat,
      ValueError,
      kProgressOp,
      source,
      ": not a ditto checkpoint (format '",
      meta("format"),
      "')");
  DITTO_CHECK(
      meta("version") == std::to_string(kFormatVersion),
      ValueError,
      kProgressOp,
      source,
      ": checkpoint format version ",
      meta("version"),
      ", this ditto reads version ",
      kFormatVersion);
  CheckpointProgress p;
  try {
    const json settings =
        detail::parse_json(meta("settings"), kProgressOp, "settings");
    DITTO_CHECK(
        settings.is_object(),
        ValueError,
        kProgressOp,
        "settings: not an object");
    p.settings_json = settings.dump();
    const json progress =
        detail::parse_json(meta("progress"), kProgressOp, "progress");
    p.step = detail::json_int(progress.at("step"));
    p.epoch = detail::json_int(progress.at("epoch"));
    p.epoch_loss_sum = from_exact(
        progress.at("epoch_loss_sum").get<std::string>(), "progress");
    p.epoch_loss_count = detail::json_int(progress.at("epoch_loss_count"));
    p.epoch_seconds = progress.at("epoch_seconds").get<double>();
    DITTO_CHECK(
        p.step >= 0 && p.epoch >= 0 && p.epoch_loss_count >= 0 &&
            p.epoch_loss_count <= p.step,
        ValueError,
        kProgressOp,
        "progress: inconsistent counts (step ",
        p.step,
        ", epoch ",
        p.epoch,
        ", epoch steps ",
        p.epoch_loss_count,
        ")");
    for (const json& e : progress.at("history")) {
      p.history.push_back(epoch_from_json(e));
    }
    DITTO_CHECK(
        int64_t(p.history.size()) == p.epoch,
        ValueError,
        kProgressOp,
        "progress: ",
        p.history.size(),
        " epoch records for ",
        p.epoch,
        " completed epochs");
    p.loader = data::LoaderState::from_json(meta("loader"));
  } catch (const json::exception& e) {
    detail::throw_error<ValueError>(
        kProgressOp, source, ": malformed metadata: ", e.what());
  } catch (const Error& e) {
    detail::throw_error<ValueError>(kProgressOp, source, ": ", e.what());
  }
  // Generator states: 1-D uint8 blobs the generators accept (checked on
  // copies; nothing is applied here).
  TrainState::check_generator_states(file, source);
  return p;
}

} // namespace ditto::train
