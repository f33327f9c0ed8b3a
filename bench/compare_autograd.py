#!/usr/bin/python3
"""ditto's autograd against LibTorch 1.13, C++ to C++: the benchmarks of
bench/bench_autograd.cpp and bench/libtorch_autograd.cpp (same names), each
in its own process, alternating ditto and LibTorch for --rounds rounds.
Prints a markdown table of the median times, their ratio and each
process's peak resident memory (ru_maxrss).

    /usr/bin/python3 bench/compare_autograd.py \\
        --ditto-bench build-bench/bench/ditto_bench \\
        --libtorch-bench build-bench/bench/libtorch_bench
"""
import argparse
import json
import os
import statistics
import subprocess

BENCHMARKS = {
    "autograd_chain": "1000 chained x * 1.0001 + 0.5 on 100 floats, forward "
                      "and backward, 1 thread",
    "mlp_step": "784-512-10 MLP, batch 128, forward and backward, 2 threads",
    "cnn_step": "conv 1->32, relu, conv 32->64 stride 2, relu, linear "
                "12544->10, batch 64 of 28x28, forward and backward, "
                "2 threads",
}


def run(binary, name, min_time):
    """(seconds per iteration, peak RSS in KiB) of one benchmark, alone in
    its process."""
    proc = subprocess.Popen(
        [binary, f"--benchmark_filter=^{name}/", "--benchmark_format=json",
         f"--benchmark_min_time={min_time}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{binary} failed on {name}")
    row = json.loads(out)["benchmarks"][0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row["time_unit"]]
    return row["real_time"] * scale, usage.ru_maxrss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ditto-bench", required=True)
    p.add_argument("--libtorch-bench", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=1.0)
    args = p.parse_args()
    print(f"# ditto autograd vs LibTorch 1.13 ({args.rounds} rounds, "
          f"{os.cpu_count()} CPUs)\n")
    print("| benchmark | ditto | LibTorch | ratio | ditto peak RSS | "
          "LibTorch peak RSS |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, what in BENCHMARKS.items():
        d, t, rss_d, rss_t = [], [], 0, 0
        for _ in range(args.rounds):
            secs, rss = run(args.ditto_bench, name, args.min_time)
            d.append(secs)
            rss_d = max(rss_d, rss)
            secs, rss = run(args.libtorch_bench, name, args.min_time)
            t.append(secs)
            rss_t = max(rss_t, rss)
        dm, tm = statistics.median(d), statistics.median(t)
        print(f"| {name} | {dm * 1e3:.2f} ms | {tm * 1e3:.2f} ms | "
              f"{dm / tm:.2f} | {rss_d / 1024:.1f} MiB | "
              f"{rss_t / 1024:.1f} MiB |")
    print()
    for name, what in BENCHMARKS.items():
        print(f"- {name}: {what}")


if __name__ == "__main__":
    main()
