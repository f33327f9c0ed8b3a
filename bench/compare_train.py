#!/usr/bin/python3
"""One training step of the Fashion-MNIST CNN, ditto against PyTorch 1.13,
with the deterministic mode on and off.

The model, optimizer and data of bench/train_cnn.h, built after
manual_seed(0) on both sides; one step is zero_grad (gradients set to
none), forward, cross_entropy, backward, SGD step (lr 0.01, momentum 0.9),
batch 64, 2 threads. Rows:

  ditto:   train_step_det / train_step_fast of ditto_bench (Google
           Benchmark, wall-clock mean over the iterations of one run).
  PyTorch: the same step with torch.use_deterministic_algorithms(True) /
           (False) and torch.set_num_threads(2), timed as bench/compare.py
           does: torch.utils.benchmark.Timer(...).blocked_autorange() after
           a warm-up step, the median over its blocks.
  LibTorch (with --libtorch-bench): train_step_det / train_step_fast of
           libtorch_bench (bench/libtorch_autograd.cpp), C++ to C++.
  PyTorch and LibTorch again with OPENBLAS_NUM_THREADS=1 (--openblas-threads;
           0 leaves these rows out): Debian's PyTorch runs its Linear
           layers on OpenBLAS's own pthread pool, whose spinning threads
           compete with the 2 OpenMP threads of ATen on a 2-CPU machine
           (LibTorch's step measured 189 ms as installed, 42 ms with
           OMP_WAIT_POLICY=passive and 25 ms with OPENBLAS_NUM_THREADS=1
           in consecutive runs on the 2-vCPU VM of docs/benchmarks.md).

Every measurement runs alone in its own process, and each round runs every
cell once (the sides alternating), so a slow spell of the machine tends to
hit all sides; the table shows the median over --rounds rounds, the range,
each side's cost of determinism (on / off - 1) and ditto's time over each
side's. Then peak resident memory: ditto_train_rss (--ditto-rss) and a
PyTorch subprocess each run --rss-steps steps in a fresh process and report
getrusage's ru_maxrss, their RSS with the libraries loaded and before the
model is built, and the loss of the first step (the same model on the same
data: the two first losses agree to rounding).

    /usr/bin/python3 bench/compare_train.py \\
        --ditto-bench build-bench/bench/ditto_bench \\
        --ditto-rss build-bench/bench/ditto_train_rss \\
        --libtorch-bench build-bench/bench/libtorch_bench

The PyTorch subprocess gets bench/compare.py's environment (OPENBLAS_CORETYPE
and OPENBLAS_L2_SIZE removed, --openblas-coretype / --cpu-capability as
there).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

import compare  # bench/compare.py: machine_info, check_torch, torch_env

MODES = (("det", True), ("fast", False))

TORCH_MODEL = """
import resource
import torch
import torch.nn as nn
import torch.nn.functional as F


def vm_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


rss_start = vm_rss_kib()
torch.set_num_threads(2)
torch.use_deterministic_algorithms(deterministic)
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(),
    nn.Dropout(0.25), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 1, 28, 28)
y = torch.randint(0, 10, (64,))


