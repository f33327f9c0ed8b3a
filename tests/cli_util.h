#pragma once

// Helpers of the tests that run ditto's programs (test_train, test_verify):
// shell runs with captured output, and a small IDX dataset.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace ditto::test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

// Runs a shell command; its exit code (128 + n when killed by signal n),
// stdout and stderr.
inline Result run_shell(const std::string& cmd, const fs::path& scratch) {
  const fs::path out = scratch / "stdout.txt", err = scratch / "stderr.txt";
  const std::string full = cmd + " >" + quote(out) + " 2>" + quote(err);
  const int status = std::system(full.c_str());
  Result r;
  if (WIFEXITED(status)) {
    r.code = WEXITSTATUS(status);
  }
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

// The fingerprint line of a run's output ("" when there is none).
inline std::string fingerprint_of(const Result& r) {
  std::smatch m;
  static const std::regex re("(^|\n)fingerprint ([0-9a-f]{16})\n");
  return std::regex_search(r.out, m, re) ? m[2].str() : "";
}

inline void put_u32(std::string& s, uint32_t v) {
  for (int shift : {24, 16, 8, 0}) {
    s += char(uint8_t(v >> shift));
  }
}

// Class c: a bright 4-pixel band at rows 2c+2.. (and a column band for odd
// classes) over noise from a fixed LCG.
inline void write_dataset(
    const fs::path& dir,
    const std::string& prefix,
    uint32_t n,
    uint32_t seed) {
  std::string images = {0, 0, 8, 3}, labels = {0, 0, 8, 1};
  put_u32(images, n);
  put_u32(images, 28);
  put_u32(images, 28);
  put_u32(labels, n);
  uint32_t state = seed;
  for (uint32_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const int c = int((state >> 16) % 10);
    labels += char(c);
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        state = state * 1664525u + 1013904223u;
        int v = int((state >> 24) % 64);
        if (y >= 2 * c + 2 && y < 2 * c + 6) {
          v += 150;
        }
        if (c % 2 == 1 && x >= 10 && x < 14) {
          v += 80;
        }
        images += char(uint8_t(std::min(v, 255)));
      }
    }
  }
  std::ofstream(dir / (prefix + "-images-idx3-ubyte"), std::ios::binary)
      << images;
  std::ofstream(dir / (prefix + "-labels-idx1-ubyte"), std::ios::binary)
      << labels;
}

// A fresh scratch directory for a test suite, with the dataset above in
// data/ (256 training and 64 test images: 8 steps per epoch at batch 32).
inline fs::path make_suite_root(const std::string& name) {
  const fs::path root =
      fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "data");
  write_dataset(root / "data", "train", 256, 1);
  write_dataset(root / "data", "t10k", 64, 2);
  return root;
}

// A fresh directory for the running test, named after it, under root.
inline fs::path make_test_dir(const fs::path& root) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = root / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

} // namespace ditto::test
