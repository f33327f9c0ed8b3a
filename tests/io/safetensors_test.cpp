// safetensors: the published test vectors of the reference implementation
// (huggingface/safetensors v0.7.0, safetensors/src/tensor.rs; see
// ../shared/reference/pytorch-training.md section 12 and its
// check_safetensors.py), the strict reader's errors, round trips of every
// dtype, and atomic writes.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "ditto/ditto.h"
#include "ditto/io/safetensors.h"

namespace ditto {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes bytes_of(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

Bytes le64(uint64_t v) {
  Bytes b(8);
  std::memcpy(b.data(), &v, 8);
  return b;
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

Bytes f32_0_to_5() {
  Bytes b(24);
  for (int i = 0; i < 6; ++i) {
    const float v = float(i);
    std::memcpy(b.data() + 4 * i, &v, 4);
  }
  return b;
}

// The reader's error for bytes: the check's name, or "" if accepted.
std::string error_of(const Bytes& b) {
  try {
    io::parse_safetensors(b, "vector");
    return "";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    const size_t at = msg.find("vector: ");
    EXPECT_NE(at, std::string::npos) << msg;
    const std::string rest = msg.substr(at + 8);
    return rest.substr(0, rest.find(':'));
  }
}

TEST(Safetensors, WritesThePublishedTestVectors) {
  nn::StateDict one;
  one.insert("attn.0", arange(6.0).to(kFloat32).view({1, 2, 3}));
  EXPECT_EQ(
      io::serialize_safetensors(one),
      cat(
          {le64(64),
           bytes_of("{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],"
                    "\"data_offsets\":[0,24]}}"),
           f32_0_to_5()}));
  EXPECT_EQ(
      io::serialize_safetensors({}), cat({le64(8), bytes_of("{}      ")}));
  EXPECT_EQ(
      io::serialize_safetensors({}, {{"framework", "pt"}}),
      cat(
          {le64(40),
           bytes_of("{\"__metadata__\":{\"framework\":\"pt\"}}     ")}));
  nn::StateDict aligned;
  aligned.insert("attn0", arange(6.0).to(kFloat32).view({1, 1, 2, 3}));
  EXPECT_EQ(
      io::serialize_safetensors(aligned),
      cat(
          {le64(72),
           bytes_of("{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],"
                    "\"data_offsets\":[0,24]}}       "),
           f32_0_to_5()}));
}

TEST(Safetensors, ReaderChecksAsTheReference) {
  const Bytes doc = cat(
      {le64(60),
       bytes_of("{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":"
                "[0,16]}}"),
       Bytes(16, 0)});
  EXPECT_EQ(error_of(doc), "");
  Bytes extra = doc;
  extra.push_back(1);
  EXPECT_EQ(error_of(extra), "MetadataIncompleteBuffer");
  EXPECT_EQ(
      error_of(Bytes(doc.begin(), doc.end() - 2)), "MetadataIncompleteBuffer");
  Bytes large = doc;
  large[5] = large[6] = large[7] = 0xff;
  EXPECT_EQ(error_of(large), "HeaderTooLarge");
  EXPECT_EQ(error_of({}), "HeaderTooSmall");
  EXPECT_EQ(error_of(le64(60)), "InvalidHeaderLength");
  EXPECT_EQ(error_of(cat({le64(1), Bytes{0xff}})), "InvalidHeader");
  EXPECT_EQ(
      error_of(cat({le64(1), bytes_of("{")})), "InvalidHeaderDeserialization");
  EXPECT_EQ(
      error_of(cat(
          {le64(60),
           bytes_of("{\"test\":{\"dtype\":\"I32\",\"shape\":[2,0],"
                    "\"data_offsets\":[0, 0]}}")})),
      "");
  EXPECT_EQ(
      error_of(cat(
          {le64(60),
           bytes_of("{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],"
                    "\"data_offsets\":[0, 4]}}")})),
      "TensorInvalidInfo");
  nn::StateDict two;
  two.insert("a", tensor(std::vector<uint8_t>{1, 2}));
  two.insert("b", tensor(std::vector<uint8_t>{3, 4}));
  Bytes hole = io::serialize_safetensors(two);
  std::string s(hole.begin(), hole.end());
  s.replace(s.find("\"data_offsets\":[2,4]"), 20, "\"data_offsets\":[3,5]");
  EXPECT_EQ(error_of(Bytes(s.begin(), s.end())), "InvalidOffset");
  // Deep nesting is refused before parsing; huge dims overflow cleanly.
  const std::string deep(100000, '[');
  EXPECT_EQ(
      error_of(cat({le64(deep.size()), bytes_of(deep)})),
      "InvalidHeaderDeserialization");
  const std::string huge =
      "{\"t\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296,4],"
      "\"data_offsets\":[0,0]}}";
  EXPECT_EQ(
      error_of(cat({le64(huge.size()), bytes_of(huge)})), "ValidationOverflow");
  // BOOL bytes other than 0 and 1 are refused (a C++ bool cannot hold them).
  const std::string b1 =
      "{\"m\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}";
  EXPECT_EQ(
      error_of(cat({le64(b1.size()), bytes_of(b1), Bytes{1, 2}})),
      "InvalidBool");
  EXPECT_EQ(error_of(cat({le64(b1.size()), bytes_of(b1), Bytes{1, 0}})), "");
  // A valid dtype ditto has no tensor type for is refused by name.
  try {
    io::parse_safetensors(
        cat(
            {le64(56),
             bytes_of(
                 "{\"h\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":"
                 "[0,4]}}  "),
             Bytes(4, 0)}),
        "half.safetensors");
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("unsupported dtype U16"), std::string::npos)
        << e.what();
  }
}

TEST(Safetensors, RoundTripsEveryDtypeInTheWritersOrder) {
  manual_seed(0);
  nn::StateDict sd;
  sd.insert("w", randn({3, 4}));
  sd.insert("d", randn({2}, kFloat64));
  sd.insert("step", scalar_tensor(7, kInt64));
  sd.insert("i", tensor(std::vector<int32_t>{1, -2, 3}));
  sd.insert("u", tensor(std::vector<uint8_t>{0, 255}));
  sd.insert("mask", tensor(std::vector<bool>{true, false, true}));
  sd.insert("empty", zeros({0, 5}));
  sd.insert("view", randn({4, 6}).t()); // written contiguous
  sd.insert("h", randn({3}).to(kFloat16));
  sd.insert("bf", randn({2, 2}).to(kBFloat16));
  sd.insert("c", tensor(std::vector<int64_t>{-128, 127}).to(kInt8));
  sd.insert("s", tensor(std::vector<int64_t>{-300, 300}).to(kInt16));
  const Bytes b = io::serialize_safetensors(sd, {{"format", "ditto"}});
  io::SafetensorsFile f = io::parse_safetensors(b);
  EXPECT_EQ(f.metadata.at("format"), "ditto");
  // I64 first, then F64, F32 (by name), I32, BF16, F16, I16, I8, U8, BOOL.
  EXPECT_EQ(
      f.tensors.keys(),
      (std::vector<std::string>{
          "step",
          "d",
          "empty",
          "view",
          "w",
          "i",
          "bf",
          "h",
          "s",
          "c",
          "u",
          "mask"}));
  for (const auto& [name, t] : sd) {
    const Tensor& back = f.tensors.at(name);
    EXPECT_EQ(back.dtype(), t.dtype()) << name;
    EXPECT_EQ(back.sizes(), t.sizes()) << name;
    EXPECT_EQ(fingerprint(back), fingerprint(t)) << name;
  }
  nn::StateDict shared;
  Tensor base = randn({4});
  shared.insert("a", base);
  shared.insert("b", base.view({2, 2}));
  EXPECT_THROW(io::serialize_safetensors(shared), ValueError);
}

// Issue 32: what the writer refuses the reader refuses too (an empty tensor
// name), and a key twice in one object is refused, not "last wins", in the
// tensors and in __metadata__ alike.
TEST(Safetensors, ReaderRefusesEmptyNamesAndDuplicateKeys) {
  auto header = [](const std::string& h, size_t data) {
    return cat({le64(h.size()), bytes_of(h), Bytes(data, 0)});
  };
  const std::string entry =
      "{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}";
  EXPECT_EQ(error_of(header("{\"a\":" + entry + "}", 2)), "");
  EXPECT_EQ(
      error_of(header("{\"\":" + entry + "}", 2)),
      "InvalidHeaderDeserialization");
  EXPECT_EQ(
      error_of(header("{\"a\":" + entry + ",\"a\":" + entry + "}", 2)),
      "InvalidHeaderDeserialization");
  EXPECT_EQ(
      error_of(header(
          "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"},\"a\":" + entry + "}",
          2)),
      "InvalidHeaderDeserialization");
  // The same key in two different objects is fine.
  EXPECT_EQ(
      error_of(
          header("{\"__metadata__\":{\"a\":\"x\"},\"a\":" + entry + "}", 2)),
      "");
  try {
    io::parse_safetensors(
        header("{\"a\":" + entry + ",\"a\":" + entry + "}", 2), "dup");
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("the key \"a\" appears twice"),
        std::string::npos)
        << e.what();
  }
}

