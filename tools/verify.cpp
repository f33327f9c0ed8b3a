#include "verify.h"

#include "cli_common.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/file_io.h"
#include "ditto/determinism/context.h"
#include "ditto/trace/compare.h"

namespace ditto::cli {
namespace {

namespace fs = std::filesystem;
using trace::Comparison;
using trace::TraceRecord;

// A failure that ends verify with exit code 1.
struct VerifyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A bad combination of flags: exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) {
    out.push_back(cur);
  }
  if (!s.empty() && s.back() == sep) {
    out.emplace_back();
  }
  return out;
}

// One way to run the program.
struct Setting {
  std::vector<std::pair<std::string, std::string>> axes; // shown
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> extra_args; // for ditto train
  std::string label() const {
    std::string s;
    for (const auto& [k, v] : axes) {
      s += (s.empty() ? "" : " ") + k + "=" + v;
    }
    return s.empty() ? "default" : s;
  }
};

struct Run {
  int number = 0; // 1-based
  int repeat = 0; // 1-based within its setting
  Setting setting;
  std::string dir; // its outputs
  std::string trace_path;
  std::optional<std::string> fingerprint; // "fingerprint X" on stdout
  std::vector<TraceRecord> records;
  std::vector<determinism::OpInfo> registry; // the program's
  std::string label() const {
    std::string s = "run " + std::to_string(number) + " (" + setting.label();
    if (repeat > 1) {
      s += ", repeat " + std::to_string(repeat);
    }
    return s + ")";
  }
};

struct Program {
  bool train = false; // ditto train (this executable)
  std::vector<std::string> argv;
  std::string text() const {
    std::string s;
    for (size_t i = train ? 1 : 0; i < argv.size(); ++i) {
      s += (s.empty() ? "" : " ") + argv[i];
    }
    return train ? "ditto " + s : s;
  }
};

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw VerifyError("cannot find the ditto executable (/proc/self/exe)");
  }
  return p.string();
}

// The path the program runs from, or an error naming it.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) != 0) {
      throw VerifyError("cannot run '" + name + "': " + std::strerror(errno));
    }
    return name;
  }
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path ? path : "", ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  throw VerifyError("cannot run '" + name + "': not found in PATH");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string last_lines(const std::string& text, int n) {
  size_t at = text.size();
  while (at > 0 && text[at - 1] == '\n') {
    --at;
  }
  const size_t end = at;
  for (int k = 0; k < n && at > 0; ++k) {
    at = text.rfind('\n', at - 1);
    if (at == std::string::npos) {
      at = 0;
      break;
    }
  }
  std::string s = text.substr(at, end - at);
  if (!s.empty() && s[0] == '\n') {
    s.erase(0, 1);
  }
  return s;
}

// The last "fingerprint <16 hex>" line the program printed, if any.
std::optional<std::string> printed_fingerprint(const std::string& out) {
  std::optional<std::string> fp;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    constexpr std::string_view kKey = "fingerprint ";
    if (line.rfind(kKey, 0) == 0 && line.size() == kKey.size() + 16) {
      fp = line.substr(kKey.size());
    }
  }
  return fp;
}

// Note [A verify that cannot hang]
// Each run is its own process group (setpgid in the child), so that ending
// it ends everything it started. A run that outlives --timeout gets SIGTERM
// on its group, then SIGKILL after a grace period, and verify reports which
// run timed out. When verify itself gets SIGINT, SIGTERM or SIGHUP, it does
// the same to the running group, removes its work directory and dies of
// the signal it got; if verify is killed outright (SIGKILL), the child gets
// SIGKILL from the kernel (PR_SET_PDEATHSIG).
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int sig) {
  g_interrupted = sig;
}

