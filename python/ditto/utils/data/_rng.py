"""Python's `random` and NumPy's global generator, per loader worker.

PyTorch's workers are processes: each seeds its own `random` with
base_seed + worker_id and NumPy's global generator with
_generate_state(base_seed, worker_id). ditto's workers are threads sharing
one interpreter, so ditto routes the module-level functions (random.random,
random.shuffle, numpy.random.rand, ...) to a generator chosen by the calling
thread: the worker's (pytorch mode), the current sample's (per-sample mode),
or the process's own everywhere else (unchanged behaviour). The routing is
installed by the first DataLoader and costs one dict lookup per call.
Functions imported by name before that (`from random import random`) keep
the process generator.
"""
import random as _random
import threading

from ... import _C

_MASK32 = 0xFFFFFFFF

# Thread ident -> _Slot: the generators the thread's calls go to.
_slots = {}
_install_lock = threading.Lock()
_installed = False


def generate_state(base_seed, worker_id):
    """The four 32-bit words PyTorch's workers seed NumPy with
    (torch/utils/data/_utils/worker.py's _generate_state: a SeedSequence-like
    hash of [worker_id, base_seed low, base_seed high, 0])."""
    def hasher():
        const = 0x43B0D7E5

        def h(value):
            nonlocal const
            value = (value ^ const) & _MASK32
            const = (const * 0x931E8875) & _MASK32
            value = (value * const) & _MASK32
            return value ^ (value >> 16)
        return h

    def mix(x, y):
        r = ((0xCA01F9DD * x) - (0x4973F715 * y)) & _MASK32
        return r ^ (r >> 16)

    h = hasher()
    words = [worker_id, base_seed & _MASK32, base_seed >> 32, 0]
    pool = [h(w) for w in words]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], h(pool[src]))
    out = []
    const = 0x8B51F9DD
    for v in pool:
        v = (v ^ const) & _MASK32
        const = (const * 0x58F38DED) & _MASK32
        v = (v * const) & _MASK32
        out.append(v ^ (v >> 16))
    return out


class _Slot:
    """A thread's generators: made on first use (most datasets use neither)."""
    __slots__ = ("seed", "numpy_seed", "worker", "_py", "_np")

    def __init__(self, seed, numpy_seed, worker):
        self.seed = seed
        self.numpy_seed = numpy_seed
        self.worker = worker  # a worker's slot holds only inside that worker
        self._py = None
        self._np = None

    def py(self):
        if self._py is None:
            self._py = _random.Random(self.seed)
        return self._py

    def np(self):
        if self._np is None:
            import numpy
            self._np = numpy.random.RandomState(self.numpy_seed)
        return self._np


def _current(kind, fallback):
    slot = _slots.get(threading.get_ident())
    if slot is not None:
        # A worker's slot left behind by an ended loader must not capture a
        # later thread that reuses the ident.
        if slot.worker is None or _C.data.worker_info() is not None:
            return slot.py() if kind == "py" else slot.np()
    return fallback


def _route(module, instance, kind):
    for name in dir(module):
        fn = getattr(module, name)
        if getattr(fn, "__self__", None) is not instance or name.startswith("_"):
            continue

        def routed(*args, _name=name, **kwargs):
            return getattr(_current(kind, instance), _name)(*args, **kwargs)
        routed.__name__ = name
        routed.__doc__ = fn.__doc__
        routed.__wrapped__ = fn
        setattr(module, name, routed)


def _route_numpy_functions(np_random, instance):
    """numpy.random's module functions that are not bound methods of its
    global RandomState (seed, ranf, sample, get/set_bit_generator: plain
    functions since NumPy 1.17) and so escape _route: np.random.seed inside
    worker_init_fn must seed the worker's generator, not the process's."""
    def seed(seed=None):
        target = _current("np", None)
        if target is None:
            return plain["seed"](seed)
        return target.seed(seed)

    def ranf(*args, **kwargs):
        return _current("np", instance).random_sample(*args, **kwargs)

    def sample(*args, **kwargs):
        return _current("np", instance).random_sample(*args, **kwargs)

    def get_bit_generator():
        target = _current("np", None)
        if target is None:
            return plain["get_bit_generator"]()
        return target._bit_generator

    def set_bit_generator(bitgen):
        slot = _slots.get(threading.get_ident())
        if _current("np", None) is None:
            return plain["set_bit_generator"](bitgen)
        slot._np = np_random.RandomState(bitgen)

    plain = {}
    for fn in (seed, ranf, sample, get_bit_generator, set_bit_generator):
        original = getattr(np_random, fn.__name__, None)
        if original is None or getattr(original, "__self__", None) is instance:
            continue  # absent, or a bound method that _route already took
        plain[fn.__name__] = original
        fn.__doc__ = original.__doc__
        fn.__wrapped__ = original
        setattr(np_random, fn.__name__, fn)


def install():
    """Routes random's and numpy.random's module functions (once)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        _route(_random, _random._inst, "py")
        try:
            import numpy
            _route(numpy.random, numpy.random.mtrand._rand, "np")
            _route_numpy_functions(numpy.random, numpy.random.mtrand._rand)
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass
        _installed = True


def enter_worker(worker_id, seed, base_seed):
    """In a worker thread, before worker_init_fn: as PyTorch seeds a
    worker process."""
    _slots[threading.get_ident()] = _Slot(
        seed, generate_state(base_seed, worker_id), worker_id)


class sample_scope:
    """Per-sample mode: the sample's own generators for the call."""
    __slots__ = ("slot", "previous", "ident")

    def __init__(self, seed):
        self.slot = _Slot(seed, [seed & _MASK32, seed >> 32], None)

    def __enter__(self):
        self.ident = threading.get_ident()
        self.previous = _slots.get(self.ident)
        _slots[self.ident] = self.slot

    def __exit__(self, *exc):
        if self.previous is None:
            _slots.pop(self.ident, None)
        else:
            _slots[self.ident] = self.previous
        return False


def forget_workers(idents):
    for ident in idents:
        slot = _slots.get(ident)
        if slot is not None and slot.worker is not None:
            del _slots[ident]
