"""PyTorch with CUDA beside ditto's Vulkan benchmark (bench/vulkan_bench.cpp):
float32 mm in GFLOP/s with TF32 off (so each product is float32
arithmetic, like ditto's), and a 16M-element add in GB/s. Runs where a
CUDA build of torch is installed (a GPU machine, not CI).

    python3 bench/vulkan_torch.py [largest n]
"""
import sys
import time

import torch


def best(reps, f):
    t = 1e30
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    largest = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"\ntorch {torch.__version__} on {torch.cuda.get_device_name(0)}, TF32 off")
    n = 256
    while n <= largest:
        a = torch.randn(n, n, device=dev)
        b = torch.randn(n, n, device=dev)
        torch.mm(a, b)
        t = best(10, lambda: torch.mm(a, b))
        print(f"torch mm {n}^3: {t * 1e3:.3f} ms, {2 * n**3 / t * 1e-9:.1f} GFLOP/s")
        n *= 2
    x = torch.randn(1 << 24, device=dev)
    y = torch.randn(1 << 24, device=dev)
    t = best(10, lambda: torch.add(x, y))
    print(f"torch add 16M: {t * 1e3:.3f} ms, {12 * (1 << 24) / t * 1e-9:.1f} GB/s")


if __name__ == "__main__":
    main()
