"""ditto.utils."""
from . import data, deterministic, dlpack, hooks  # noqa: F401


def weights_fingerprint(module):
    """xxh3-64 of every parameter's bytes in named_parameters() order: the
    "fingerprint" `ditto train` prints, as an int (docs/fingerprint.md)."""
    from .. import _C
    return _C._weights_fingerprint([p for _, p in module.named_parameters()])
