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

    /usr/bin/python3 bench/compare_libtorch_examples.py \\
        --ditto build-bench/ditto_libtorch_fashion_cnn \\
        --libtorch build-bench/libtorch_fashion_cnn
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


if __name__ == "__main__":
    main()