// Issue 32: a directory where a file is expected is a ValueError naming it
// (reading a directory reports a size of 2^63-1 on ext4: it used to be
// allocated, and std::bad_alloc escaped).
TEST(Safetensors, ADirectoryIsNotReadAsAFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
      ("ditto_st_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir / "model.safetensors");
  try {
    io::load_safetensors((dir / "model.safetensors").string());
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "model.safetensors: it is a directory, not a regular file"),
        std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(Safetensors, ModelStateRoundTripThroughAFileAtomically) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("ditto_st_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "model.safetensors").string();
  manual_seed(1);
  nn::Sequential m(nn::Linear(4, 3), nn::BatchNorm1d(3), nn::Linear(3, 2));
  io::save_safetensors(path, m->state_dict(), {{"step", "10"}});
  manual_seed(2);
  nn::Sequential other(nn::Linear(4, 3), nn::BatchNorm1d(3), nn::Linear(3, 2));
  io::SafetensorsFile f = io::load_safetensors(path);
  other->load_state_dict(f.tensors);
  for (const auto& [name, t] : m->state_dict()) {
    EXPECT_EQ(fingerprint(t), fingerprint(other->state_dict().at(name)))
        << name;
  }
  // A failed save leaves the old file and no temporary.
  fs::create_directories(dir / "is_a_dir");
  EXPECT_THROW(
      io::save_safetensors((dir / "is_a_dir").string(), m->state_dict()),
      ValueError);
  EXPECT_THROW(
      io::load_safetensors((dir / "missing.safetensors").string()), ValueError);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) {
    left.push_back(e.path().filename().string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"is_a_dir", "model.safetensors"}));
  fs::remove_all(dir);
}

} // namespace
} // namespace ditto

namespace ditto {
namespace {

// Issue 61, item 13: the writer refuses a header the reader would refuse
// (over 100,000,000 bytes), before the file at the path is touched.
TEST(Safetensors, TheWriterRefusesAHeaderTheReaderWouldRefuse) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
      ("ditto_st_header_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "good.safetensors").string();
  StateDict small;
  small.insert("w", ones({2}));
  io::save_safetensors(path, small);
  const auto size_before = fs::file_size(path);
  // Metadata of 100 MB: a header over the limit.
  std::map<std::string, std::string> meta{
      {"big", std::string(100'000'001, 'x')}};
  try {
    io::save_safetensors(path, small, meta);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("HeaderTooLarge"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fs::file_size(path), size_before);
  EXPECT_EQ(io::load_safetensors(path).tensors.size(), 1u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 1);
  fs::remove_all(dir);
}

} // namespace
} // namespace ditto
