"""ditto.utils.data.DataLoader: torch.utils.data.DataLoader's interface on
ditto's C++ loader (docs/data.md, docs/python.md).

Workers are C++ threads, not processes: they take the GIL only to run the
dataset's __getitem__, collate_fn and worker_init_fn, and a C++ dataset
(FashionMNIST) with the default collate takes none. Batches come out in
sampler order; batch k is loaded by worker k % num_workers; the base seed
is drawn from `generator` (else the default generator) as torch draws it.

seed_mode="pytorch" (the default): torch's draws. With num_workers=0 the
dataset draws from the process's generators (ditto's default generator,
Python's `random`, NumPy's global generator), continuing their streams as
torch's loop does; worker i seeds ditto and `random` with base_seed + i and
NumPy with torch's _generate_state(base_seed, i), as torch seeds its worker
processes. The data then depends on num_workers, as in torch.
seed_mode="per_sample" (ditto's R3, asked for by name): each sample's
random draws come from the sample's own seed, so the data is the same for
any number of workers and across a resume, but not torch's draws. The
loader's repr names the mode. (The C++ loader's default is per-sample.)
"""
import atexit
import threading
import traceback
import weakref

from ... import _C
from . import _rng
from ._collate import default_collate, default_convert
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _Native


# The loaders alive: their workers are stopped before the interpreter
# exits (a thread that takes the GIL during finalization is ended by
# pthread_exit, which the workers' C++ frames cannot unwind through).
_live = weakref.WeakSet()


@atexit.register
def _shutdown_loaders():
    for loader in list(_live):
        core = getattr(loader, "_core", None)
        if core is not None:
            core.shutdown()


class WorkerInfo:
    """What get_worker_info() tells inside a worker."""
    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):
        self.id = id
        self.num_workers = num_workers
        self.seed = seed
        self.dataset = dataset

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, "
                f"seed={self.seed}, dataset={self.dataset!r})")


def get_worker_info():
    """The current worker's id, num_workers, seed and dataset; None outside
    a worker (torch.utils.data.get_worker_info)."""
    info = _C.data.worker_info()
    if info is None:
        return None
    return WorkerInfo(*info)


class _Failure:
    """An exception raised in a worker (or in the caller's thread with
    num_workers=0), carried back as a value with its traceback."""

    def __init__(self, where, exc):
        self.exc_type = type(exc)
        self.exc = exc
        self.text = "".join(traceback.format_exception(
            type(exc), exc, exc.__traceback__))
        self.where = where

    def reraise(self):
        msg = (f"Caught {self.exc_type.__name__} {self.where}.\n"
               f"Original {self.text}")
        try:
            err = self.exc_type(msg)
        except Exception:  # an exception class that takes other arguments
            err = RuntimeError(msg)
        raise err from self.exc


def _where(index=None):
    w = _C.data.worker_info()
    place = "in the main thread" if w is None else f"in DataLoader worker {w[0]}"
    return place if index is None else f"{place} (sample {index})"


class _Epoch:
    """The Python objects one loader's workers call."""

    def __init__(self, loader):
        self.dataset = loader.dataset
        self.collate_fn = loader.collate_fn
        self.user_init = loader.worker_init_fn
        self.per_sample = loader.seed_mode == "per_sample"
        self.batches = None  # a custom batch_sampler's batches this epoch
        self.init_failures = {}
        self.worker_idents = set()

    def fetch(self, index):
        try:
            if self.init_failures:  # rare: look up this worker only then
                w = _C.data.worker_info()
                if w is not None and w[0] in self.init_failures:
                    return self.init_failures[w[0]]
            if self.per_sample:
                with _rng.sample_scope(_C.data.sample_seed()):
                    return self._get(index)
            return self._get(index)
        except BaseException as e:  # noqa: B902 - carried to the caller
            return _Failure(_where(index), e)

    def _get(self, index):
        if self.batches is not None:
            return [self.dataset[i] for i in self.batches[index]]
        return self.dataset[index]

    def collate(self, samples):
        for s in samples:
            if isinstance(s, _Failure):
                return s
        if self.batches is not None:
            samples = samples[0]
        try:
            return self.collate_fn(samples)
        except BaseException as e:  # noqa: B902
            return _Failure(_where() + " (collate_fn)", e)

    def worker_init(self, worker_id):
        import threading
        wid, _, seed, _ = _C.data.worker_info()
        base_seed = seed - wid
        self.worker_idents.add(threading.get_ident())
        _rng.enter_worker(wid, seed, base_seed)
        if self.user_init is not None:
            try:
                self.user_init(worker_id)
            except BaseException as e:  # noqa: B902
                self.init_failures[worker_id] = _Failure(
                    f"in DataLoader worker {worker_id} (worker_init_fn)", e)


