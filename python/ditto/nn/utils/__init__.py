"""ditto.nn.utils (torch.nn.utils): gradient clipping and parameter
vectors over the C++ ditto::nn::utils."""
from .clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401
from .convert_parameters import (parameters_to_vector,  # noqa: F401
                                 vector_to_parameters)
from . import rnn  # noqa: F401,E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401,E402
