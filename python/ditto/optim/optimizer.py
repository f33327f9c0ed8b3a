"""ditto.optim's optimizers (torch.optim's SGD, Adam, AdamW, RMSprop,
Adagrad) over the C++ ones (ditto/optim/optimizer.h): a Python step runs
the C++ update, op for op PyTorch 1.13's single-tensor formulas.
param_groups are live views of the C++ groups' hyperparameters: setting
group["lr"] changes the next step, and the schedulers' changes show in
them."""
from collections import defaultdict
from collections.abc import MutableMapping
import warnings

from .. import _C
from .._C import Tensor
from ..grad_mode import enable_grad

_optim = _C._optim

# Accepted for torch's signatures and kept in param_groups; ditto has one
# implementation of each optimizer (the single-tensor loop).
_IGNORED = ("foreach", "differentiable", "capturable", "fused")


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
        if key in self._opt.defaults and key not in _IGNORED:
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
        if key in self._opt.defaults and key not in _IGNORED:
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
        return keys + [k for k in self._extra if k not in keys]

    def __iter__(self):
        return iter(self._keys())

    def __len__(self):
        return len(self._keys())

    def __repr__(self):
        return repr(dict(self))


class Optimizer:
    """The base of ditto.optim's optimizers (torch.optim.Optimizer)."""

    _impl_class = None
    _state_order = ()

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
            full.append(self._prepare_group(g, seen))
        self._impl = self._impl_class([self._impl_group(g) for g in full])
        self.param_groups = []
        for g in full:
            self._append_view(g)

    def _prepare_group(self, group, seen):
        """torch's add_param_group checks: the group as a new dict with a
        list of params and every default filled in; seen gathers the ids
        of the params of the groups before it."""
        if not isinstance(group, dict):
            raise TypeError("param group must be a dict")
        g = dict(group)
        ps = g["params"]
        if isinstance(ps, Tensor):
            ps = [ps]
        elif isinstance(ps, set):
            raise TypeError("optimizer parameters need to be organized in "
                            "ordered collections, but the ordering of "
                            "tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            ps = list(ps)
        ids = set()
        for p in ps:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but "
                                f"one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            ids.add(id(p))
        if len(ids) != len(ps):
            warnings.warn("optimizer contains a parameter group with "
                          "duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/"
                          "40967 for more information", stacklevel=3)
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one "
                             "parameter group")
        seen.update(ids)
        g["params"] = ps
        for k, v in self.defaults.items():
            g.setdefault(k, v)
        return g

    def _impl_group(self, g):
        return {k: v for k, v in g.items()
                if k == "params" or k in self.defaults and k not in _IGNORED}

    def _append_view(self, g):
        view = _ParamGroup(self, len(self.param_groups), g["params"])
        for k, v in g.items():
            if k != "params" and (k not in self.defaults or k in _IGNORED):
                view._extra[k] = v
        self.param_groups.append(view)

    def add_param_group(self, param_group):
        """Adds a group (a dict with "params" and any hyperparameters; the
        rest from the optimizer's defaults), as torch's: its params may not
        be in another group."""
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        g = self._prepare_group(param_group, seen)
        self._impl.add_param_group(self._impl_group(g))
        self._append_view(g)

    @property
    def state(self):
        """torch's optimizer.state: a defaultdict(dict) from each parameter
        that has state to {name: tensor}, in torch's key order. The tensors
        are the optimizer's own (changing one in place changes the next
        step); the dict itself is rebuilt at each access."""
        out = defaultdict(dict)
        for g in self.param_groups:
            for p in g["params"]:
                st = self._impl.param_state(p)
                if st:
                    out[p] = self._in_torch_order(st)
        return out

    def _in_torch_order(self, st):
        order = [k for k in self._state_order if k in st]
        order += sorted(k for k in st if k not in order)
        return {k: st[k] for k in order}

    def zero_grad(self, set_to_none=False):
        """Resets every parameter's gradient: to zeros in place (torch
        1.13's default), or to None with set_to_none=True."""
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
        state = {i: self._in_torch_order(st) for i, st in state.items()}
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
    _state_order = ("momentum_buffer",)

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None,
                 differentiable=False):
        super().__init__(params, dict(
            lr=lr, momentum=momentum, dampening=dampening,
            weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
            foreach=foreach, differentiable=differentiable))


class Adam(Optimizer):
    """Adam with L2 weight decay, and AMSGrad (torch.optim.Adam)."""

    _impl_class = _optim.Adam
    _state_order = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False,
                 fused=False):
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            amsgrad=amsgrad, maximize=maximize, foreach=foreach,
            capturable=capturable, differentiable=differentiable,
            fused=fused))


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW)."""

    _impl_class = _optim.AdamW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=1e-2, amsgrad=False, *, maximize=False,
                 foreach=None, capturable=False):
        Optimizer.__init__(self, params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            amsgrad=amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable))


class SparseAdam(Optimizer):
    """Adam for sparse gradients, nn.Embedding(sparse=True)'s
    (torch.optim.SparseAdam): the moments and the parameter change only at
    the gradient's rows. Its "step" state is an int64 tensor."""

    _impl_class = _optim.SparseAdam
    _state_order = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 maximize=False):
        if not 0.0 < lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 < eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(
                "Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(
                "Invalid beta parameter at index 1: {}".format(betas[1]))
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      maximize=maximize))


class RMSprop(Optimizer):
    """RMSprop with momentum, centering and weight decay
    (torch.optim.RMSprop). Its state has no "step" count (torch's is a
    Python int that the update does not read)."""

    _impl_class = _optim.RMSprop
    _state_order = ("step", "square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
                 momentum=0, centered=False, foreach=None, maximize=False,
                 differentiable=False):
        super().__init__(params, dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
            weight_decay=weight_decay, foreach=foreach, maximize=maximize,
            differentiable=differentiable))


class Adagrad(Optimizer):
    """Adagrad with lr decay and weight decay (torch.optim.Adagrad); its
    state (step, sum) exists from construction, as torch's."""

    _impl_class = _optim.Adagrad
    _state_order = ("step", "sum")

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *,
                 maximize=False):
        super().__init__(params, dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach, maximize=maximize))


def _check_adam_like(name, lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


class Adamax(Optimizer):
    """Adam with the infinity norm (torch.optim.Adamax)."""

    _impl_class = _optim.Adamax
    _state_order = ("step", "exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, foreach=None, *, maximize=False):
        _check_adam_like("Adamax", lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            foreach=foreach, maximize=maximize))


class NAdam(Optimizer):
    """Adam with Nesterov momentum (torch.optim.NAdam, 1.13's update)."""

    _impl_class = _optim.NAdam
    _state_order = ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, momentum_decay=4e-3, foreach=None):
        _check_adam_like("NAdam", lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: {}".format(
                momentum_decay))
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, foreach=foreach))


class RAdam(Optimizer):
    """Rectified Adam (torch.optim.RAdam)."""

    _impl_class = _optim.RAdam
    _state_order = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, foreach=None):
        _check_adam_like("RAdam", lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            foreach=foreach))


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta)."""

    _impl_class = _optim.Adadelta
    _state_order = ("step", "square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0,
                 foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: {}".format(rho))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(
                weight_decay))
        super().__init__(params, dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
            foreach=foreach, maximize=maximize))