// SIGINT, SIGTERM and SIGHUP recorded in g_interrupted while it lives; the
// previous handlers come back after.
class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) {
      ::sigaction(kSignals[i], &sa, &old_[i]);
    }
  }
  ~InterruptScope() {
    for (size_t i = 0; i < kSignals.size(); ++i) {
      ::sigaction(kSignals[i], &old_[i], nullptr);
    }
  }
  // After cleaning up: dies of the signal that interrupted verify.
  static void reraise() {
    const int sig = g_interrupted;
    if (sig != 0) {
      ::signal(sig, SIG_DFL);
      ::raise(sig);
    }
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// Thrown when verify was interrupted: unwinds to run_verify, cleaning up.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Ends the process group led by pid: SIGTERM to the group, then SIGKILL to
// what is left of it after grace_s (or once the leader exits), and reaps
// the leader.
void end_group(pid_t pid, double grace_s) {
  ::kill(-pid, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      break;
    }
    ::usleep(10000);
  }
  ::kill(-pid, SIGKILL); // what is left of the group, the leader included
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Runs argv with env added, stdout and stderr into files in dir; throws
// VerifyError naming the run if it does not exit with 0 within timeout_s
// seconds (0: no limit), Interrupted if verify is interrupted.
void execute(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env,
    const std::string& dir,
    const std::string& what,
    double timeout_s) {
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string exe = find_program(argv[0]);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw VerifyError(what + ": fork failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(126); // verify is already gone
    }
    // Default dispositions: verify's handlers are not the program's.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      ::signal(sig, SIG_DFL);
    }
    // No terminal input: in its own process group, a read from the
    // terminal would stop the program (SIGTTIN) until the timeout.
    const int fi = ::open("/dev/null", O_RDONLY);
    const int fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fi < 0 || fo < 0 || fe < 0 || ::dup2(fi, 0) < 0 || ::dup2(fo, 1) < 0 ||
        ::dup2(fe, 2) < 0) {
      ::_exit(126);
    }
    for (const auto& [k, v] : env) {
      ::setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    ::execv(exe.c_str(), args.data());
    std::fprintf(stderr, "exec %s: %s\n", exe.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid); // also here: no window where a kill(-pid) misses
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      break;
    }
    if (r < 0 && errno != EINTR) {
      throw VerifyError(what + ": waitpid failed: " + std::strerror(errno));
    }
    if (g_interrupted != 0) {
      end_group(pid, 2.0);
      throw Interrupted(
          what + ": interrupted by " + ::strsignal(g_interrupted) +
          "; the run was stopped");
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (timeout_s > 0 && elapsed >= timeout_s) {
      end_group(pid, 5.0);
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", timeout_s);
      throw VerifyError(
          what + ": " + argv[0] + " timed out: it was still running after " +
          limit +
          " s (--timeout) and was stopped, with every process it "
          "started");
    }
    // Short polls at first (most test programs end in milliseconds), then
    // at most every 50 ms.
    ::usleep(elapsed < 1 ? 2000 : 50000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return;
  }
  std::string how = WIFEXITED(status)
      ? "exited with status " + std::to_string(WEXITSTATUS(status))
      : WIFSIGNALED(status)
      ? "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
          ::strsignal(WTERMSIG(status)) + ")"
      : "failed";
  std::string tail = last_lines(read_text(err), 3);
  if (tail.empty()) {
    tail = last_lines(read_text(out), 3);
  }
  throw VerifyError(
      what + ": " + argv[0] + " " + how +
      (tail.empty() ? "" : "; its last output: " + tail));
}

