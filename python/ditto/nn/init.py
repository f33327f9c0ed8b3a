"""ditto.nn.init (torch.nn.init): PyTorch's initializers, drawing PyTorch's
bits from the default generator (or generator=). Each fills its tensor in
place without recording a gradient and returns it."""
from .._C._init import (  # noqa: F401
    calculate_gain, _calculate_fan_in_and_fan_out, uniform_, normal_,
    trunc_normal_, constant_, zeros_, ones_, eye_, kaiming_uniform_,
    kaiming_normal_, xavier_uniform_, xavier_normal_, orthogonal_)
