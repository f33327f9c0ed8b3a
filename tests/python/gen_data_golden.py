"""Makes tests/python/data_golden.json from PyTorch 1.13's DataLoader (real
worker processes): batch orders, base seeds, and what each sample drew from
torch's default generator, Python's `random` and NumPy's global generator
inside its worker. Run with Debian's torch:

    /usr/bin/python3 tests/python/gen_data_golden.py > tests/python/data_golden.json

test_data.py compares ditto.utils.data's seed_mode="pytorch" with it.
"""
import json
import random

import numpy as np
import torch
from torch.utils.data import (DataLoader, Dataset, RandomSampler, TensorDataset,
                              get_worker_info, random_split)


class Draws(Dataset):
    """Each sample reports where it ran and what it drew."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        w = get_worker_info()
        return {
            "index": i,
            "worker": -1 if w is None else w.id,
            "seed": -1 if w is None else w.seed,
            "torch": torch.rand(2, dtype=torch.float64).tolist(),
            "random": random.random(),
            "numpy": float(np.random.rand()),
        }


def listed(value):
    if torch.is_tensor(value):
        return value.tolist()
    if isinstance(value, dict):
        return {k: listed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [listed(v) for v in value]
    return value


def seed_worker(worker_id):
    """The reproducibility note's worker_init_fn."""
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def run(n, batch_size, workers, seed, shuffle, epochs, persistent=False,
        init=None):
    torch.manual_seed(seed)
    random.seed(seed + 1)
    np.random.seed(seed + 2)
    g = torch.Generator()
    g.manual_seed(seed + 3)
    dl = DataLoader(Draws(n), batch_size=batch_size, shuffle=shuffle,
                    num_workers=workers, generator=g,
                    persistent_workers=persistent, worker_init_fn=init)
    return [[listed(b) for b in dl] for _ in range(epochs)]


def main():
    out = {"cases": []}
    for n, bs, workers, seed, shuffle, epochs, persistent in [
            (10, 3, 0, 7, True, 2, False),
            (10, 3, 2, 7, True, 2, False),
            (9, 2, 3, 11, False, 1, False),
            (8, 2, 2, 5, True, 2, True)]:
        out["cases"].append({
            "n": n, "batch_size": bs, "workers": workers, "seed": seed,
            "shuffle": shuffle, "epochs": epochs, "persistent": persistent,
            "batches": run(n, bs, workers, seed, shuffle, epochs, persistent)})
    # The reproducibility note's seed_worker (np.random.seed and random.seed
    # inside worker_init_fn), then the main process's own NumPy and random
    # draws, which the workers' seeding must not touch.
    batches = run(8, 2, 2, 13, True, 2, init=seed_worker)
    out["seed_worker"] = {
        "n": 8, "batch_size": 2, "workers": 2, "seed": 13, "shuffle": True,
        "epochs": 2, "persistent": False, "batches": batches,
        "main_after": [float(np.random.rand()), random.random()]}
    # RandomSampler without a generator draws its seed from the default one.
    torch.manual_seed(3)
    out["random_sampler"] = [list(RandomSampler(range(7))) for _ in range(2)]
    g = torch.Generator()
    g.manual_seed(4)
    out["random_sampler_replacement"] = list(
        RandomSampler(range(7), replacement=True, num_samples=12, generator=g))
    g.manual_seed(5)
    out["random_split"] = [list(s.indices) for s in
                           random_split(range(10), [3, 7], generator=g)]
    # A TensorDataset shuffled by a generator: the labels in batch order.
    g.manual_seed(6)
    ds = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
    out["tensor_dataset"] = [b[1].tolist() for b in DataLoader(
        ds, batch_size=4, shuffle=True, generator=g)]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
