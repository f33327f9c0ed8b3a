"""ditto.autograd: grad, backward, gradcheck, Function and the grad-mode
switches (torch.autograd)."""
from .. import _C
from ..grad_mode import enable_grad, no_grad, set_grad_enabled  # noqa: F401
from . import function  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401


def grad(outputs, inputs, grad_outputs=None, retain_graph=None,
         create_graph=False, allow_unused=False):
    """The gradients of outputs with respect to inputs (torch.autograd.grad)."""
    if isinstance(outputs, _C.Tensor):
        outputs = [outputs]
    if isinstance(inputs, _C.Tensor):
        inputs = [inputs]
    if isinstance(grad_outputs, _C.Tensor):
        grad_outputs = [grad_outputs]
    return _C.autograd_grad(list(outputs), list(inputs),
                            None if grad_outputs is None else list(grad_outputs),
                            retain_graph, create_graph, allow_unused)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulates the gradients of tensors into the leaves' .grad."""
    if isinstance(tensors, _C.Tensor):
        tensors = [tensors]
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, _C.Tensor):
        grad_tensors = [grad_tensors]
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        last = i == len(tensors) - 1
        t.backward(g, retain_graph=retain_graph if last else True,
                   create_graph=create_graph)


class GradcheckError(RuntimeError):
    """gradcheck's failure (torch.autograd.gradcheck.GradcheckError)."""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3,
              raise_exception=True):
    """Checks the gradients of func at inputs against central finite
    differences (torch.autograd.gradcheck), element by element:
    |analytical - numerical| <= atol + rtol * |numerical|, for every
    floating output and every float64 input tensor that requires grad.
    Arguments that are not tensors pass through. ditto's C++ gradcheck
    (ditto/autograd/gradcheck.h) does the work. Returns True, or raises
    GradcheckError naming the worst element (False with
    raise_exception=False)."""
    if isinstance(inputs, _C.Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    pos = [i for i, a in enumerate(inputs) if isinstance(a, _C.Tensor)]

    def outputs(tensors):
        args = list(inputs)
        for p, t in zip(pos, tensors):
            args[p] = t
        out = func(*args)
        return out if isinstance(out, (tuple, list)) else (out,)

    tensors = [inputs[p] for p in pos]
    with no_grad():
        first = outputs([t.detach() for t in tensors])
    checked = [k for k, o in enumerate(first)
               if isinstance(o, _C.Tensor) and o.dtype.is_floating_point]
    if not checked:
        raise ValueError(
            "gradcheck: func returned no floating tensor to check")
    for k in checked:
        ok, report, _ = _C._gradcheck(
            lambda ts, k=k: outputs(ts)[k], tensors, eps, atol, rtol)
        if not ok:
            if raise_exception:
                raise GradcheckError(
                    f"Jacobian mismatch for output {k}: {report}")
            return False
    return True


from . import functional  # noqa: F401,E402



class set_detect_anomaly:
    """torch.autograd.set_detect_anomaly(mode, check_nan=True), as a call
    and a context manager. Off is what ditto always runs; on raises: ditto
    has no anomaly mode (its backward names the node of an error already,
    and `ditto verify` names the first op where two runs diverge)."""

    def __init__(self, mode, check_nan=True):
        if mode:
            raise NotImplementedError(
                "[set_detect_anomaly] ditto has no anomaly detection mode; "
                "errors in backward name their node (see docs/autograd.md)")
        self.mode = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class detect_anomaly(set_detect_anomaly):
    """torch.autograd.detect_anomaly(check_nan=True): see
    set_detect_anomaly."""

    def __init__(self, check_nan=True):
        super().__init__(True, check_nan)


def is_anomaly_enabled():
    return False
