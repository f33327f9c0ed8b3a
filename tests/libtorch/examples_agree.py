#!/usr/bin/python3
"""Runs the LibTorch-style examples (examples/libtorch/) built against ditto
and, when given, the same sources built against LibTorch 1.13 (Debian's
libtorch-dev), and checks:

  - ditto's fashion_cnn prints the same text (every loss to the last digit
    printed) with 1 and 2 threads;
  - where a LibTorch build is given, each program prints the same lines as
    LibTorch's, every number within a relative 2e-3 (absolute 2e-4): the
    same seeded program on both libraries, whose float sums round in
    different orders.

    tests/libtorch/examples_agree.py --ditto-fashion_cnn B --ditto-autograd_tour B
        [--torch-fashion_cnn B --torch-autograd_tour B] [--batches N]

Both outputs are printed side by side. Needs no PyTorch: only the
programs and Debian's Fashion-MNIST (unpacked into a temporary directory
for LibTorch, which reads no .gz files).
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

FASHION = "/usr/share/datasets/fashion-mnist"
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def run(cmd):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"examples_agree: {' '.join(cmd)} failed ({r.returncode}):\n"
                 f"{r.stdout}{r.stderr}")
    return r.stdout


def agree(name, ours, theirs, rel=2e-3, tol=2e-4):
    a, b = ours.splitlines(), theirs.splitlines()
    width = max(len(line) for line in a + [""])
    print(f"--- {name}: ditto | LibTorch")
    for x, y in zip(a, b):
        print(f"{x:<{width}} | {y}")
    if len(a) != len(b):
        sys.exit(f"examples_agree: {name}: {len(a)} lines against {len(b)}")
    for x, y in zip(a, b):
        if NUMBER.sub("#", x) != NUMBER.sub("#", y):
            sys.exit(f"examples_agree: {name}: '{x}' against '{y}'")
        for u, v in zip(NUMBER.findall(x), NUMBER.findall(y)):
            u, v = float(u), float(v)
            if abs(u - v) > max(tol, rel * abs(v)):
                sys.exit(f"examples_agree: {name}: {u} against {v} in '{x}'")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for side in ("ditto", "torch"):
        for prog in ("fashion_cnn", "autograd_tour"):
            p.add_argument(f"--{side}-{prog}", required=side == "ditto")
    p.add_argument("--batches", type=int, default=30)
    a = p.parse_args()

    cnn = [FASHION, "1", "1", str(a.batches)]
    one = run([a.ditto_fashion_cnn] + cnn)
    cnn[2] = "2"
    two = run([a.ditto_fashion_cnn] + cnn)
    if one != two:
        sys.exit(f"examples_agree: fashion_cnn differs with 2 threads:\n"
                 f"{one}\n---\n{two}")
    if "Train Epoch: 1 batch    0" not in one or "Test set" not in one:
        sys.exit(f"examples_agree: unexpected fashion_cnn output:\n{one}")
    tour = run([a.ditto_autograd_tour])
    print("ditto's fashion_cnn: the same text for 1 and 2 threads")

    if a.torch_fashion_cnn:
        with tempfile.TemporaryDirectory() as raw:
            for f in os.listdir(FASHION):
                if f.endswith("-ubyte.gz"):
                    with gzip.open(os.path.join(FASHION, f)) as src, \
                            open(os.path.join(raw, f[:-3]), "wb") as dst:
                        shutil.copyfileobj(src, dst)
            theirs = run([a.torch_fashion_cnn, raw, "1", "1", str(a.batches)])
        agree("fashion_cnn", one, theirs)
    if a.torch_autograd_tour:
        agree("autograd_tour", tour, run([a.torch_autograd_tour]))
    print("examples_agree: passed")


if __name__ == "__main__":
    main()
