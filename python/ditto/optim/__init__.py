"""ditto.optim (torch.optim): SGD, Adam, AdamW and lr_scheduler over the
C++ optimizers, so a Python training loop updates with the C++ bits."""
from . import lr_scheduler  # noqa: F401
from .optimizer import SGD, Adam, AdamW, Optimizer  # noqa: F401