def step():
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss
"""


# ---- one measurement, each in its own process


def run_gbench(binary, name, min_time, env=None):
    """(seconds per step, Google Benchmark context) of one benchmark of a
    Google Benchmark program, alone in its process."""
    proc = subprocess.run(
        [binary, f"--benchmark_filter=^{name}/", "--benchmark_format=json",
         f"--benchmark_min_time={min_time}"],
        capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"error: {binary} failed on {name}:\n{proc.stderr}")
    report = json.loads(proc.stdout)
    if not report["benchmarks"]:
        sys.exit(f"error: {binary} has no benchmark {name}")
    row = report["benchmarks"][0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row["time_unit"]]
    return row["real_time"] * scale, report["context"]


def run_torch(python, request, env=None):
    proc = subprocess.run(
        [python, os.path.abspath(__file__), "--torch-worker"],
        input=json.dumps(request), capture_output=True, text=True,
        env=env or compare.torch_env())
    if proc.returncode != 0:
        sys.exit(f"error: the PyTorch step failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def run_ditto_rss(binary, deterministic, steps):
    cmd = [binary, "--steps", str(steps)] + ([] if deterministic else ["--fast"])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {binary} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def torch_worker():
    """Runs under --python: builds the model (deterministic mode as asked),
    then times the step or runs `steps` steps and reports the memory."""
    request = json.load(sys.stdin)
    env = {"deterministic": request["deterministic"]}
    exec(TORCH_MODEL, env)
    if request["what"] == "time":
        import torch.utils.benchmark as tb
        timer = tb.Timer(stmt="step()", globals={"step": env["step"]},
                         num_threads=2)
        timer.timeit(number=1)  # warm-up: the momentum buffers
        m = timer.blocked_autorange(min_run_time=request["min_time"])
        out = {"seconds": m.median}
    else:
        losses = [env["step"]().item() for _ in range(request["steps"])]
        usage = env["resource"].getrusage(env["resource"].RUSAGE_SELF)
        out = {"deterministic": request["deterministic"],
               "steps": request["steps"], "rss_start_kib": env["rss_start"],
               "max_rss_kib": usage.ru_maxrss, "first_loss": losses[0],
               "last_loss": losses[-1]}
    json.dump(out, sys.stdout)


# ---- report


def ms(seconds):
    return f"{seconds * 1e3:.2f} ms"


def cell(samples):
    """Median and range of one row's rounds."""
    med = statistics.median(samples)
    if len(samples) == 1:
        return ms(med)
    return f"{ms(med)} ({min(samples) * 1e3:.1f}–{max(samples) * 1e3:.1f})"


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(os.path.dirname(here), "build-bench", "bench")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ditto-bench", default=os.path.join(build, "ditto_bench"))
    p.add_argument("--ditto-rss", default=os.path.join(build, "ditto_train_rss"),
                   help="ditto_train_rss; the memory rows are skipped if it "
                   "is missing")
    p.add_argument("--libtorch-bench",
                   help="libtorch_bench, for the LibTorch (C++) column")
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-time", type=float, default=1.0,
                   help="seconds each row runs per round (default %(default)s)")
    p.add_argument("--rss-steps", type=int, default=50)
    p.add_argument("--openblas-threads", type=int, default=1, metavar="N",
                   help="also time PyTorch and LibTorch with "
                   "OPENBLAS_NUM_THREADS=N (default %(default)s; 0: not)")
    p.add_argument("--openblas-coretype", metavar="CORE")
    p.add_argument("--cpu-capability", choices=("avx2", "avx512"))
    p.add_argument("--markdown-out", metavar="FILE",
                   help="also write the tables here")
    p.add_argument("--torch-worker", action="store_true",
                   help=argparse.SUPPRESS)
    return p.parse_args()


