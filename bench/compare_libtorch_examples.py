#!/usr/bin/python3
"""examples/libtorch/fashion_cnn.cpp, one source built against ditto and
against LibTorch 1.13 (Debian's libtorch-dev), timed as whole processes:
one epoch of --batches training batches (batch 64, 2 loader workers) and
the test set's evaluation, with 1 and 2 threads (the program's own
torch::set_num_threads). LibTorch runs with OPENBLAS_NUM_THREADS=1 (its
Linear layers otherwise spin OpenBLAS's own pool against ATen's threads on
a 2-CPU machine: bench/compare_train.py); the data is Debian's
Fashion-MNIST, unpacked for LibTorch. Each round runs every cell once, the
sides alternating; the table shows the median over --rounds rounds and
ditto's time over LibTorch's.

With --ditto-alexnet and --libtorch-alexnet, also bench/libtorch_alexnet.cpp
(an AlexNet-sized model on random 224x224 images, SGD momentum): the
programs' own per-step times (mean of the steps after the first) at
batch 8 and 32, 1 and 2 threads, LibTorch with OPENBLAS_NUM_THREADS equal
to the thread count (its convolutions are OpenBLAS products there, which
ran faster so: 841 against 1059 ms a step at batch 8, 2 threads).

    /usr/bin/python3 bench/compare_libtorch_examples.py \\
        --ditto build-bench/ditto_libtorch_fashion_cnn \\
        --libtorch build-bench/libtorch_fashion_cnn \\
        --ditto-alexnet build-bench/bench/ditto_libtorch_alexnet \\
        --libtorch-alexnet build-bench/bench/libtorch_alexnet
"""
import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import compare  # bench/compare.py: machine_info

FASHION = "/usr/share/datasets/fashion-mnist"


def timed(cmd, env):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ditto", required=True)
    p.add_argument("--libtorch", required=True)
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ditto-alexnet")
    p.add_argument("--libtorch-alexnet")
    p.add_argument("--alexnet-steps", type=int, default=4)
    a = p.parse_args()
    for b in (a.ditto, a.libtorch):
        if not os.path.exists(b):
            sys.exit(f"compare_libtorch_examples: {b} not built "
                     "(make bench builds it where libtorch-dev is installed)")
    print("machine:", compare.machine_info())
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as raw:
        for f in os.listdir(FASHION):
            if f.endswith("-ubyte.gz"):
                with gzip.open(os.path.join(FASHION, f)) as src, \
                        open(os.path.join(raw, f[:-3]), "wb") as dst:
                    shutil.copyfileobj(src, dst)
        times = {}
        for _ in range(a.rounds):
            for threads in (1, 2):
                for side, binary, data in (("ditto", a.ditto, FASHION),
                                           ("libtorch", a.libtorch, raw)):
                    cmd = [binary, data, "1", str(threads), str(a.batches)]
                    times.setdefault((side, threads), []).append(
                        timed(cmd, env))
    print(f"fashion_cnn, {a.batches} batches of 64 + the test set, "
          f"median of {a.rounds} rounds (s)")
    print(f"{'threads':>7} {'ditto':>8} {'LibTorch':>9} {'ratio':>6}")
    for threads in (1, 2):
        d = statistics.median(times[("ditto", threads)])
        t = statistics.median(times[("libtorch", threads)])
        print(f"{threads:>7} {d:8.2f} {t:9.2f} {d / t:6.2f}")
    if a.ditto_alexnet and a.libtorch_alexnet:
        alexnet(a)


def step_ms(cmd, env):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=env).stdout
    line = [l for l in out.splitlines() if l.startswith("ms per step:")][-1]
    return float(line.split("total")[1])


def alexnet(a):
    for b in (a.ditto_alexnet, a.libtorch_alexnet):
        if not os.path.exists(b):
            sys.exit(f"compare_libtorch_examples: {b} not built")
    times = {}
    for _ in range(a.rounds):
        for batch in (8, 32):
            for threads in (1, 2):
                env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
                for side, binary in (("ditto", a.ditto_alexnet),
                                     ("libtorch", a.libtorch_alexnet)):
                    cmd = [binary, str(batch), str(a.alexnet_steps),
                           str(threads)]
                    times.setdefault((side, batch, threads), []).append(
                        step_ms(cmd, env))
    print(f"AlexNet-sized model, one training step (ms), median of "
          f"{a.rounds} rounds of {a.alexnet_steps - 1} timed steps")
    print(f"{'batch':>5} {'threads':>7} {'ditto':>8} {'LibTorch':>9} "
          f"{'ratio':>6}")
    for batch in (8, 32):
        for threads in (1, 2):
            d = statistics.median(times[("ditto", batch, threads)])
            t = statistics.median(times[("libtorch", batch, threads)])
            print(f"{batch:>5} {threads:>7} {d:8.0f} {t:9.0f} {d / t:6.2f}")


if __name__ == "__main__":
    main()
