#include "ditto/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "ditto/core/error.h"
#include "ditto/core/file_io.h"
#include "ditto/core/json_read.h"
#include "ditto/ops/factories.h"

static_assert(
    std::endian::native == std::endian::little,
    "safetensors data is little-endian; ditto supports little-endian hosts");

namespace ditto::io {
namespace {

constexpr uint64_t kMaxHeader = 100'000'000; // the reference reader's limit

struct DtypeName {
  Dtype dtype;
  const char* name;
  int rank; // the reference writer's order (higher first)
};

// The dtypes ditto has, with their rank in the reference enum order
// BOOL < F4 < F6_E2M3 < F6_E3M2 < U8 < I8 < F8_E5M2 < F8_E4M3 < F8_E8M0 <
// I16 < U16 < F16 < BF16 < I32 < U32 < F32 < C64 < F64 < I64 < U64.
constexpr DtypeName kDtypes[] = {
    {kBool, "BOOL", 0},
    {kUInt8, "U8", 4},
    {kInt8, "I8", 5},
    {kInt16, "I16", 9},
    {kFloat16, "F16", 11},
    {kBFloat16, "BF16", 12},
    {kInt32, "I32", 13},
    {kFloat32, "F32", 15},
    {kFloat64, "F64", 17},
    {kInt64, "I64", 18},
};
// Valid names ditto cannot hold.
constexpr const char* kForeign[] = {
    "F4",
    "F6_E2M3",
    "F6_E3M2",
    "F8_E5M2",
    "F8_E4M3",
    "F8_E8M0",
    "U16",
    "U32",
    "C64",
    "U64"};

const DtypeName& of(Dtype d) {
  for (const auto& e : kDtypes) {
    if (e.dtype == d) {
      return e;
    }
  }
  detail::throw_error<TypeError>(
      "save_safetensors", "no safetensors dtype for ", d);
}

// Well-formed UTF-8 (no overlongs, surrogates or code points past
// U+10FFFF).
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + size_t(n) >= s.size()) {
      return false; // fewer continuation bytes than announced
    }
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + size_t(k)]);
      if ((d & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (d & 0x3F);
    }
    const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += size_t(n) + 1;
  }
  return true;
}

} // namespace

