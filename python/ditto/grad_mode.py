"""no_grad, enable_grad and set_grad_enabled: context managers and
decorators over the current thread's grad mode (as torch's)."""
import functools

from . import _C


class _GradMode:
    _enabled = None

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class no_grad(_GradMode):
    """Within it (or in a function it decorates) ops record no graph."""

    _enabled = False


class enable_grad(_GradMode):
    """Within it (or in a function it decorates) ops record again."""

    _enabled = True


class set_grad_enabled:
    """Sets the grad mode now, and restores it when used with `with`."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._mode = bool(mode)
        _C._set_grad_enabled(self._mode)

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
