"""DataLoader throughput over a Python dataset, ditto next to PyTorch 1.13,
with 0 and 2 workers, in one run (docs/benchmarks.md). The dataset is the
usual Python one: __getitem__ reads a Fashion-MNIST image from a uint8
tensor, scales it to float and returns (image, label); batches of 64 with
the default collate, shuffled from a seeded generator. ditto's workers are
threads (the GIL is taken only around __getitem__ and collate); PyTorch's
are processes. A C++ dataset (FashionMNIST itself, no Python per sample)
is the last row for ditto.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_loader.py
"""
import argparse
import time


def make_dataset(lib, images, labels):
    class Images(lib.utils.data.Dataset):
        def __len__(self):
            return images.shape[0]

        def __getitem__(self, i):
            return images[i].unsqueeze(0).float().div(255.0), int(labels[i])
    return Images()


def samples_per_second(loader, limit):
    n = 0
    t0 = time.perf_counter()
    for data, _ in loader:
        n += data.shape[0]
        if n >= limit:
            break
    return n / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=20000)
    a = p.parse_args()
    import numpy as np
    import torch
    import ditto
    from ditto.utils.data import FashionMNIST
    fm = FashionMNIST()
    d_images, d_labels = fm.data, fm.targets.tolist()
    t_images = torch.from_numpy(np.array(d_images.numpy()))
    rows = []
    for workers in (0, 2):
        dd = make_dataset(ditto, d_images, d_labels)
        dl = ditto.utils.data.DataLoader(
            dd, batch_size=64, shuffle=True, num_workers=workers,
            generator=ditto.Generator().manual_seed(0))
        ds = samples_per_second(dl, a.samples)
        td = make_dataset(torch, t_images, d_labels)
        tl = torch.utils.data.DataLoader(
            td, batch_size=64, shuffle=True, num_workers=workers,
            generator=torch.Generator().manual_seed(0))
        ts = samples_per_second(tl, a.samples)
        rows.append((f"Python dataset, {workers} workers", ds, ts))
    for workers in (0, 2):
        dl = ditto.utils.data.DataLoader(
            fm, batch_size=64, shuffle=True, num_workers=workers,
            generator=ditto.Generator().manual_seed(0))
        rows.append((f"C++ FashionMNIST, {workers} workers",
                     samples_per_second(dl, a.samples), None))
    print(f"DataLoader, batch 64, {a.samples} samples (samples/s)")
    print(f"{'':<32}{'ditto':>10}{'PyTorch':>10}{'ratio':>8}")
    for name, ds, ts in rows:
        t = f"{ts:10.0f}{ds / ts:8.2f}" if ts else f"{'':>10}{'':>8}"
        print(f"{name:<32}{ds:10.0f}{t}")


if __name__ == "__main__":
    main()
