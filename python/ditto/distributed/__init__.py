"""ditto.distributed (torch.distributed's names) on Open MPI: processes
started by `mpirun`, deterministic collectives, and the gradient reduction
whose bits do not depend on the number of processes (docs/distributed.md).

    import ditto.distributed as dist
    dist.init_process_group("mpi")
    t = ditto.ones(4)
    dist.all_reduce(t)              # the sum over the ranks, in rank order

Only the "mpi" backend exists: the ranks are mpirun's. The collectives are
synchronous (async_op=True is refused) and act on the whole world (group
must be None). A rank whose tensor's dtype or shape differs from the
others' raises ValueError on every rank."""

try:
    from .. import _distributed as _D
except ImportError as _e:  # built without Open MPI
    _D = None
    _IMPORT_ERROR = _e

__all__ = ["ReduceOp", "MicroBatchGradient", "all_gather", "all_reduce",
           "barrier", "broadcast", "destroy_process_group", "get_backend",
           "get_rank", "get_world_size", "init_process_group",
           "is_available", "is_initialized", "is_mpi_available",
           "reduce_scatter"]


def is_available():
    """True when ditto was built with Open MPI (ditto._distributed)."""
    return _D is not None


def is_mpi_available():
    return _D is not None


def _native():
    if _D is None:
        raise RuntimeError(
            "ditto.distributed: ditto was built without Open MPI "
            f"({_IMPORT_ERROR}); run scripts/setup and rebuild")
    return _D


class ReduceOp:
    """The reductions of all_reduce and reduce_scatter (torch's names)."""
    SUM = _D.ReduceOp.SUM if _D is not None else "SUM"
    AVG = _D.ReduceOp.AVG if _D is not None else "AVG"


def init_process_group(backend="mpi", init_method=None, timeout=None,
                       world_size=-1, rank=-1, store=None, group_name="",
                       pg_options=None):
    """Joins the processes of `mpirun` (MPI_Init_thread). backend must be
    "mpi"; world_size and rank, if given, must be MPI's. timeout (a
    timedelta or seconds; torch's default, 30 minutes, unless given) bounds
    how long a collective waits for every rank: then the job ends, naming
    the collective and the ranks that never joined."""
    if backend not in (None, "mpi"):
        raise ValueError(
            f"init_process_group: backend {backend!r} is not available: "
            "ditto's only backend is 'mpi' (start the processes with mpirun)")
    d = _native()
    seconds = None
    if timeout is not None:
        seconds = (timeout.total_seconds() if hasattr(timeout, "total_seconds")
                   else float(timeout))
        d.set_timeout(seconds)  # refuses a bad value before joining
    d.init()
    if world_size not in (-1, None) and world_size != d.world_size():
        raise ValueError(
            f"init_process_group: world_size={world_size}, but mpirun "
            f"started {d.world_size()} processes")
    if rank not in (-1, None) and rank != d.rank():
        raise ValueError(
            f"init_process_group: rank={rank}, but this is MPI rank "
            f"{d.rank()}")


def is_initialized():
    return _D is not None and _D.is_initialized()


def destroy_process_group(group=None):
    """Nothing to free: MPI is finalized when the process exits."""
    _check_group(group, "destroy_process_group")


def _require(op):
    if not is_initialized():
        raise RuntimeError(
            f"{op}: Default process group has not been initialized, please "
            "make sure to call init_process_group.")
    return _D


def _check_group(group, op, async_op=False):
    if group is not None:
        raise ValueError(f"{op}: only the default group (group=None) exists")
    if async_op:
        raise ValueError(f"{op}: async_op=True is not supported: ditto's "
                         "collectives are synchronous")


def get_backend(group=None):
    _check_group(group, "get_backend")
    _require("get_backend")
    return "mpi"


def get_rank(group=None):
    _check_group(group, "get_rank")
    return _require("get_rank").rank()


def get_world_size(group=None):
    _check_group(group, "get_world_size")
    return _require("get_world_size").world_size()


def barrier(group=None, async_op=False, device_ids=None):
    _check_group(group, "barrier", async_op)
    _require("barrier").barrier()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """In place: the sum (or average) over the ranks, in rank order."""
    _check_group(group, "all_reduce", async_op)
    _require("all_reduce").all_reduce(tensor, op)


def broadcast(tensor, src, group=None, async_op=False):
    """In place: rank src's values on every rank."""
    _check_group(group, "broadcast", async_op)
    _require("broadcast").broadcast(tensor, src)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] becomes rank r's tensor (tensor_list holds
    world_size tensors of tensor's dtype and shape)."""
    _check_group(group, "all_gather", async_op)
    d = _require("all_gather")
    if len(tensor_list) != d.world_size():
        raise ValueError(
            f"all_gather: tensor_list has {len(tensor_list)} tensors, the "
            f"world size is {d.world_size()}")
    gathered = d.all_gather(tensor)
    for out, t in zip(tensor_list, gathered):
        out.copy_(t)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None,
                   async_op=False):
    """output on rank r becomes the sum over the ranks, in rank order, of
    their input_list[r]."""
    _check_group(group, "reduce_scatter", async_op)
    _require("reduce_scatter").reduce_scatter(output, list(input_list), op)


class MicroBatchGradient:
    """One step's gradient with the same bits on any number of processes
    (R6): a step's batch is `micro_batches` micro-batches; this rank
    computes those in range(begin(), end()), calling add(j) after each
    one's backward; reduce() then leaves on every parameter the tree sum
    over all micro-batches divided by their number."""

    def __init__(self, params, micro_batches):
        self._native = _require("MicroBatchGradient").MicroBatchGradient(
            list(params), micro_batches)

    def begin(self):
        return self._native.begin()

    def end(self):
        return self._native.end()

    def micro_batches(self):
        """This rank's micro-batches: range(begin(), end())."""
        return range(self._native.begin(), self._native.end())

    def add(self, j):
        self._native.add(j)

    def reduce(self):
        self._native.reduce()
