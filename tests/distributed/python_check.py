"""ditto.distributed from Python under mpirun (tests/distributed/
python_same_bits runs it with 1, 2 and 3 processes): the collectives bit for
bit against what each rank computes from every rank's seeded input,
DistributedDataParallel's broadcast and tree average (with no_sync), the
sampler's defaults, and an R6 training run with MicroBatchGradient whose
fingerprints (weights, BatchNorm's running statistics; printed by rank 0)
must not depend on the world size."""
import datetime
import sys

import ditto
import ditto.distributed as dist
from ditto import nn
from ditto.nn import functional as F
from ditto.utils.data import DistributedSampler

try:
    dist.init_process_group("mpi", timeout=-1)
    raise SystemExit("a negative timeout was accepted")
except ValueError:
    pass
dist.init_process_group("mpi", timeout=datetime.timedelta(minutes=5))
rank, world = dist.get_rank(), dist.get_world_size()
failures = []


def check(what, ok):
    if not ok:
        failures.append(what)


check("the timeout given is the collectives' timeout",
      dist._native().timeout() == 300.0)


def same(a, b):
    return (a.shape == b.shape and a.dtype == b.dtype
            and a.detach().contiguous().numpy().tobytes()
            == b.detach().contiguous().numpy().tobytes())


def input_of(r, shape):
    g = ditto.Generator().manual_seed(1000 + r)
    return ditto.randn(shape, generator=g)


def tree(values):
    """The micro-batch tree over values in index order: siblings [a, a+s)
    and [a+s, a+2s) (a a multiple of 2s) add left + right; what is left
    adds left to right."""
    stack = []
    for j, v in enumerate(values):
        stack.append((j, 1, v))
        while len(stack) >= 2:
            (a, s, x), (b, t, y) = stack[-2], stack[-1]
            if not (s == t and a % (2 * s) == 0 and b == a + s):
                break
            stack[-2:] = [(a, 2 * s, x + y)]
    total = stack[0][2]
    for _, _, v in stack[1:]:
        total = total + v
    return total


# ---- collectives
for shape in [(0,), (1,), (7,), (5, 3), (1001,)]:
    t = input_of(rank, shape)
    dist.all_reduce(t)
    want = input_of(0, shape)
    for r in range(1, world):
        want = want + input_of(r, shape)
    check(f"all_reduce {shape}", same(t, want))
t = input_of(rank, (9,))
dist.all_reduce(t, op=dist.ReduceOp.AVG)
check("all_reduce AVG", same(t, sum((input_of(r, (9,)) for r in range(1, world)),
                                    input_of(0, (9,))) / world))
t = input_of(rank, (4, 2))
dist.broadcast(t, src=world - 1)
check("broadcast", same(t, input_of(world - 1, (4, 2))))
out = [ditto.zeros(3) for _ in range(world)]
dist.all_gather(out, input_of(rank, (3,)))
check("all_gather", all(same(out[r], input_of(r, (3,))) for r in range(world)))
out = ditto.zeros(6)
dist.reduce_scatter(out, [input_of(rank * 16 + q, (6,)) for q in range(world)])
want = input_of(rank, (6,))
for r in range(1, world):
    want = want + input_of(r * 16 + rank, (6,))
check("reduce_scatter", same(out, want))
if world > 1:
    try:
        dist.all_reduce(ditto.zeros(4 if rank == 1 else 3))
        check("mismatched shapes raise", False)
    except ValueError as e:
        check("the error names rank 1's shape", "rank 1: all_reduce sum float32 {4}" in str(e))
try:
    dist.all_gather([ditto.zeros(1)] * (world + 1), ditto.zeros(1))
    check("all_gather with a wrong list raises", False)
except ValueError:
    pass

# ---- the sampler's defaults come from the process group
s = DistributedSampler(list(range(10)), shuffle=False)
padded = list(range(10)) * 2
padded = padded[:-(-10 // world) * world]  # torch pads by repetition
check("sampler defaults", (s.num_replicas, s.rank) == (world, rank)
      and list(s) == padded[rank::world])

# ---- DistributedDataParallel: broadcast from rank 0, tree average
ditto.manual_seed(40 + rank)
model = nn.Linear(5, 3)
ddp = nn.parallel.DistributedDataParallel(model)
ditto.manual_seed(40)
reference = nn.Linear(5, 3)
check("ddp broadcast", same(model.weight, reference.weight)
      and same(model.bias, reference.bias))


# Buffers come from rank 0 before every forward (broadcast_buffers=True).
bn = nn.BatchNorm1d(3)
bn_ddp = nn.parallel.DistributedDataParallel(bn)
bn.eval()
bn.running_mean.fill_(float(rank))
bn_ddp(ditto.ones(2, 3))
check("ddp buffers broadcast before a forward",
      bn.running_mean.tolist() == [0.0, 0.0, 0.0])


def batch(step, r):
    return input_of(500 + step * 64 + r, (4, 5))


for step in range(3):
    if step == 1:
        with ddp.no_sync():
            (ddp(batch(step + 100, rank)) ** 2).sum().backward()
    (ddp(batch(step, rank)) ** 2).sum().backward()
    grads = []
    for r in range(world):
        reference.zero_grad(set_to_none=True)
        if step == 1:
            (reference(batch(step + 100, r)) ** 2).sum().backward()
        (reference(batch(step, r)) ** 2).sum().backward()
        grads.append([p.grad for p in reference.parameters()])
    for i, p in enumerate(model.parameters()):
        want = tree([g[i] for g in grads]) / world
        check(f"ddp gradient step {step} parameter {i}", same(p.grad, want))
    model.zero_grad(set_to_none=True)

# ---- R6: an MLP with BatchNorm and dropout, 6 micro-batches a step
ditto.manual_seed(7)
data_g = ditto.Generator().manual_seed(7)
x = ditto.randn(96, 10, generator=data_g)
y = ditto.randint(0, 3, (96,), generator=data_g)
net = nn.Sequential(nn.Linear(10, 16), nn.BatchNorm1d(16), nn.ReLU(),
                    nn.Dropout(0.2), nn.Linear(16, 3))
opt = ditto.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
grad = dist.MicroBatchGradient(net.parameters(), 6)
for step in range(4):
    opt.zero_grad()
    for j in grad.micro_batches():
        ditto.manual_seed(ditto.random.derive_seed(7, f"dropout:{step}:{j}"))
        start = (step * 6 + j) * 4 % 96
        F.cross_entropy(net(x[start:start + 4]), y[start:start + 4]).backward()
        grad.add(j)
    grad.reduce()
    opt.step()

if failures:
    print(f"rank {rank} of {world}: FAILED: {', '.join(failures)}",
          file=sys.stderr)
    sys.exit(1)
if rank == 0:
    running = [t for name, t in net.named_buffers() if "running_" in name]
    print("fingerprint", ditto.utils.weights_fingerprint(net),
          ditto._C._weights_fingerprint(running))
