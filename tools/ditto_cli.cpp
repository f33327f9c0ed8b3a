// The `ditto` command line tool.
//
//   ditto train [flags]      train a registered model on MNIST-format data
//                            (or a language model on a text)
//                            (docs/train.md; `ditto train --help`)
//   ditto models             the models `ditto train --model` knows
//   ditto verify [flags] [-- PROGRAM ARGS]
//                            run a program several ways and name the first op
//                            where the runs diverge (docs/verify.md)
//   ditto ops [--format text|md|json] [--nondeterministic-only]
//                            the ops and their determinism (the registry;
//                            the table of docs/determinism.md)
//   ditto env [--json]       version, build, CPU capabilities, threads,
//                            switches, DITTO_* variables, data (alias: config)
//
// Exit codes: 0 done, 2 usage (a bad flag or value), 1 any other error;
// ditto verify: 3 when the runs diverge.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "ditto/device/device.h"
#include "ditto/ditto.h"
#include "ditto/ops/detail/declaration.h"
#if defined(DITTO_HAVE_DISTRIBUTED)
#include "ditto/distributed/distributed.h"
#endif
#include "verify.h"

namespace {

namespace train = ditto::train;
using ditto::cli::integer_in;
using ditto::cli::number_in;
using ditto::cli::seed_bits;
using ditto::cli::seed_value;

void print_ops(const std::string& format, bool nondeterministic_only) {
  auto ops = ditto::determinism::registered_ops();
  auto alternative = [](const ditto::determinism::OpInfo& op) {
    return op.has_deterministic_alternative
        ? std::string(
              "deterministic variant (use_deterministic_algorithms(true))")
        : std::string("none: raises under use_deterministic_algorithms(true)");
  };
  // Where PyTorch's kernel of each op is nondeterministic
  // (ditto/ops/pytorch_nondeterministic.toml).
  std::map<std::string, nlohmann::json> pytorch;
  for (const auto& p : ditto::detail::pytorch_nondeterministic_ops()) {
    for (const auto& op : p.ops) {
      pytorch[op].push_back({{"torch", p.torch}, {"where", p.where}});
    }
  }
  auto pytorch_of = [&](const std::string& op) {
    auto it = pytorch.find(op);
    return it == pytorch.end() ? nlohmann::json::array() : it->second;
  };
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& op : ops) {
      j.push_back(
          {{"op", op.name},
           {"pytorch_nondeterministic", pytorch_of(op.name)},
           {"nondeterministic_implementation", true},
           {"reason", op.reason},
           {"deterministic_alternative", op.has_deterministic_alternative},
           {"alternative", alternative(op)},
           {"dtypes", op.dtypes},
           {"cost",
            op.cost.empty() ? nlohmann::json(nullptr)
                            : nlohmann::json(op.cost)}});
    }
    if (!nondeterministic_only) {
      // The Core ATen operators each record answers
      // (ditto/ops/core_aten.toml).
      std::map<std::string, std::vector<std::string>> core_aten;
      for (const auto& a : ditto::detail::core_aten_ops()) {
        for (const auto& op : a.ops) {
          core_aten[op].push_back(a.name);
        }
      }
      for (const ditto::OpRecord* r : ditto::op_records()) {
        nlohmann::json dtypes = nlohmann::json::array();
        for (ditto::Dtype dt : r->dtypes) {
          dtypes.push_back(std::string(ditto::dtype_name(dt)));
        }
        nlohmann::json paths = nlohmann::json::array();
        for (const auto& p : r->nondeterministic) {
          paths.push_back(p.entry);
        }
        j.push_back(
            {{"op", r->name},
             {"record", true},
             {"family", r->family},
             {"determinism", ditto::determinism_name(r->determinism())},
             {"reason", r->deterministic_because},
             {"nondeterministic_paths", paths},
             {"callables", r->callables},
             {"dtypes", dtypes},
             {"differentiable", r->not_differentiable.empty()},
             {"inplace", r->inplace},
             {"core_aten", core_aten[r->name]},
             {"pytorch_nondeterministic", pytorch_of(r->name)},
             {"devices",
              ditto::has_device_kernel(r->name, ditto::DeviceType::Vulkan)
                  ? nlohmann::json{"cpu", "vulkan"}
                  : nlohmann::json{"cpu"}}});
      }
      // The Core ATen operators that no record answers: metadata reads,
      // and the ones ditto lacks.
      for (const auto& a : ditto::detail::core_aten_ops()) {
        if (a.ops.empty()) {
          j.push_back(
              {{"op", a.name},
               {"record", false},
               {"core_aten", {a.name}},
               {"metadata", a.metadata},
               {"missing", a.missing}});
        }
      }
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  if (format == "md") {
    std::fputs(ditto::determinism::registry_markdown().c_str(), stdout);
    if (!nondeterministic_only) {
      std::fputs(
          "\nEvery op, from its record (`ditto ops --format json` has the "
          "callables):\n\n",
          stdout);
      std::fputs(ditto::op_records_markdown().c_str(), stdout);
      std::fputs(
          "\nWhere PyTorch's kernel is nondeterministic (on the CPU or CUDA) "
          "and ditto's records compute the op deterministically "
          "(ditto/ops/pytorch_nondeterministic.toml):\n\n"
          "| PyTorch op | PyTorch's nondeterminism | ditto's records |\n"
          "|---|---|---|\n",
          stdout);
      for (const auto& p : ditto::detail::pytorch_nondeterministic_ops()) {
        std::string records;
        for (const auto& op : p.ops) {
          records += (records.empty() ? "`" : ", `") + op + "`";
        }
        std::printf(
            "| `%s` | %s | %s |\n",
            p.torch.c_str(),
            p.where.c_str(),
            records.c_str());
      }
    }
    return;
  }
  size_t width = 2;
  for (const auto& op : ops) {
    width = std::max(width, op.name.size());
  }
  std::printf(
      "%-*s  %-13s  %-8s  %s\n",
      int(width),
      "op",
      "deterministic",
      "dtypes",
      "why the fast variant is nondeterministic");
  for (const auto& op : ops) {
    std::printf(
        "%-*s  %-13s  %-8s  %s\n",
        int(width),
        op.name.c_str(),
        op.has_deterministic_alternative ? "variant" : "alert",
        op.dtypes.c_str(),
        op.reason.c_str());
    if (!op.cost.empty()) {
      std::printf(
          "%-*s  %-13s  %-8s  cost: %s\n",
          int(width),
          "",
          "",
          "",
          op.cost.c_str());
    }
  }
  if (!nondeterministic_only) {
    // The ops with a kernel on a Vulkan device (docs/device.md).
    std::string on_device;
    for (const std::string& name :
         ditto::device_ops(ditto::DeviceType::Vulkan)) {
      on_device += (on_device.empty() ? "" : ", ") + name;
    }
    std::printf("\non a Vulkan device too: %s\n", on_device.c_str());
    std::printf("\ndeterministic on every path (no fast variant):\n");
    for (const ditto::OpRecord* r : ditto::op_records()) {
      if (r->determinism() == ditto::Determinism::kAlways) {
        std::printf(
            "  %-28s  %-13s  %s\n",
            r->name.c_str(),
            r->family.c_str(),
            r->deterministic_because.c_str());
      }
    }
  }
}

// `ditto env`: the library's environment report (ditto/config.h).
void print_env(bool json) {
  if (json) {
    nlohmann::json j = nlohmann::json::parse(ditto::config_report_json());
    j["vulkan"] = nlohmann::json::parse(ditto::devices_report_json());
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << ditto::config_report() << ditto::devices_report();
}

std::string duration(double s) {
  char buf[32];
  const long t = long(s + 0.5);
  if (t >= 3600) {
    std::snprintf(
        buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  }
  return buf;
}

// What `ditto train` prints: a progress bar redrawn in place on a terminal,
// else one line every --log-every steps; JSON lines with --json; only the
// fingerprint with --quiet.
struct Output {
  bool tty = false;
  bool quiet = false;
  bool distributed = false; // --distributed: one rank of mpirun
  bool json = false;
  bool bar_drawn = false;
  std::string rank_log_dir; // --rank-log: DIR/rank-R.log for every rank
  FILE* rank_log = nullptr;
  bool to_stdout = true; // false on ranks other than 0

  void clear_bar() {
    if (bar_drawn) {
      std::fputs("\r\033[K", stdout);
      bar_drawn = false;
    }
  }

  void line(const std::string& text) {
    if (to_stdout) {
      clear_bar();
      std::fputs(text.c_str(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
    if (rank_log != nullptr) {
      std::fputs(text.c_str(), rank_log);
      std::fputc('\n', rank_log);
      std::fflush(rank_log);
    }
  }

  train::Reporter reporter() {
    train::Reporter r;
    if (quiet) {
      return r;
    }
    if (json) {
      r.log = [this](const train::StepInfo& s) {
        line(nlohmann::json{
            {"event", "step"},
            {"step", s.step},
            {"epoch", s.epoch},
            {"loss", s.loss},
            {"lr", s.lr},
            {"samples_per_second", s.samples_per_second}}
                 .dump());
      };
      r.eval = [this](const train::StepInfo& s, const train::EvalResult& e) {
        line(nlohmann::json{
            {"event", "eval"},
            {"step", s.step},
            {"test_loss", e.loss},
            {"accuracy", e.accuracy}}
                 .dump());
      };
      r.epoch = [this](const train::EpochRecord& e) {
        nlohmann::json j = nlohmann::json::parse(train::epoch_json(e));
        j["event"] = "epoch";
        line(j.dump());
      };
      r.checkpoint = [this](const std::string& dir) {
        line(nlohmann::json{{"event", "checkpoint"}, {"path", dir}}.dump());
      };
      r.message = [this](const std::string& m) {
        line(nlohmann::json{{"event", "message"}, {"text", m}}.dump());
      };
      return r;
    }
    if (tty) {
      r.step = [this](const train::StepInfo& s) {
        const int width = 24;
        const double frac = double(s.epoch_step) /
            double(std::max<int64_t>(1, s.steps_per_epoch));
        const int fill = int(frac * width);
        std::string bar(size_t(fill), '#');
        bar.resize(size_t(width), '.');
        const int64_t left_steps = s.total_steps - s.step;
        const double rate = s.samples_per_second;
        const double left = double(left_steps) * s.elapsed /
            double(std::max<int64_t>(1, s.run_steps));
        std::printf(
            "\r\033[Kepoch %lld/%lld [%s] %lld/%lld  loss %.4f  %.0f samples/s  %s elapsed  %s left",
            static_cast<long long>(s.epoch),
            static_cast<long long>(s.epochs),
            bar.c_str(),
            static_cast<long long>(s.epoch_step),
            static_cast<long long>(s.steps_per_epoch),
            s.loss,
            rate,
            duration(s.elapsed).c_str(),
            duration(left).c_str());
        std::fflush(stdout);
        bar_drawn = true;
      };
    } else {
      r.log = [this](const train::StepInfo& s) {
        char buf[160];
        std::snprintf(
            buf,
            sizeof buf,
            "epoch %lld step %lld/%lld loss %.4f lr %.6g %.0f samples/s",
            static_cast<long long>(s.epoch),
            static_cast<long long>(s.step),
            static_cast<long long>(s.total_steps),
            s.loss,
            s.lr,
            s.samples_per_second);
        line(buf);
      };
    }
    r.eval = [this](const train::StepInfo& s, const train::EvalResult& e) {
      char buf[128];
      std::snprintf(
          buf,
          sizeof buf,
          "step %lld test loss %.4f accuracy %.2f%%",
          static_cast<long long>(s.step),
          e.loss,
          100 * e.accuracy);
      line(buf);
    };
    r.epoch = [this](const train::EpochRecord& e) {
      char buf[160];
      std::snprintf(
          buf,
          sizeof buf,
          "epoch %lld: train loss %.4f, test loss %.4f, accuracy %.2f%%, %.1f s",
          static_cast<long long>(e.epoch),
          e.train_loss,
          e.test.loss,
          100 * e.test.accuracy,
          e.seconds);
      line(buf);
    };
    r.checkpoint = [this](const std::string& dir) {
      line("checkpoint " + dir);
    };
    r.message = [this](const std::string& m) { line(m); };
    return r;
  }
};

// The largest count a flag takes (epochs, steps): 2^40, a trillion.
constexpr int64_t kMaxCount = int64_t(1) << 40;

void add_train_flags(CLI::App& cmd, train::TrainOptions& o, Output& out) {
  cmd.option_defaults()->always_capture_default();
  cmd.add_option("--model", o.model, "model to train (see `ditto models`)")
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const auto& m : train::registered_models()) {
          names.push_back(m.name);
        }
        return names;
      }()));
  cmd.add_option(
      "--data-root",
      o.data_root,
      "directory of the MNIST-format IDX files (Fashion-MNIST, MNIST)");
  cmd.add_option(
      "--text",
      o.text,
      "a language model's text (--model gpt): a file, or a directory's "
      "files in name order");
  cmd.add_option(
         "--generate",
         o.generate,
         "a language model, at the end: bytes to sample after the first 16 "
         "of the evaluation text (0: none)")
      ->check(integer_in(0, kMaxCount));
  cmd.add_flag_callback(
      "--no-normalize",
      [&o] { o.normalize = false; },
      "feed pixel / 255 as is (default: normalized with the training set's mean and std)");
  cmd.add_option_function<std::string>(
         "--seed",
         [&o](const std::string& v) { o.seed = *seed_bits(v); },
         "seed of every generator (a negative one as its 64 bits)")
      ->type_name("INT")
      ->check(seed_value())
      ->default_str("0");
  cmd.add_option("--epochs", o.epochs, "epochs to train")
      ->check(integer_in(1, kMaxCount));
  cmd.add_option("--batch-size", o.batch_size, "samples per step")
      ->check(integer_in(1, int64_t(1) << 30));
  cmd.add_option("--lr", o.lr, "learning rate (OneCycle's max_lr)")
      ->check(number_in(0.0, 1e6, /*lo_open=*/true));
  cmd.add_option("--optimizer", o.optimizer, "sgd, adam or adamw")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  cmd.add_option("--momentum", o.momentum, "SGD momentum")
      ->check(number_in(0.0, 1.0));
  cmd.add_option(
         "--weight-decay", o.weight_decay, "weight decay (AdamW: decoupled)")
      ->check(number_in(0.0, 1e6));
  cmd.add_option(
         "--scheduler",
         o.scheduler,
         "none; step (lr x0.7 every epoch); cosine (to 0 over the run); onecycle")
      ->check(CLI::IsMember({"none", "step", "cosine", "onecycle"}));
  cmd.add_option(
         "--threads",
         o.threads,
         "compute threads (0: DITTO_NUM_THREADS or every core)")
      ->check(integer_in(0, 1024));
  cmd.add_option_function<std::string>(
         "--device",
         [&o](const std::string& v) { o.device = ditto::Device(v); },
         "where to train: cpu, or vulkan[:N] (a Vulkan device; `ditto env` "
         "lists them)")
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              ditto::Device{v};
              return std::string();
            } catch (const ditto::Error& e) {
              return std::string(e.what());
            }
          },
          "DEVICE"))
      ->default_str("cpu");
  cmd.add_option(
         "--workers",
         o.workers,
         "data-loader worker threads (0: load in the training thread)")
      ->check(integer_in(0, 256));
  cmd.add_option_function<std::string>(
         "--seed-mode",
         [&o](const std::string& v) {
           o.seed_mode = v == "pytorch" ? ditto::data::SeedMode::PyTorch
                                        : ditto::data::SeedMode::PerSample;
         },
         "per-sample (data independent of workers) or pytorch (PyTorch's worker seeding)")
      ->check(CLI::IsMember({"per-sample", "pytorch"}))
      ->default_str("per-sample");
  cmd.add_flag_callback(
      "--deterministic",
      [&o] { o.deterministic = true; },
      "deterministic algorithms (the default)");
  cmd.add_flag_callback(
      "--no-deterministic",
      [&o] { o.deterministic = false; },
      "the fast variants, nondeterministic where `ditto ops` lists them");
  cmd.add_flag(
      "--benchmark",
      o.benchmark,
      "time convolution algorithms and keep the fastest");
  cmd.add_option(
      "--tuning-cache",
      o.tuning_cache,
      "tuning cache file: loaded at the start, saved at the end");
  cmd.add_option(
         "--max-steps",
         o.max_steps,
         "stop after this many steps in all (0: no limit)")
      ->check(integer_in(0, kMaxCount));
  cmd.add_option(
         "--eval-every",
         o.eval_every,
         "also evaluate every N steps (0: at epoch ends only)")
      ->check(integer_in(0, kMaxCount));
  cmd.add_option(
         "--log-every",
         o.log_every,
         "a log line (and a metrics.jsonl line) every N steps")
      ->check(integer_in(1, kMaxCount));
  cmd.add_option(
      "--checkpoint-dir",
      o.checkpoint_dir,
      "where checkpoints go (default: OUT/checkpoints)");
  cmd.add_option(
         "--checkpoint-every",
         o.checkpoint_every,
         "also checkpoint every N steps (checkpoints at epoch ends when 0)")
      ->check(integer_in(0, kMaxCount));
  cmd.add_option("--keep", o.keep, "keep the N newest checkpoints (0: all)")
      ->check(integer_in(0, int64_t(1) << 30));
  cmd.add_option(
      "--resume",
      o.resume,
      "continue from a checkpoint directory, or 'latest' in the checkpoint dir");
  cmd.add_option(
      "--init-from",
      o.init_from,
      "load the model's weights from a safetensors file");
  cmd.add_option(
      "--out", o.out, "directory for run.json, metrics.jsonl and checkpoints");
  cmd.add_option(
         "--micro-batches",
         o.micro_batches,
         "split each batch into K micro-batches (K dividing the batch "
         "size): the weights then do not depend on the number of processes")
      ->check(integer_in(1, 1 << 20));
  cmd.add_flag(
      "--distributed",
      out.distributed,
      "one of the processes of `mpirun -n N` (N at most "
      "--micro-batches, which is N when not given on a fresh run); rank 0 "
      "reports and writes files");
  cmd.add_option(
         "--rank-log",
         out.rank_log_dir,
         "with --distributed: every rank also writes its progress lines to "
         "DIR/rank-R.log")
      ->needs("--distributed");
  cmd.add_flag("--quiet", out.quiet, "print only the final fingerprint");
  cmd.add_flag("--json", out.json, "print JSON lines");
}

