#pragma once

// Internal: the checkpoint format's progress records as JSON, shared by the
// training loop (trainer.cpp) and the checkpoint reader (progress.cpp).

#include <nlohmann/json.hpp>
#include <string>

#include "ditto/train/trainer.h"

namespace ditto::train::progress_json {

inline constexpr const char* kFormat = "ditto-checkpoint";
inline constexpr int kFormatVersion = 1;

// Doubles travel through JSON as their exact bits (16 hex digits), so a
// resumed run sums and reports the same values.
std::string exact(double v);
double from_exact(const std::string& s, const std::string& what);
uint64_t parse_hex64(const std::string& s, const std::string& what);
nlohmann::json epoch_json_value(const EpochRecord& e);
EpochRecord epoch_from_json(const nlohmann::json& j);

} // namespace ditto::train::progress_json
