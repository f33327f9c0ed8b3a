// `ditto train` end to end: the real binary on a small IDX dataset this test
// writes (256 training and 64 test images of 28x28, ten classes that a CNN
// separates), checking the reproducibility contract (two runs, threads,
// workers, resume at any step), atomic checkpoints under SIGKILL, the exit
// codes and messages, and the checkpoint files against a Python reader.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "ditto/ditto.h"
#include "tests/cli_util.h"
#include "tests/cpu_caps.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using namespace ditto::test;

class TrainCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = make_suite_root("ditto_train_test");
  }
  static void TearDownTestSuite() {
    fs::remove_all(root_);
  }

  void SetUp() override {
    dir_ = make_test_dir(root_);
  }

  // `ditto train` on the test data with a small batch: 8 steps per epoch.
  Result train(const std::string& args, const std::string& env = "") {
    const std::string cmd = env + " " + quote(DITTO_CLI) +
        " train --data-root " + quote((root_ / "data").string()) +
        " --batch-size 32 --log-every 4 " + args;
    return run_shell(cmd, dir_);
  }

  std::string out(const std::string& name) const {
    return quote((dir_ / name).string());
  }

  // The straight run every resume is compared with: 2 epochs, 16 steps.
  std::string straight() {
    static std::string fp;
    if (fp.empty()) {
      Result r = train(
          "--epochs 2 --threads 2 --out " +
          quote((root_ / "straight").string()));
      EXPECT_EQ(r.code, 0) << r.err;
      fp = fingerprint_of(r);
    }
    return fp;
  }

  static fs::path root_;
  fs::path dir_;
};

fs::path TrainCli::root_;

TEST_F(TrainCli, TwoRunsThreadsAndWorkersGiveOneFingerprint) {
  const std::string fp = straight();
  ASSERT_EQ(fp.size(), 16u);
  Result again = train("--epochs 2 --threads 2 --out " + out("a"));
  Result one_thread = train("--epochs 2 --threads 1 --out " + out("b"));
  Result three = train("--epochs 2 --threads 3 --workers 2 --out " + out("c"));
  EXPECT_EQ(fingerprint_of(again), fp);
  EXPECT_EQ(fingerprint_of(one_thread), fp);
  EXPECT_EQ(fingerprint_of(three), fp);
  // A different seed trains different weights.
  Result other = train("--epochs 2 --seed 1 --out " + out("d"));
  EXPECT_NE(fingerprint_of(other), fp);
}

TEST_F(TrainCli, LearnsAndWritesRunJsonAndMetrics) {
  Result r = train("--epochs 2 --threads 2 --lr 0.05 --out " + out("run"));
  ASSERT_EQ(r.code, 0) << r.err;
  const json run = json::parse(read_text(dir_ / "run" / "run.json"));
  EXPECT_EQ(run["status"], "done");
  EXPECT_EQ(run["seed"], 0);
  EXPECT_EQ(run["threads"], 2);
  EXPECT_EQ(run["seed_mode"], "per-sample");
  EXPECT_EQ(run["determinism"]["deterministic_algorithms"], true);
  EXPECT_EQ(run["fingerprint"], fingerprint_of(r));
  ASSERT_EQ(run["epochs_done"].size(), 2u);
  // The bands make the classes separable: the second epoch is far above
  // chance (10%).
  EXPECT_GT(run["epochs_done"][1]["accuracy"].get<double>(), 0.5) << r.out;
  EXPECT_LT(
      run["epochs_done"][1]["train_loss"].get<double>(),
      run["epochs_done"][0]["train_loss"].get<double>());
  EXPECT_NE(r.out.find("epoch 2: train loss"), std::string::npos) << r.out;
  std::ifstream metrics(dir_ / "run" / "metrics.jsonl");
  std::vector<int64_t> steps;
  for (std::string line; std::getline(metrics, line);) {
    const json m = json::parse(line);
    steps.push_back(m["step"]);
    EXPECT_TRUE(
        m.contains("loss") && m.contains("lr") &&
        m.contains("samples_per_second"));
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{4, 8, 12, 16}));
}

