"""Trains `ditto train`'s CNN on Fashion-MNIST from Python, with the same
settings, and prints the same weight fingerprint as

    ditto train --seed S --epochs E --batch-size B --lr LR [--max-steps N]
                [--workers W] [--seed-mode per-sample|pytorch]

(docs/python.md). The model is built right after the seed, the images are
normalized with the training set's mean and standard deviation, the loader
shuffles from its own generator seeded derive_seed(S, "train.loader"), and
the step is zero_grad, cross entropy, backward, SGD with momentum 0.9.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_fashion_mnist.py --max-steps 50
"""
import argparse
import math
import time

import ditto
import ditto.nn as nn
import ditto.nn.functional as F
from ditto.utils.data import DataLoader, FashionMNIST, transforms


def mnist_cnn():
    """examples/models/cnn.cpp's model: the same modules in the same order,
    so the same initial bits from the same seed."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))


def pixel_mean_std(dataset):
    """The mean and population standard deviation of pixel / 255 over every
    training pixel, from exact integer sums (as `ditto train` computes
    them)."""
    px = dataset.data.numpy().astype("int64").ravel()
    count = px.size
    s1 = int(px.sum())
    s2 = int((px * px).sum())
    var_num = s2 * count - s1 * s1  # exact: Python ints
    return s1 / (count * 255.0), math.sqrt(float(var_num)) / (count * 255.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=ditto.utils.data.dataset._C.data.FASHION_MNIST_ROOT)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--seed-mode", default="per-sample",
                   choices=["per-sample", "pytorch"])
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()

    if a.threads > 0:
        ditto.set_num_threads(a.threads)
    ditto.use_deterministic_algorithms(True)
    ditto.backends.conv.benchmark = False

    raw = FashionMNIST(a.data, train=True)
    mean, std = pixel_mean_std(raw)
    train_set = FashionMNIST(a.data, train=True,
                             transform=transforms.Normalize([mean], [std]))

    ditto.seed_everything(a.seed)
    model = mnist_cnn()
    model.train()
    opt = ditto.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    loader = DataLoader(
        train_set, batch_size=a.batch_size, shuffle=True,
        num_workers=a.workers,
        generator=ditto.Generator().manual_seed(
            ditto.random.derive_seed(a.seed, "train.loader")),
        seed_mode=a.seed_mode.replace("-", "_"))

    step, stop = 0, a.max_steps if a.max_steps > 0 else math.inf
    t0 = time.perf_counter()
    for epoch in range(a.epochs):
        for data, target in loader:
            opt.zero_grad(set_to_none=True)  # as ditto train (C++ default)
            loss = F.cross_entropy(model(data), target)
            loss.backward()
            opt.step()
            step += 1
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.4f}", flush=True)
            if step >= stop:
                break
        if step >= stop:
            break
    seconds = time.perf_counter() - t0
    print(f"steps {step} seconds {seconds:.2f} "
          f"step_ms {1000 * seconds / max(step, 1):.2f}")
    print("fingerprint", ditto._C._hex64(ditto.utils.weights_fingerprint(model)))


if __name__ == "__main__":
    main()
