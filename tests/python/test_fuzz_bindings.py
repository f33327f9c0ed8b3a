"""Bad arguments never crash the interpreter (issue 33): every public
callable of ditto, ditto.nn.functional, ditto.linalg, ditto.autograd and
ditto.nn.init, every Tensor method and operator and every Generator method,
called with a deterministic pseudo-random selection (random.Random, seeded
with 0 and each callable's name) of bad arguments (None, strings, huge and
negative ints, nan, empty tuples, mixed lists, tensors of the wrong dtype or
shape, 0-dim and empty tensors, lists nested past any C stack, NumPy arrays
of odd dtypes and read-only memory, consumed and foreign capsules, wrong
keyword names) either returns or raises an ordinary Exception subclass
(TypeError, ValueError, IndexError, RuntimeError, MemoryError, ...). Half the
calls draw each argument from its declared type (read from the binding's
signature) with a bad value, so that they get past argument conversion.

The walk runs in a child interpreter (this file run as a script), which
prints each call before making it: a crash (a signal, an abort) or a hang
fails the test naming the last call attempted. The child runs under an
address-space limit, so that a call asking for an enormous tensor fails with
MemoryError at once instead of taking the machine's memory.

Issue 61 added sequences whose items are made on access (a class with
__len__ and __getitem__, one whose __len__ lies or whose __getitem__
raises, array.array, lists of NumPy scalars and arrays, a list that empties
itself while read, a generator), paths with a NUL byte (a str and an
os.PathLike: the file cut at the NUL must not appear), and a phase that
calls functions from two threads at once.

Crashes it found (fixed): ditto.<op>(None, ...) for ops bound from Tensor
member functions (a null self); ditto.tensor of a list nested 100000 deep
(C stack overflow).
"""
import os
import random
import subprocess
import sys
import time

import pytest

TRIALS = int(os.environ.get("DITTO_FUZZ_TRIALS", "100"))  # calls per callable
THREAD_CALLS = 400  # per thread, in the two-thread phase
TIMEOUT_S = 240
ADDRESS_SPACE = 3 << 30  # bytes; ditto's largest legitimate call here is tiny

# Callables not walked, each with its reason.
SKIP = {
    # Object protocol, not ditto's API: re-running __init__ on a live tensor
    # or rebinding attributes is pybind11's business.
    "Tensor.__init__": "object protocol",
    "Tensor.__new__": "object protocol",
    "Tensor.__setattr__": "object protocol",
    "Tensor.__delattr__": "object protocol",
    "Tensor.__getattribute__": "object protocol",
    "Tensor.__init_subclass__": "object protocol",
    "Tensor.__subclasshook__": "object protocol",
    "Tensor.__class__": "object protocol",
    "Tensor.__dir__": "object protocol",
    "Tensor.__sizeof__": "object protocol",
    "Tensor.__format__": "object protocol",
    "Tensor.__reduce__": "object protocol",
    "Tensor.__reduce_ex__": "object protocol",
    # Draws a seed from the OS (not reproducible, nothing to check).
    "seed": "reads the OS entropy source",
}

# Callables whose int arguments count work (iterations): a huge count is a
# legitimately long call, not a bug, so their ints are capped at WORK_CAP.
# tensor_split(x, n) and hsplit/vsplit/dsplit(x, n) return n views whatever
# x's size (torch's too): n = 2^31 is two billion tensors.
WORK_BOUND = {"linalg.svd_lowrank", "svd_lowrank", "tensor_split",
              "Tensor.tensor_split", "hsplit", "Tensor.hsplit", "vsplit",
              "Tensor.vsplit", "dsplit", "Tensor.dsplit"}
WORK_CAP = 8
PROFILE = bool(os.environ.get("DITTO_FUZZ_PROFILE"))


