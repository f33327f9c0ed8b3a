#!/usr/bin/python3
"""Recurrent layers and CTC, forward + backward, ditto
(bench/bench_rnn.cpp, each benchmark in its own process) against PyTorch
1.13 (this script, in its own process), 2 threads, alternating for
--rounds rounds. Prints a markdown table of the medians.

  LSTM / GRU: 2 layers x 256 hidden, input 128, batch 32 x 50 steps,
              loss = output.sum()
  ctc_loss:   batch 16, 200 frames, 30 classes, 40-label targets (mean)

    /usr/bin/python3 bench/compare_rnn.py \\
        --ditto-bench build/bench/ditto_bench_rnn
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_util import ditto_time

CASES = [("lstm", "BM_lstm_fwd_bwd", "LSTM 2x256, in 128, 32x50"),
         ("gru", "BM_gru_fwd_bwd", "GRU 2x256, in 128, 32x50"),
         ("ctc", "BM_ctc_fwd_bwd", "ctc_loss 16x200, C=30, S=40")]

TORCH_CHILD = r"""
import sys, time, torch, torch.nn as nn, torch.nn.functional as F
which, min_time = sys.argv[1], float(sys.argv[2])
torch.set_num_threads(2)
torch.manual_seed(0)
if which in ("lstm", "gru"):
    m = (nn.LSTM if which == "lstm" else nn.GRU)(128, 256, num_layers=2)
    x = torch.randn(50, 32, 128)
    def step():
        m.zero_grad()
        m(x)[0].sum().backward()
else:
    T, N, C, S = 200, 16, 30, 40
    lp = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
    tg = torch.tensor([1 + (i * 7 + i // 3) % (C - 1) for i in range(N * S)]).view(N, S)
    il = torch.full((N,), T); tl = torch.full((N,), S)
    def step():
        lp.grad = None
        F.ctc_loss(lp, tg, il, tl).backward()
step()  # warm-up
n, t0 = 0, time.perf_counter()
while True:
    step()
    n += 1
    el = time.perf_counter() - t0
    if el >= min_time and n >= 3:
        break
print(el / n)
"""


def torch_time(which, min_time, passive):
    env = dict(os.environ)
    if passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    out = subprocess.run(["/usr/bin/python3", "-c", TORCH_CHILD, which, str(min_time)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return float(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ditto-bench", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--passive", action="store_true",
                   help="run PyTorch with OMP_WAIT_POLICY=PASSIVE (its OpenMP "
                        "threads spin while waiting, which collapses on a "
                        "loaded machine)")
    args = p.parse_args()
    print(f"# recurrent layers and CTC, forward + backward, ditto vs PyTorch 1.13 "
          f"({args.rounds} rounds, 2 threads, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.2f})\n")
    print("| forward + backward | ditto | PyTorch | ditto/PyTorch |")
    print("|---|---:|---:|---:|")
    for which, name, label in CASES:
        d, t = [], []
        for _ in range(args.rounds):
            d.append(ditto_time(args.ditto_bench, name, args.min_time))
            t.append(torch_time(which, args.min_time, args.passive))
        dm, tm = statistics.median(d), statistics.median(t)
        print(f"| {label} | {dm * 1e3:.1f} ms | {tm * 1e3:.1f} ms | {dm / tm:.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
