"""torch.cpu.amp.autocast: ditto.autocast("cpu", ...)."""
from .. import _C
from ..amp import autocast as _autocast


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=_C.bfloat16, cache_enabled=True):
        super().__init__("cpu", dtype=dtype, enabled=enabled,
                         cache_enabled=cache_enabled)
