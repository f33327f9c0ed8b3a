"""ditto.utils.deterministic.fill_uninitialized_memory, settable as
torch.utils.deterministic's: whether empty() fills its memory (NaN, the
integer maximum) while the deterministic mode is on."""
import sys
import types

from .. import _C


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        return _C._fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, value):
        _C._set_fill_uninitialized_memory(bool(value))


sys.modules[__name__].__class__ = _Deterministic