def _child():
    import faulthandler
    import resource
    import warnings

    faulthandler.enable()
    warnings.simplefilter("ignore")
    # Under AddressSanitizer (make sanitize) the shadow memory already maps
    # terabytes of address space; there ASAN_OPTIONS' max_allocation_size_mb
    # and allocator_may_return_null make an enormous tensor a MemoryError.
    if not os.environ.get("DITTO_SANITIZED"):
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(
            ADDRESS_SPACE, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    import inspect

    import ditto
    import ditto.autograd
    import ditto.linalg
    import ditto.nn.functional as F
    import ditto.nn.init

    def public(mod, prefix):
        out = []
        for n in sorted(dir(mod)):
            obj = getattr(mod, n)
            if n.startswith("_") or inspect.ismodule(obj) or not callable(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            out.append((prefix + n, obj, None))
        return out

    targets = (public(ditto, "") + public(F, "F.") +
               public(ditto.linalg, "linalg.") +
               public(ditto.autograd, "autograd.") +
               public(ditto.nn.init, "init."))
    for n in sorted(dir(ditto.Tensor)):
        if n.startswith("_") and not n.startswith("__"):
            continue
        if not callable(getattr(ditto.Tensor, n, None)):
            continue
        targets.append(("Tensor." + n, None, n))
    # Assignable properties (t.grad = ..., t.data = ...): target(value).
    for n in sorted(dir(ditto.Tensor)):
        prop = inspect.getattr_static(ditto.Tensor, n, None)
        if isinstance(prop, property) and prop.fset is not None:
            targets.append((f"Tensor.{n}=", None, ("=", n)))
    for n in sorted(dir(ditto.Generator)):
        if not n.startswith("_"):
            targets.append(("Generator." + n, None, n))
    if os.environ.get("DITTO_FUZZ_PLANT"):  # the harness's own test
        import ctypes
        targets = [("planted.segfault",
                    lambda *a, **k: ctypes.string_at(0), None)]
    targets = [t for t in targets
               if t[0] not in SKIP and t[0].split(".")[-1] not in SKIP]

    def tensors():
        t = ditto.arange(0, 6, dtype=ditto.float32).view(2, 3)
        return [
            t,
            ditto.tensor([0, 100, -100]),  # int64, indices out of range
            ditto.tensor([True, False]),
            ditto.tensor(2.5),  # 0-dim
            ditto.zeros(0),  # empty
            ditto.ones(1, 1, 1, 1, 1, dtype=ditto.float64),
            ditto.arange(0, 12, dtype=ditto.float32).view(3, 4).t(),
            ditto.ones(3, requires_grad=True),
            ditto.tensor([1, 2], dtype=ditto.uint8),
            ditto.ones(1).expand(3),  # stride 0: writing it would overlap
            t[:, 1:],  # a view with a storage offset
            ditto.tensor([2]),  # a valid one-element index
        ]

    def bad_values():
        return [
            None, "abc", "", b"\x00", "victim\x00.bak", NulPath(),
            2**62, 2**63 - 1, -2**63, 10**20, -1,
            -7, 0, 1, 3, float("nan"), float("inf"), -1e308, True, (), [],
            [1, "a", None], [2**40, 2**40], (-1, -1), (0,), [[1, 2], [3]], {},
            object(), slice(None, None, -1), Ellipsis, ditto.float64,
            ditto.int64, ditto.bool, ditto.Generator(),
            deep, ring, capsule, foreign_capsule,
            ditto.zeros(2).__dlpack__(),  # a fresh capsule
        ] + arrays() + fresh_sequences()

    class NulPath:
        """An os.PathLike whose path has a NUL byte (issue 61, item 12)."""

        def __fspath__(self):
            return "victim\x00.bak"

    class Fresh:
        """A sequence whose items are made on access (issue 61, item 5):
        each __getitem__ returns a new object that nothing else holds."""

        def __init__(self, n, make, lie=0):
            self.n, self.make, self.lie = n, make, lie

        def __len__(self):
            return self.n + self.lie

        def __getitem__(self, i):
            if not -self.n <= i < self.n:
                raise IndexError(i)
            return self.make(i)

    class Shrinking(list):
        """A list that empties itself while it is read."""

        def __getitem__(self, i):
            v = list.__getitem__(self, i)
            self.clear()
            return v

    def fresh_sequences():
        import array
        out = [Fresh(3, lambda i: float(i)), Fresh(2, lambda i: [i, i + 1]),
               Fresh(3, lambda i: float(i), lie=5),  # __len__ lies
               Fresh(2, lambda i: 1 / 0),  # __getitem__ raises
               Fresh(2, lambda i: Fresh(2, lambda j: float(i + j))),
               array.array("f", [1.0, 2.0]), array.array("q", [1, -1]),
               Shrinking([1.0, 2.0, 3.0]), (x for x in [1.0, 2.0])]
        try:
            import numpy as np
            out += [[np.float32(1.5), np.float32(2.5)],
                    [np.ones(2, np.float32), np.zeros(2, np.float32)],
                    Fresh(2, lambda i: np.full(3, i, np.float32))]
        except ImportError:
            pass
        return out

    deep = []  # nested far beyond any C stack's depth
    for _ in range(100000):
        deep = [deep]
    ring = [1.0]  # a list that holds itself
    ring.append(ring)
    capsule = ditto.zeros(3).__dlpack__()  # consumed by the first taker
    import datetime
    foreign_capsule = datetime.datetime_CAPI  # a capsule of another name

    import mmap
    read_only = mmap.mmap(-1, 64, prot=mmap.PROT_READ)

    def arrays():
        try:
            import numpy as np
        except ImportError:
            return []
        return [np.frombuffer(read_only, dtype=np.float32),  # read-only
                np.zeros(3, np.float16), np.array(["a", "b"]),
                np.arange(6.0)[::-1], np.array([1 + 2j]), np.zeros((2, 0)),
                np.array([object()]), np.float64("nan"), np.int64(-1),
                np.zeros((2, 3), np.float32)[:, ::2]]

    keywords = ["bogus", "dim", "dtype", "out", "generator", "size", "keepdim",
                "input", "p", "weight", "reduction", "requires_grad"]

    def describe(v, depth=0):
        if isinstance(v, ditto.Tensor):
            return f"T({v.dtype}{list(v.shape)})"
        if v is deep:
            return "deep"
        if v is ring:
            return "ring"
        if isinstance(v, (list, tuple)):
            if depth > 3:
                return "..."
            inner = ", ".join(describe(x, depth + 1) for x in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner})"
        if type(v).__name__ == "ndarray":
            return f"ndarray({v.dtype}{list(v.shape)})"
        if isinstance(v, ditto.Generator):
            return "Generator()"
        if type(v) is object:
            return "object()"
        return repr(v)

    def setter(obj, attr):
        def assign(*args, **kwargs):
            setattr(obj, attr, args[0] if args else None)
        return assign

    rng = random.Random(0)
    ints = [2**62, 2**63 - 1, -2**63, 2**31, -2**31 - 1, -1, -7, 0, 1, 2, 3,
            100, -100]
    floats = [float("nan"), float("inf"), -float("inf"), 1e308, -1e-320, 0.0,
              -1.0, 2.5]
    strings = ["", "bogus", "mean", "sum", "none", "\x00", "a" * 300]
    dtypes = [ditto.uint8, ditto.int32, ditto.int64, ditto.float32,
              ditto.float64, ditto.bool]

    def int_list():
        return [rng.choice(ints) for _ in range(rng.choice([0, 1, 2, 3, 9]))]

    def value_of(kind, ts, pool):
        """A value of the declared type, chosen to be wrong in value."""
        kind = kind.strip()
        if kind.startswith("Optional["):
            if rng.random() < 0.25:
                return None
            kind = kind[len("Optional["):-1]
        if rng.random() < 0.15 and not kind.endswith("Tensor"):
            return rng.choice(fresh_sequences())
        if "Tensor" in kind and kind.startswith("List"):
            return [rng.choice(ts + [None]) for _ in range(rng.randint(0, 3))]
        if kind.endswith("Tensor"):
            return rng.choice(ts)
        if kind == "int":
            return rng.choice(ints)
        if kind in ("float", "Number"):
            return rng.choice(floats + ints)
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "str":
            return rng.choice(strings)
        if kind.endswith("dtype"):
            return rng.choice(dtypes)
        if kind.endswith("Generator"):
            return ditto.Generator()
        if kind.startswith(("Sequence[int]", "List[int]")):
            return int_list()
        return rng.choice(pool)

    def value_named(pname, default, ts, pool):
        """For Python functions: the type guessed from the default or name."""
        if isinstance(default, bool):
            return value_of("bool", ts, pool)
        if isinstance(default, int):
            return value_of("int", ts, pool)
        if isinstance(default, float):
            return value_of("float", ts, pool)
        if isinstance(default, str):
            return value_of("str", ts, pool)
        if isinstance(default, tuple):
            return int_list()
        if pname in ("dim", "n", "k", "groups", "num_classes", "dims",
                     "kernel_size", "stride", "padding", "dilation", "size",
                     "output_size", "q", "niter", "shape"):
            return rng.choice([rng.choice(ints), int_list()])
        if pname in ("p", "eps", "momentum", "alpha", "beta", "value",
                     "negative_slope", "min", "max", "lambd", "delta"):
            return value_of("float", ts, pool)
        return rng.choice(ts + pool[:8])

    def signatures(fn):
        """Each overload as (name, kind, default) parameters, self dropped."""
        doc = getattr(fn, "__doc__", "") or ""
        sigs = []
        if True:
            for line in doc.splitlines():
                line = line.strip()
                m = line.split("(", 1)
                if len(m) != 2 or " -> " not in line:
                    continue
                body = m[1].rsplit(") -> ", 1)[0].rstrip(")")
                params, depth, cur = [], 0, ""
                for ch in body:
                    depth += ch in "[("
                    depth -= ch in "])"
                    if ch == "," and depth == 0:
                        params.append(cur.strip())
                        cur = ""
                    else:
                        cur += ch
                if cur.strip():
                    params.append(cur.strip())
                out = []
                for prm in params:
                    if prm in ("*", "self") or prm.startswith("self:"):
                        continue
                    pname, _, rest = prm.partition(":")
                    kind = rest.split("=")[0].strip()
                    out.append((pname.strip(), kind, "=" in rest))
                sigs.append(out)
        if sigs:
            return sigs
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return []
        out = []
        for prm in sig.parameters.values():
            if prm.name in ("self", "ctx"):
                continue
            default = (None if prm.default is inspect.Parameter.empty
                       else prm.default)
            star = {inspect.Parameter.VAR_POSITIONAL: "*",
                    inspect.Parameter.VAR_KEYWORD: "**"}.get(prm.kind, "")
            out.append((star + prm.name, ("py", default),
                        prm.default is not inspect.Parameter.empty))
        return [out]

    def typed_call(fn, ts, pool):
        sigs = signatures(fn)
        if not sigs:
            return None
        args, kwargs = [], {}
        for pname, kind, has_default in rng.choice(sigs):
            if pname.startswith("**"):
                continue
            if pname.startswith("*"):
                args += [rng.choice(ts + [rng.choice(ints), int_list()])
                         for _ in range(rng.randint(0, 3))]
                continue
            if has_default and rng.random() < 0.4:
                continue
            if isinstance(kind, tuple):
                v = value_named(pname, kind[1], ts, pool)
            else:
                v = value_of(kind, ts, pool)
            if rng.random() < 0.1:
                v = rng.choice(pool)  # now and then a wrong type
            if has_default or kwargs:
                kwargs[pname] = v
            else:
                args.append(v)
        return args, kwargs

    n_threads = ditto.get_num_threads()
    calls = 0
    outcomes = {}
    spent = {}
    unexpected = []
    start = int(os.environ.get("DITTO_FUZZ_START", "0"))  # to hunt on
    for index, (name, fn, method) in enumerate(targets):
        if index < start:
            continue
        # Seed 0 and the callable's name: a new callable shifts no other's
        # draws, and a walk started part way makes the same calls.
        rng.seed(f"0/{name}")
        if PROFILE:
            print(f"TARGET {index} {name}", flush=True)
        for trial in range(TRIALS):
            ts, bad = tensors(), bad_values()
            pool = ts + bad
            if isinstance(method, tuple):  # an assignment
                self = rng.choice(ts)

                target = setter(self, method[1])
                shown = f"{describe(self)}.{method[1]} = "
            elif method is not None:
                self = (ditto.Generator() if name.startswith("Generator.")
                        else rng.choice(ts))
                target = getattr(self, method)
                shown = f"{describe(self)}.{method}"
            else:
                target = fn
                shown = name
            typed = typed_call(target, ts, pool) if trial % 2 else None
            if typed is not None:
                args, kwargs = typed
            else:
                n_args = rng.randint(0, 4)
                args = [rng.choice(ts) if rng.random() < 0.4 else
                        rng.choice(pool) for _ in range(n_args)]
                kwargs = {}
                if rng.random() < 0.3:
                    kwargs[rng.choice(keywords)] = rng.choice(pool)
            if name in WORK_BOUND:
                def cap(v):
                    ok = isinstance(v, int) and not isinstance(v, bool)
                    return min(v, WORK_CAP) if ok else v
                args = [cap(v) for v in args]
                kwargs = {k: cap(v) for k, v in kwargs.items()}
            kw = ", ".join(f"{k}={describe(v)}" for k, v in kwargs.items())
            sep = ", " if args and kw else ""
            print(f"CALL {shown}({', '.join(map(describe, args))}{sep}{kw})",
                  flush=True)
            calls += 1
            if PROFILE:
                t0 = time.perf_counter()
            try:
                target(*args, **kwargs)
                outcomes["returned"] = outcomes.get("returned", 0) + 1
            except Exception as e:
                k = type(e).__name__
                outcomes[k] = outcomes.get(k, 0) + 1
            except BaseException as e:  # SystemExit, KeyboardInterrupt, ...
                unexpected.append(f"{shown}: {type(e).__name__}: {e}")
            if PROFILE:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
            # Undo what a call may have switched for the process.
            if ditto.get_num_threads() != n_threads:
                ditto.set_num_threads(n_threads)
            ditto.use_deterministic_algorithms(False)
            ditto.set_deterministic_debug_mode(0)
            ditto._C._set_grad_enabled(True)
    # Threads (issue 61): functions called from two threads at once, on
    # tensors both threads read and on each thread's own, with fresh
    # sequences among the arguments. Not the calls that switch process-wide
    # settings, nor in-place ones on the shared tensors.
    import threading
    print("THREADS", flush=True)
    switches = ("set_", "manual_seed", "seed", "use_deterministic",
                "init_process_group", "destroy_process_group")
    funcs = [(n, f) for n, f, m in targets
             if m is None and not n.endswith("_") and
             not any(w in n for w in switches)]
    shared = tensors()
    lock = threading.Lock()

    def worker(seed):
        r = random.Random(seed)
        for _ in range(THREAD_CALLS):
            name, fn = r.choice(funcs)
            with lock:
                own = tensors() + fresh_sequences()
            args = [r.choice(shared + own) for _ in range(r.randint(0, 3))]
            try:
                fn(*args)
            except Exception:
                pass
            except BaseException as e:
                unexpected.append(f"thread {seed}: {name}: "
                                  f"{type(e).__name__}: {e}")
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if PROFILE:
        for n, t in sorted(spent.items(), key=lambda x: -x[1])[:25]:
            print(f"PROFILE {t:8.3f} s {n}", flush=True)
    for u in unexpected:
        print("UNEXPECTED " + u, flush=True)
    print(f"DONE {calls} calls over {len(targets)} callables: "
          f"{sorted(outcomes.items())}", flush=True)
    sys.exit(1 if unexpected else 0)


def _walk(tmp_path, **env_extra):
    """Runs the child: (problem or None, the last call attempted)."""
    import ditto

    env = dict(os.environ, **env_extra)
    here = os.path.dirname(os.path.dirname(os.path.abspath(ditto.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    # Files a call writes (ditto.save("abc")) land in tmp_path.
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__)], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
        hung = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        hung = True
    lines = out.splitlines()
    last = next((ln[5:] for ln in reversed(lines) if ln.startswith("CALL ")),
                "(none)")
    unexpected = [ln for ln in lines if ln.startswith("UNEXPECTED ")]
    if hung:
        return f"the walk hung for {TIMEOUT_S} s at: {last}", last
    if proc.returncode < 0:
        return (f"the interpreter died (signal {-proc.returncode}) at: "
                f"{last}\n{err[-3000:]}"), last
    if unexpected:
        return "\n".join(unexpected), last
    if proc.returncode != 0 or not lines or not lines[-1].startswith("DONE"):
        return (f"the walk stopped (exit {proc.returncode}) at: {last}\n"
                f"{err[-3000:]}"), last
    return None, last


@pytest.mark.hostile
def test_bad_arguments_never_crash_the_interpreter(tmp_path):
    problem, _ = _walk(tmp_path)
    assert problem is None, problem
    # A path with a NUL byte ("victim\x00.bak") was refused, never cut at
    # the NUL into "victim".
    assert not (tmp_path / "victim").exists()


def test_a_crash_is_reported_naming_the_last_call(tmp_path):
    """The harness itself: a planted segfault fails the walk by name."""
    problem, last = _walk(tmp_path, DITTO_FUZZ_PLANT="1")
    assert problem is not None and "died (signal" in problem, problem
    assert last.startswith("planted.segfault(")


if __name__ == "__main__":
    _child()
