#!/usr/bin/python3
"""Writes tests/data/data_golden.json: what PyTorch 1.13's DataLoader,
samplers and torchvision's random transforms draw, for the C++ tests
(data_test.cpp) to match.

Run with Debian's python3-torch and python3-torchvision:
    /usr/bin/python3 tests/data/gen_data_golden.py
"""
import json
import os

import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler, RandomSampler
import torchvision.transforms as T


class Probe(Dataset):
    """Sample i: data = one torch.rand(1) draw of the process's default
    generator (the worker's, in a worker); target = [i, initial_seed()]."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        draw = torch.rand(1).to(torch.float64)
        return draw, torch.tensor([i, torch.initial_seed()], dtype=torch.int64)


def loader_case(seed, n, batch, shuffle, use_gen, workers, drop_last,
                persistent=False, epochs=2):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1000) if use_gen else None
    loader = DataLoader(Probe(n), batch_size=batch, shuffle=shuffle,
                        generator=gen, num_workers=workers,
                        drop_last=drop_last,
                        persistent_workers=persistent)
    out = []
    for _ in range(epochs):
        for data, target in loader:
            out.append({"indices": target[:, 0].tolist(),
                        "seeds": [str(s) for s in target[:, 1].tolist()],
                        "draws": data[:, 0].tolist()})
    after = torch.rand(2).tolist()
    gen_after = torch.rand(2, generator=gen).tolist() if use_gen else []
    return {"seed": seed, "n": n, "batch": batch, "shuffle": shuffle,
            "use_gen": use_gen, "workers": workers, "drop_last": drop_last,
            "persistent": persistent, "epochs": epochs, "batches": out,
            "after": after, "gen_after": gen_after}


def main():
    g = {}
    torch.manual_seed(0)
    g["draw_seed"] = [str(int(torch.empty((), dtype=torch.int64).random_()))
                      for _ in range(2)]
    g["loaders"] = [
        loader_case(0, 10, 3, True, False, 0, False),
        loader_case(0, 10, 3, True, False, 2, False),
        loader_case(1, 17, 4, True, True, 3, True),
        loader_case(2, 8, 8, True, False, 1, False),
        loader_case(3, 9, 2, False, False, 2, False),
        loader_case(4, 12, 5, True, True, 0, False),
        loader_case(5, 10, 3, True, False, 2, False, persistent=True),
    ]
    samplers = []
    for n, replacement, num_samples in ((7, False, 17), (9, True, 70)):
        gen = torch.Generator().manual_seed(11)
        s = RandomSampler(range(n), replacement=replacement,
                          num_samples=num_samples, generator=gen)
        epochs = [list(s) for _ in range(2)]
        samplers.append({"n": n, "replacement": replacement,
                         "num_samples": num_samples, "epochs": epochs,
                         "gen_after": torch.rand(2, generator=gen).tolist()})
    g["random_samplers"] = samplers
    dist = []
    for drop_last in (False, True):
        for shuffle in (False, True):
            for rank in range(3):
                s = DistributedSampler(range(10), num_replicas=3, rank=rank,
                                       shuffle=shuffle, seed=7,
                                       drop_last=drop_last)
                epochs = []
                for e in range(2):
                    s.set_epoch(e)
                    epochs.append(list(s))
                dist.append({"drop_last": drop_last, "shuffle": shuffle,
                             "rank": rank, "epochs": epochs})
    g["distributed"] = dist
    # torchvision's RandomCrop(6, padding=2) then RandomHorizontalFlip on a
    # [1, 8, 8] image, under manual_seed(s).
    aug = T.Compose([T.RandomCrop(6, padding=2), T.RandomHorizontalFlip()])
    img = torch.arange(64, dtype=torch.float32).reshape(1, 8, 8)
    transforms = []
    for s in range(6):
        torch.manual_seed(s)
        transforms.append({"seed": s, "out": aug(img).reshape(-1).tolist()})
    g["transforms"] = transforms
    norm = T.Normalize([0.2860], [0.3530])
    g["normalize"] = norm(img / 64).reshape(-1).tolist()

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "data_golden.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"generated_by": "gen_data_golden.py, torch "
                   + torch.__version__, "golden": g}, f, indent=0)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