std::vector<uint8_t> serialize_safetensors(
    const StateDict& tensors,
    const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  struct Item {
    std::string name;
    Tensor t;
    int rank;
  };
  std::vector<Item> items;
  std::set<std::string> names;
  std::set<const Storage*> storages;
  for (const auto& [name, t] : tensors) {
    DITTO_CHECK(!name.empty(), ValueError, op, "an empty tensor name");
    DITTO_CHECK(
        name != "__metadata__", ValueError, op, "\"__metadata__\" is reserved");
    DITTO_CHECK(
        names.insert(name).second, ValueError, op, "duplicate name ", name);
    DITTO_CHECK(t.defined(), ValueError, op, "undefined tensor ", name);
    DITTO_CHECK(
        !t.is_sparse(),
        TypeError,
        op,
        "tensor ",
        name,
        " is sparse (layout torch.sparse_coo); safetensors holds dense "
        "tensors only: save its to_dense(), or its _indices() and _values() "
        "as two tensors");
    DITTO_CHECK(
        t.numel() == 0 || storages.insert(t.impl()->storage().get()).second,
        ValueError,
        op,
        "tensor ",
        name,
        " shares memory with another tensor; save a copy (clone) of one of "
        "them");
    // Device tensors are written from a host copy (the file holds bytes).
    items.push_back({name, t.cpu().contiguous(), of(t.dtype()).rank});
  }
  std::stable_sort(
      items.begin(), items.end(), [](const Item& a, const Item& b) {
        return a.rank != b.rank ? a.rank > b.rank : a.name < b.name;
      });
  // Compact JSON: metadata first, then tensors in data order.
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    h["__metadata__"] = metadata;
  }
  uint64_t offset = 0;
  for (const Item& it : items) {
    const uint64_t n = uint64_t(it.t.numel()) * it.t.element_size();
    h[it.name] = {
        {"dtype", of(it.t.dtype()).name},
        {"shape", it.t.sizes()},
        {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  // The reader refuses a header over kMaxHeader (as the reference reader
  // does): a file it could not read is never written, and the file at the
  // path is left as it was (the check comes before any write).
  DITTO_CHECK(
      header.size() <= kMaxHeader,
      ValueError,
      "save_safetensors",
      "HeaderTooLarge: the header of these ",
      items.size(),
      " tensors and the metadata would be ",
      header.size(),
      " bytes, more than the 100000000 a reader accepts (fewer tensors, "
      "shorter names or less metadata)");
  std::vector<uint8_t> out(8 + header.size() + offset);
  const uint64_t hn = header.size();
  std::memcpy(out.data(), &hn, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  uint8_t* data = out.data() + 8 + header.size();
  for (const Item& it : items) {
    const size_t n = size_t(it.t.numel()) * it.t.element_size();
    if (n > 0) {
      std::memcpy(data, it.t.raw_data(), n);
    }
    data += n;
  }
  return out;
}

void save_safetensors(
    const std::string& path,
    const StateDict& tensors,
    const std::map<std::string, std::string>& metadata) {
  const std::vector<uint8_t> bytes = serialize_safetensors(tensors, metadata);
  detail::write_file_atomic(
      path,
      std::string_view(
          reinterpret_cast<const char*>(bytes.data()), bytes.size()),
      "save_safetensors");
}

SafetensorsFile parse_safetensors(
    std::span<const uint8_t> bytes,
    const std::string& source) {
  auto fail = [&](const std::string& what) {
    detail::throw_error<ValueError>("load_safetensors", source, ": ", what);
  };
  if (bytes.size() < 8) {
    fail(
        "HeaderTooSmall: the file has " + std::to_string(bytes.size()) +
        " bytes, fewer than the 8 of the header length");
  }
  // PyTorch's own torch.save formats: a zip archive of pickles (since
  // 1.6) or a bare pickle (protocol 2+ starts 0x80). Name them, instead of
  // reading their first bytes as a header length.
  if (bytes[0] == 'P' && bytes[1] == 'K' && bytes[2] == 3 && bytes[3] == 4) {
    fail(
        "this is a PyTorch .pt file (torch.save's zip archive of pickles), "
        "not safetensors: save the state_dict with "
        "safetensors.torch.save_file, or load it with torch and pass the "
        "tensors to ditto.tensor");
  }
  if (bytes[0] == 0x80 && bytes[1] >= 2 && bytes[1] <= 5) {
    fail(
        "this looks like a pickle (torch.save's legacy format), not "
        "safetensors: save the state_dict with safetensors.torch.save_file");
  }
  uint64_t hn = 0;
  std::memcpy(&hn, bytes.data(), 8);
  if (hn > kMaxHeader) {
    fail(
        "HeaderTooLarge: a header of " + std::to_string(hn) +
        " bytes (at most 100000000)");
  }
  if (hn > bytes.size() - 8) {
    fail(
        "InvalidHeaderLength: a header of " + std::to_string(hn) +
        " bytes in a file of " + std::to_string(bytes.size()));
  }
  const std::string_view text(
      reinterpret_cast<const char*>(bytes.data() + 8), size_t(hn));
  if (!valid_utf8(text)) {
    fail("InvalidHeader: the header is not UTF-8");
  }
  // The JSON nests at most 3 deep ({ name: { shape: [ ] } }); deeper input
  // is refused before parsing (Note [Limits on JSON read from files]).
  if (!detail::json_nesting_at_most(text, 3)) {
    fail(
        "InvalidHeaderDeserialization: the header nests deeper than "
        "{name: {key: [...]}}");
  }
  // A key twice in one object is refused (nlohmann would keep the last).
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto watch =
      [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (event == Event::object_start) {
          keys.emplace_back();
        } else if (event == Event::object_end) {
          keys.pop_back();
        } else if (
            event == Event::key && !keys.empty() && duplicate.empty() &&
            !keys.back().insert(parsed.get<std::string>()).second) {
          duplicate = parsed.get<std::string>();
        }
        return true;
      };
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("InvalidHeaderDeserialization: ") + e.what());
  }
  if (!duplicate.empty()) {
    fail(
        "InvalidHeaderDeserialization: the key \"" + duplicate +
        "\" appears twice in one object");
  }
  if (!h.is_object()) {
    fail("InvalidHeaderDeserialization: the header is not a JSON object");
  }
  struct Entry {
    std::string name;
    Dtype dtype;
    Shape shape;
    uint64_t begin, end;
  };
  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [name, v] : h.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) {
        fail("InvalidHeaderDeserialization: __metadata__ is not an object");
      }
      for (const auto& [k, s] : v.items()) {
        if (!s.is_string()) {
          fail(
              "InvalidHeaderDeserialization: __metadata__ value of \"" + k +
              "\" is not a string");
        }
        out.metadata[k] = s.get<std::string>();
      }
      continue;
    }
    if (name.empty()) {
      fail("InvalidHeaderDeserialization: a tensor with an empty name");
    }
    const std::string where = "tensor \"" + name + "\": ";
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
        !v.contains("data_offsets") || v.size() != 3 ||
        !v["dtype"].is_string() || !v["shape"].is_array() ||
        !v["data_offsets"].is_array() || v["data_offsets"].size() != 2) {
      fail(
          "InvalidHeaderDeserialization: " + where +
          "expected {\"dtype\", \"shape\", \"data_offsets\": [begin, end]}");
    }
    Entry e{name, kFloat32, {}, 0, 0};
    const std::string dt = v["dtype"].get<std::string>();
    bool known = false;
    for (const auto& d : kDtypes) {
      if (dt == d.name) {
        e.dtype = d.dtype;
        known = true;
      }
    }
    if (!known) {
      const bool foreign = std::any_of(
          std::begin(kForeign), std::end(kForeign), [&](const char* f) {
            return dt == f;
          });
      fail(
          (foreign ? "unsupported dtype "
                   : "InvalidHeaderDeserialization: unknown dtype ") +
          dt + " of " + where.substr(0, where.size() - 2));
    }
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) {
        fail(
            "InvalidHeaderDeserialization: " + where +
            "shape entries must be non-negative integers");
      }
      const uint64_t s = d.get<uint64_t>();
      if (s > uint64_t(INT64_MAX)) {
        fail("ValidationOverflow: " + where + "a dim exceeds int64");
      }
      e.shape.push_back(int64_t(s));
    }
    for (int k = 0; k < 2; ++k) {
      if (!v["data_offsets"][k].is_number_unsigned()) {
        fail(
            "InvalidHeaderDeserialization: " + where +
            "data_offsets must be non-negative integers");
      }
    }
    e.begin = v["data_offsets"][0].get<uint64_t>();
    e.end = v["data_offsets"][1].get<uint64_t>();
    entries.push_back(std::move(e));
  }
  // Offsets must tile the data buffer exactly.
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries[a].begin != entries[b].begin
        ? entries[a].begin < entries[b].begin
        : entries[a].end < entries[b].end;
  });
  uint64_t expected_begin = 0;
  for (size_t i : order) {
    const Entry& e = entries[i];
    if (e.begin != expected_begin || e.end < e.begin) {
      fail(
          "InvalidOffset: tensor \"" + e.name + "\" has data_offsets [" +
          std::to_string(e.begin) + ", " + std::to_string(e.end) +
          "], expected to begin at " + std::to_string(expected_begin));
    }
    uint64_t numel = 1;
    for (int64_t d : e.shape) {
      if (d != 0 && numel > UINT64_MAX / uint64_t(d)) {
        fail(
            "ValidationOverflow: tensor \"" + e.name +
            "\": the number of elements overflows");
      }
      numel *= uint64_t(d);
    }
    const uint64_t es = element_size(e.dtype);
    if (numel > UINT64_MAX / es || numel > uint64_t(INT64_MAX)) {
      fail(
          "ValidationOverflow: tensor \"" + e.name +
          "\": the byte size overflows");
    }
    if (e.end - e.begin != numel * es) {
      fail(
          "TensorInvalidInfo: tensor \"" + e.name + "\" of shape " +
          shape_str(e.shape) + " needs " + std::to_string(numel * es) +
          " bytes, its data_offsets give " + std::to_string(e.end - e.begin));
    }
    if (e.dtype == kBool) {
      // A C++ bool holds 0 or 1 only.
      const uint8_t* p = bytes.data() + 8 + hn + e.begin;
      for (uint64_t k = 0;
           k < e.end - e.begin && e.end <= bytes.size() - 8 - hn;
           ++k) {
        if (p[k] > 1) {
          fail(
              "InvalidBool: tensor \"" + e.name + "\" holds the byte " +
              std::to_string(p[k]) + ", not 0 or 1");
        }
      }
    }
    expected_begin = e.end;
  }
  if (expected_begin != bytes.size() - 8 - hn) {
    fail(
        "MetadataIncompleteBuffer: the tensors cover " +
        std::to_string(expected_begin) + " bytes of a data buffer of " +
        std::to_string(bytes.size() - 8 - hn));
  }
  // Everything checked: build the tensors in data order.
  const uint8_t* data = bytes.data() + 8 + hn;
  for (size_t i : order) {
    const Entry& e = entries[i];
    Tensor t = empty(e.shape, e.dtype);
    if (e.end > e.begin) {
      std::memcpy(t.raw_data(), data + e.begin, size_t(e.end - e.begin));
    }
    out.tensors.insert(e.name, t);
  }
  return out;
}

SafetensorsFile load_safetensors(const std::string& path) {
  const std::string bytes = detail::read_regular_file(path, "load_safetensors");
  return parse_safetensors(
      std::span<const uint8_t>(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
      path);
}

} // namespace ditto::io
