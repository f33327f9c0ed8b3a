// Writes tests/libtorch/print.json: LibTorch 1.13's C++ printing
// (std::cout << tensor, at::print) of the tensors that
// tests/core/print_test.cpp (LibTorchPrint) builds with the same values.
//   g++ -std=c++17 -I/usr/include/torch/csrc/api/include \
//     tests/libtorch/gen_print.cpp -o /tmp/gen_print -ltorch -ltorch_cpu -lc10
//   /tmp/gen_print > tests/libtorch/print.json

#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

torch::Tensor floats(std::vector<double> v, std::vector<int64_t> shape) {
  return torch::tensor(v, torch::kFloat64).reshape(shape).to(torch::kFloat32);
}

} // namespace

int main() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::string, torch::Tensor>> cases = {
      {"float_vector", floats({1.0, 2.5, -3.25}, {3})},
      {"long_matrix", torch::arange(6).reshape({2, 3})},
      {"mixed_magnitudes", floats({0.001, 123.456, -5.5, 1e-7}, {2, 2})},
      {"small_scale", floats({1e-5, 2e-5, 3.5e-5}, {3})},
      {"large_scale", floats({123456.7, 234567.8, 1.5}, {3})},
      {"scalar", torch::tensor(3.5)},
      {"bools", torch::tensor({true, false, true})},
      {"three_dims",
       torch::arange(24).reshape({2, 3, 4}).to(torch::kFloat32) / 7},
      {"four_dims", torch::arange(16).reshape({2, 2, 2, 2})},
      {"wide", torch::arange(60).reshape({2, 30}).to(torch::kFloat32) / 3},
      {"empty", torch::zeros({0})},
      {"empty_matrix", torch::zeros({0, 3})},
      {"nonfinite", floats({nan, inf, 1.5, -inf}, {4})},
      {"big_ints", torch::tensor({int64_t(12345678901), int64_t(1)})},
      {"doubles", torch::tensor({1.0, -2.0}, torch::kFloat64)},
      {"bytes", torch::tensor({1, 200}, torch::kUInt8)},
      {"ints", torch::tensor({-7, 70000}, torch::kInt32)},
      {"scaled_matrix", floats({1e-6, 2e-6, -3e-6, 4.5e-6}, {2, 2})},
  };
  std::printf("{\n");
  for (size_t i = 0; i < cases.size(); ++i) {
    std::ostringstream os;
    os << cases[i].second;
    std::printf(
        "  %s: %s%s\n",
        json_string(cases[i].first).c_str(),
        json_string(os.str()).c_str(),
        i + 1 < cases.size() ? "," : "");
  }
  std::printf("}\n");
}
