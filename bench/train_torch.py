#!/usr/bin/python3
"""The PyTorch 1.13 peer of `ditto train` (docs/benchmarks.md, "One epoch").

The same model (PyTorch's MNIST CNN), data (Fashion-MNIST from Debian's
dataset-fashion-mnist, pixels / 255 normalized with the training set's mean
and standard deviation; --no-normalize for the raw values), optimizer (SGD, lr 0.01, momentum 0.9),
batch size (64, shuffled) and evaluation (test set after each epoch, batch
1000) as `ditto train`'s defaults, in a plain PyTorch loop:

    /usr/bin/python3 bench/train_torch.py --epochs 2 --threads 2

Prints one line per epoch (train loss, test loss, accuracy, the epoch's
training time: the loop alone, without reading the files or evaluating) and
the weights' fingerprint as `ditto train` defines it (xxh3-64 of the
parameters' bytes in named_parameters order; docs/train.md).
"""
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    sizes = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(sizes)


def find(root, stem):
    for name in (stem + ".gz", stem):
        if os.path.exists(os.path.join(root, name)):
            return os.path.join(root, name)
    raise SystemExit(f"train_torch.py: no {stem}[.gz] in {root}")


def load(root, train):
    prefix = "train" if train else "t10k"
    x = read_idx(find(root, f"{prefix}-images-idx3-ubyte"))
    y = read_idx(find(root, f"{prefix}-labels-idx1-ubyte"))
    return x, y


def dataset(x, y, normalize):
    images = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    if normalize:
        # torchvision's Normalize: (x - mean) / std in float32.
        images = (images - normalize[0]) / normalize[1]
    return torch.utils.data.TensorDataset(images, torch.from_numpy(y.astype(np.int64)))


def fingerprint(model):
    try:
        import xxhash
    except ImportError:
        return "unavailable"
    h = xxhash.xxh3_64()
    for _, p in model.named_parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--deterministic", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=True)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(args.deterministic)
    (xtr, ytr), (xte, yte) = load(args.data_root, True), load(args.data_root, False)
    norm = None
    if args.normalize:
        # As `ditto train`: the training pixels' mean and population std.
        px = xtr.astype(np.float64) / 255.0
        norm = (float(px.mean()), float(px.std()))
    train_set, test_set = dataset(xtr, ytr, norm), dataset(xte, yte, norm)

    torch.manual_seed(args.seed)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
        generator=torch.Generator().manual_seed(args.seed))
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=1000)

    step = 0
    epochs = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        loss_sum, count = 0.0, 0
        t0 = time.perf_counter()
        for x, y in train_loader:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            count += 1
            step += 1
            if args.max_steps and step >= args.max_steps:
                break
        seconds = time.perf_counter() - t0
        model.eval()
        t1 = time.perf_counter()
        test_loss, correct = 0.0, 0
        with torch.no_grad():
            for x, y in test_loader:
                logits = model(x)
                test_loss += F.cross_entropy(logits, y, reduction="sum").item()
                correct += (logits.argmax(1) == y).sum().item()
        eval_seconds = time.perf_counter() - t1
        rec = {"epoch": epoch, "train_loss": loss_sum / max(count, 1),
               "test_loss": test_loss / len(test_set), "accuracy": correct / len(test_set),
               "seconds": seconds, "eval_seconds": eval_seconds}
        epochs.append(rec)
        print(f"epoch {epoch}: train loss {rec['train_loss']:.4f}, test loss "
              f"{rec['test_loss']:.4f}, accuracy {100 * rec['accuracy']:.2f}%, "
              f"{seconds:.1f} s (eval {eval_seconds:.1f} s)", flush=True)
        if args.max_steps and step >= args.max_steps:
            break
    fp = fingerprint(model)
    if args.json:
        print(json.dumps({"epochs": epochs, "fingerprint": fp}))
    print("fingerprint", fp)


if __name__ == "__main__":
    main()