#if defined(DITTO_HAVE_DISTRIBUTED)
// --rank-log DIR: DIR/rank-R.log, written as it goes (progress lines, not
// an atomic file); ranks other than 0 print nothing else. A path that
// exists and is not a regular file is refused.
void open_rank_log(Output& out, int rank) {
  namespace fs = std::filesystem;
  const fs::path dir(out.rank_log_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path path = dir / ("rank-" + std::to_string(rank) + ".log");
  const fs::file_status st = fs::symlink_status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw ditto::ValueError(
        "[train] --rank-log: " + path.string() +
        " exists and is not a regular file");
  }
  out.rank_log = std::fopen(path.c_str(), "w");
  if (out.rank_log == nullptr) {
    throw ditto::ValueError(
        "[train] --rank-log: cannot write " + path.string() + ": " +
        std::strerror(errno));
  }
  out.tty = false; // lines, not a bar redrawn in place
  out.to_stdout = rank == 0;
}
#endif

int run_train(train::TrainOptions& o, Output& out, CLI::App& cmd) {
  o.checkpoints = cmd.count("--checkpoint-dir") > 0 || o.checkpoint_every > 0;
  out.tty = ::isatty(STDOUT_FILENO) != 0;
  if (out.distributed) {
#if defined(DITTO_HAVE_DISTRIBUTED)
    ditto::distributed::init();
    o.group = ditto::distributed::process_group();
    const int64_t p = o.group.world_size;
    if (cmd.count("--micro-batches") == 0 && o.resume.empty()) {
      // A fresh run: one micro-batch per process, recorded in run.json and
      // the checkpoints, so that it resumes on any world size up to this
      // one with the same bits (R6).
      o.micro_batches = p;
    }
    if (p > o.micro_batches) {
      throw ditto::ValueError(ditto::detail::str_cat(
          "[train] --micro-batches ",
          o.micro_batches,
          ": every process needs at least one of the ",
          o.micro_batches,
          " micro-batches of a step, got ",
          p,
          " processes; pass --micro-batches K with K >= ",
          p,
          o.resume.empty() ? "" : " (a resumed run: the checkpoint's K)"));
    }
    if (!out.rank_log_dir.empty()) {
      open_rank_log(out, o.group.rank);
      o.report_on_every_rank = true;
    }
#else
    throw ditto::ValueError(
        "[train] --distributed: this ditto was built without MPI "
        "(docs/distributed.md)");
#endif
  }
  const train::TrainResult r = train::run_training(o, out.reporter());
  if (o.group.rank != 0) {
    return 0; // rank 0 prints
  }
  out.clear_bar();
  if (out.json) {
    std::cout
        << nlohmann::
               json{{"event", "done"}, {"steps", r.steps}, {"stopped_early", r.stopped_early}, {"fingerprint", train::hex64(r.fingerprint)}}
                   .dump()
        << "\n";
  } else {
    if (r.stopped_early && !out.quiet) {
      std::cout << "stopped at step " << r.steps << " (--max-steps)\n";
    }
    std::cout << "fingerprint " << train::hex64(r.fingerprint) << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "ditto: tensors and training, reproducible bit for bit", "ditto");
  app.require_subcommand(1);

  train::TrainOptions opts;
  Output out;
  CLI::App* train_cmd =
      app.add_subcommand("train", "train a model (docs/train.md)");
  add_train_flags(*train_cmd, opts, out);
  CLI::App* models_cmd =
      app.add_subcommand("models", "the models `ditto train --model` knows");
  ditto::cli::VerifyOptions verify_opts;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify",
      "run a program several ways and name the first op where the runs "
      "diverge (docs/verify.md)");
  ditto::cli::add_verify_flags(*verify_cmd, verify_opts);
  CLI::App* ops_cmd = app.add_subcommand(
      "ops", "the ops and their determinism (the nondeterminism registry)");
  std::string ops_format = "text";
  bool nondeterministic_only = false;
  ops_cmd->add_option("--format", ops_format, "text, md or json")
      ->check(CLI::IsMember({"text", "md", "json"}));
  ops_cmd->add_flag_callback(
      "--markdown",
      [&ops_format] { ops_format = "md"; },
      "same as --format md");
  ops_cmd->add_flag(
      "--nondeterministic-only",
      nondeterministic_only,
      "only the ops that have a nondeterministic implementation");
  CLI::App* env_cmd = app.add_subcommand(
      "env", "version, build, CPU capabilities, threads, switches, data");
  env_cmd->alias("config");
  bool env_as_json = false;
  env_cmd->add_flag("--json", env_as_json, "as JSON");

  try {
    // `ditto verify [flags] -- PROGRAM ARGS`: what follows -- is the
    // program's, never verify's flags, so it is cut off before parsing.
    int parsed = argc;
    if (argc > 1 && std::string(argv[1]) == "verify") {
      for (int i = 2; i < argc; ++i) {
        if (std::string(argv[i]) == "--") {
          parsed = i;
          verify_opts.program.assign(argv + i + 1, argv + argc);
          break;
        }
      }
    }
    app.parse(parsed, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The failing subcommand's name, when there is one.
    const CLI::App* where = &app;
    for (const CLI::App* sub : app.get_subcommands()) {
      where = sub;
    }
    std::string name = where->get_name();
    for (const CLI::App* p = where->get_parent(); p != nullptr;
         p = p->get_parent()) {
      name = p->get_name() + " " + name;
    }
    std::fprintf(
        stderr,
        "%s: %s (see %s --help)\n",
        name.c_str(),
        e.what(),
        name.c_str());
    return 2;
  }

  try {
    if (*train_cmd) {
      std::string line = "ditto";
      for (int i = 1; i < argc; ++i) {
        line += std::string(" ") + argv[i];
      }
      opts.command_line = line;
      return run_train(opts, out, *train_cmd);
    }
    if (*models_cmd) {
      for (const auto& m : train::registered_models()) {
        std::printf("%-8s %s\n", m.name.c_str(), m.description.c_str());
      }
      return 0;
    }
    if (*verify_cmd) {
      return ditto::cli::run_verify(verify_opts);
    }
    if (*ops_cmd) {
      print_ops(ops_format, nondeterministic_only);
      return 0;
    }
    if (*env_cmd) {
      print_env(env_as_json);
      return 0;
    }
  } catch (const std::exception& e) {
    out.clear_bar();
    std::fprintf(stderr, "ditto: %s\n", ditto::cli::one_line(e.what()).c_str());
    return 1;
  }
  return 2;
}
