"""The CNN training step three ways, in one run (docs/benchmarks.md):
`ditto train` (C++), the same loop in Python over ditto
(examples/python/train_fashion_mnist.py), and the same loop in PyTorch 1.13
(same model, batch 64, SGD momentum 0.9, shuffled Fashion-MNIST, the same
thread count, deterministic algorithms on in both libraries).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_train.py \
        --ditto build/ditto --steps 200
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))


def ditto_cli_step_ms(cli, steps, threads):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([cli, "train", "--quiet", "--max-steps", str(steps),
                        "--log-every", str(steps), "--threads", str(threads),
                        "--out", out], check=True, capture_output=True)
        with open(os.path.join(out, "metrics.jsonl")) as f:
            last = json.loads(f.read().splitlines()[-1])
    return 1000.0 * 64 / last["samples_per_second"]


def python_ditto_step_ms(steps, threads):
    import ditto
    import ditto.nn.functional as F
    from ditto.utils.data import DataLoader, FashionMNIST, transforms
    from train_fashion_mnist import mnist_cnn, pixel_mean_std
    ditto.set_num_threads(threads)
    ditto.use_deterministic_algorithms(True)
    mean, std = pixel_mean_std(FashionMNIST())
    ds = FashionMNIST(transform=transforms.Normalize([mean], [std]))
    ditto.seed_everything(0)
    model = mnist_cnn()
    opt = ditto.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = DataLoader(ds, batch_size=64, shuffle=True,
                        generator=ditto.Generator().manual_seed(1))
    t0 = time.perf_counter()
    for step, (data, target) in enumerate(loader, 1):
        opt.zero_grad()
        F.cross_entropy(model(data), target).backward()
        opt.step()
        if step == steps:
            break
    return 1000.0 * (time.perf_counter() - t0) / steps


def torch_step_ms(steps, threads):
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset
    from ditto.utils.data import FashionMNIST
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    fm = FashionMNIST()
    images = torch.from_numpy(fm.data.numpy().astype(np.float32) / 255.0)
    images = images.reshape(-1, 1, 28, 28)
    images = (images - images.mean()) / images.std(unbiased=False)
    labels = torch.from_numpy(fm.targets.numpy().astype(np.int64))
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = DataLoader(TensorDataset(images, labels), batch_size=64,
                        shuffle=True,
                        generator=torch.Generator().manual_seed(1))
    t0 = time.perf_counter()
    for step, (data, target) in enumerate(loader, 1):
        opt.zero_grad()
        F.cross_entropy(model(data), target).backward()
        opt.step()
        if step == steps:
            break
    return 1000.0 * (time.perf_counter() - t0) / steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ditto", default="build/ditto", help="the ditto CLI")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    a = p.parse_args()
    cli = ditto_cli_step_ms(a.ditto, a.steps, a.threads)
    py = python_ditto_step_ms(a.steps, a.threads)
    th = torch_step_ms(a.steps, a.threads)
    print(f"CNN step, batch 64, {a.steps} steps, {a.threads} threads (ms/step)")
    print(f"{'ditto train (C++)':<28}{cli:8.2f}")
    print(f"{'ditto from Python':<28}{py:8.2f}   {py / cli:.2f}x ditto train")
    print(f"{'PyTorch 1.13 from Python':<28}{th:8.2f}   "
          f"ditto from Python is {th / py:.2f}x faster")


if __name__ == "__main__":
    main()
