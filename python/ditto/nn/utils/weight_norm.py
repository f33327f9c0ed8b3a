"""torch.nn.utils.weight_norm / remove_weight_norm: the parameter `name`
replaced by name_g (its norm over every dim but `dim`) and name_v (its
direction), recomputed as g * v / ||v|| before each forward."""
from ... import _C
from ..parameter import Parameter


def _norm_except_dim(v, dim):
    if dim is None or dim == -1 and v.dim() == 0:
        return v.norm()
    dim = dim % v.dim()
    dims = [d for d in range(v.dim()) if d != dim]
    if not dims:
        return v.abs()
    return (v * v).sum(dims, keepdim=True).sqrt()


class WeightNorm:
    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        dim = None if self.dim == -1 else self.dim
        return v * (g / _norm_except_dim(v, dim))

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks "
                                   f"on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if weight is None:
            raise ValueError(f"weight_norm: the module's {name} is None")
        del module._parameters[name]
        d = None if fn.dim == -1 else fn.dim
        module.register_parameter(
            name + "_g", Parameter(_norm_except_dim(weight, d).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