class DataLoader:
    """torch.utils.data.DataLoader over a map-style dataset."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None,
                 batch_sampler=None, num_workers=0, collate_fn=None,
                 pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor=2,
                 persistent_workers=False, pin_memory_device="",
                 seed_mode="pytorch"):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 "
                "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor != 2:
            raise ValueError(
                "prefetch_factor option could only be specified in "
                "multiprocessing.let num_workers > 0 to enable "
                "multiprocessing.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if sampler is not None and shuffle:
            raise ValueError(
                "sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with "
                    "batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is "
                "mutually exclusive with drop_last")
        if seed_mode not in ("per_sample", "pytorch"):
            raise ValueError("DataLoader: seed_mode must be 'per_sample' or "
                             f"'pytorch', got {seed_mode!r}")
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.seed_mode = seed_mode
        self.pin_memory = pin_memory
        self._user_collate = collate_fn
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or \
                batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        _rng.install()
        self._iter_lock = threading.Lock()
        self._build()

    def _build(self, fork=False):
        e = self._epoch = _Epoch(self)
        bs = self.batch_sampler
        plain = isinstance(bs, BatchSampler) and type(bs) is BatchSampler
        if bs is None:  # batch_size=None: one sample per "batch"
            sampler, batch_size, drop_last = self.sampler, 1, False
            e.collate_fn = lambda samples: self.collate_fn(samples[0])
        elif plain:
            sampler, batch_size, drop_last = bs.sampler, bs.batch_size, \
                bs.drop_last
        else:  # a custom batch sampler: its batches are drawn each epoch
            sampler, batch_size, drop_last = None, 1, False
        if isinstance(sampler, _Native):
            if fork:  # the older iterator keeps the sampler it is reading
                sampler._native = sampler._fresh()
            sampler = sampler._native
        native_ok = self._user_collate is None and self.batch_size is not None \
            and plain and isinstance(self.dataset, _C.data.Dataset)
        self._custom_batches = not plain and bs is not None
        self._native = native_ok
        size = len(self.batch_sampler) if self._custom_batches \
            else len(self.dataset)
        _live.add(self)
        self._lock = threading.Lock()  # this core's
        self._last_iterator = lambda: None
        self._core = _C.data.LoaderCore(
            self.dataset, size, e.fetch, None if native_ok else e.collate, batch_size, False,
            sampler if sampler is not None else _EpochBatches(self),
            self.num_workers, drop_last, self.generator, e.worker_init,
            self.prefetch_factor, self.persistent_workers, self.seed_mode)

    def __iter__(self):
        # Note [Independent iterators]: a loader's core runs one epoch at a
        # time. A new iterator while an older one is unfinished (torch's
        # iterators are independent) leaves the older one the core, its
        # epoch, workers and sampler, and continues the loader on a new core
        # that starts after that epoch: the epoch count, base seeds and
        # persistent workers' seeds carry over (the core's state between
        # epochs), and the generator is the same object, so each epoch draws
        # what it would have drawn had the older iterator finished first.
        # The per-core lock keeps two threads from entering one core at
        # once: each batch goes to one of them.
        # An iterator nobody holds any more (a loop left with break) is
        # gone: its core simply starts the next epoch, as before.
        with self._iter_lock:
            last = self._last_iterator()
            if last is not None and not last._done:
                import json
                with self._lock:
                    state = json.loads(self._core.state_dict())
                state["epoch_done"] = True
                self._build(fork=True)
                self._core.load_state_dict(json.dumps(state))
            with self._lock:
                if self._custom_batches:
                    self._epoch.batches = list(self.batch_sampler)
                self._core.begin()
                it = _Iterator(self)
            self._last_iterator = weakref.ref(it)
            return it

    def __len__(self):
        if self._custom_batches:
            return len(self.batch_sampler)
        return len(self._core)

    def __repr__(self):
        if self.seed_mode == "per_sample":
            seeds = ("seed_mode='per_sample': each sample draws from its own "
                     "seed, the same data for any num_workers, not torch's "
                     "draws")
        else:
            seeds = "seed_mode='pytorch': torch's draws"
        return (f"DataLoader(dataset={type(self.dataset).__name__}, "
                f"batch_size={self.batch_size}, "
                f"num_workers={self.num_workers}, {seeds})")

    def state_dict(self):
        """Where the loader is within its epochs (mid-epoch too): a
        dict that load_state_dict() continues from."""
        import json
        return json.loads(self._core.state_dict())

    def load_state_dict(self, state):
        import json
        self._core.load_state_dict(json.dumps(state))

    def __del__(self):
        e = getattr(self, "_epoch", None)
        if e is not None:
            _rng.forget_workers(e.worker_idents)


class _EpochBatches:
    """A custom batch sampler's batches, as indices into this epoch's
    list."""

    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        return iter(range(len(self.loader._epoch.batches or ())))

    def __len__(self):
        return len(self.loader.batch_sampler)


class _Iterator:
    """One epoch of a loader, on the core it started on (Note [Independent
    iterators])."""

    def __init__(self, loader):
        self._loader = loader
        self._core = loader._core
        self._epoch = loader._epoch
        self._lock = loader._lock
        self._done = False
        _live.add(self)  # its workers are stopped at exit too

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        with self._lock:
            batch = self._core.next()
        if batch is None:
            self._done = True
            if not self._loader.persistent_workers:
                _rng.forget_workers(self._epoch.worker_idents)
            raise StopIteration
        if self._loader._native:
            return list(batch)  # [data, target], as torch collates pairs
        if isinstance(batch, _Failure):
            batch.reraise()
        return batch

    def __len__(self):
        return len(self._loader)


__all__ = ["DataLoader", "get_worker_info", "default_collate",
           "default_convert", "WorkerInfo"]
