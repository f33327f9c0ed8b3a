// Replays the cases of index_golden.txt (PyTorch 1.13 on CPU, made by
// gen_index_golden.py) and requires the same bits, in the deterministic
// variant with 1 and 3 threads.

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "ditto/ditto.h"
#include "test_util.h"

using namespace ditto;

using ditto::test::same_bits;

namespace {

using Case = std::map<std::string, Tensor>;

Tensor parse_tensor(std::istringstream& in) {
  std::string dt;
  int64_t ndim = 0;
  in >> dt >> ndim;
  Shape sizes(static_cast<size_t>(ndim));
  for (auto& s : sizes) {
    in >> s;
  }
  const Dtype dtype = dt == "float32" ? kFloat32
      : dt == "float64"               ? kFloat64
      : dt == "int64"                 ? kInt64
      : dt == "int32"                 ? kInt32
      : dt == "uint8"                 ? kUInt8
                                      : kBool;
  Tensor t = zeros(sizes, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    std::string v;
    in >> v;
    switch (dtype) {
      case kFloat32:
        t.data_ptr<float>()[i] = std::strtof(v.c_str(), nullptr);
        break;
      case kFloat64:
        t.data_ptr<double>()[i] = std::strtod(v.c_str(), nullptr);
        break;
      case kInt64:
        t.data_ptr<int64_t>()[i] = std::stoll(v);
        break;
      case kInt32:
        t.data_ptr<int32_t>()[i] = std::stoi(v);
        break;
      case kUInt8:
        t.data_ptr<uint8_t>()[i] = uint8_t(std::stoi(v));
        break;
      default:
        t.data_ptr<bool>()[i] = v == "1";
    }
  }
  return t;
}

std::map<std::string, Case> load_cases() {
  std::ifstream f(DITTO_TEST_DATA_DIR "/ops/index_golden.txt");
  EXPECT_TRUE(f.good()) << "missing index_golden.txt";
  std::map<std::string, Case> cases;
  std::string line, current;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream in(line);
    std::string head;
    in >> head;
    if (head == "case") {
      in >> current;
    } else if (head != "end") {
      cases[current][head] = parse_tensor(in);
    }
  }
  return cases;
}

bool starts(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}

// Runs the op a case is named after.
Tensor run_case(const std::string& name, Case& c) {
  auto self = [&] { return c.at("self").clone(); };
  if (starts(name, "index_reduce_")) {
    const bool dim1 = name.ends_with("_dim1");
    std::string rest = name.substr(std::string("index_reduce_").size());
    rest = rest.substr(rest.find('_') + 1); // drop the dtype
    const std::string reduce = rest.substr(0, rest.find('_'));
    const bool include_self = rest[reduce.size() + 1] == '1';
    Tensor t = self();
    t.index_reduce_(
        dim1 ? 1 : 0, c.at("index"), c.at("src"), reduce, include_self);
    return t;
  }
  if (starts(name, "scatter_reduce_")) {
    const bool dim1 = name.ends_with("_dim1");
    std::string rest = name.substr(std::string("scatter_reduce_").size());
    rest = rest.substr(rest.find('_') + 1); // drop the dtype
    const std::string reduce = rest.substr(0, rest.find('_'));
    const bool include_self = rest[reduce.size() + 1] == '1';
    Tensor t = self();
    t.scatter_reduce_(
        dim1 ? 1 : 0, c.at("index"), c.at("src"), reduce, include_self);
    return t;
  }
  Tensor t = self.operator()();
  if (name == "scatter_src") {
    return t.scatter_(0, c.at("index"), c.at("src"));
  }
  if (name == "scatter_value") {
    return t.scatter_(0, c.at("index"), Scalar(2.5));
  }
  if (name == "scatter_add") {
    return t.scatter_add_(0, c.at("index"), c.at("src"));
  }
  if (name == "index_put_acc_dim0" || name == "index_put_acc_int") {
    return t.index_put_({c.at("i0")}, c.at("values"), true);
  }
  if (name == "index_put_acc_dim1") {
    return t.index_put_({Tensor(), c.at("i1")}, c.at("values"), true);
  }
  if (name == "index_put_acc_two") {
    return t.index_put_({c.at("ia"), c.at("ib")}, c.at("values"), true);
  }
  if (name == "index_put_acc_apart") {
    return t.index_put_(
        {c.at("ia"), Tensor(), c.at("ic")}, c.at("values"), true);
  }
  if (name == "index_put_mask") {
    return t.index_put_({c.at("mask")}, c.at("values"));
  }
  if (name == "put_acc") {
    return t.put_(c.at("index"), c.at("source"), true);
  }
  if (name == "take") {
    return take(c.at("self"), c.at("index"));
  }
  if (name == "masked_fill") {
    return t.masked_fill_(c.at("mask"), -1.25);
  }
  if (name == "masked_select") {
    return masked_select(c.at("self"), c.at("mask"));
  }
  if (name == "index_add_alpha_int") {
    return t.index_add_(0, c.at("index"), c.at("source"), 3);
  }
  if (name == "index_copy") {
    return t.index_copy_(0, c.at("index"), c.at("source"));
  }
  throw std::runtime_error("unknown case " + name);
}

Tensor run_free_case(const std::string& name, Case& c) {
  if (name == "bincount") {
    return bincount(c.at("input"), {}, 9);
  }
  if (starts(name, "bincount_w") || starts(name, "bincount_big_w")) {
    return bincount(c.at("input"), c.at("weights"));
  }
  if (starts(name, "histc")) {
    const double* p = c.at("params").data_ptr<double>();
    return histc(c.at("input"), int64_t(p[0]), p[1], p[2]);
  }
  const std::string mode = name.substr(name.rfind('_') + 1);
  if (name == "embedding_bag_2d_mean") {
    return embedding_bag(c.at("input"), c.at("weight"), {}, "mean");
  }
  if (name == "embedding_bag_psw") {
    return embedding_bag(
        c.at("input"),
        c.at("weight"),
        c.at("offsets"),
        "sum",
        c.at("per_sample_weights"));
  }
  if (name == "embedding_bag_psw_pad") {
    return embedding_bag(
        c.at("input"),
        c.at("weight"),
        c.at("offsets"),
        "sum",
        c.at("per_sample_weights"),
        false,
        int64_t(c.at("params").data_ptr<double>()[0]));
  }
  if (starts(name, "embedding_bag_pad_")) {
    return embedding_bag(
        c.at("input"), c.at("weight"), c.at("offsets"), mode, {}, false, 3);
  }
  if (starts(name, "embedding_bag_last_")) {
    return embedding_bag(
        c.at("input"), c.at("weight"), c.at("offsets"), mode, {}, true);
  }
  return embedding_bag(c.at("input"), c.at("weight"), c.at("offsets"), mode);
}

} // namespace

TEST(IndexGolden, EveryCaseMatchesPyTorchBitForBit) {
  auto cases = load_cases();
  ASSERT_GE(cases.size(), 90u);
  const int saved = get_num_threads();
  use_deterministic_algorithms(true);
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    for (auto& [name, c] : cases) {
      SCOPED_TRACE(name + " with " + std::to_string(threads) + " threads");
      Tensor got = c.count("self") ? run_case(name, c) : run_free_case(name, c);
      EXPECT_TRUE(same_bits(got, c.at("out"))) << "got\n"
                                               << got << "\nexpected\n"
                                               << c.at("out");
    }
  }
  use_deterministic_algorithms(false);
  set_num_threads(saved);
}