// Removes "--flag V" and "--flag=V" from args.
std::vector<std::string> without_flag(
    const std::vector<std::string>& args,
    const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      ++i;
      continue;
    }
    if (args[i].rfind(flag + "=", 0) == 0) {
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

class Verifier {
 public:
  Verifier(const VerifyOptions& o) : o_(o) {}

  int run() {
    make_program();
    make_settings();
    make_workdir();
    struct Cleanup {
      const Verifier& v;
      ~Cleanup() {
        if (v.o_.keep.empty() && !v.work_.empty()) {
          std::error_code ec;
          fs::remove_all(v.work_, ec);
        }
      }
    } cleanup{*this};
    const int code = o_.resume_at > 0 ? verify_resume() : verify_runs();
    if (!o_.keep.empty()) {
      std::printf("traces and outputs kept in %s\n", work_.c_str());
    }
    return code;
  }

 private:
  void make_program() {
    if (o_.program.empty() || o_.program[0] == "train") {
      prog_.train = true;
      prog_.argv = {self_exe(), "train"};
      if (o_.program.size() > 1) {
        prog_.argv.insert(
            prog_.argv.end(), o_.program.begin() + 1, o_.program.end());
      } else {
        // A short training: a few dozen steps of the default model.
        for (const char* a : {"--epochs", "1", "--max-steps", "30"}) {
          prog_.argv.emplace_back(a);
        }
      }
    } else {
      prog_.argv = o_.program;
      find_program(prog_.argv[0]); // a missing program fails before any run
    }
    if (!prog_.train) {
      if (!o_.workers.empty()) {
        throw UsageError(
            "--workers needs ditto train (pass your program's own setting "
            "with --env)");
      }
      if (o_.resume_at > 0) {
        throw UsageError("--resume-at needs ditto train");
      }
    }
  }

  void make_settings() {
    std::vector<std::vector<std::pair<std::string, std::string>>> axes;
    auto axis = [&](const std::string& name,
                    const std::vector<std::string>& values) {
      if (values.empty()) {
        return;
      }
      std::vector<std::pair<std::string, std::string>> a;
      for (const std::string& v : values) {
        a.emplace_back(name, v);
      }
      axes.push_back(a);
    };
    for (const std::string& c : o_.capabilities) {
      const auto supported = supported_cpu_capabilities();
      bool ok = false;
      for (CpuCapability s : supported) {
        ok = ok || cpu_capability_name(s) == c;
      }
      if (!ok) {
        std::string names;
        for (CpuCapability s : supported) {
          names +=
              (names.empty() ? "" : ", ") + std::string(cpu_capability_name(s));
        }
        throw UsageError(
            "--capabilities: '" + c + "' is not supported on this CPU (" +
            names + ")");
      }
    }
    axis("threads", o_.threads);
    axis("capability", o_.capabilities);
    axis("workers", o_.workers);
    axis("seed", o_.seeds);
    for (const std::string& e : o_.env) {
      const size_t eq = e.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw UsageError("--env: expected VAR=a,b, got '" + e + "'");
      }
      axis(e.substr(0, eq), split(e.substr(eq + 1), ','));
    }
    // Every combination, the first axis slowest.
    std::vector<Setting> settings{Setting{}};
    for (const auto& a : axes) {
      std::vector<Setting> next;
      for (const Setting& s : settings) {
        for (const auto& kv : a) {
          Setting t = s;
          t.axes.push_back(kv);
          next.push_back(t);
        }
      }
      settings = next;
    }
    for (Setting& s : settings) {
      for (const auto& [k, v] : s.axes) {
        if (k == "threads") {
          s.env.emplace_back("DITTO_NUM_THREADS", v);
        } else if (k == "capability") {
          s.env.emplace_back("DITTO_CPU_CAPABILITY", v);
        } else if (k == "workers") {
          s.extra_args.insert(s.extra_args.end(), {"--workers", v});
        } else if (k == "seed") {
          if (prog_.train) {
            s.extra_args.insert(s.extra_args.end(), {"--seed", v});
          } else {
            s.env.emplace_back("DITTO_SEED", v);
          }
        } else {
          s.env.emplace_back(k, v);
        }
      }
    }
    const int runs = o_.runs > 0 ? o_.runs : (axes.empty() ? 2 : 1);
    if (o_.resume_at == 0 && int64_t(settings.size()) * runs < 2) {
      throw UsageError(
          "nothing to compare: give --runs 2 or more, or settings to vary");
    }
    int number = 0;
    for (const Setting& s : settings) {
      for (int r = 1; r <= runs; ++r) {
        Run run;
        run.number = ++number;
        run.repeat = runs > 1 ? r : 0;
        run.setting = s;
        runs_.push_back(run);
      }
    }
  }

  void make_workdir() {
    if (!o_.keep.empty()) {
      fs::create_directories(o_.keep);
      work_ = fs::absolute(o_.keep).string();
      return;
    }
    std::string tmpl =
        (fs::temp_directory_path() / "ditto-verify-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw VerifyError(
          std::string("cannot make a temporary directory: ") +
          std::strerror(errno));
    }
    work_ = tmpl;
  }

  // Runs the program once as run.setting says, with extra train flags and
  // environment; fills the run's trace and fingerprint.
  void execute_run(
      Run& run,
      const std::string& name,
      const std::vector<std::string>& train_args = {},
      const std::vector<std::pair<std::string, std::string>>& extra_env = {}) {
    run.dir = work_ + "/" + name;
    fs::create_directories(run.dir);
    run.trace_path = run.dir + "/trace.jsonl";
    std::vector<std::string> argv = prog_.argv;
    std::vector<std::pair<std::string, std::string>> env = run.setting.env;
    env.emplace_back("DITTO_TRACE", run.trace_path);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    if (prog_.train) {
      argv = without_flag(argv, "--out");
      argv.insert(argv.end(), {"--out", run.dir + "/out"});
      argv.insert(
          argv.end(),
          run.setting.extra_args.begin(),
          run.setting.extra_args.end());
      for (size_t i = 0; i + 1 < train_args.size(); i += 2) {
        argv = without_flag(argv, train_args[i]);
      }
      argv.insert(argv.end(), train_args.begin(), train_args.end());
    }
    std::printf("%s: %s\n", name.c_str(), run.setting.label().c_str());
    std::fflush(stdout);
    execute(
        argv,
        env,
        run.dir,
        name + " (" + run.setting.label() + ")",
        o_.timeout_s);
    run.fingerprint = printed_fingerprint(read_text(run.dir + "/stdout"));
    try {
      run.records = trace::read_trace(run.trace_path, &run.registry);
    } catch (const std::exception& e) {
      throw VerifyError(
          name + ": " + e.what() +
          " (does the program link ditto and exit normally?)");
    }
  }

  int verify_runs() {
    std::printf(
        "ditto verify: %zu runs of `%s`\n", runs_.size(), prog_.text().c_str());
    for (Run& r : runs_) {
      execute_run(r, "run-" + std::to_string(r.number));
    }
    const Run& base = runs_[0];
    bool diverged = false;
    std::optional<std::pair<const Run*, Comparison>> reported;
    for (size_t i = 1; i < runs_.size(); ++i) {
      Comparison c = trace::compare_traces(base.records, runs_[i].records);
      const bool fp_differs = base.fingerprint != runs_[i].fingerprint;
      if (!c.first && !fp_differs) {
        continue;
      }
      diverged = true;
      if (c.first && !c.first->structural && o_.exact) {
        measure_exactly(base, runs_[i], c);
      }
      std::fputs(describe(base, runs_[i], c, fp_differs).c_str(), stdout);
      if (!reported) {
        reported.emplace(&runs_[i], std::move(c));
      }
    }
    std::string verdict;
    if (!diverged) {
      verdict = "identical: " + std::to_string(runs_.size()) + " runs, " +
          std::to_string(base.records.size()) + " ops each" +
          (base.fingerprint ? ", final fingerprint " + *base.fingerprint : "") +
          "\n";
      std::fputs(verdict.c_str(), stdout);
    } else {
      verdict = last_summary_;
    }
    if (!o_.report.empty()) {
      const Run& other = reported ? *reported->first : runs_[1];
      Comparison c = reported
          ? reported->second
          : trace::compare_traces(base.records, other.records);
      write_report(base, other, base.records, other.records, c, verdict);
    }
    return diverged ? 3 : 0;
  }

  // --resume-at K: a straight run against one stopped after K steps and
  // resumed from its checkpoint. The training records (data, forward,
  // backward, optimizer) of steps before K come from the first part, the
  // rest from the resumed one; evaluation passes are not compared (a
  // resumed run does not repeat the first part's), the final weights are.
  int verify_resume() {
    const int64_t k = o_.resume_at;
    Run straight = runs_[0], part1 = runs_[0], part2 = runs_[0];
    std::printf(
        "ditto verify: `%s` straight, and stopped at step %" PRId64
        " then resumed (%s)\n",
        prog_.text().c_str(),
        k,
        straight.setting.label().c_str());
    const std::string ckpt = work_ + "/checkpoints";
    execute_run(straight, "straight");
    execute_run(
        part1,
        "until-step-" + std::to_string(k),
        {"--max-steps", std::to_string(k), "--checkpoint-dir", ckpt});
    // The resumed part keeps the program's own --max-steps.
    std::vector<std::string> resume_args = {
        "--resume", "latest", "--checkpoint-dir", ckpt};
    execute_run(part2, "resumed", resume_args);
    auto training = [](const TraceRecord& r) { return r.phase != "eval"; };
    std::vector<TraceRecord> a, b;
    for (const TraceRecord& r : straight.records) {
      if (training(r)) {
        a.push_back(r);
      }
    }
    for (const TraceRecord& r : part1.records) {
      if (training(r) && r.step < k) {
        b.push_back(r);
      }
    }
    for (const TraceRecord& r : part2.records) {
      if (training(r) && r.step >= k) {
        b.push_back(r);
      }
    }
    Comparison c = trace::compare_traces(a, b);
    const bool fp_differs = straight.fingerprint != part2.fingerprint;
    Run combined = part2;
    combined.number = 2;
    combined.setting.axes.emplace_back("resume-at", std::to_string(k));
    Run base = straight;
    base.number = 1;
    base.records = a;
    combined.records = b;
    std::string verdict;
    if (!c.first && !fp_differs) {
      verdict = "identical: the resumed run equals the straight one, " +
          std::to_string(a.size()) + " training ops" +
          (straight.fingerprint ? ", final fingerprint " + *straight.fingerprint
                                : "") +
          "\n";
      std::fputs(verdict.c_str(), stdout);
    } else {
      std::fputs(describe(base, combined, c, fp_differs).c_str(), stdout);
      verdict = last_summary_;
    }
    if (!o_.report.empty()) {
      write_report(base, combined, a, b, c, verdict);
    }
    return c.first || fp_differs ? 3 : 0;
  }

  // Reruns the two runs with the first divergence's record written whole,
  // so its difference is exact: kept when each rerun reproduces its run's
  // fingerprints there (else the sampled figures stay, and say so).
  void measure_exactly(const Run& a, const Run& b, Comparison& c) {
    const int64_t pos = c.first->position;
    std::printf(
        "rerunning %s and %s to measure op #%" PRId64 " exactly\n",
        a.label().c_str(),
        b.label().c_str(),
        pos);
    Run ra = a, rb = b;
    const std::vector<std::pair<std::string, std::string>> full = {
        {"DITTO_TRACE_FULL", std::to_string(pos)}};
    execute_run(ra, "exact-" + std::to_string(a.number), {}, full);
    execute_run(rb, "exact-" + std::to_string(b.number), {}, full);
    auto same_as = [&](const Run& rerun, const Run& run) {
      if (int64_t(rerun.records.size()) <= pos ||
          int64_t(run.records.size()) <= pos) {
        return false;
      }
      const auto& x = rerun.records[size_t(pos)].outputs;
      const auto& y = run.records[size_t(pos)].outputs;
      if (x.size() != y.size()) {
        return false;
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if (x[i].has_value() != y[i].has_value() ||
            (x[i] && x[i]->fingerprint != y[i]->fingerprint)) {
          return false;
        }
      }
      return true;
    };
    const bool reproduced = same_as(ra, a) && same_as(rb, b);
    // Not reproduced: the reruns measure the same op if they diverge there
    // too (the runs themselves are not reproducible).
    const bool comparable = int64_t(ra.records.size()) > pos &&
        int64_t(rb.records.size()) > pos &&
        ra.records[size_t(pos)].op == a.records[size_t(pos)].op &&
        rb.records[size_t(pos)].op == a.records[size_t(pos)].op &&
        ra.records[size_t(pos)].outputs.size() ==
            rb.records[size_t(pos)].outputs.size();
    if (!comparable) {
      exact_note_ = " (from the samples: the reruns ran other ops there)";
      return;
    }
    trace::Difference worst;
    bool differs = false;
    const auto& x = ra.records[size_t(pos)].outputs;
    const auto& y = rb.records[size_t(pos)].outputs;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] && y[i] && x[i]->fingerprint != y[i]->fingerprint &&
          x[i]->values.size() == y[i]->values.size()) {
        const trace::Difference d = trace::difference(*x[i], *y[i]);
        worst.max_abs = std::max(worst.max_abs, d.max_abs);
        worst.max_rel = std::max(worst.max_rel, d.max_rel);
        differs = true;
      }
    }
    if (!differs) {
      exact_note_ =
          " (from the samples: the reruns agreed on this op; the runs are "
          "not reproducible)";
      return;
    }
    worst.exact = true;
    c.first->difference = worst;
    c.per_op[size_t(pos)] = worst;
    exact_note_ = reproduced ? ""
                             : " (measured on reruns, which diverged here "
                               "too: the runs are not reproducible)";
  }

  std::string describe(
      const Run& a,
      const Run& b,
      const Comparison& c,
      bool fp_differs) {
    std::string s;
    auto line = [&](const std::string& key, const std::string& value) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "  %-10s ", key.c_str());
      s += buf + value + "\n";
    };
    s += "diverged: " + b.label() + " differs from " + a.label() + "\n";
    if (c.first) {
      const trace::Divergence& d = *c.first;
      const size_t n = std::min(a.records.size(), b.records.size());
      if (d.structural) {
        line(
            "at",
            "op #" + std::to_string(d.position) + " of " + std::to_string(n));
        line("what", d.what);
      } else {
        const TraceRecord& r = a.records[size_t(d.position)];
        line(
            "first",
            "op #" + std::to_string(d.position) + " of " + std::to_string(n) +
                ": " + r.op);
        line(
            "module",
            r.module.empty() && r.type.empty()
                ? "(none)"
                : (r.module.empty() ? "(root)" : r.module) + " (" + r.type +
                    ")");
        line("phase", r.phase + ", step " + std::to_string(r.step));
        const auto& oa = r.outputs[size_t(d.output)];
        const auto& ob =
            b.records[size_t(d.position)].outputs[size_t(d.output)];
        std::string shape;
        for (size_t i = 0; i < oa->shape.size(); ++i) {
          shape += (i ? ", " : "") + std::to_string(oa->shape[i]);
        }
        line(
            "output",
            std::to_string(d.output) + ": " + oa->dtype + " [" + shape +
                "], fingerprint " + oa->fingerprint + " vs " + ob->fingerprint);
        char diff[160];
        if (d.difference.below_samples) {
          std::snprintf(
              diff, sizeof diff, "between the sampled values (they agree)");
        } else {
          std::snprintf(
              diff,
              sizeof diff,
              "max abs %.3g, max rel %.3g%s",
              d.difference.max_abs,
              d.difference.max_rel,
              d.difference.exact ? ", over every value" : "");
        }
        line("difference", diff + exact_note_);
        line(
            "ops",
            std::to_string(c.differing) + " of the " + std::to_string(n) +
                " compared ops differ");
        if (auto info = determinism::match_registered(r.op, a.registry)) {
          line(
              "registry",
              info->name + ": " + info->reason +
                  (info->has_deterministic_alternative
                       ? ". A deterministic variant exists: run with "
                         "--deterministic (use_deterministic_algorithms(true))"
                       : ". No deterministic implementation: "
                         "use_deterministic_algorithms(true) raises "
                         "instead"));
        } else {
          line("registry", "no entry for " + r.op);
        }
      }
    } else {
      line("ops", "every traced op is identical");
    }
    std::string setting;
    for (const auto& [k, v] : b.setting.axes) {
      std::string va;
      for (const auto& [ka, vaa] : a.setting.axes) {
        if (ka == k) {
          va = vaa;
        }
      }
      if (va != v) {
        setting += (setting.empty() ? "" : ", ") + k + ": " +
            (va.empty() ? "(not set)" : va) + " vs " + v;
      }
    }
    line(
        "setting",
        setting.empty() ? "none (the same settings, run again)" : setting);
    if (fp_differs) {
      line(
          "final",
          "fingerprint " + a.fingerprint.value_or("(none)") + " vs " +
              b.fingerprint.value_or("(none)"));
    }
    last_summary_ = s;
    return s;
  }

  void write_report(
      const Run& a,
      const Run& b,
      const std::vector<TraceRecord>& ra,
      const std::vector<TraceRecord>& rb,
      const Comparison& c,
      const std::string& verdict) {
    trace::ReportInput in;
    in.title = prog_.text();
    in.label_a = a.label();
    in.label_b = b.label();
    in.a = ra;
    in.b = rb;
    in.comparison = c;
    in.summary = verdict;
    detail::write_file_atomic(
        o_.report, trace::report_html(in), "ditto verify");
    std::printf("report: %s\n", o_.report.c_str());
  }

  const VerifyOptions& o_;
  Program prog_;
  std::vector<Run> runs_;
  std::string work_;
  std::string last_summary_;
  std::string exact_note_ = " (from the samples)";
};

} // namespace

