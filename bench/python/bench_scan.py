#!/usr/bin/python3
"""cumsum side by side with PyTorch 1.13, 1 and 2 threads: one long row
(ditto's fixed-block parallel scan, PyTorch's one serial chain), many rows
of one block, and a scan along dim 0 (adjacent rows scanned 32 lanes at a
time). Prints a markdown table of mean times (ms) over 20 calls after two
warm-up calls, and ditto's time over PyTorch's.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_scan.py
"""
import time

import ditto
import torch


def mean_ms(f, n=20):
    f()
    f()
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n * 1e3


def main():
    print("| input | dim | threads | ditto ms | PyTorch ms | ditto / PyTorch |")
    print("|---|---|---|---|---|---|")
    for shape, dim in [((1, 1 << 22), 1), ((256, 16384), 1),
                       ((4096, 1024), 0)]:
        xd = ditto.randn(*shape)
        xt = torch.randn(*shape)
        for threads in (1, 2):
            ditto.set_num_threads(threads)
            torch.set_num_threads(threads)
            a = mean_ms(lambda: ditto.cumsum(xd, dim))
            b = mean_ms(lambda: torch.cumsum(xt, dim))
            print(f"| {shape[0]}x{shape[1]} float32 | {dim} | {threads} "
                  f"| {a:.2f} | {b:.2f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
