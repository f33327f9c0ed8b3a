"""ditto.autograd.Function: custom ops written in Python, as
torch.autograd.Function (PyTorch 1.13's semantics), on ditto's C++
CustomOp (ditto/ops/custom.h, docs/custom_ops.md).

Each subclass is one op with one record, registered the first time the
class is applied and kept for the process. Its name is the class's
``__module__ + "." + __qualname__`` ("my_model.ScaledExp"; a second class
with the same name gets "#2" appended); its node is named as torch's,
"<Class>Backward" (its trace name is the op's + "_backward"). The op is
traced under its name (the ops its forward calls are
nested), records one autograd node with the determinism policy in force,
and ``ditto.op_records()`` lists it with family "custom".
"""
import inspect
import threading

from .. import _C
from ..grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_DEFAULT_BECAUSE = ("a Python autograd.Function that declares no "
                    "nondeterministic path: it runs ditto's ops, each "
                    "deterministic under the policy in force")

_register_lock = threading.Lock()


class FunctionCtx:
    """What forward passes to backward (torch.autograd.function.FunctionCtx).

    ``save_for_backward(*tensors)`` and ``saved_tensors`` keep tensors
    (checked against in-place writes, as ditto's own ops' are); any other
    attribute (``ctx.k = 3``) is kept as set. ``needs_input_grad`` has one
    bool per argument of ``apply``. ``deterministic()`` is True when the
    deterministic variant must run (the policy in force; in backward, the one
    recorded with the node).
    """

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        # ditto's CustomOpContext, set only while forward or backward runs
        # (kept longer, it would make a reference cycle through the node).
        self._cpp = None
        self._in_backward = False
        self._non_differentiable = []

    def save_for_backward(self, *tensors):
        if self._cpp is None or self._in_backward:
            raise RuntimeError(
                "save_for_backward can only be called from forward")
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(
                    "save_for_backward can only save tensors (or None), but "
                    f"argument {i} is of type {type(t).__name__}")
        self._cpp.save_for_backward(list(tensors))

    @property
    def saved_tensors(self):
        if self._cpp is None:
            raise RuntimeError(
                "saved_tensors can be read in forward and backward only (the "
                "graph keeps them for the backward, not for the context)")
        return self._cpp.saved_tensors()

    def deterministic(self):
        if self._cpp is None:
            raise RuntimeError(
                "deterministic() can be asked in forward and backward only")
        return self._cpp.deterministic()

    def mark_non_differentiable(self, *tensors):
        """Outputs that get no gradient: returned detached from the graph
        (their gradients reach backward as zeros, as in torch)."""
        for t in tensors:
            if not isinstance(t, _C.Tensor):
                raise TypeError(
                    "mark_non_differentiable only accepts tensors, got "
                    f"{type(t).__name__}")
        self._non_differentiable.extend(tensors)

    def mark_dirty(self, *tensors):
        raise NotImplementedError(
            "ditto.autograd.Function: mark_dirty (inputs modified in place) "
            "is not supported; return a new tensor instead")

    def set_materialize_grads(self, value):
        """Kept for torch's API: ditto's engine always passes zeros, never
        None, for the gradient of an output that got none (as torch's
        default, materialize_grads=True, does)."""
        self.materialize_grads = bool(value)


def _op_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _callable(cls):
    try:
        params = list(inspect.signature(cls.forward).parameters)[1:]
        sig = ", ".join(params)
    except (TypeError, ValueError):
        sig = "*args"
    return f"{cls.__qualname__}.apply({sig})"


def _nondeterministic_paths(cls, name):
    paths = getattr(cls, "nondeterministic", ()) or ()
    if isinstance(paths, dict):
        paths = [paths]
    out = []
    for p in paths:
        if not isinstance(p, dict) or "reason" not in p:
            raise TypeError(
                f"{name}.nondeterministic: expected dicts with a 'reason' "
                f"(and optionally 'backward', 'entry', "
                f"'has_deterministic_variant', 'dtypes', 'cost'), got {p!r}")
        entry = p.get("entry") or (
            name + ("_backward" if p.get("backward", False) else ""))
        out.append({
            "entry": str(entry),
            "reason": str(p["reason"]),
            "has_deterministic_variant":
                bool(p.get("has_deterministic_variant", True)),
            "dtypes": str(p.get("dtypes", "floating")),
            "cost": str(p.get("cost", "")),
        })
    return out


def _backward_of(cls):
    """The class's backward (or vjp, its other name in torch), or None."""
    if cls.backward is not Function.backward:
        return cls.backward
    if cls.vjp is not Function.vjp:
        return cls.vjp
    return None


# Ops by the place their class is defined: a Function subclass defined
# inside a function that runs every step is a new class each time, but the
# same definition (its module, qualified name, the code of its forward and
# backward, its determinism attributes), and shares one op and one record,
# so the op list and the time per call stay flat.
_ops_by_definition = {}


def _definition_key(cls):
    def code(f):
        f = getattr(f, "__func__", f)
        return getattr(f, "__code__", f)
    return (cls.__module__, cls.__qualname__, code(cls.forward),
            code(_backward_of(cls)), repr(cls.nondeterministic),
            str(cls.deterministic_because))


