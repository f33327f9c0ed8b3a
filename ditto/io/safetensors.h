#pragma once

// safetensors files (huggingface's format): an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range,
// then the data. ditto writes what the reference writer writes (tensors
// sorted by dtype, then name; compact JSON; header padded to 8 bytes) and
// reads strictly, with the reference reader's checks. See docs/io.md.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ditto/core/state_dict.h"

namespace ditto::io {

struct SafetensorsFile {
  StateDict tensors; // in the file's data order
  std::map<std::string, std::string> metadata;
};

// The file's bytes. Tensors are written contiguous, little-endian, in
// row-major order; dtypes float32 F32, float64 F64, int64 I64, int32 I32,
// uint8 U8, bool BOOL. ValueError on an undefined tensor, an empty or
// duplicate name, or two names sharing storage (as safetensors.torch).
DITTO_API std::vector<uint8_t> serialize_safetensors(
    const StateDict& tensors,
    const std::map<std::string, std::string>& metadata = {});
// Writes serialize_safetensors' bytes atomically (a temporary beside the
// file, then renamed over it).
DITTO_API void save_safetensors(
    const std::string& path,
    const StateDict& tensors,
    const std::map<std::string, std::string>& metadata = {});

// Parses a whole file's bytes with the reference reader's checks (header
// size, JSON schema, dtypes, offsets that tile the data exactly, sizes that
// match shapes); every failure is a ValueError naming source and the
// check. dtypes ditto has no tensor type for (F16, BF16, ...) are refused
// by name.
DITTO_API SafetensorsFile parse_safetensors(
    std::span<const uint8_t> bytes,
    const std::string& source = "<memory>");
DITTO_API SafetensorsFile load_safetensors(const std::string& path);

} // namespace ditto::io
