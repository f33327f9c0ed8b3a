#!/usr/bin/python3
"""The backward of max_pool2d (kernel 2), 4x bilinear upsampling and
bilinear grid_sample (224x224 grid) of a 32x64x56x56 float32 input, and of
max_pool3d (kernel 2) of 2x32x32^3 and 2x trilinear upsampling of 2x32x16^3
(a 3-d U-Net block), ditto
(bench/bench_nn_backward.cpp, each benchmark in its own process) against
PyTorch 1.13 (this script, in its own process), 2 threads, determinism on
and off, alternating for --rounds rounds. Prints a markdown table of the
medians.

    /usr/bin/python3 bench/compare_nn_backward.py \\
        --ditto-bench build-bench/bench/ditto_bench
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_util import ditto_time

OPS = ["max_pool2d", "upsample_bilinear", "grid_sample", "max_pool3d",
       "upsample_trilinear"]

TORCH_CHILD = r"""
import sys, time, torch, torch.nn.functional as F
op, det, min_time = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3])
torch.set_num_threads(2)
torch.use_deterministic_algorithms(det)
torch.manual_seed(0)
sizes = {"max_pool3d": (2, 32, 32, 32, 32),
         "upsample_trilinear": (2, 32, 16, 16, 16)}.get(op, (32, 64, 56, 56))
x = torch.randn(*sizes, requires_grad=True)
if op == "max_pool3d":
    y = F.max_pool3d(x, 2)
elif op == "upsample_trilinear":
    y = F.interpolate(x, scale_factor=2.0, mode="trilinear")
elif op == "max_pool2d":
    y = F.max_pool2d(x, 2)
elif op == "upsample_bilinear":
    y = F.interpolate(x, scale_factor=4.0, mode="bilinear")
else:
    theta = torch.tensor([[0.9, 0.1, 0.05], [-0.1, 0.95, 0.02]]).expand(32, 2, 3)
    grid = F.affine_grid(theta, (32, 64, 224, 224), align_corners=False)
    y = F.grid_sample(x, grid, align_corners=False)
g = torch.randn(y.shape)
torch.autograd.grad(y, x, g, retain_graph=True)  # warm-up
n, t0 = 0, time.perf_counter()
while True:
    torch.autograd.grad(y, x, g, retain_graph=True)
    n += 1
    el = time.perf_counter() - t0
    if el >= min_time and n >= 3:
        break
print(el / n)
"""


def torch_time(op, det, min_time):
    out = subprocess.run(
        ["/usr/bin/python3", "-c", TORCH_CHILD, op, "1" if det else "0",
         str(min_time)], check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ditto-bench", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--ops", nargs="*", default=OPS, choices=OPS,
                   help="the rows to time (default: all)")
    args = p.parse_args()
    print(f"# backward of the scattering layers, ditto vs PyTorch 1.13 "
          f"({args.rounds} rounds, 2 threads, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.2f})\n")
    print("| backward of | mode | ditto | PyTorch | ditto/PyTorch |")
    print("|---|---|---:|---:|---:|")
    for op in args.ops:
        for det in (True, False):
            d, t = [], []
            for _ in range(args.rounds):
                d.append(ditto_time(
                    args.ditto_bench,
                    f"nn_backward_{op}_{'det' if det else 'fast'}",
                    args.min_time))
                t.append(torch_time(op, det, args.min_time))
            dm, tm = statistics.median(d), statistics.median(t)
            print(f"| {op} | {'deterministic' if det else 'fast'} | "
                  f"{dm * 1e3:.1f} ms | {tm * 1e3:.1f} ms | {dm / tm:.2f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