void add_verify_flags(CLI::App& cmd, VerifyOptions& o) {
  cmd.add_option(
         "--runs",
         o.runs,
         "runs of each setting (default 2 when no setting varies, else 1)")
      ->check(integer_in(1, 100));
  cmd.add_option("--threads", o.threads, "thread counts to compare (1,2,3)")
      ->delimiter(',')
      ->check(integer_in(1, 1024));
  cmd.add_option(
         "--capabilities",
         o.capabilities,
         "CPU capabilities to compare (scalar,avx2,...; those the CPU has)")
      ->delimiter(',');
  cmd.add_option(
         "--workers", o.workers, "data-loader workers to compare (ditto train)")
      ->delimiter(',')
      ->check(integer_in(0, 256));
  cmd.add_option(
         "--seeds", o.seeds, "seeds to compare, to see what a seed changes")
      ->delimiter(',')
      ->check(seed_value());
  cmd.add_option(
         "--resume-at",
         o.resume_at,
         "ditto train: stop at step K, resume from the checkpoint, compare with "
         "the straight run")
      ->check(integer_in(1, int64_t(1) << 40));
  cmd.add_option(
         "--env",
         o.env,
         "VAR=a,b: values of any environment variable to compare")
      ->take_all();
  cmd.add_option(
         "--timeout",
         o.timeout_s,
         "seconds each run may take before it is stopped, with every process "
         "it started (default 86400; 0: no limit)")
      ->check(number_in(0.0, 1e7));
  cmd.add_option("--report", o.report, "write an HTML report here");
  cmd.add_option(
      "--keep", o.keep, "keep every run's trace and output in this directory");
  cmd.add_flag_callback(
      "--no-exact",
      [&o] { o.exact = false; },
      "do not rerun the first divergence to measure it over every value");
  cmd.footer(
      "After --: the program to run and its arguments (default: ditto train "
      "--epochs 1 --max-steps 30); 'train ARGS' runs this ditto's train with "
      "ARGS.\nExit codes: 0 identical, 3 diverged, 1 error, 2 usage.");
}

int run_verify(const VerifyOptions& o) {
  InterruptScope interrupts;
  try {
    const int code = Verifier(o).run();
    InterruptScope::reraise(); // a signal that came between runs
    return code;
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "ditto verify: %s\n", one_line(e.what()).c_str());
    std::fflush(nullptr);
    InterruptScope::reraise();
    return 1;
  } catch (const UsageError& e) {
    std::fprintf(
        stderr,
        "ditto verify: %s (see ditto verify --help)\n",
        one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ditto verify: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}

} // namespace ditto::cli
