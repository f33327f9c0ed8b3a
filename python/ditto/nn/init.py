"""ditto.nn.init (torch.nn.init): PyTorch's initializers, drawing PyTorch's
bits from the default generator (or generator=). Each fills its tensor in
place without recording a gradient and returns it."""
from .._C._init import (  # noqa: F401
    calculate_gain, _calculate_fan_in_and_fan_out, uniform_, normal_,
    trunc_normal_, constant_, zeros_, ones_, eye_, kaiming_uniform_,
    kaiming_normal_, xavier_uniform_, xavier_normal_, orthogonal_)


def dirac_(tensor, groups=1):
    """torch.nn.init.dirac_: a 3-, 4- or 5-d convolution weight that
    passes its input through (ones at the kernel centres), per group."""
    from .. import no_grad
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = list(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                idx = [g * out_per_group + d, d] + [k // 2 for k in sizes[2:]]
                t = tensor
                for i in idx[:-1]:
                    t = t.select(0, i)
                t.narrow(0, idx[-1], 1).fill_(1)
    return tensor


def sparse_(tensor, sparsity, std=0.01):
    """torch.nn.init.sparse_: normal_(0, std), then in each column
    ceil(sparsity * rows) entries set to zero at the rows of a randperm
    (torch's draws, in torch's order)."""
    import math
    from .. import no_grad, randperm
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        normal_(tensor, 0, std)
        for col_idx in range(cols):
            zero_rows = randperm(rows)[:num_zeros]
            column = tensor.select(1, col_idx)
            column.copy_(column.masked_fill(_rows_hit(rows, zero_rows), 0))
    return tensor


def _rows_hit(rows, idx):
    from .. import arange
    return (arange(rows).reshape(-1, 1) == idx.reshape(1, -1)).any(1)
