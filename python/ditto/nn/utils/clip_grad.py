"""clip_grad_norm_ and clip_grad_value_ (torch.nn.utils.clip_grad) over the
C++ ones: torch 1.13's arithmetic, each norm summed in a fixed order."""
from ... import _C
from ..._C import Tensor

_utils = _C._nn_utils


def _as_list(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0,
                    error_if_nonfinite=False):
    """Scales the gradients so that their total norm_type-norm is at most
    max_norm (multiplying by min(1, max_norm / (total + 1e-6)), as torch
    1.13); returns the total norm before clipping."""
    try:
        return _utils.clip_grad_norm_(_as_list(parameters), float(max_norm),
                                      float(norm_type),
                                      bool(error_if_nonfinite))
    except ValueError as e:
        if "non-finite" in str(e):
            # torch raises RuntimeError here.
            raise RuntimeError(str(e)) from None
        raise


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient to [-clip_value, clip_value] in place."""
    _utils.clip_grad_value_(_as_list(parameters), float(clip_value))
