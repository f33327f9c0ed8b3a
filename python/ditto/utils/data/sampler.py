"""Samplers (torch.utils.data's). The ones the C++ library has run there
(the loader's workers never wait for Python to pick an index); any Python
iterable of indices with a length also works as a sampler."""
from ... import _C


class Sampler:
    """A base for Python samplers: __iter__ yields indices, __len__ counts
    them."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class _Native(Sampler):
    """A C++ sampler behind torch's Python interface."""

    _native = None

    def __iter__(self):
        return iter(self._native.indices())

    def __len__(self):
        return len(self._native)

    def _fresh(self):
        """A new C++ sampler with this one's settings and no epoch in
        progress (for a loader's second iterator: Note [Independent
        iterators] in dataloader.py)."""
        raise NotImplementedError


class SequentialSampler(_Native):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source
        self._native = _C.data.SequentialSampler(len(data_source))

    def _fresh(self):
        return _C.data.SequentialSampler(len(self.data_source))


class RandomSampler(_Native):
    """A random permutation (or, with replacement, num_samples draws) in
    torch's order: the same indices as torch.utils.data.RandomSampler from
    the same generator state."""

    def __init__(self, data_source, replacement=False, num_samples=None,
                 generator=None):
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if num_samples is not None and (
                not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, "
                             f"but got num_samples={num_samples}")
        self.data_source = data_source
        self.replacement = replacement
        self.generator = generator
        self._num_samples_arg = num_samples
        self._native = _C.data.RandomSampler(
            len(data_source), replacement, num_samples, generator)

    def _fresh(self):
        return _C.data.RandomSampler(len(self.data_source), self.replacement,
                                     self._num_samples_arg, self.generator)

    @property
    def num_samples(self):
        return len(self._native)


class DistributedSampler(_Native):
    """This rank's share of the dataset (torch's order, padding and
    set_epoch)."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True,
                 seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available() or not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler: Requires distributed package to be "
                    "available (give num_replicas and rank, or call "
                    "ditto.distributed.init_process_group() first)")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self._native = _C.data.DistributedSampler(
            len(dataset), num_replicas, rank, shuffle, seed, drop_last)
        self._epoch = 0

    def set_epoch(self, epoch):
        self._native.set_epoch(epoch)
        self._epoch = epoch

    def _fresh(self):
        n = _C.data.DistributedSampler(
            len(self.dataset), self.num_replicas, self.rank, self.shuffle,
            self.seed, self.drop_last)
        n.set_epoch(self._epoch)
        return n


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (one randperm)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        g = self.generator if self.generator is not None \
            else _C.default_generator()
        for i in _C.randperm(len(self.indices), generator=g).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups a sampler's indices into lists of batch_size."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) \
                or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, "
                             f"but got batch_size={batch_size}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size


class WeightedRandomSampler(Sampler):
    """torch's: num_samples indices drawn by multinomial over the weights
    (as float64), torch's draws from the same generator state."""

    def __init__(self, weights, num_samples, replacement=True,
                 generator=None):
        if not isinstance(num_samples, int) or isinstance(
                num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, "
                             f"but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        from ... import _C as C
        import ditto
        w = weights if isinstance(weights, C.Tensor) else ditto.tensor(
            list(weights), dtype=C.float64)
        if w.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        self.weights = w.to(C.float64)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        import ditto
        draws = ditto.multinomial(self.weights, self.num_samples,
                                  self.replacement, generator=self.generator)
        yield from iter(draws.tolist())

    def __len__(self):
        return self.num_samples
