"""ditto.optim (torch.optim): SGD, Adam, AdamW, RMSprop, Adagrad and
lr_scheduler over the C++ optimizers, so a Python training loop updates
with the C++ bits."""
from . import lr_scheduler  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .optimizer import (SGD, Adadelta, Adagrad, Adam, Adamax, AdamW,  # noqa: F401
                        NAdam, Optimizer, RAdam, RMSprop, SparseAdam)
