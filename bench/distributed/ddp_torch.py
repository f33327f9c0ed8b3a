"""PyTorch 1.13's DistributedDataParallel on gloo for `ditto train`'s CNN:
WORLD processes of THREADS threads, global batch 64 (64 / WORLD per rank),
SGD with momentum 0.9, normalized Fashion-MNIST pre-loaded into a tensor,
deterministic algorithms on. Prints ms per step of the training loop
(rank 0). A benchmark, not a test (docs/distributed.md):

    /usr/bin/python3 bench/distributed/ddp_torch.py --world 2 --threads 1 --steps 100

glibc's malloc: with its defaults, blocks over 128 KiB (the CNN's
activations, 6.4 MB) are mmapped and page-faulted anew at every step until
a free of such a block raises the threshold, which this script's own
allocations do not do: 74 ms per step against 28 with the threshold
raised (measured 2026-11-27, 2 threads). A real training script usually
raises it early, by accident (importing ditto does, in bench_train.py), so
the script re-executes itself with MALLOC_MMAP_THRESHOLD_ and
MALLOC_TRIM_THRESHOLD_ set (children inherit them): PyTorch at its usual
speed, not at its worst. --glibc-defaults keeps glibc's defaults.
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.distributed as tdist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

ROOT = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))


def worker(rank, world, threads, steps, plain=False):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    if not plain:
        tdist.init_process_group("gloo", rank=rank, world_size=world)
    images = torch.from_numpy(
        read_idx(os.path.join(ROOT, "train-images-idx3-ubyte.gz"))
        .astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)
    images = (images - images.mean()) / images.std(unbiased=False)
    labels = torch.from_numpy(
        read_idx(os.path.join(ROOT, "train-labels-idx1-ubyte.gz"))
        .astype(np.int64))
    torch.manual_seed(0)
    model = cnn() if plain else nn.parallel.DistributedDataParallel(cnn())
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    per_rank = 64 // world
    g = torch.Generator().manual_seed(1)
    order = torch.randperm(images.shape[0], generator=g)
    t0 = None
    for step in range(steps + 5):
        if step == 5:
            if not plain:
                tdist.barrier()
            t0 = time.perf_counter()
        idx = order[step * 64 + rank * per_rank:step * 64 + (rank + 1) * per_rank]
        opt.zero_grad()
        F.cross_entropy(model(images[idx]), labels[idx]).backward()
        opt.step()
    if not plain:
        tdist.barrier()
    if rank == 0:
        ms = 1000 * (time.perf_counter() - t0) / steps
        what = "no DDP, one process" if plain else "DDP gloo"
        print(f"PyTorch {what}, {world} x {threads} threads: {ms:.2f} ms/step")
    if not plain:
        tdist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--plain", action="store_true",
                   help="the same loop without DDP, in this process")
    p.add_argument("--glibc-defaults", action="store_true",
                   help="keep glibc malloc's mmap threshold (see above)")
    a = p.parse_args()
    if not a.glibc_defaults and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(32 << 20),
                   MALLOC_TRIM_THRESHOLD_=str(256 << 20))
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    if a.plain:
        worker(0, 1, a.threads, a.steps, plain=True)
    else:
        mp.spawn(worker, args=(a.world, a.threads, a.steps), nprocs=a.world)


if __name__ == "__main__":
    main()
