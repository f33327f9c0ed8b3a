"""parameters_to_vector and vector_to_parameters
(torch.nn.utils.convert_parameters)."""
from ... import _C
from ..._C import Tensor

_utils = _C._nn_utils


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (in the
    graph: gradients flow back to the parameters)."""
    return _utils.parameters_to_vector(list(parameters))


def vector_to_parameters(vec, parameters):
    """Points each parameter's data at its slice of vec, as torch's
    `param.data = vec[a:b].view_as(param).data`: the parameters then share
    vec's storage."""
    if not isinstance(vec, Tensor):
        raise TypeError("expected ditto.Tensor, but got: "
                        f"{type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != total:
        # The C++ check, with its message.
        _utils.vector_to_parameters(vec, params)
    at = 0
    for p in params:
        n = p.numel()
        p.data = vec.detach().narrow(0, at, n).view(p.shape)
        at += n