// --json: every line of stdout is a JSON object with an event; the epoch
// events carry run.json's records, the last line the fingerprint. --quiet
// prints the fingerprint alone.
// The library GPT on bytes of text (the default: Debian's license texts):
// one fingerprint for 1, 2 and 3 threads and 2 workers, and a resume at
// step 3; it generates after training (run.json's "generated", the same
// in every run).
TEST_F(TrainCli, GptTrainsAndGeneratesWithOneFingerprint) {
  const std::string args =
      "--model gpt --max-steps 6 --checkpoint-every 3 "
      "--generate 24 --optimizer adamw --lr 0.003 ";
  Result a = train(args + "--threads 1 --out " + out("a"));
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string fp = fingerprint_of(a);
  Result b = train(args + "--threads 2 --out " + out("b"));
  Result c = train(args + "--threads 3 --workers 2 --out " + out("c"));
  EXPECT_EQ(fingerprint_of(b), fp);
  EXPECT_EQ(fingerprint_of(c), fp);
  fs::remove_all(dir_ / "a" / "checkpoints" / "step-6");
  Result resumed =
      train(args + "--threads 2 --out " + out("a") + " --resume latest");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(fingerprint_of(resumed), fp);
  // Another text changes the bits: its checkpoint is refused, naming the
  // flag and both texts (size and hash).
  { std::ofstream(dir_ / "other.txt") << std::string(4000, 'a'); }
  Result other_text = train(
      args + "--out " + out("a") + " --resume latest --text " +
      out("other.txt"));
  EXPECT_EQ(other_text.code, 1);
  EXPECT_NE(other_text.err.find("trained with --text "), std::string::npos)
      << other_text.err;
  EXPECT_NE(
      other_text.err.find("this run has 4000 bytes, xxh3 "), std::string::npos)
      << other_text.err;
  const json run = json::parse(read_text(dir_ / "b" / "run.json"));
  EXPECT_EQ(run["text"], "/usr/share/common-licenses");
  EXPECT_GT(run["text_bytes"].get<int64_t>(), 100000);
  EXPECT_FALSE(run.contains("data_root"));
  const std::string text = run["generated"]["text"];
  EXPECT_GE(text.size(), 24u);
  EXPECT_EQ(run["generated"]["prompt"].get<std::string>().size() >= 16, true);
  // The sample is a function of the weights and the seed: the same in
  // every run.
  const json run_c = json::parse(read_text(dir_ / "c" / "run.json"));
  EXPECT_EQ(run_c["generated"], run["generated"]);
  EXPECT_NE(b.out.find("generated (top-p 0.9): "), std::string::npos) << b.out;
  // A text too short for one window is a usage error naming the flag.
  { std::ofstream(dir_ / "short.txt") << "tiny"; }
  Result bad = train(
      "--model gpt --max-steps 1 --text " + out("short.txt") + " --out " +
      out("x"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("--text"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("too short"), std::string::npos) << bad.err;
}

TEST_F(TrainCli, JsonAndQuietOutput) {
  Result r = train("--epochs 2 --json --out " + out("json"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::map<std::string, int> events;
  json last;
  for (std::string line; std::getline(lines, line);) {
    last = json::parse(line);
    events[last["event"].get<std::string>()]++;
  }
  EXPECT_EQ(events["epoch"], 2);
  EXPECT_EQ(events["step"], 4); // every 4 of 16 steps
  EXPECT_EQ(last["event"], "done");
  const json run = json::parse(read_text(dir_ / "json" / "run.json"));
  EXPECT_EQ(last["fingerprint"], run["fingerprint"]);
  Result q = train("--epochs 2 --quiet --out " + out("quiet"));
  EXPECT_EQ(
      q.out, "fingerprint " + run["fingerprint"].get<std::string>() + "\n");
}

TEST_F(TrainCli, ResumeAtAnyStepEqualsTheStraightRun) {
  const std::string fp = straight();
  // k = 3 and 11: mid-epoch; k = 8: at the end of the first epoch. The
  // sanitizer builds resume once (k = 11: after an epoch, mid-epoch).
  const std::vector<int> ks = ditto::test::test_sanitized()
      ? std::vector<int>{11}
      : std::vector<int>{3, 8, 11};
  for (const int k : ks) {
    const std::string ks_str = std::to_string(k);
    SCOPED_TRACE("k = " + ks_str);
    const std::string o = out("k" + ks_str);
    Result first = train(
        "--epochs 2 --threads 2 --max-steps " + std::to_string(k) +
        " --checkpoint-every 5 --out " + o);
    ASSERT_EQ(first.code, 0) << first.err;
    EXPECT_NE(
        first.out.find("stopped at step " + std::to_string(k)),
        std::string::npos);
    // Resumed with another thread and worker count (per-sample mode).
    Result rest =
        train("--epochs 2 --threads 1 --workers 2 --resume latest --out " + o);
    ASSERT_EQ(rest.code, 0) << rest.err;
    EXPECT_NE(rest.out.find("resumed from"), std::string::npos);
    EXPECT_EQ(fingerprint_of(rest), fp);
    // The epoch results match the straight run's too.
    const json a =
        json::parse(read_text(dir_ / ("k" + std::to_string(k)) / "run.json"));
    const json b = json::parse(read_text(root_ / "straight" / "run.json"));
    ASSERT_EQ(a["epochs_done"].size(), 2u);
    for (int e = 0; e < 2; ++e) {
      EXPECT_EQ(a["epochs_done"][e]["exact"], b["epochs_done"][e]["exact"]);
    }
  }
}

// With --benchmark, the checkpoint's tuning cache makes the resumed run
// pick the algorithms the first part picked: it ends on the bits of a
// straight run that used the same choices.
TEST_F(TrainCli, ResumeWithBenchmarkReplaysTheTuningChoices) {
  const std::string o = out("bench");
  ASSERT_EQ(
      train(
          "--benchmark --epochs 2 --max-steps 5 --checkpoint-every 5 --out " +
          o)
          .code,
      0);
  const fs::path cache = dir_ / "choices.json";
  fs::copy_file(
      dir_ / "bench" / "checkpoints" / "step-00000005" / "tuning_cache", cache);
  Result straight_run = train(
      "--benchmark --epochs 2 --tuning-cache " + quote(cache.string()) +
      " --out " + out("bench_straight"));
  Result rest = train("--benchmark --epochs 2 --resume latest --out " + o);
  ASSERT_EQ(straight_run.code, 0) << straight_run.err;
  ASSERT_EQ(rest.code, 0) << rest.err;
  EXPECT_EQ(fingerprint_of(rest), fingerprint_of(straight_run));
  const json run = json::parse(read_text(dir_ / "bench" / "run.json"));
  EXPECT_EQ(run["tuning"]["conv_benchmark"], true);
  EXPECT_FALSE(run["tuning"]["decisions"].empty());
}

TEST_F(TrainCli, KeepPrunesOldCheckpoints) {
  Result r =
      train("--epochs 2 --checkpoint-every 3 --keep 2 --out " + out("keep"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> names;
  for (const std::string& p : ditto::train::list_checkpoints(
           (dir_ / "keep" / "checkpoints").string())) {
    names.push_back(fs::path(p).filename().string());
  }
  EXPECT_EQ(
      names, (std::vector<std::string>{"step-00000015", "step-00000016"}));
}

// Issue 61, item 18: a kill during --keep pruning used to leave empty
// step-N directories. Pruning renames each directory away before removing
// it, and clears what an older, killed prune left.
TEST_F(TrainCli, PruningLeavesNoEmptyStepDirectories) {
  const fs::path root = dir_ / "prune";
  for (int step : {1, 2, 3, 4}) {
    const fs::path d = root / ditto::train::checkpoint_name(step);
    fs::create_directories(d);
    for (const char* f : ditto::train::kCheckpointRequiredFiles) {
      std::ofstream(d / f) << "x";
    }
  }
  // What a prune killed mid-removal left: an emptied step-N, a partial one,
  // and a renamed one.
  fs::create_directories(root / ditto::train::checkpoint_name(0));
  fs::create_directories(root / ditto::train::checkpoint_name(5));
  std::ofstream(root / ditto::train::checkpoint_name(5) / "model.safetensors")
      << "x";
  fs::create_directories(root / ".tmp-pruned-step-00000009.1");
  ditto::train::prune_checkpoints(root.string(), 2);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(root)) {
    left.push_back(e.path().filename().string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"step-00000003", "step-00000004"}));
}

TEST_F(TrainCli, KillDuringASaveLeavesThePreviousCheckpoint) {
  const std::string o = out("kill");
  Result first =
      train("--epochs 2 --max-steps 4 --checkpoint-every 4 --out " + o);
  ASSERT_EQ(first.code, 0) << first.err;
  // The next save dies (SIGKILL) after its first file.
  Result killed = train(
      "--epochs 2 --max-steps 8 --checkpoint-every 4 --resume latest --out " +
          o,
      "DITTO_TRAIN_FAULT=checkpoint-between-files");
  EXPECT_NE(killed.code, 0);
  EXPECT_EQ(fingerprint_of(killed), "");
  std::vector<std::string> names;
  for (const std::string& p : ditto::train::list_checkpoints(
           (dir_ / "kill" / "checkpoints").string())) {
    names.push_back(fs::path(p).filename().string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"step-00000004"}));
  // A half-written temporary directory is there, under another name.
  bool leftover = false;
  for (const auto& e : fs::directory_iterator(dir_ / "kill" / "checkpoints")) {
    leftover |= e.path().filename().string().rfind(".tmp-", 0) == 0;
  }
  EXPECT_TRUE(leftover);
  Result rest = train("--epochs 2 --resume latest --out " + o);
  ASSERT_EQ(rest.code, 0) << rest.err;
  EXPECT_EQ(fingerprint_of(rest), straight());
}

TEST_F(TrainCli, UsageErrorsExitTwoWithOneLine) {
  for (const std::string& args :
       {std::string("--bogus"),
        std::string("--batch-size 0"),
        std::string("--optimizer lamb"),
        std::string("--epochs x"),
        std::string("--seed-mode sometimes"),
        std::string("--model resnet"),
        // Issue 32: out of range, NaN, infinite, or not written plainly.
        std::string("--seed 18446744073709551616"),
        std::string("--seed -9223372036854775809"),
        std::string("--seed 1.5"),
        std::string("--lr nan"),
        std::string("--lr inf"),
        std::string("--lr 0"),
        std::string("--momentum nan"),
        std::string("--momentum 1.5"),
        std::string("--weight-decay -1"),
        std::string("--epochs 9223372036854775808"),
        std::string("--epochs +1"),
        std::string("--batch-size 0x10"),
        std::string("--threads 1e1"),
        std::string("--workers 257"),
        std::string("--max-steps -1"),
        std::string("--eval-every 2199023255552"),
        std::string("--checkpoint-every nan"),
        std::string("--log-every 0"),
        std::string("--keep 1073741825")}) {
    SCOPED_TRACE(args);
    Result r = train(args + " --out " + out("u"));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("ditto train: ", 0), 0u) << r.err;
  }
  Result help = run_shell(quote(DITTO_CLI) + " train --help", dir_);
  EXPECT_EQ(help.code, 0);
  for (const char* flag :
       {"--seed",
        "--epochs",
        "--batch-size",
        "--lr",
        "--optimizer",
        "--momentum",
        "--weight-decay",
        "--scheduler",
        "--threads",
        "--workers",
        "--seed-mode",
        "--deterministic",
        "--no-deterministic",
        "--benchmark",
        "--tuning-cache",
        "--max-steps",
        "--eval-every",
        "--checkpoint-dir",
        "--checkpoint-every",
        "--keep",
        "--resume",
        "--init-from",
        "--out",
        "--quiet",
        "--json"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

TEST_F(TrainCli, MissingDataExitsOneNamingTheFile) {
  Result r = run_shell(
      quote(DITTO_CLI) + " train --data-root " + out("nowhere") + " --out " +
          out("m"),
      dir_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(TrainCli, BadCheckpointsExitOneAndTrainNothing) {
  const std::string o = out("bad");
  ASSERT_EQ(
      train("--epochs 2 --max-steps 4 --checkpoint-every 4 --out " + o).code,
      0);
  const fs::path ck = dir_ / "bad" / "checkpoints" / "step-00000004";
  const std::string good_state = read_text(ck / "train_state.safetensors");
  const std::string good_model = read_text(ck / "model.safetensors");
  auto expect_error = [&](const std::string& args, const std::string& needle) {
    Result r = train(args);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(fingerprint_of(r), "");
  };
  const std::string resume =
      "--epochs 2 --resume " + quote(ck.string()) + " --out " + out("bad2");
  // Truncated model file.
  std::ofstream(ck / "model.safetensors", std::ios::binary)
      << good_model.substr(0, good_model.size() / 2);
  expect_error(resume, "model.safetensors");
  std::ofstream(ck / "model.safetensors", std::ios::binary) << good_model;
  // Corrupt header.
  std::string corrupt = good_state;
  corrupt[8] = '!'; // the header's opening brace
  std::ofstream(ck / "train_state.safetensors", std::ios::binary) << corrupt;
  expect_error(resume, "train_state.safetensors");
  // Another format version.
  {
    ditto::io::SafetensorsFile f =
        ditto::io::parse_safetensors(std::span<const uint8_t>(
            reinterpret_cast<const uint8_t*>(good_state.data()),
            good_state.size()));
    f.metadata["version"] = "99";
    ditto::io::save_safetensors(
        (ck / "train_state.safetensors").string(), f.tensors, f.metadata);
    expect_error(resume, "version 99");
  }
  std::ofstream(ck / "train_state.safetensors", std::ios::binary) << good_state;
  // Another architecture, another setting.
  expect_error("--model mlp " + resume, "--model cnn");
  expect_error("--lr 0.1 " + resume, "--lr 0.01, this run has 0.1");
  // Both ways (issue 61, item 2): a --micro-batches 2 checkpoint resumed
  // without the flag, or with another count, is refused.
  {
    ASSERT_EQ(
        train(
            "--epochs 2 --max-steps 4 --checkpoint-every 4 --micro-batches 2 "
            "--out " +
            out("mb"))
            .code,
        0);
    const fs::path mb = dir_ / "mb" / "checkpoints" / "step-00000004";
    const std::string mb_resume =
        "--epochs 2 --resume " + quote(mb.string()) + " --out " + out("mb2");
    expect_error(mb_resume, "--micro-batches 2, this run has it unset");
    expect_error(
        "--micro-batches 4 " + mb_resume, "--micro-batches 2, this run has 4");
    expect_error(
        "--micro-batches 2 " + resume,
        "--micro-batches (unset), this run has 2");
  }
  // Weights of another architecture through --init-from.
  expect_error(
      "--model mlp --init-from " + quote((ck / "model.safetensors").string()) +
          " --out " + out("bad3"),
      "model.safetensors");
  // The intact checkpoint still resumes to the straight run.
  Result ok = train(resume);
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(fingerprint_of(ok), straight());
}

// Issue 32: a directory where a file should be (--init-from, a checkpoint's
// model.safetensors, --tuning-cache) is an error naming it, never an
// allocation of the size a directory reports; a checkpoint's metadata
// nested 100,000 levels deep is refused, not a stack overflow.
TEST_F(TrainCli, DirectoriesAndDeepJsonAreTypedErrors) {
  fs::create_directories(dir_ / "weights.safetensors");
  Result r = train(
      "--max-steps 1 --init-from " + out("weights.safetensors") + " --out " +
      out("d1"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(
      r.err.find("weights.safetensors: it is a directory, not a regular file"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // A checkpoint whose model.safetensors is a directory.
  ASSERT_EQ(
      train("--epochs 2 --max-steps 4 --checkpoint-every 4 --out " + out("d2"))
          .code,
      0);
  const fs::path ck = dir_ / "d2" / "checkpoints" / "step-00000004";
  const std::string state = read_text(ck / "train_state.safetensors");
  const std::string model = read_text(ck / "model.safetensors");
  fs::remove(ck / "model.safetensors");
  fs::create_directories(ck / "model.safetensors");
  r = train(
      "--epochs 2 --resume " + quote(ck.string()) + " --out " + out("d3"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(
      r.err.find("model.safetensors: it is a directory"), std::string::npos)
      << r.err;
  fs::remove(ck / "model.safetensors");
  std::ofstream(ck / "model.safetensors", std::ios::binary) << model;
  // 100,000 levels in the settings, the loader state and the tuning cache.
  ditto::io::SafetensorsFile f =
      ditto::io::parse_safetensors(std::span<const uint8_t>(
          reinterpret_cast<const uint8_t*>(state.data()), state.size()));
  const std::string deep(100000, '[');
  for (const char* field : {"settings", "loader", "progress"}) {
    ditto::io::SafetensorsFile bad = f;
    bad.metadata[field] = deep;
    ditto::io::save_safetensors(
        (ck / "train_state.safetensors").string(), bad.tensors, bad.metadata);
    r = train(
        "--epochs 2 --resume " + quote(ck.string()) + " --out " + out("d4"));
    EXPECT_EQ(r.code, 1) << field << r.err;
    EXPECT_NE(r.err.find("JSON nests deeper than 64 levels"), std::string::npos)
        << field << ": " << r.err;
    EXPECT_EQ(fingerprint_of(r), "");
  }
  // A value echoed in an error keeps the error on one line.
  {
    ditto::io::SafetensorsFile bad = f;
    bad.metadata["format"] = "two\nlines";
    ditto::io::save_safetensors(
        (ck / "train_state.safetensors").string(), bad.tensors, bad.metadata);
    r = train(
        "--epochs 2 --resume " + quote(ck.string()) + " --out " + out("d4"));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("(format 'two\\nlines')"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  std::ofstream(ck / "train_state.safetensors", std::ios::binary) << state;
  // A deep tuning cache (the checkpoint's, and --tuning-cache) is refused
  // with a warning and the run goes on without it.
  std::ofstream(ck / "tuning_cache") << deep;
  std::ofstream(dir_ / "deep_cache.json") << deep;
  r = train(
      "--epochs 2 --resume " + quote(ck.string()) + " --tuning-cache " +
      out("deep_cache.json") + " --out " + out("d5"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("JSON nests deeper than 64 levels"), std::string::npos)
      << r.err;
  EXPECT_EQ(fingerprint_of(r), straight());
  // Issue 61, item 14: a --tuning-cache file ditto could not read as its
  // cache is not replaced at the end (it was, by the run's own cache).
  EXPECT_EQ(read_text(dir_ / "deep_cache.json"), deep);
  EXPECT_NE(r.err.find("is not replaced"), std::string::npos) << r.err;
  std::ofstream(dir_ / "notes.txt") << "my notes\n";
  r = train(
      "--max-steps 2 --tuning-cache " + out("notes.txt") + " --out " +
      out("d6"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(dir_ / "notes.txt"), "my notes\n");
}

// Issue 32, defect 3: --tuning-cache naming a FIFO (as /dev/null would be,
// written in place) or a symlink keeps them what they are.
TEST_F(TrainCli, TuningCacheThroughASymlinkOrAFifo) {
  fs::create_directories(dir_ / "real");
  fs::create_symlink("real/cache.json", dir_ / "cache_link.json");
  Result r = train(
      "--max-steps 2 --tuning-cache " + out("cache_link.json") + " --out " +
      out("tc1"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "cache_link.json"));
  EXPECT_NE(
      read_text(dir_ / "real" / "cache.json").find("ditto.conv_tuning_cache"),
      std::string::npos);
  const fs::path fifo = dir_ / "cache_fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Read by cat: the cache goes through, the FIFO stays a FIFO. (Loading
  // from a FIFO is refused with a warning: it is not a regular file.)
  r = train(
      "--max-steps 2 --tuning-cache " + quote(fifo.string()) + " --out " +
          out("tc2") + " & t=$!; cat " + quote(fifo.string()) + " > " +
          out("through.json") + "; wait $t",
      "");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_NE(
      read_text(dir_ / "through.json").find("ditto.conv_tuning_cache"),
      std::string::npos);
}

// Issue 32, defect 6: a metrics.jsonl line that cannot be written (a file
// size limit standing in for a full disk) stops the run with an error
// naming the file, instead of training on with the lines lost.
TEST_F(TrainCli, AMetricsWriteFailureStopsTheRun) {
  Result r = run_shell(
      "trap '' XFSZ; ulimit -f 1; " + quote(DITTO_CLI) + " train --data-root " +
          quote((root_ / "data").string()) +
          " --batch-size 32 --log-every 1 --max-steps 8 --quiet --out " +
          out("mf"),
      dir_);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(
      r.err.find(
          "cannot write " + (dir_ / "mf" / "metrics.jsonl").string() +
          ": File too large"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(fingerprint_of(r), "");
}

// Issue 32: an empty or garbage "step-N" directory newer than every real
// checkpoint does not block --resume latest: it is skipped, and said so.
TEST_F(TrainCli, ResumeLatestSkipsIncompleteCheckpoints) {
  ASSERT_EQ(
      train("--epochs 2 --max-steps 4 --checkpoint-every 4 --out " + out("rl"))
          .code,
      0);
  const fs::path root = dir_ / "rl" / "checkpoints";
  fs::create_directories(root / "step-99999999");
  fs::create_directories(root / "step-99999998");
  std::ofstream(root / "step-99999998" / "garbage") << "x";
  Result r = train("--epochs 2 --resume latest --out " + out("rl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(
      r.out.find("skipped incomplete checkpoint directories"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("step-99999999"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("resumed from " + (root / "step-00000004").string()),
      std::string::npos)
      << r.out;
  EXPECT_EQ(fingerprint_of(r), straight());
}

// read_train_state checks the metadata's contents, not just its JSON: a
// history record with a fingerprint that is not hex, counts that do not add
// up, a generator state of the wrong size. Each is a ValueError naming the
// file, and the default generator is untouched.
TEST_F(TrainCli, TrainStateContentsAreChecked) {
  ASSERT_EQ(
      train("--epochs 2 --max-steps 9 --checkpoint-every 9 --out " + out("ts"))
          .code,
      0);
  const ditto::io::SafetensorsFile good =
      ditto::io::load_safetensors((dir_ / "ts" / "checkpoints" /
                                   "step-00000009" / "train_state.safetensors")
                                      .string());
  EXPECT_EQ(ditto::train::read_train_state(good, "good").step, 9);
  const uint64_t rng =
      ditto::fingerprint(ditto::default_generator().get_state());
  auto expect_refused = [&](ditto::io::SafetensorsFile f,
                            const std::string& needle) {
    try {
      ditto::train::read_train_state(f, "bad.safetensors");
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const ditto::ValueError& e) {
      EXPECT_NE(
          std::string(e.what()).find("bad.safetensors"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
  };
  json progress = json::parse(good.metadata.at("progress"));
  ASSERT_EQ(progress["history"].size(), 1u);
  {
    json p = progress;
    p["history"][0]["fingerprint"] = "zzzzzzzzzzzzzzzz";
    ditto::io::SafetensorsFile f = good;
    f.metadata["progress"] = p.dump();
    expect_refused(f, "fingerprint");
  }
  {
    json p = progress;
    p["epoch"] = 2;
    ditto::io::SafetensorsFile f = good;
    f.metadata["progress"] = p.dump();
    expect_refused(f, "epoch records");
  }
  {
    ditto::io::SafetensorsFile f = good;
    f.tensors.insert("rng.default", ditto::zeros({16}, ditto::kUInt8));
    expect_refused(f, "rng.default");
  }
  EXPECT_EQ(ditto::fingerprint(ditto::default_generator().get_state()), rng);
}

// The checkpoint files through a Python reader written from the format's
// description: the weights' fingerprint (the documented formula), and a
// checkpoint whose model.safetensors Python rewrote resumes to the same
// fingerprint.
TEST_F(TrainCli, CheckpointFilesRoundTripThroughPython) {
  const std::string o = out("py");
  ASSERT_EQ(
      train("--epochs 2 --max-steps 5 --checkpoint-every 5 --out " + o).code,
      0);
  const fs::path ck = dir_ / "py" / "checkpoints" / "step-00000005";
  const std::string script =
      std::string(DITTO_TEST_DATA_DIR) + "/train/safetensors_roundtrip.py";
  Result py = run_shell(
      "/usr/bin/python3 " + quote(script) + " " + quote(ck.string()), dir_);
  ASSERT_EQ(py.code, 0) << py.err;
  const json run = json::parse(read_text(ck / "run.json"));
  EXPECT_EQ(
      py.out, "fingerprint " + run["fingerprint"].get<std::string>() + "\n");
  Result rest = train(
      "--epochs 2 --resume " + quote(ck.string()) + " --out " + out("py2"));
  ASSERT_EQ(rest.code, 0) << rest.err;
  EXPECT_EQ(fingerprint_of(rest), straight());
}

// Weights trained and written by PyTorch (gen_torch_checkpoint.py): loaded
// into the registered cnn, they have PyTorch's fingerprint and give
// PyTorch's logits; `ditto train --init-from` starts from them.
TEST_F(TrainCli, LoadsWeightsWrittenByPyTorch) {
  const std::string dir = std::string(DITTO_TEST_DATA_DIR) + "/train/";
  const json want = json::parse(read_text(dir + "torch_cnn.json"));
  ditto::train::Model m = ditto::train::make_model("cnn");
  m.module->load_state_dict(
      ditto::io::load_safetensors(dir + "torch_cnn.safetensors").tensors);
  EXPECT_EQ(
      ditto::train::hex64(ditto::train::weights_fingerprint(*m.module)),
      want["fingerprint"]);
  std::vector<std::string> names;
  for (const auto& [name, p] : m.module->named_parameters()) {
    names.push_back(name);
  }
  EXPECT_EQ(json(names), want["parameters"]);
  m.module->eval();
  ditto::Tensor logits = m.forward(ditto::ones({2, 1, 28, 28}));
  const auto expect = want["logits_of_ones"].get<std::vector<double>>();
  for (size_t i = 0; i < expect.size(); ++i) {
    EXPECT_NEAR(logits[0][int64_t(i)].item<double>(), expect[i], 1e-5) << i;
  }
  Result r = train(
      "--max-steps 2 --init-from " + quote(dir + "torch_cnn.safetensors") +
      " --out " + out("init"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      json::parse(read_text(dir_ / "init" / "run.json"))["init_from"],
      dir + "torch_cnn.safetensors");
}

// The micro-batch tree of docs/distributed.md, one process (the
// multi-process checks are tests/distributed/).
TEST(MicroBatchSum, TheTreeHasTheDocumentedShape) {
  using ditto::Tensor;
  auto g = [](int64_t j) {
    ditto::Generator gen;
    gen.manual_seed(uint64_t(100 + j));
    return ditto::randn({7}, ditto::kFloat32, gen);
  };
  ditto::train::MicroBatchSum sum(6);
  for (int64_t j = 0; j < 6; ++j) {
    sum.add(j, {g(j)});
  }
  // k = 6: ((g0 + g1) + (g2 + g3)) + (g4 + g5).
  Tensor want = ditto::add(
      ditto::add(ditto::add(g(0), g(1)), ditto::add(g(2), g(3))),
      ditto::add(g(4), g(5)));
  EXPECT_TRUE(ditto::equal(sum.reduce()[0], want));
  using Nodes = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(ditto::train::tree_nodes(0, 8), (Nodes{{0, 8}}));
  EXPECT_EQ(ditto::train::tree_nodes(2, 5), (Nodes{{2, 2}, {4, 1}}));
  EXPECT_EQ(ditto::train::tree_nodes(3, 8), (Nodes{{3, 1}, {4, 4}}));
  EXPECT_EQ(ditto::train::tree_nodes(0, 6), (Nodes{{0, 4}, {4, 2}}));
  EXPECT_THROW(ditto::train::MicroBatchSum(0), ditto::ValueError);
  ditto::train::ProcessGroup two;
  two.world_size = 2;
  EXPECT_THROW(ditto::train::MicroBatchSum(1, two), ditto::ValueError);
}

// BatchNorm's running statistics are deferred while a MicroBatchSum lives
// and replayed at reduce(): the bits of updating as it goes.
TEST(MicroBatchSum, BatchNormStatisticsAreReplayedWithTheSameBits) {
  using ditto::Tensor;
  ditto::nn::BatchNorm1d sequential(3), replayed(3);
  auto micro = [](int64_t j) {
    ditto::Generator gen;
    gen.manual_seed(uint64_t(300 + j));
    return ditto::randn({6, 3}, ditto::kFloat32, gen);
  };
  for (int64_t step = 0; step < 2; ++step) {
    ditto::train::MicroBatchSum sum(5);
    const Tensor before = replayed->running_var.clone();
    for (int64_t j = 0; j < 5; ++j) {
      sequential->forward(micro(step * 5 + j));
      sum.add(j, {replayed->forward(micro(step * 5 + j)).sum()});
      EXPECT_TRUE(ditto::equal(replayed->running_var, before));
    }
    sum.reduce();
    EXPECT_TRUE(ditto::equal(replayed->running_mean, sequential->running_mean));
    EXPECT_TRUE(ditto::equal(replayed->running_var, sequential->running_var));
  }
}

} // namespace
