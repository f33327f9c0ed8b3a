"""ditto.optim's optimizers (torch.optim's SGD, Adam, AdamW) over the C++
ones (ditto/optim/optimizer.h): a Python step runs the C++ update, op for
op PyTorch 1.13's single-tensor formulas. param_groups are live views of
the C++ groups' hyperparameters: setting group["lr"] changes the next
step, and the schedulers' changes show in them."""
from collections.abc import MutableMapping

from .. import _C
from .._C import Tensor
from ..grad_mode import enable_grad

_optim = _C._optim


class _ParamGroup(MutableMapping):
    """One parameter group as torch's dict: "params", the hyperparameters
    (read from and written to the C++ optimizer), "initial_lr" once a
    scheduler set it, and any other keys a user adds."""

    def __init__(self, optimizer, index, params):
        self._opt = optimizer
        self._index = index
        self._params = params
        self._extra = {}

    def _impl(self):
        return self._opt._impl

    def __getitem__(self, key):
        if key == "params":
            return self._params
        if key in self._opt.defaults:
            return self._impl().get_option(self._index, key)
        if key == "initial_lr":
            v = self._impl().initial_lr(self._index)
            if v is None:
                raise KeyError(key)
            return v
        return self._extra[key]

    def __setitem__(self, key, value):
        if key == "params":
            raise ValueError("ditto.optim: a group's params are fixed when "
                             "the optimizer is built")
        if key in self._opt.defaults:
            self._impl().set_option(self._index, key, value)
        elif key == "initial_lr":
            self._impl().set_initial_lr(self._index, float(value))
        else:
            self._extra[key] = value

    def __delitem__(self, key):
        del self._extra[key]

    def _keys(self):
        keys = ["params"] + list(self._opt.defaults)
        if self._impl().initial_lr(self._index) is not None:
            keys.append("initial_lr")
        return keys + list(self._extra)

    def __iter__(self):
        return iter(self._keys())

    def __len__(self):
        return len(self._keys())

    def __repr__(self):
        return repr(dict(self))


class Optimizer:
    """The base of ditto.optim's optimizers (torch.optim.Optimizer)."""

    _impl_class = None

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should "
                            "be an iterable of Tensors or dicts, but got a "
                            "Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        full, seen = [], set()
        for g in groups:
            g = dict(g)
            ps = g["params"]
            ps = [ps] if isinstance(ps, Tensor) else list(ps)
            for p in ps:
                if not isinstance(p, Tensor):
                    raise TypeError("optimizer can only optimize Tensors, but "
                                    f"one of the params is {type(p).__name__}")
                if id(p) in seen:
                    raise ValueError("some parameters appear in more than one "
                                     "parameter group")
                seen.add(id(p))
            g["params"] = ps
            for k, v in defaults.items():
                g.setdefault(k, v)
            full.append(g)
        self._impl = self._impl_class(
            [{k: v for k, v in g.items() if k == "params" or k in defaults}
             for g in full])
        self.param_groups = []
        for i, g in enumerate(full):
            view = _ParamGroup(self, i, g["params"])
            for k, v in g.items():
                if k != "params" and k not in defaults:
                    view[k] = v
            self.param_groups.append(view)

    def zero_grad(self, set_to_none=True):
        self._impl.zero_grad(set_to_none)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; with a
        closure, calls it first (with grad enabled) and returns its loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._impl.step()
        return loss

    def state_dict(self):
        """torch's layout: {"state": {index: {name: tensor}},
        "param_groups": [{hyperparameters..., "params": [indices]}]}; the
        state tensors are copies."""
        state = {}
        for key, t in self._impl.state_dict():
            kind, index, name = key.split(".", 2)
            if kind == "state":
                state.setdefault(int(index), {})[name] = t
        groups, start = [], 0
        for g in self.param_groups:
            d = {k: v for k, v in g.items() if k != "params"}
            d["params"] = list(range(start, start + len(g["params"])))
            start += len(g["params"])
            groups.append(d)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores what state_dict returned (from this optimizer or one
        built the same way); every key and shape is checked first, and on
        error nothing changes."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of "
                             "parameter groups")
        index, start = {}, 0
        for g, saved in zip(self.param_groups, groups):
            if len(saved["params"]) != len(g["params"]):
                raise ValueError("loaded state dict contains a parameter "
                                 "group that doesn't match the size of "
                                 "optimizer's group")
            for j, pid in enumerate(saved["params"]):
                index[pid] = start + j
            start += len(g["params"])
        flat = []
        for pid, entries in state_dict["state"].items():
            if pid not in index:
                raise ValueError(f"state for an unknown parameter {pid}")
            for name, t in entries.items():
                if not isinstance(t, Tensor):
                    t = _C.scalar_tensor(t, dtype=_C.float32)
                flat.append((f"state.{index[pid]}.{name}", t))
        for i, saved in enumerate(groups):
            f64 = {"dtype": _C.float64}
            flat.append((f"param_groups.{i}.lr",
                         _C.scalar_tensor(saved["lr"], **f64)))
            momentum = saved.get("momentum")
            if momentum is None and "betas" in saved:
                momentum = saved["betas"][0]
            if momentum is not None:
                flat.append((f"param_groups.{i}.momentum",
                             _C.scalar_tensor(momentum, **f64)))
            if "initial_lr" in saved:
                flat.append((f"param_groups.{i}.initial_lr",
                             _C.scalar_tensor(saved["initial_lr"], **f64)))
        self._impl.load_state_dict(flat)
        for g, saved in zip(self.param_groups, groups):
            for k, v in saved.items():
                if k not in ("params", "lr", "initial_lr"):
                    g[k] = v

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(k for k in g if k != "params"):
                s += f"\n    {k}: {g[k]}"
        return s + "\n)"


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov and
    weight decay (torch.optim.SGD)."""

    _impl_class = _optim.SGD

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False):
        super().__init__(params, dict(
            lr=lr, momentum=momentum, dampening=dampening,
            weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))


class Adam(Optimizer):
    """Adam with L2 weight decay, and AMSGrad (torch.optim.Adam)."""

    _impl_class = _optim.Adam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, amsgrad=False, *, maximize=False):
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            amsgrad=amsgrad, maximize=maximize))


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW)."""

    _impl_class = _optim.AdamW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=1e-2, amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad,
                         maximize=maximize)
