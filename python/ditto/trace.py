"""ditto.trace: the op trace of ditto/trace/trace.h from Python, with the
C++ names (docs/verify.md).

Every top-level op a program runs is reported, with its module path, phase
and step, to a hook and to the trace file that `ditto verify` compares.
DITTO_TRACE=FILE in the environment traces the whole program (the file is
finished when the interpreter exits normally); start(path)/stop(), or
`with ditto.trace.tracing(path):`, trace a part of it. Inside a traced
program ditto.nn.Module.__call__ enters each module's scope: its ops are
reported with the module's dotted path from the root module ("features.0",
as named_modules() names it) and its type, as the C++ modules report
theirs.
"""
import sys
import atexit as _atexit
import contextlib as _contextlib
import threading as _threading

from ._C import _trace as _t

ModuleGuard = _t.ModuleGuard
PhaseGuard = _t.PhaseGuard
Suppress = _t.Suppress
active_path = _t.active_path
enabled = _t.enabled
current_phase = _t.current_phase
current_step = _t.current_step
set_step = _t.set_step
advance_step = _t.advance_step
current_module = _t.current_module
record_value = _t.record_value

# [on]: Module.__call__ reads it instead of calling into C++ (the check is
# all a module call pays while tracing is off). Kept equal to enabled() by
# the functions below; DITTO_TRACE has started a trace before this import.
_ON = [_t.enabled()]


def _refresh():
    _ON[0] = _t.enabled()


def start(path):
    """Writes the trace of this process to path (JSON lines; docs/verify.md);
    a trace already being written is finished first."""
    try:
        _t.start(str(path))
    finally:
        _refresh()


def stop():
    """Finishes the trace file (its last line counts the records); a no-op
    when none is being written. ValueError when a write failed."""
    try:
        _t.stop()
    finally:
        _refresh()


@_contextlib.contextmanager
def tracing(path):
    """Traces the ops of the block to path: start(path), then stop()."""
    start(path)
    try:
        yield
    finally:
        stop()


def set_hook(hook):
    """Calls hook(event) after every top-level op, with event a dict: op,
    phase, inputs, outputs (tensors, None for an undefined one). None
    removes it. The hook runs on the thread that ran the op, with the GIL;
    the ops it runs are not reported."""
    if hook is not None and not callable(hook):
        raise TypeError(f"set_hook() expects a callable or None, got "
                        f"{type(hook).__name__}")
    _t.set_hook(hook)
    _refresh()


def _drop_hook():
    # A Python hook must not outlive the interpreter: the C++ trace that
    # holds it is destroyed at static destruction, after Py_Finalize.
    _t.set_hook(None)
    _ON[0] = False


_atexit.register(_drop_hook)

# ---- the module scopes Module.__call__ enters

_local = _threading.local()


def _module_call(module, args, kwargs):
    """module(*args, **kwargs) inside its trace scope: its path from the
    outermost module being called on this thread (the root), found among
    the root's named_modules(); a module that is not in it is a root of
    its own (C++: a module no parent registered)."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    path = stack[-1].get(id(module)) if stack else None
    if path is None:
        names = {id(m): n for n, m in module.named_modules()}
        path = ""
    else:
        names = stack[-1]
    stack.append(names)
    try:
        with ModuleGuard(path, type(module).__name__):
            return module.forward(*args, **kwargs)
    finally:
        stack.pop()


# ditto.trace is also torch.trace, the sum of a matrix's diagonal: the
# module is callable (ditto.trace(x)) and keeps its attributes.
class _CallableModule(type(sys.modules[__name__])):
    def __call__(self, input):
        from ._composite import trace as _trace
        return _trace(input)


sys.modules[__name__].__class__ = _CallableModule
