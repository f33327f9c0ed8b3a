"""DistributedDataParallel on ditto.distributed (docs/distributed.md)."""
import contextlib

from ..modules.module import Module


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel's contract: the module's
    parameters and buffers are broadcast from rank 0 when it is wrapped;
    each forward in grad mode (outside no_sync()) makes the backward that
    follows end with every parameter's gradient averaged over the ranks, so
    that the optimizer's step is the same on every rank.

    The average is a tree sum with rank r's gradient as micro-batch r,
    divided by the world size: the same bits as one process accumulating
    the ranks' batches with ditto.distributed.MicroBatchGradient, and the
    same bits on every run. A parameter with no gradient on a rank counts
    as zeros there. With broadcast_buffers (the default, as torch's) the
    buffers are broadcast from rank 0 before every forward. device_ids,
    output_device, bucket_cap_mb, find_unused_parameters,
    gradient_as_bucket_view and static_graph are accepted for torch's
    signature."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None,
                 bucket_cap_mb=25, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False,
                 static_graph=False):
        super().__init__()
        from ... import distributed as dist
        if process_group is not None:
            raise ValueError("DistributedDataParallel: only the default "
                             "group (process_group=None) exists")
        if not dist.is_initialized():
            raise RuntimeError(
                "DistributedDataParallel: Default process group has not "
                "been initialized, please make sure to call "
                "init_process_group.")
        self.module = module
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        state = dist._D.DataParallelState(
            list(module.parameters()), list(module.buffers()),
            broadcast_buffers)
        object.__setattr__(self, "_state", state)

    def forward(self, *inputs, **kwargs):
        # The buffers from rank 0, and (in grad mode, outside no_sync) the
        # gradient reduction queued for the next backward.
        self._state.before_forward()
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backwards inside accumulate gradients on each rank without
        reducing them; the first synchronized backward after it reduces the
        accumulated gradients."""
        old = self._state.sync
        self._state.sync = False
        try:
            yield
        finally:
            self._state.sync = old
