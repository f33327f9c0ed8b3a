"""ditto.nn (torch.nn): modules with PyTorch's semantics and initial bits,
Parameter, init, functional and utils."""
from . import functional, init, parallel, utils  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all

__all__ = ["Parameter", "functional", "init", "parallel", "utils"] + _modules_all
