"""Attention, ditto next to PyTorch 1.13, in one run (docs/benchmarks.md,
issue 60): scaled_dot_product_attention forward and forward + backward
(PyTorch 1.13 has no F.scaled_dot_product_attention: its row is the
attention written out, softmax(q k^T / sqrt(d) + causal mask) v, torch 2.x's
math), and nn.MultiheadAttention's module (self-attention with a causal
mask), at 1 and 2 threads. Batch 8, 8 heads, 128 positions, head dim 64
(embedding 512), float32. The median of --repeat timed calls after a
warm-up.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_attention.py
"""
import argparse
import math
import statistics
import time

import ditto
import torch

B, H, T, D = 8, 8, 128, 64
E = H * D


def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def written_out(lib, q, k, v, mask):
    scores = lib.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
    return lib.matmul(lib.softmax(scores.masked_fill(mask, float("-inf")), -1), v)


def rows(lib, name, repeat):
    lib.manual_seed(0)
    q, k, v = (lib.randn(B, H, T, D, requires_grad=True) for _ in range(3))
    mask = lib.triu(lib.ones(T, T, dtype=lib.bool), diagonal=1)
    g = lib.randn(B, H, T, D)
    if name == "ditto":
        def sdpa():
            return ditto.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True)
    else:
        def sdpa():
            return written_out(lib, q, k, v, mask)

    def fwd():
        with lib.no_grad():
            sdpa()

    def fwd_bwd():
        sdpa().backward(g)
    mha = lib.nn.MultiheadAttention(E, H, dropout=0.0, batch_first=True)
    x = lib.randn(B, T, E, requires_grad=True)
    gx = lib.randn(B, T, E)

    def mha_fwd():
        with lib.no_grad():
            mha(x, x, x, attn_mask=mask, need_weights=False)

    def mha_fwd_bwd():
        mha(x, x, x, attn_mask=mask, need_weights=False)[0].backward(gx)
    return {
        "sdpa forward": median_ms(fwd, repeat),
        "sdpa forward+backward": median_ms(fwd_bwd, repeat),
        "MultiheadAttention forward": median_ms(mha_fwd, repeat),
        "MultiheadAttention forward+backward": median_ms(mha_fwd_bwd, repeat),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=10)
    a = p.parse_args()
    print(f"batch {B}, {H} heads, {T} positions, head dim {D}, float32; "
          f"ms (median of {a.repeat})")
    print(f"{'threads':>7}  {'row':<36} {'ditto':>9} {'torch':>9} {'ratio':>6}")
    for threads in (1, 2):
        ditto.set_num_threads(threads)
        torch.set_num_threads(threads)
        d = rows(ditto, "ditto", a.repeat)
        t = rows(torch, "torch", a.repeat)
        for key in d:
            print(f"{threads:>7}  {key:<36} {d[key]:9.2f} {t[key]:9.2f} "
                  f"{d[key] / t[key]:6.2f}")


if __name__ == "__main__":
    main()
