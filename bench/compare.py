#!/usr/bin/env python3
"""ditto against PyTorch, side by side in one run (docs/design.md section 8).

Runs the Google Benchmark program ditto_bench and times the same ops in
PyTorch with the same sizes, thread counts and input values, then prints a
markdown table of times, ratios (ditto / PyTorch) and bandwidths.

The two sides run case by case: each round times every case once on each
side, the two sides of a case back to back (ditto first in odd rounds,
PyTorch first in even ones), and the median (or min) over the rounds is
reported, so a slow spell on a shared machine falls on both sides of the
cases it hits. Each ditto case runs alone in its own ditto_bench process.

PyTorch runs in one subprocess of --python (default /usr/bin/python3, which
has Debian's python3-torch) that stays up for the whole run, with
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment. This
script itself needs no torch.

To add a row: add a case to bench/bench_elementwise.cpp (or another program
named with --ditto-bench) registered as "<name>" with args n and threads,
and an OpSpec with the same name to OPS below.
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

DEFAULT_SIZES = (1 << 20, 1 << 24)
DEFAULT_THREADS = (1, 2)


@dataclass(frozen=True)
class OpSpec:
    name: str  # the ditto benchmark name, "<name>/n:<n>/threads:<t>"
    torch_stmt: str  # timed in PyTorch with inputs a (and b)
    num_inputs: int  # 1 or 2 float32 inputs of n elements
    arrays_moved: int  # arrays of n elements read plus written, for GB/s
    sizes: tuple = DEFAULT_SIZES
    threads: tuple = DEFAULT_THREADS
    element_size: int = 4  # float32
    setup: str = ""  # Python run before timing, with torch and n defined
    fixed_bytes: int = 0  # bytes per call when they do not scale with n
    flops: str = ""  # a Python expression in n: the row shows GFLOP/s
    # For flops rows of fused multiply-adds: the dtype whose FMA peak the
    # row's GFLOP/s are a fraction of ("float32", "float64"; see fma_peak).
    peak_dtype: str = ""



def _accumulate_specs(op, stmt, extra_setup=""):
    """The deterministic ("_det") and fast ("_fast") rows of an accumulating
    op: 1M x 64 float32 source rows into n rows, 2 threads. PyTorch runs
    the same statement for both (ditto's side picks the variant)."""
    setup = ("g = torch.Generator().manual_seed(1); "
             "src = torch.randn(1 << 20, 64, generator=g); "
             "idx = torch.randint(0, n, (1 << 20,), generator=g)")
    if extra_setup:
        setup += "; " + extra_setup
    return [OpSpec(op + variant, stmt, num_inputs=0, arrays_moved=1,
                   sizes=(100000, 100), threads=(2,),
                   fixed_bytes=64 * 4 * (1 << 20), setup=setup)
            for variant in ("_det", "_fast")]


def _conv_spec(name, cin, cout, direction, det=True):
    """conv2d on the Fashion-MNIST CNN shapes (batch 64, 3x3, padding 1);
    n is the input's height and width. PyTorch (oneDNN) with
    use_deterministic_algorithms on, as ditto's deterministic rows."""
    stmt = {
        "fwd": "F.conv2d(x, w, padding=1)",
        "bwd_input": "torch.ops.aten.convolution_backward(go, x, w, None, "
                     "[1, 1], [1, 1], [1, 1], False, [0, 0], 1, "
                     "[True, False, False])[0]",
        "bwd_weight": "torch.ops.aten.convolution_backward(go, x, w, None, "
                      "[1, 1], [1, 1], [1, 1], False, [0, 0], 1, "
                      "[False, True, False])[1]",
    }[direction]
    setup = ("import torch.nn.functional as F; "
             f"torch.use_deterministic_algorithms({det}); "
             f"x = torch.randn(64, {cin}, n, n); "
             f"w = torch.randn({cout}, {cin}, 3, 3); "
             f"go = torch.randn(64, {cout}, n, n)")
    return OpSpec(name, stmt, num_inputs=0, arrays_moved=1,
                  sizes=(28 if cin == 1 else 14,), threads=(2,),
                  setup=setup,
                  flops=f"2 * 64 * {cin} * {cout} * 9 * n * n")

def _sparse_bmm_specs():
    """The reproducibility note's sparse-dense bmm: batch 8 of n x n
    sparse matrices at 1% density (coalesced) times dense n x 256, forward
    and forward + the dense operand's gradient; ditto's deterministic
    ("_det") and fast ("_fast") variants against PyTorch's one CPU kernel."""
    setup = ("g = torch.Generator().manual_seed(1); nnz = 8 * n * n // 100; "
             "idx = torch.stack([torch.randint(0, 8, (nnz,), generator=g), "
             "torch.randint(0, n, (nnz,), generator=g), "
             "torch.randint(0, n, (nnz,), generator=g)]); "
             "s = torch.sparse_coo_tensor(idx, torch.randn(nnz, generator=g),"
             " (8, n, n)).coalesce(); "
             "d = torch.randn(8, n, 256, generator=g, requires_grad=True); "
             "go = torch.randn(8, n, 256, generator=g)")
    fwd = "torch.bmm(s, d)"
    fwd_bwd = "torch.bmm(s, d).backward(go); d.grad = None"
    return [OpSpec(name + variant, stmt, num_inputs=0, arrays_moved=1,
                   sizes=(1024,), threads=(1, 2), setup=setup,
                   flops="2 * 8 * n * n // 100 * 256 * "
                         + ("2" if "bwd" in name else "1"))
            for name, stmt in (("sparse_bmm", fwd),
                               ("sparse_bmm_fwd_bwd", fwd_bwd))
            for variant in ("_det", "_fast")]


def _conv3d_spec(name, direction):
    """conv3d on a 3-d U-Net block: batch 2, 32 -> 32 channels, n^3,
    3x3x3 with padding 1; PyTorch (oneDNN) deterministic as ditto."""
    stmt = {
        "fwd": "F.conv3d(x, w, padding=1)",
        "bwd_input": "torch.ops.aten.convolution_backward(go, x, w, None, "
                     "[1, 1, 1], [1, 1, 1], [1, 1, 1], False, [0, 0, 0], 1, "
                     "[True, False, False])[0]",
        "bwd_weight": "torch.ops.aten.convolution_backward(go, x, w, None, "
                      "[1, 1, 1], [1, 1, 1], [1, 1, 1], False, [0, 0, 0], 1, "
                      "[False, True, False])[1]",
    }[direction]
    setup = ("import torch.nn.functional as F; "
             "torch.use_deterministic_algorithms(True); "
             "x = torch.randn(2, 32, n, n, n); "
             "w = torch.randn(32, 32, 3, 3, 3); "
             "go = torch.randn(2, 32, n, n, n)")
    return OpSpec(name, stmt, num_inputs=0, arrays_moved=1,
                  sizes=(32,), threads=(1, 2), setup=setup,
                  flops="2 * 2 * 32 * 32 * 27 * n ** 3")


OPS = [
    OpSpec("add", "torch.add(a, b)", num_inputs=2, arrays_moved=3),
    OpSpec("exp", "torch.exp(a)", num_inputs=1, arrays_moved=2),
    OpSpec("sigmoid", "torch.sigmoid(a)", num_inputs=1, arrays_moved=2),
    OpSpec("sum", "torch.sum(a)", num_inputs=1, arrays_moved=1),
    # The slow spots real programs hit (issue of 2026-12-03): erf and the
    # exact GELU, pow with the exponents torch special-cases (pow_half of
    # negative inputs is NaN on both sides).
    OpSpec("erf", "torch.erf(a)", num_inputs=1, arrays_moved=2),
    OpSpec("gelu", "torch.nn.functional.gelu(a)", num_inputs=1,
           arrays_moved=2),
    OpSpec("pow2", "torch.pow(a, 2)", num_inputs=1, arrays_moved=2),
    OpSpec("pow3", "torch.pow(a, 3)", num_inputs=1, arrays_moved=2),
    OpSpec("pow_half", "torch.pow(a, 0.5)", num_inputs=1, arrays_moved=2),
    # The mask paths (attention masks, filtering), the comparison timed on
    # both sides: the values' signs follow no pattern a branch predictor
    # learns (ditto's where, masked_select and nonzero branched on the mask
    # until 2026-12-06).
    OpSpec("where_mask", "torch.where(a > 0, a, b)", num_inputs=2,
           arrays_moved=3),
    OpSpec("masked_select", "torch.masked_select(a, a > 0)", num_inputs=1,
           arrays_moved=2),
    OpSpec("nonzero", "torch.nonzero(a > 0)", num_inputs=1, arrays_moved=2),
    # Random ops (10M float32, randperm 1M int64). ditto's PyTorch-compatible
    # mt19937 path is serial, like PyTorch's; "randn_philox" is ditto's
    # counter-based parallel path, timed against the same torch.randn.
    OpSpec("rand", "torch.rand(n)", num_inputs=0, arrays_moved=1,
           sizes=(10_000_000,)),
    OpSpec("randn", "torch.randn(n)", num_inputs=0, arrays_moved=1,
           sizes=(10_000_000,)),
    OpSpec("bernoulli", "a.bernoulli_(0.5)", num_inputs=1, arrays_moved=1,
           sizes=(10_000_000,)),
    OpSpec("randperm", "torch.randperm(n)", num_inputs=0, arrays_moved=1,
           sizes=(1 << 20,), threads=(1,), element_size=8),
    OpSpec("rand_philox", "torch.rand(n)", num_inputs=0, arrays_moved=1,
           sizes=(10_000_000,)),
    OpSpec("randn_philox", "torch.randn(n)", num_inputs=0, arrays_moved=1,
           sizes=(10_000_000,)),
    # index_add_ of 1M x 64 float32 rows into n rows (100000: low
    # contention, 100: high), deterministic and fast variants, 2 threads.
    # "n" is the number of destination rows; GB/s counts the source read.
    *_accumulate_specs("index_add", "torch.zeros(n, 64).index_add_(0, idx, src)"),
    # scatter_add_ of the same values, the index repeated along the 64
    # columns (a contiguous [1M, 64] int64 tensor on both sides).
    *_accumulate_specs("scatter_add",
                       "torch.zeros(n, 64).scatter_add_(0, idx2, src)",
                       "idx2 = idx[:, None].expand(-1, 64).contiguous()"),
    # The cost of filling uninitialized memory in deterministic mode:
    # ditto's empty(n) with the mode off, then on (NaN fill), against
    # torch.empty(n) and the fill PyTorch 2.1+ does in that mode.
    OpSpec("empty", "torch.empty(n)", num_inputs=0, arrays_moved=1),
    OpSpec("empty_filled", "torch.empty(n).fill_(float('nan'))",
           num_inputs=0, arrays_moved=1),
    # One epoch of Fashion-MNIST train through a DataLoader: batch 64,
    # shuffled, RandomCrop(28, padding=4) and Normalize, 2 workers (worker
    # processes in PyTorch, torchvision's transforms on tensors: the fast
    # path, no PIL). "n" is the number of images; GB/s counts the float32
    # images delivered.
    OpSpec("fashion_mnist_epoch", "for batch in loader: pass",
           num_inputs=0, arrays_moved=1, sizes=(60000,), threads=(2,),
           fixed_bytes=60000 * 28 * 28 * 4,
           setup="\n".join([
               "import gzip",
               "import torchvision.transforms as T",
               "def _idx(p):",
               "    b = gzip.open(p).read()",
               "    nd = b[3]",
               "    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], 'big')"
               " for i in range(nd)]",
               "    return torch.frombuffer(bytearray(b[4 + 4 * nd:]),"
               " dtype=torch.uint8).reshape(dims)",
               "R = '/usr/share/datasets/fashion-mnist/'",
               "imgs = _idx(R + 'train-images-idx3-ubyte.gz')",
               "labs = _idx(R + 'train-labels-idx1-ubyte.gz').long()",
               "class FMnist(torch.utils.data.Dataset):",
               "    def __init__(s, tf): s.tf = tf",
               "    def __len__(s): return imgs.shape[0]",
               "    def __getitem__(s, i):",
               "        x = imgs[i].float().div(255).unsqueeze(0)",
               "        return s.tf(x), labs[i]",
               "tf = T.Compose([T.RandomCrop(28, padding=4),"
               " T.Normalize((0.2860,), (0.3530,))])",
               "loader = torch.utils.data.DataLoader(FMnist(tf),"
               " batch_size=64, shuffle=True, num_workers=2)",
           ])),
    # float32 mm of n x n matrices against OpenBLAS (OPENBLAS_CORETYPE and
    # OPENBLAS_L2_SIZE unset for the PyTorch side: its AVX-512 kernels).
    OpSpec("mm", "torch.mm(A, B)", num_inputs=0, arrays_moved=1,
           sizes=(512, 1024, 2048), threads=(1, 2),
           setup="A = torch.randn(n, n); B = torch.randn(n, n)",
           flops="2 * n ** 3", peak_dtype="float32"),
    OpSpec("mm_f64", "torch.mm(A, B)", num_inputs=0, arrays_moved=1,
           sizes=(512, 1024, 2048), threads=(1, 2), element_size=8,
           setup="A = torch.randn(n, n, dtype=torch.float64); "
                 "B = torch.randn(n, n, dtype=torch.float64)",
           flops="2 * n ** 3", peak_dtype="float64"),
    # nn.Linear(768, 768) forward and backward on [n / 256, 256, 768].
    OpSpec("linear3d_bwd",
           "lin(x).backward(gy); x.grad = None; lin.weight.grad = None; "
           "lin.bias.grad = None",
           num_inputs=0, arrays_moved=1, sizes=(2048,), threads=(1, 2),
           setup="lin = torch.nn.Linear(768, 768); "
                 "x = torch.randn(n // 256, 256, 768, requires_grad=True); "
                 "gy = torch.randn(n // 256, 256, 768)",
           flops="3 * 2 * n * 768 * 768"),
    _conv_spec("conv_fwd_c1", 1, 32, "fwd"),
    _conv_spec("conv_fwd_c32", 32, 64, "fwd"),
    _conv_spec("conv_fwd_bench_c32", 32, 64, "fwd"),
    _conv_spec("conv_bwd_input_c32", 32, 64, "bwd_input"),
    _conv_spec("conv_bwd_weight_c1", 1, 32, "bwd_weight"),
    _conv_spec("conv_bwd_weight_c32", 32, 64, "bwd_weight"),
    _conv_spec("conv_bwd_weight_fast_c32", 32, 64, "bwd_weight", det=False),
    _conv3d_spec("conv3d_fwd", "fwd"),
    _conv3d_spec("conv3d_bwd_input", "bwd_input"),
    _conv3d_spec("conv3d_bwd_weight", "bwd_weight"),
] + _sparse_bmm_specs()

# Removed from the environment of the PyTorch subprocess.
UNSET_FOR_TORCH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def cases(ops):
    """(spec, n, threads) for every row of the table, in table order."""
    return [(op, n, t) for op in ops for n in op.sizes for t in op.threads]


def case_key(name, n, threads):
    return f"{name}/n:{n}/threads:{threads}"


# ---- machine


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info():
    info = {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
    }
    try:
        info["load_average"] = os.getloadavg()
    except OSError:
        info["load_average"] = None
    return info


# ---- ditto side


DITTO_WARMUP_SECONDS = 0.05
# Samples per ditto case, their median reported. The PyTorch side reports
# the median of its blocked_autorange blocks, so ditto's is a median too:
# Google Benchmark's plain result is the mean over all iterations, which one
# slow call on a shared machine pulls up (2048^3 mm is about 4 calls in
# 0.3 s on each side). Each repetition runs min_time / DITTO_REPETITIONS.
DITTO_REPETITIONS = 5
# The PyTorch worker's pause after each case (see torch_worker).
SETTLE_SECONDS = 0.3


def run_ditto(path, key, min_time):
    """Seconds per call of one case, and the benchmark context, from one
    ditto_bench process that runs that case alone."""
    cmd = [
        path,
        "--benchmark_format=json",
        f"--benchmark_min_time={min_time / DITTO_REPETITIONS}",
        f"--benchmark_repetitions={DITTO_REPETITIONS}",
        "--benchmark_report_aggregates_only=true",
        # A fresh process: the first calls fault in the output's pages
        # (the PyTorch side warms up too, in torch_worker).
        f"--benchmark_min_warmup_time={DITTO_WARMUP_SECONDS}",
        f"--benchmark_filter=^{re.escape(key)}(/real_time)?$",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(
            f"error: {path} failed with exit code {proc.returncode}:\n"
            f"{proc.stderr}"
        )
    report = json.loads(proc.stdout)
    unit_seconds = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in report["benchmarks"]:
        if (b.get("run_type") != "aggregate"
                or b.get("aggregate_name") != "median"):
            continue
        if b["run_name"].removesuffix("/real_time") == key:
            return b["real_time"] * unit_seconds[b["time_unit"]], report["context"]
    sys.exit(f"error: ditto_bench has no case {key}")


# ---- PyTorch side


# --openblas-coretype: forced for the PyTorch side (OpenBLAS's detection can
# fail under a hypervisor: on the 2026-11 machine it picks Prescott's SSE3
# kernels, about 70 GFLOP/s, where SkylakeX's reach about 250).
OPENBLAS_CORETYPE_FOR_TORCH = None
# --cpu-capability: DITTO_CPU_CAPABILITY for ditto, ATEN_CPU_CAPABILITY
# for PyTorch (e.g. both on AVX2 on an AVX-512 machine), and for oneDNN,
# which picks its ISA on its own and serves PyTorch's convolutions, the
# matching ONEDNN_MAX_CPU_ISA (without it, PyTorch's conv rows ran
# jit:avx512_core against ditto's AVX2).
CPU_CAPABILITY = None
ONEDNN_ISA = {"avx2": "AVX2", "avx512": "AVX512_CORE"}
TORCH_ISA_VARS = ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")


def torch_env():
    env = dict(os.environ)
    for var in UNSET_FOR_TORCH:
        env.pop(var, None)
    if OPENBLAS_CORETYPE_FOR_TORCH:
        env["OPENBLAS_CORETYPE"] = OPENBLAS_CORETYPE_FOR_TORCH
    if CPU_CAPABILITY:
        env["ATEN_CPU_CAPABILITY"] = CPU_CAPABILITY
        env["ONEDNN_MAX_CPU_ISA"] = ONEDNN_ISA[CPU_CAPABILITY]
    return env


def check_torch(python):
    """Version and config of torch under `python`; exits if not importable."""
    code = (
        "import json, torch; "
        "print(json.dumps({'version': torch.__version__, "
        "'backend': torch.__config__.parallel_info().split('backend:')[-1]"
        ".strip()}))"
    )
    try:
        proc = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, env=torch_env()
        )
    except OSError as e:
        sys.exit(f"error: cannot run {python} for the PyTorch side: {e}")
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
        sys.exit(
            f"error: torch is not importable with {python}: {last[0]}\n"
            "Install Debian's python3-torch (apt-get install python3-torch) "
            "or name an interpreter that has torch with --python."
        )
    return json.loads(proc.stdout)


class TorchWorker:
    """The PyTorch side: one subprocess of --python that stays up for a
    round and times one case per request (a JSON line in, a JSON line out),
    so the two sides of a case run back to back. A fresh one each round:
    how fast a process runs a product depends on where its memory landed
    (512^3 on one thread, in fresh processes of either library, came out
    near 2.6 or near 2.85 ms, about half and half), so each side draws a
    new process every round; with one worker for the whole run, PyTorch's
    one draw was set against the median of ditto's seven."""

    def __init__(self, python):
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "--torch-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            env=torch_env(),
        )
        # Back once torch is imported: importing it takes a core for a
        # second or two, and a ditto case started meanwhile shared the
        # machine with it.
        if not self.proc.stdout.readline():
            self.fail("starting the PyTorch worker")

    def fail(self, what):
        self.proc.wait()
        self.stderr.seek(0)
        sys.exit(f"error: {what} failed:\n{self.stderr.read()}")

    def time(self, op, n, threads, min_time):
        request = {
            "stmt": op.torch_stmt,
            "num_inputs": op.num_inputs,
            "setup": op.setup,
            "n": n,
            "threads": threads,
            "min_time": min_time,
        }
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self.fail(f"the PyTorch timing of {case_key(op.name, n, threads)}")
        return json.loads(line)["seconds"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.stderr.close()


def torch_worker():
    """Runs under --python: times the case of each line of stdin and prints
    its seconds per call as a line of stdout."""
    import torch
    import torch.utils.benchmark as tb

    def make_input(n, salt):
        # The values bench_elementwise.cpp makes: in [-4, 4), from a
        # multiplicative hash of the index.
        i = torch.arange(n, dtype=torch.int64)
        h = (i * 2654435761 + salt * 0x9E3779B9) % (1 << 32)
        return (h.double() / 4294967296.0 * 8.0 - 4.0).float()

    # Debian's PyTorch runs its products on OpenBLAS's own pthreads, which
    # torch.set_num_threads does not bound (the 1-thread mm rows ran on two
    # cores): the library is found among this process's mappings and its
    # openblas_set_num_threads called as well.
    openblas_threads = None
    try:
        import ctypes
        with open("/proc/self/maps") as f:
            paths = {l.split()[-1] for l in f if "libopenblas" in l}
        for path in paths:
            openblas_threads = ctypes.CDLL(path).openblas_set_num_threads
            break
    except (OSError, AttributeError):
        openblas_threads = None

    # Ready: torch is imported (a second or two of one core's time, which
    # must not overlap the ditto case that comes next).
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        case = json.loads(line)
        n, threads = case["n"], case["threads"]
        torch.set_num_threads(threads)
        if openblas_threads is not None:
            openblas_threads(threads)
        env = {"torch": torch, "n": n, "a": make_input(n, 1)}
        if case["num_inputs"] > 1:
            env["b"] = make_input(n, 2)
        if case.get("setup"):
            exec(case["setup"], env)
        timer = tb.Timer(stmt=case["stmt"], globals=env, num_threads=threads)
        # Warm-up: about 16M elements' worth, or one call for the ops with a
        # setup (their work does not scale with n).
        warm = 1 if case.get("setup") else max(1, (1 << 24) // n)
        timer.timeit(number=warm)
        m = timer.blocked_autorange(min_run_time=case["min_time"])
        # Idle until PyTorch's pool threads have stopped spinning, before the
        # other side runs: OpenBLAS's keep polling for new work for 2^28 TSC
        # ticks (about 0.1 s here) after a call, and took a core from the
        # ditto case that came next (conv_fwd_c1 after mm 2K: 250 us alone,
        # 468 us right after it).
        time.sleep(SETTLE_SECONDS)
        print(json.dumps({"seconds": m.median}), flush=True)


# ---- report


def format_time(seconds):
    us = seconds * 1e6
    if us < 1000:
        return f"{us:.1f} µs"
    return f"{us / 1000:.2f} ms"


def format_size(n):
    if n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)


# ---- the FMA peak


def cpu_vendor_family():
    vendor, family = "", -1
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "vendor_id" and not vendor:
                    vendor = value
                elif key == "cpu family" and family < 0:
                    family = int(value)
    except (OSError, ValueError):
        pass
    return vendor, family


def fma_bits_per_cycle(capability):
    """Bits of fused multiply-add results one core completes per cycle: two
    FMA pipes of the capability's width, except where a core's pipes are
    narrower (AMD Zen 2 to Zen 4, family 0x17 and 0x19: two 256-bit pipes,
    AVX-512 split over both; Zen 5, family 0x1A: two 512-bit pipes). Intel
    cores are taken as two pipes of the width, an upper bound (client
    AVX-512 cores have one 512-bit pipe)."""
    width = {"avx512": 512, "avx2": 256, "neon": 128}.get(capability, 0)
    vendor, family = cpu_vendor_family()
    if vendor == "AuthenticAMD" and family in (0x17, 0x19):
        width = min(width, 256)
    return 2 * width


def fma_peak(capability, dtype, threads, ghz):
    """GFLOP/s: threads x FMA lanes per cycle x 2 flops x the clock."""
    lanes = fma_bits_per_cycle(capability) // (64 if dtype == "float64" else 32)
    return threads * lanes * 2 * ghz


def measure_clock(path, threads):
    """The clock in GHz with `threads` cores busy (ditto_bench cpu_clock:
    a chain of dependent additions, one per cycle)."""
    key = f"cpu_clock/threads:{threads}/iterations:5"
    proc = subprocess.run(
        [path, "--benchmark_format=json",
         f"--benchmark_filter=^{re.escape(key)}(/real_time)?$"],
        capture_output=True, text=True)
    if proc.returncode != 0:
        return 0.0
    for b in json.loads(proc.stdout)["benchmarks"]:
        return float(b.get("GHz", 0.0))
    return 0.0


def gbps(op, n, seconds):
    if op.flops:
        return eval(op.flops, {"n": n}) / seconds / 1e9
    if op.fixed_bytes:
        return op.fixed_bytes / seconds / 1e9
    return op.arrays_moved * n * op.element_size / seconds / 1e9


def build_table(ops, ditto_runs, torch_runs, combine, peaks=None):
    """The markdown rows: each side's times combined over the rounds, their
    ratio, and the lowest and highest of the rounds' own ratios (the two
    sides of a round ran back to back)."""
    lines = [
        "| op | size | threads | ditto | PyTorch | ratio (ditto/PyTorch) "
        "| rounds' ratios | ditto GB/s | PyTorch GB/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for op, n, t in cases(ops):
        key = case_key(op.name, n, t)
        d, p = combine(ditto_runs[key]), combine(torch_runs[key])
        ratios.append(d / p)
        paired = [x / y for x, y in zip(ditto_runs[key], torch_runs[key])]
        unit = " GFLOP/s" if op.flops else ""
        peak = (peaks or {}).get((op.peak_dtype, t), 0.0)

        def rate(seconds):
            r = gbps(op, n, seconds)
            text = f"{r:.1f}{unit}"
            if op.peak_dtype and peak > 0:
                text += f" ({100 * r / peak:.0f}% of peak)"
            return text

        lines.append(
            f"| {op.name} | {format_size(n)} | {t} | {format_time(d)} "
            f"| {format_time(p)} | {d / p:.2f} "
            f"| {min(paired):.2f}-{max(paired):.2f} "
            f"| {rate(d)} | {rate(p)} |"
        )
    return lines, statistics.geometric_mean(ratios)


def build_header(args, machine, context, torch_info):
    now = datetime.datetime.now().astimezone()
    load = machine["load_average"]
    load_text = ", ".join(f"{x:.2f}" for x in load) if load else "unknown"
    env = torch_env()
    return [
        f"Run {now:%Y-%m-%d %H:%M %Z} on {machine['cpu']}, "
        f"{machine['logical_cpus']} logical CPUs "
        f"({machine['usable_cpus']} usable); load average at start "
        f"{load_text}.",
        f"ditto {context.get('ditto_version', '?')}, CPU capability "
        f"{context.get('ditto_cpu_capability', '?')} (compiled: "
        f"{context.get('ditto_compiled_capabilities', '?')}); "
        f"PyTorch {torch_info['version']} ({args.python}, parallel backend "
        f"{torch_info['backend']}); its environment: "
        + (", ".join(f"{v}={env[v]}" for v in TORCH_ISA_VARS if v in env)
           or "no ISA overrides")
        + ".",
        f"Times are the {args.stat} of {args.rounds} rounds of at least "
        f"{args.min_time} s per case on each side, the two sides of a case "
        "back to back, each side's time in a round the median of its "
        f"samples ({DITTO_REPETITIONS} repetitions for ditto, "
        "blocked_autorange's blocks for PyTorch); float32 (float64 in rows "
        "named _f64), contiguous, out-of-place.",
    ]


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bench = os.path.join(
        os.path.dirname(here), "build-bench", "bench", "ditto_bench"
    )
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--ditto-bench",
        default=default_bench,
        help="the ditto_bench program (default: %(default)s)",
    )
    p.add_argument(
        "--python",
        default="/usr/bin/python3",
        help="interpreter with torch for the PyTorch side (default: %(default)s)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds; each times every case on both sides (default: %(default)s)",
    )
    p.add_argument(
        "--min-time",
        type=float,
        default=0.3,
        help="seconds each case runs per round on each side (default: %(default)s)",
    )
    p.add_argument(
        "--stat",
        choices=("median", "min"),
        default="median",
        help="how the rounds are combined (default: %(default)s)",
    )
    p.add_argument(
        "--ops",
        help="comma-separated op names to run (default: all: "
        + ",".join(op.name for op in OPS)
        + ")",
    )
    p.add_argument("--markdown-out", metavar="FILE", help="also write the table here")
    p.add_argument(
        "--openblas-coretype",
        metavar="CORE",
        help="set OPENBLAS_CORETYPE for the PyTorch side (default: unset, "
        "OpenBLAS detects the CPU)",
    )
    p.add_argument(
        "--cpu-capability",
        choices=("avx2", "avx512"),
        help="run ditto with DITTO_CPU_CAPABILITY and PyTorch with "
        "ATEN_CPU_CAPABILITY and ONEDNN_MAX_CPU_ISA set to this (AVX2 on an "
        "AVX-512 machine: avx2, with --openblas-coretype Haswell)",
    )
    p.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args()


def main():
    global OPENBLAS_CORETYPE_FOR_TORCH, CPU_CAPABILITY
    args = parse_args()
    OPENBLAS_CORETYPE_FOR_TORCH = args.openblas_coretype
    if args.cpu_capability:
        CPU_CAPABILITY = args.cpu_capability
        os.environ["DITTO_CPU_CAPABILITY"] = args.cpu_capability
    if args.torch_worker:
        torch_worker()
        return

    ops = OPS
    if args.ops:
        wanted = args.ops.split(",")
        unknown = set(wanted) - {op.name for op in OPS}
        if unknown:
            sys.exit(f"error: unknown ops {sorted(unknown)}")
        ops = [op for op in OPS if op.name in wanted]
    if not os.access(args.ditto_bench, os.X_OK):
        sys.exit(
            f"error: {args.ditto_bench} not found. Build it with\n"
            "  cmake -S . -B build-bench -DDITTO_BUILD_BENCH=ON "
            "-DDITTO_BUILD_TESTS=OFF && make -C build-bench ditto_bench\n"
            "or name it with --ditto-bench."
        )

    machine = machine_info()
    torch_info = check_torch(args.python)

    ditto_runs, torch_runs = {}, {}
    context = {}
    todo = cases(ops)
    peak_threads = sorted({t for op, n, t in todo if op.peak_dtype})
    clocks = {}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        worker = TorchWorker(args.python)
        for op, n, t in todo:
            key = case_key(op.name, n, t)
            # The two sides of a case back to back, the first side taking
            # turns between rounds, so a slow spell of the machine falls on
            # both (see "Pairing" in docs/benchmarks.md).
            for side in ("ditto", "torch") if r % 2 == 0 else ("torch", "ditto"):
                if side == "ditto":
                    s, context = run_ditto(args.ditto_bench, key, args.min_time)
                    ditto_runs.setdefault(key, []).append(s)
                else:
                    s = worker.time(op, n, t, args.min_time)
                    torch_runs.setdefault(key, []).append(s)
        worker.close()
        # The clock for the FMA peak, once a round with as many threads busy
        # as the rows use: on a shared VM it moved by 10% between runs.
        for t in peak_threads:
            clocks.setdefault(t, []).append(measure_clock(args.ditto_bench, t))

    combine = statistics.median if args.stat == "median" else min

    header = build_header(args, machine, context, torch_info)
    # The FMA peak of the rows that have one, from the median of the clocks
    # measured in the rounds with as many threads busy as the row uses.
    peaks = {}
    capability = context.get("ditto_cpu_capability", "")
    for t in peak_threads:
        measured = [g for g in clocks.get(t, []) if g > 0]
        ghz = statistics.median(measured) if measured else 0.0
        spread = (f", {min(measured):.2f}-{max(measured):.2f} over the rounds"
                  if len(measured) > 1 else "")
        bits = fma_bits_per_cycle(capability)
        if ghz > 0 and bits > 0:
            for dtype in ("float32", "float64"):
                peaks[(dtype, t)] = fma_peak(capability, dtype, t, ghz)
            header.append(
                f"FMA peak at {t} thread(s): {ghz:.2f} GHz (measured: a chain "
                f"of dependent additions, the median of the rounds{spread}) x "
                f"{bits} bits of FMA per cycle per "
                f"core ({capability}) x {t}: "
                f"{peaks[('float32', t)]:.0f} GFLOP/s float32, "
                f"{peaks[('float64', t)]:.0f} float64.")
    table, geomean = build_table(ops, ditto_runs, torch_runs, combine, peaks)
    summary = f"Geometric mean of the ratios: {geomean:.2f}."
    text = "\n".join(header) + "\n\n" + "\n".join(table) + "\n\n" + summary + "\n"
    print(text, end="")
    if args.markdown_out:
        write_report(args.markdown_out, text)


def write_report(path, text):
    """Writes text to path: a regular file (or a new one) is replaced whole,
    through a temporary file beside it; anything else (/dev/null, a pipe) is
    written to as it is, never renamed over."""
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "w") as f:
            f.write(text)
        return
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


if __name__ == "__main__":
    main()
