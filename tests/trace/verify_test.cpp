// `ditto verify` and the trace files end to end: a planted divergence (the
// program tests/trace/planted.cpp) named with its op, module, phase and
// setting; identical runs; resume; failing and missing programs; the HTML
// report; byte-identical traces; the trace reader's errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ditto/ditto.h"
#include "ditto/trace/compare.h"
#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using namespace ditto::test;
using ditto::trace::TraceRecord;

class Verify : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = make_suite_root("ditto_verify_test");
  }
  static void TearDownTestSuite() {
    fs::remove_all(root_);
  }
  void SetUp() override {
    dir_ = make_test_dir(root_);
  }

  Result verify(const std::string& args, const std::string& env = "") {
    return run_shell(env + " " + quote(DITTO_CLI) + " verify " + args, dir_);
  }
  static std::string planted() {
    return quote(DITTO_PLANTED);
  }
  // ditto train on the test data: 8 steps per epoch.
  static std::string train_args() {
    return "train --data-root " + quote((root_ / "data").string()) +
        " --batch-size 32 --epochs 1";
  }

  static fs::path root_;
  fs::path dir_;
};

fs::path Verify::root_;

TEST_F(Verify, NamesThePlantedDivergence) {
  Result r = verify("--threads 1,2 -- " + planted());
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(
      r.out.find("diverged: run 2 (threads=2) differs from run 1 "
                 "(threads=1)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(": planted_noise_backward\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("module     1 (Noisy)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("phase      backward, step 0\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("setting    threads: 1 vs 2\n"), std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("registry   planted_noise: its backward adds noise"),
      std::string::npos)
      << r.out;
  // The noise is 1e-3 on every value: measured exactly by the reruns.
  EXPECT_NE(r.out.find("max abs 0.001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over every value"), std::string::npos) << r.out;
  // The op before it (the Linear's backward) is identical.
  EXPECT_NE(r.out.find("final      fingerprint"), std::string::npos) << r.out;
}

TEST_F(Verify, SameSettingsAreIdentical) {
  Result r = verify("--runs 2 --threads 2 -- " + planted());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("identical: 2 runs, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", final fingerprint "), std::string::npos) << r.out;
}

TEST_F(Verify, TrainThreadsWorkersAndResumeAreIdentical) {
  Result r = verify(
      "--threads 1,2 --workers 0,2 -- " + train_args() + " --max-steps 5");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("identical: 4 runs"), std::string::npos) << r.out;
  Result resumed =
      verify("--resume-at 3 -- " + train_args() + " --max-steps 6");
  EXPECT_EQ(resumed.code, 0) << resumed.out << resumed.err;
  EXPECT_NE(
      resumed.out.find("identical: the resumed run equals the straight one"),
      std::string::npos)
      << resumed.out;
  // Another seed changes the data order and the weights: diverged at the
  // first batch.
  Result seeds = verify("--seeds 1,2 -- " + train_args() + " --max-steps 2");
  EXPECT_EQ(seeds.code, 3) << seeds.out << seeds.err;
  EXPECT_NE(seeds.out.find("setting    seed: 1 vs 2"), std::string::npos)
      << seeds.out;
}

TEST_F(Verify, FailingAndMissingProgramsExitWithOne) {
  Result missing = verify("--runs 2 -- /nonexistent/program");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(
      missing.err.find("cannot run '/nonexistent/program'"), std::string::npos)
      << missing.err;
  // A program that does not link ditto writes no trace.
  Result untraced = verify("--runs 2 -- /bin/true");
  EXPECT_EQ(untraced.code, 1);
  EXPECT_NE(untraced.err.find("does the program link ditto"), std::string::npos)
      << untraced.err;
  Result crash = verify("--runs 2 -- " + planted() + " crash");
  EXPECT_EQ(crash.code, 1);
  EXPECT_NE(crash.err.find("was killed by signal 6"), std::string::npos)
      << crash.err;
  Result fail = verify("--runs 2 -- " + planted() + " fail");
  EXPECT_EQ(fail.code, 1);
  EXPECT_NE(fail.err.find("exited with status 5"), std::string::npos)
      << fail.err;
  EXPECT_NE(fail.err.find("planted: failing on purpose"), std::string::npos)
      << fail.err;
}

TEST_F(Verify, UsageErrorsExitWithTwo) {
  for (const std::string& args :
       {std::string("--workers 0,2 -- ") + planted(),
        std::string("--resume-at 2 -- ") + planted(),
        std::string("--capabilities frobnicate -- ") + planted(),
        std::string("--runs 1 -- ") + planted(),
        std::string("--env NOVALUE -- ") + planted()}) {
    Result r = verify(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("ditto verify: "), std::string::npos) << r.err;
  }
}

TEST_F(Verify, ReportIsOneSelfContainedPage) {
  const fs::path report = dir_ / "report.html";
  Result r = verify(
      "--threads 1,2 --report " + quote(report.string()) + " -- " + planted());
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  const std::string html = read_text(report);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<svg id=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("id=\"first-divergence\""), std::string::npos);
  EXPECT_NE(html.find("data-phase=\"backward\""), std::string::npos);
  // The table's first row is the planted op.
  const size_t table = html.find("<table id=\"ops\">");
  ASSERT_NE(table, std::string::npos);
  const size_t row = html.find("<tr><td>", table);
  ASSERT_NE(row, std::string::npos);
  EXPECT_NE(
      html.substr(row, 80).find("planted_noise_backward"), std::string::npos)
      << html.substr(row, 200);
  // Nothing fetched from anywhere, no scripts.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("</html>"), html.size() - 8);
}

// Every line of a trace but the header's timestamp.
std::string without_timestamp(const std::string& text) {
  const size_t eol = text.find('\n');
  std::string header = text.substr(0, eol);
  const size_t at = header.find("\"started\":");
  return header.substr(0, at) + text.substr(eol);
}

TEST_F(Verify, TracesOfTheSameSettingsAreByteIdentical) {
  const fs::path a = dir_ / "a.jsonl", b = dir_ / "b.jsonl";
  for (const fs::path& p : {a, b}) {
    Result r = run_shell(
        "DITTO_NUM_THREADS=2 DITTO_TRACE=" + quote(p.string()) + " " +
            planted(),
        dir_);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const std::string ta = read_text(a), tb = read_text(b);
  ASSERT_GT(ta.size(), 1000u);
  EXPECT_EQ(without_timestamp(ta), without_timestamp(tb));
  // What the records say: modules, phases and steps.
  const std::vector<TraceRecord> recs = ditto::trace::read_trace(a.string());
  bool forward_in_linear = false, backward_in_noisy = false,
       optimizer_step_2 = false;
  for (const TraceRecord& r : recs) {
    forward_in_linear = forward_in_linear ||
        (r.op == "linear" && r.module == "0" && r.type == "Linear" &&
         r.phase == "forward");
    backward_in_noisy = backward_in_noisy ||
        (r.op == "planted_noise_backward" && r.module == "1" &&
         r.type == "Noisy" && r.phase == "backward");
    optimizer_step_2 =
        optimizer_step_2 || (r.phase == "optimizer" && r.step == 2);
  }
  EXPECT_TRUE(forward_in_linear);
  EXPECT_TRUE(backward_in_noisy);
  EXPECT_TRUE(optimizer_step_2);
}

TEST_F(Verify, TrainTracesShowModulesPhasesAndBatches) {
  const fs::path t = dir_ / "train.jsonl";
  Result r = run_shell(
      "DITTO_TRACE=" + quote(t.string()) + " " + quote(DITTO_CLI) + " " +
          train_args() + " --out " + quote((dir_ / "o").string()),
      dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<TraceRecord> recs = ditto::trace::read_trace(t.string());
  int batches = 0;
  bool conv_fwd = false, conv_bwd = false, eval = false;
  for (const TraceRecord& rec : recs) {
    if (rec.op == "batch") {
      EXPECT_EQ(rec.phase, "data");
      EXPECT_EQ(rec.step, batches);
      ASSERT_EQ(rec.outputs.size(), 2u);
      EXPECT_EQ(rec.outputs[0]->shape, (std::vector<int64_t>{32, 1, 28, 28}));
      ++batches;
    }
    conv_fwd = conv_fwd ||
        (rec.op == "conv2d" && rec.module == "0" && rec.type == "Conv2d" &&
         rec.phase == "forward");
    conv_bwd = conv_bwd ||
        (rec.op == "conv2d_backward" && rec.module == "3" &&
         rec.type == "Conv2d" && rec.phase == "backward");
    eval = eval || rec.phase == "eval";
  }
  EXPECT_EQ(batches, 8); // one epoch: 256 images, batches of 32
  EXPECT_TRUE(conv_fwd);
  EXPECT_TRUE(conv_bwd);
  EXPECT_TRUE(eval);
}

TEST_F(Verify, ReadTraceRefusesWhatIsNotAWholeTrace) {
  const fs::path good = dir_ / "good.jsonl";
  Result r =
      run_shell("DITTO_TRACE=" + quote(good.string()) + " " + planted(), dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(good);
  auto expect_error = [&](const std::string& content, const std::string& what) {
    const fs::path p = dir_ / "bad.jsonl";
    std::ofstream(p, std::ios::binary) << content;
    try {
      ditto::trace::read_trace(p.string());
      ADD_FAILURE() << "no error for " << what;
    } catch (const ditto::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos)
          << e.what();
    }
  };
  // Cut short: the end line is missing.
  const size_t last = text.rfind('\n', text.size() - 2);
  expect_error(text.substr(0, last + 1), "no end line");
  // A line that is not a record.
  const size_t second = text.find('\n') + 1;
  expect_error(
      text.substr(0, second) + "{\"i\":0,\"op\":3}\n" + text.substr(second),
      ":2: not a trace record");
  expect_error("", "empty");
  expect_error("{\"something\":1}\n", "not a ditto trace");
  // Integer fields holding floats or values past int64 (fuzz_trace found a
  // version of 8.9e79, converted with undefined behaviour before).
  expect_error("{\"ditto_trace\":8.9e79}\n", "not a ditto trace");
  expect_error(
      text.substr(0, second) + "{\"i\":1e300,\"op\":\"x\"}\n" +
          text.substr(second),
      "not a 64-bit integer");
  expect_error(
      text.substr(0, second) + "{\"i\":18446744073709551615}\n" +
          text.substr(second),
      "not a 64-bit integer");
  // Issue 32: 100,000 levels of '[' in the header or the end line's
  // registry (they used to overflow the stack when copied or printed).
  const std::string deep(100000, '[');
  expect_error(deep + "\n", "JSON nests deeper than 64 levels");
  expect_error(
      text.substr(0, last + 1) + "{\"end\":true,\"registry\":" + deep + "}\n",
      "JSON nests deeper than 64 levels");
  // A directory where the trace should be.
  fs::create_directories(dir_ / "dir.jsonl");
  try {
    ditto::trace::read_trace((dir_ / "dir.jsonl").string());
    ADD_FAILURE() << "a directory was read as a trace";
  } catch (const ditto::ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("it is a directory, not a regular file"),
        std::string::npos)
        << e.what();
  }
}

// Issue 32, defect 6: a trace that cannot be written (here a file size
// limit, as a full disk) is an error: the program exits non-zero, says
// which file, and leaves neither a partial trace nor a temporary; the file
// that was there before is untouched.
TEST_F(Verify, ATraceThatCannotBeWrittenFailsTheProgram) {
  const fs::path trace = dir_ / "t.jsonl";
  std::ofstream(trace) << "previous";
  Result r = run_shell(
      "trap '' XFSZ; ulimit -f 2; DITTO_TRACE=" + quote(trace.string()) + " " +
          planted(),
      dir_);
  EXPECT_NE(r.code, 0) << r.out << r.err;
  EXPECT_NE(
      r.err.find("cannot write the trace '" + trace.string() + "'"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(read_text(trace), "previous");
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(
        e.path().filename().string().find("t.jsonl.tmp"), std::string::npos)
        << e.path();
  }
  // trace::stop() in a program raises the same error: the planted program
  // under the same limit with the trace started from code is covered by
  // the environment run above (both go through one writer).
}

// Issue 32, defect 3: DITTO_TRACE naming a FIFO writes through it and a
// symlink writes where it points; neither is replaced by a regular file.
TEST_F(Verify, TraceToAFifoOrASymlinkKeepsThemWhatTheyAre) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path got = dir_ / "from_pipe.jsonl";
  // The program opens the FIFO without waiting for a reader (no reader yet
  // is an error, not a hang): retried until cat has it open.
  Result r = run_shell(
      "cat " + quote(fifo.string()) + " > " + quote(got.string()) +
          " & reader=$!; s=1; for i in $(seq 200); do DITTO_TRACE=" +
          quote(fifo.string()) + " " + planted() +
          " && { s=0; break; }; sleep 0.02; done; wait $reader; exit $s",
      dir_);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  const std::string through = read_text(got);
  EXPECT_EQ(through.rfind("{\"ditto_trace\":1", 0), 0u)
      << through.substr(0, 80);
  EXPECT_NE(through.find("{\"end\":true"), std::string::npos);
  // A symlink: the link stays, its target holds the trace.
  fs::create_directories(dir_ / "real");
  fs::create_symlink("real/trace.jsonl", dir_ / "link.jsonl");
  r = run_shell(
      "DITTO_TRACE=" + quote((dir_ / "link.jsonl").string()) + " " + planted(),
      dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.jsonl"));
  // The same records (the header's start time may differ by a second).
  auto records = [](const std::string& t) { return t.substr(t.find('\n')); };
  EXPECT_EQ(
      records(read_text(dir_ / "real" / "trace.jsonl")),
      records(read_text(got)));
}

namespace {

// True while process pid exists and is not a zombie.
bool alive(const std::string& pid_text) {
  const std::string stat = read_text("/proc/" + pid_text + "/stat");
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() &&
      stat[close + 2] != 'Z';
}

// True when process pid is gone within 5 s. The signal is sent before
// verify returns; a loaded machine may take a moment to run the process to
// its end.
bool dies_soon(const std::string& pid_text) {
  for (int i = 0; i < 100 && alive(pid_text); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !alive(pid_text);
}

} // namespace

// Issue 32, defect 7: a program that never exits is stopped after
// --timeout, with what it started (its process group), and verify says
// which run timed out.
TEST_F(Verify, TimeoutStopsAProgramThatNeverExits) {
  const fs::path pid = dir_ / "pid";
  Result r = verify(
      "--timeout 0.5 -- /bin/sh -c " +
      quote("sleep 1000 & echo $! > " + quote(pid.string()) + "; wait"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("run-1 (default): /bin/sh timed out"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("after 0.5 s (--timeout)"), std::string::npos) << r.err;
  const std::string child = read_text(pid);
  ASSERT_FALSE(child.empty());
  EXPECT_TRUE(dies_soon(child.substr(0, child.find('\n'))))
      << "the program's child survived 5 s";
  // Bad values are usage errors, here and in the other numeric lists.
  for (const char* bad : {"-1", "nan", "1e99", "x"}) {
    EXPECT_EQ(verify(std::string("--timeout ") + bad + " -- true").code, 2)
        << bad;
  }
  for (const char* bad :
       {"--threads 1,nan",
        "--threads 0",
        "--threads 1,2,1025",
        "--workers -1",
        "--seeds 1,18446744073709551616",
        "--runs 101",
        "--resume-at 0"}) {
    EXPECT_EQ(verify(std::string(bad) + " -- true").code, 2) << bad;
  }
}

// Killing verify stops the run it is waiting for, and verify dies of the
// signal it got (exit status 128 + 15 for SIGTERM).
TEST_F(Verify, InterruptedVerifyStopsItsRun) {
  const fs::path pid = dir_ / "pid";
  Result r = run_shell(
      "( " + quote(DITTO_CLI) + " verify -- /bin/sh -c " +
          quote("sleep 1000 & echo $! > " + quote(pid.string()) + "; wait") +
          " & v=$!; while ! [ -s " + quote(pid.string()) +
          " ]; do sleep 0.01; done; kill -TERM $v; wait $v; echo status $? )",
      dir_);
  EXPECT_NE(r.out.find("status 143"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("interrupted by Terminated"), std::string::npos)
      << r.err;
  const std::string child = read_text(pid);
  EXPECT_TRUE(dies_soon(child.substr(0, child.find('\n'))))
      << "the program's child survived verify by 5 s";
}

TEST(TraceCompare, StructuralAndValueDivergences) {
  using ditto::trace::TracedOutput;
  auto rec = [](std::string op, double v) {
    TraceRecord r;
    r.op = op;
    r.phase = "forward";
    TracedOutput o;
    o.shape = {2};
    o.dtype = "float32";
    o.fingerprint = v == 1 ? "a" : "b";
    o.sample = {v, 2};
    r.outputs.emplace_back(o);
    return r;
  };
  const std::vector<TraceRecord> a = {rec("x", 1), rec("y", 1), rec("z", 1)};
  auto same = ditto::trace::compare_traces(a, a);
  EXPECT_FALSE(same.first.has_value());
  std::vector<TraceRecord> b = a;
  b[1] = rec("y", 1.5);
  auto values = ditto::trace::compare_traces(a, b);
  ASSERT_TRUE(values.first.has_value());
  EXPECT_EQ(values.first->position, 1);
  EXPECT_FALSE(values.first->structural);
  EXPECT_DOUBLE_EQ(values.first->difference.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(values.first->difference.max_rel, 0.5 / 1.5);
  b[1] = rec("w", 1);
  auto ops = ditto::trace::compare_traces(a, b);
  ASSERT_TRUE(ops.first.has_value());
  EXPECT_TRUE(ops.first->structural);
  EXPECT_NE(ops.first->what.find("run A ran y"), std::string::npos);
  b = a;
  b.pop_back();
  auto shorter = ditto::trace::compare_traces(a, b);
  ASSERT_TRUE(shorter.first.has_value());
  EXPECT_EQ(shorter.first->position, 2);
  EXPECT_NE(
      shorter.first->what.find("run B ended after 2 ops"), std::string::npos);
}

} // namespace
