"""ditto.autograd: grad and the grad-mode switches (torch.autograd)."""
from . import _C
from .grad_mode import enable_grad, no_grad, set_grad_enabled  # noqa: F401


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
