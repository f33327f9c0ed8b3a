"""torch.autograd.functional's jacobian and hessian over ditto's
autograd.grad: one backward per output element, in order."""
from .. import _C


def _tuple(x):
    return (x,) if isinstance(x, _C.Tensor) else tuple(x)


def jacobian(func, inputs, create_graph=False, strict=False,
             vectorize=False, strategy="reverse-mode"):
    from . import grad
    single_in = isinstance(inputs, _C.Tensor)
    ins = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    out = func(*ins)
    single_out = isinstance(out, _C.Tensor)
    outs = _tuple(out)
    result = []
    for o in outs:
        flat = o.reshape(-1)
        rows = [[] for _ in ins]
        for k in range(flat.numel()):
            gs = grad(flat[k], list(ins), retain_graph=True,
                      create_graph=create_graph, allow_unused=True)
            for j, (g, x) in enumerate(zip(gs, ins)):
                rows[j].append(g.reshape(-1) if g is not None
                               else _C.zeros([x.numel()], dtype=x.dtype))
        per_in = []
        for j, x in enumerate(ins):
            if rows[j]:
                jac = _C.stack(rows[j])
            else:
                jac = _C.zeros([0, x.numel()], dtype=x.dtype)
            per_in.append(jac.reshape(list(o.shape) + list(x.shape)))
        result.append(per_in[0] if single_in else tuple(per_in))
    return result[0] if single_out else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    from . import grad
    single_in = isinstance(inputs, _C.Tensor)

    def gradient(*xs):
        out = func(*xs)
        gs = grad(out, list(xs), create_graph=True)
        return gs[0] if single_in else tuple(gs)
    return jacobian(gradient, inputs, create_graph=create_graph)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    from . import grad
    ins = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    out = func(*ins)
    gs = grad(out, list(ins), grad_outputs=v, create_graph=create_graph)
    gs = gs[0] if isinstance(inputs, _C.Tensor) else tuple(gs)
    return out.detach(), gs
