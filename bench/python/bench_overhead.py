"""Per-call overhead of the Python bindings, ditto next to PyTorch 1.13, in
one run (docs/benchmarks.md): tiny tensors, so the time is the binding's
(argument parsing, dispatch, the result's wrapper), not the kernel's.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_overhead.py

Each row is the best of --repeat timeit repeats of --number calls, in ns per
call; ratio = ditto / torch (above 1: ditto is slower).
"""
import argparse
import timeit

ROWS = [
    ("a + b (1 element)", "a + b"),
    ("torch.add(a, b)", "lib.add(a, b)"),
    ("a.add(b, alpha=2)", "a.add(b, alpha=2)"),
    ("a * 2.0", "a * 2.0"),
    ("t[0]", "t[0]"),
    ("t[0, 1]", "m[0, 1]"),
    ("t.sum()", "t.sum()"),
    ("t.sum(0)", "m.sum(0)"),
    ("t.shape", "t.shape"),
    ("t.shape[0]", "t.shape[0]"),
    ("t.size(0)", "t.size(0)"),
    ("t.dim()", "t.dim()"),
    ("t.numel()", "t.numel()"),
    ("s.item()", "s.item()"),
    ("t.view(-1)", "t.view(-1)"),
    ("t.requires_grad", "t.requires_grad"),
    ("lib.zeros(2)", "lib.zeros(2)"),
]


def setup(lib):
    return {
        "lib": lib,
        "a": lib.ones(1),
        "b": lib.ones(1),
        "t": lib.ones(4),
        "m": lib.ones(2, 3),
        "s": lib.ones(()),
    }


def ns_per_call(stmt, env, number, repeat):
    timer = timeit.Timer(stmt, globals=env)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--number", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--markdown", action="store_true",
                   help="print a Markdown table")
    a = p.parse_args()
    import ditto
    import torch
    torch.set_num_threads(1)
    ditto.set_num_threads(1)
    envs = {"ditto": setup(ditto), "torch": setup(torch)}
    rows = []
    for name, stmt in ROWS:
        # Alternate the libraries: a busy neighbour slows both alike.
        d = t = float("inf")
        for _ in range(3):
            d = min(d, ns_per_call(stmt, envs["ditto"], a.number, a.repeat))
            t = min(t, ns_per_call(stmt, envs["torch"], a.number, a.repeat))
        rows.append((name, d, t, d / t))
    if a.markdown:
        print("| call | ditto ns | torch 1.13 ns | ditto / torch |")
        print("|---|---:|---:|---:|")
        for name, d, t, r in rows:
            print(f"| `{name}` | {d:.0f} | {t:.0f} | {r:.2f} |")
    else:
        print(f"{'call':<22}{'ditto ns':>10}{'torch ns':>10}{'ratio':>8}")
        for name, d, t, r in rows:
            print(f"{name:<22}{d:>10.0f}{t:>10.0f}{r:>8.2f}")


if __name__ == "__main__":
    main()