def main():
    args = parse_args()
    if args.torch_worker:
        torch_worker()
        return
    compare.OPENBLAS_CORETYPE_FOR_TORCH = args.openblas_coretype
    if args.cpu_capability:
        compare.CPU_CAPABILITY = args.cpu_capability
        os.environ["DITTO_CPU_CAPABILITY"] = args.cpu_capability
    if not os.access(args.ditto_bench, os.X_OK):
        sys.exit(f"error: {args.ditto_bench} not found (make bench builds it)")

    machine = compare.machine_info()
    torch_info = compare.check_torch(args.python)
    # (row label, how to time one mode of it); every cell runs in its own
    # process, the sides alternate within each round.
    ob_env = dict(compare.torch_env())
    ob_env["OPENBLAS_NUM_THREADS"] = str(args.openblas_threads)
    ob = f"OPENBLAS_NUM_THREADS={args.openblas_threads}"
    sides = [
        ("ditto", lambda mode, det: run_gbench(
            args.ditto_bench, f"train_step_{mode}", args.min_time)),
        ("PyTorch (Python)", lambda mode, det: run_torch(
            args.python, {"what": "time", "deterministic": det,
                          "min_time": args.min_time})["seconds"]),
    ]
    if args.openblas_threads:
        sides.append((f"PyTorch (Python), {ob}", lambda mode, det: run_torch(
            args.python, {"what": "time", "deterministic": det,
                          "min_time": args.min_time}, ob_env)["seconds"]))
    if args.libtorch_bench:
        sides.append(("LibTorch (C++)", lambda mode, det: run_gbench(
            args.libtorch_bench, f"train_step_{mode}", args.min_time,
            compare.torch_env())[0]))
        if args.openblas_threads:
            sides.append((f"LibTorch (C++), {ob}", lambda mode, det: run_gbench(
                args.libtorch_bench, f"train_step_{mode}", args.min_time,
                ob_env)[0]))
    times = {(s, m): [] for s, _ in sides for m, _ in MODES}
    context = {}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        for mode, det in MODES:
            for side, run in sides:
                got = run(mode, det)
                if side == "ditto":
                    got, context = got
                times[side, mode].append(got)

    med = {k: statistics.median(v) for k, v in times.items()}
    now = datetime.datetime.now().astimezone()
    load = machine["load_average"]
    env = compare.torch_env()
    lines = [
        f"Run {now:%Y-%m-%d %H:%M %Z} on {machine['cpu']}, "
        f"{machine['logical_cpus']} logical CPUs ({machine['usable_cpus']} "
        "usable); load average at start "
        + (", ".join(f"{x:.2f}" for x in load) if load else "unknown") + ".",
        f"ditto {context.get('ditto_version', '?')}, CPU capability "
        f"{context.get('ditto_cpu_capability', '?')}; PyTorch "
        f"{torch_info['version']} ({args.python}, parallel backend "
        f"{torch_info['backend']}); its environment: "
        + (", ".join(f"{v}={env[v]}" for v in compare.TORCH_ISA_VARS
                     if v in env) or "no ISA overrides") + ".",
        f"One training step, 2 threads: median of {args.rounds} rounds "
        f"(range in parentheses), each cell at least {args.min_time} s per "
        "round in its own process.",
        "",
        "| side | deterministic on | deterministic off | cost of determinism "
        "(on / off - 1) | ditto / side, on | ditto / side, off |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for side, _ in sides:
        on, off = med[side, "det"], med[side, "fast"]
        ratios = (" | | " if side == "ditto" else
                  f" | {med['ditto', 'det'] / on:.2f} | "
                  f"{med['ditto', 'fast'] / off:.2f} ")
        lines.append(f"| {side} | {cell(times[side, 'det'])} | "
                     f"{cell(times[side, 'fast'])} | "
                     f"{(on / off - 1) * 100:+.1f}%{ratios}|")

    if os.access(args.ditto_rss, os.X_OK):
        rss = {}
        for mode, det in MODES:
            rss["ditto", mode] = run_ditto_rss(args.ditto_rss, det,
                                               args.rss_steps)
            rss["PyTorch", mode] = run_torch(
                args.python, {"what": "rss", "deterministic": det,
                              "steps": args.rss_steps})
        lines += [
            "",
            f"| peak RSS (ru_maxrss) after {args.rss_steps} steps, own "
            "process | ditto | PyTorch |",
            "|---|---:|---:|",
        ]
        for mode, det in MODES:
            label = "deterministic on" if det else "deterministic off"
            lines.append(f"| {label} | {mib(rss['ditto', mode]['max_rss_kib'])}"
                         f" | {mib(rss['PyTorch', mode]['max_rss_kib'])} |")
        lines.append(
            "| RSS with the libraries loaded, before the model | "
            f"{mib(rss['ditto', 'det']['rss_start_kib'])} | "
            f"{mib(rss['PyTorch', 'det']['rss_start_kib'])} |")
        lines.append(
            "| loss of the first step (deterministic on) | "
            f"{rss['ditto', 'det']['first_loss']:.7f} | "
            f"{rss['PyTorch', 'det']['first_loss']:.7f} |")
        lines.append(
            f"| loss of step {args.rss_steps} (deterministic on) | "
            f"{rss['ditto', 'det']['last_loss']:.7f} | "
            f"{rss['PyTorch', 'det']['last_loss']:.7f} |")
    else:
        lines += ["", f"({args.ditto_rss} not found: no memory rows)"]

    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