def _register(cls):
    """The class's C++ op, registered once per definition (a subclass gets
    its own)."""
    op = cls.__dict__.get("_ditto_op")
    if op is not None:
        return op
    with _register_lock:
        op = cls.__dict__.get("_ditto_op")
        if op is not None:
            return op
        key = _definition_key(cls)
        op = _ops_by_definition.get(key)
        if op is not None:
            type.__setattr__(cls, "_ditto_op", op)
            return op
        base = _op_name(cls)
        taken = {r["name"] for r in _C.op_records()}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}#{n}"
        differentiable = _backward_of(cls) is not None
        op = _C._CustomOp(
            name, [_callable(cls)],
            str(getattr(cls, "deterministic_because", None) or
                _DEFAULT_BECAUSE),
            _nondeterministic_paths(cls, name), differentiable,
            # torch's node class for a Function is named <Class>Backward.
            f"{cls.__name__}Backward")
        type.__setattr__(cls, "_ditto_op", op)
        _ops_by_definition[key] = op
        return op


class Function:
    """Custom ops with a forward and a backward (torch.autograd.Function)::

        class Exp(ditto.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * y

        y = Exp.apply(x)

    Arguments that are not tensors pass through to forward (backward returns
    None for them). forward runs with grad mode off and returns a tensor or a
    tuple; backward gets one gradient per output and returns one per
    argument (None: no gradient). Optional class attributes:
    ``nondeterministic`` (a list of dicts, each with a ``reason`` and
    optionally ``backward=True`` for a path in the backward,
    ``has_deterministic_variant=False`` for a path that must alert under
    ``use_deterministic_algorithms(True)``, ``entry``, ``dtypes``, ``cost``),
    ``deterministic_because`` (the record's reason otherwise).
    """

    nondeterministic = ()
    deterministic_because = None

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            f"{type(self).__name__}: call {type(self).__name__}.apply(...) "
            "(a Function is not instantiated; forward and backward are "
            "static methods)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom "
            "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement the backward function for custom "
            "autograd.Function.")

    vjp = backward

    @classmethod
    def apply(cls, *args):
        op = _register(cls)
        node = f"{cls.__name__}Backward"
        tensor_pos = [i for i, a in enumerate(args)
                      if isinstance(a, _C.Tensor)]
        grad_on = _C.is_grad_enabled()
        ctx = FunctionCtx(tuple(
            grad_on and isinstance(a, _C.Tensor) and a.requires_grad
            for a in args))
        result = {}

        def run_forward(cpp):
            ctx._cpp = cpp
            try:
                with no_grad():
                    out = cls.forward(ctx, *args)
            finally:
                ctx._cpp = None
            outs = out if isinstance(out, tuple) else (out,)
            result["out"] = out
            result["pos"] = [i for i, o in enumerate(outs)
                             if isinstance(o, _C.Tensor)]
            return [outs[i] for i in result["pos"]]

        # Forward's outputs are not kept here: the node holds this closure,
        # and an output's grad_fn is that node.
        n_args = len(args)
        shape = {}

        def run_backward(cpp, grads):
            full = [None] * shape["n_out"]
            for k, i in enumerate(shape["pos"]):
                full[i] = grads[k]
            ctx._cpp = cpp
            ctx._in_backward = True
            try:
                res = _backward_of(cls)(ctx, *full)
            finally:
                ctx._cpp = None
                ctx._in_backward = False
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) != n_args:
                if len(res) > n_args and all(r is None for r in res[n_args:]):
                    res = res[:n_args]
                else:
                    raise RuntimeError(
                        f"function {node} returned an incorrect number of "
                        f"gradients (expected {n_args}, got {len(res)})")
            grads_in = []
            for i, g in enumerate(res):
                if i in tensor_pos:
                    if g is not None and not isinstance(g, _C.Tensor):
                        raise TypeError(
                            f"function {node} returned a gradient of type "
                            f"{type(g).__name__} at position {i + 1} "
                            "(expected a tensor or None)")
                    grads_in.append(g)
                elif g is not None:
                    raise RuntimeError(
                        f"function {node} returned a gradient different than "
                        f"None at position {i + 1}, but the corresponding "
                        "forward input was not a tensor")
            return grads_in

        tensors = [args[i] for i in tensor_pos]
        out = None
        try:
            results = op.apply(tensors, run_forward, run_backward)
            out = result.pop("out")
        finally:
            result.clear()
        outs = list(out) if isinstance(out, tuple) else [out]
        pos = [i for i, o in enumerate(outs) if isinstance(o, _C.Tensor)]
        shape["n_out"], shape["pos"] = len(outs), pos
        for k, i in enumerate(pos):
            outs[i] = _mark(results[k], ctx, outs[i])
        ctx._non_differentiable = []  # forward's outputs: not kept either
        return tuple(outs) if isinstance(out, tuple) else outs[0]


def _mark(result, ctx, original):
    """result, detached if forward marked it non-differentiable."""
    nd = ctx._non_differentiable
    if nd and any(t is original for t in nd):
        return result.detach()
    return result


def once_differentiable(fn):
    """A backward that is not differentiable itself: runs under no_grad
    (torch.autograd.function.once_differentiable)."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
