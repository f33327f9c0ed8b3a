"""ditto.nn.Module (torch.nn.Module): parameters, buffers and submodules
registered by attribute assignment, traversal in PyTorch's order,
train/eval, forward hooks, dtype conversion, state_dict/load_state_dict
with PyTorch's keys, and PyTorch's printed form."""
from collections import OrderedDict, namedtuple

from ... import _C
from ..._C import Tensor
from ...grad_mode import no_grad
from ...trace import _ON as _TRACING, _module_call
from ...utils.hooks import RemovableHandle
from ..parameter import Parameter

# Hooks for every module (torch.nn.modules.module's globals), run before
# each module's own.
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    """hook(module, input) before every module's forward
    (torch.nn.modules.module.register_module_forward_pre_hook)."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    """hook(module, input, output) after every module's forward."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


_FLOATING = None


def _is_floating(t):
    global _FLOATING
    if _FLOATING is None:
        _FLOATING = (_C.float32, _C.float64, _C.float16, _C.bfloat16)
    return t.dtype in _FLOATING


def _no_backward_hooks(name):
    raise NotImplementedError(
        f"ditto.nn.Module.{name}: ditto's autograd has no gradient hooks on "
        "tensors or nodes yet, so backward hooks are not supported "
        "(docs/python.md)")


def _parse_to(args, kwargs):
    """(device, dtype) from Module.to's forms: to(device, dtype), to(dtype),
    to(tensor), with keywords."""
    kwargs = dict(kwargs)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError("to() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    args = list(args)
    if args and isinstance(args[-1], bool):  # non_blocking
        args.pop()
    if len(args) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments but "
                        f"{len(args)} were given")
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
            device = a.device
        elif isinstance(a, _C.dtype):
            dtype = a
        else:
            device = a
    if device is not None:
        device = str(device)
        if device.split(":")[0] not in ("cpu", "vulkan"):
            raise ValueError(f"[Module.to] expected a device type (cpu or "
                             f"vulkan), but got \"{device}\"")
    if dtype is not None and not dtype.is_floating_point:
        raise TypeError("nn.Module.to only accepts floating point or complex "
                        f"dtypes, but got desired dtype={dtype}")
    return device, dtype

_IncompatibleKeys = namedtuple("IncompatibleKeys",
                               ["missing_keys", "unexpected_keys"])


def _addindent(s, spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + ln for ln in lines)


def _check_name(module, name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got "
                        f"{type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


class Module:
    """The base of every layer and model (torch.nn.Module)."""

    training: bool

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required '
            '"forward" function')

    def __call__(self, *input, **kwargs):
        """forward, with the forward hooks around it as torch 1.13 runs
        them: pre-hooks may replace the positional input (a non-tuple
        result is wrapped in a tuple), hooks may replace the output; the
        hooks see no keyword arguments. While a trace is written, the ops
        of forward are reported with this module's path (ditto.trace);
        otherwise that costs one list read."""
        pre = self.__dict__.get("_forward_pre_hooks")
        post = self.__dict__.get("_forward_hooks")
        if not (pre or post or _global_forward_pre_hooks
                or _global_forward_hooks):
            if _TRACING[0]:
                return _module_call(self, input, kwargs)
            return self.forward(*input, **kwargs)
        for hook in (*_global_forward_pre_hooks.values(),
                     *(pre or {}).values()):
            result = hook(self, input)
            if result is not None:
                if not isinstance(result, tuple):
                    result = (result,)
                input = result
        if _TRACING[0]:
            output = _module_call(self, input, kwargs)
        else:
            output = self.forward(*input, **kwargs)
        for hook in (*_global_forward_hooks.values(),
                     *(post or {}).values()):
            result = hook(self, input, output)
            if result is not None:
                output = result
        return output

    # ---- hooks

    def register_forward_pre_hook(self, hook):
        """hook(module, input) -> None or a new input, before forward."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook):
        """hook(module, input, output) -> None or a new output, after
        forward."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook):
        _no_backward_hooks("register_full_backward_hook")

    def register_backward_hook(self, hook):
        _no_backward_hooks("register_backward_hook")

    # ---- registration

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError(
                "cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object "
                            f"to buffer '{name}' (ditto Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object "
                            f"to parameter '{name}' (ditto.nn.Parameter or "
                            "None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                "parameters must be created explicitly.")
        self._parameters[name] = param

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module "
                            "subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError(
                "cannot assign module before Module.__init__() call")
        _check_name(self, name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute "
                                     f"`{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _owner_of(self, target):
        """(module, name) for a dotted path to an attribute."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute "
                                 f"`{name}`")
        return mod, name

    def get_parameter(self, target):
        """The parameter at a dotted path ("0.weight")."""
        mod, name = self._owner_of(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at a dotted path ("1.running_mean")."""
        mod, name = self._owner_of(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no "
                             f"attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*tables):
            for t in tables:
                if name in t:
                    if isinstance(t, dict):
                        del t[name]
                    else:
                        t.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as "
                                f"parameter '{name}' (ditto.nn.Parameter or "
                                "None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError(
                        "cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' "
                                    f"as child module '{name}' (ditto.nn."
                                    "Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}"
                                        f"' as buffer '{name}' (ditto Tensor "
                                        "or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(table, {}):
                del self.__dict__[table][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # ---- traversal, in PyTorch's order

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, members, prefix, recurse, remove_duplicate):
        memo = set()
        mods = (self.named_modules(prefix=prefix,
                                   remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for mod_prefix, mod in mods:
            for k, v in members(mod):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True,
                         remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix,
                                   recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix,
                                   recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and maintenance

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        """Resets every parameter's gradient: to zeros in place (torch
        1.13's default), or to None with set_to_none=True."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                g.zero_()
                p.grad = g

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None):
        raise ValueError("[Module.cuda] ditto has no CUDA device; its GPU "
                         "device is Vulkan: module.to(\"vulkan\")")

    # ---- dtype conversion, in place as torch's

    def _apply(self, fn):
        """fn on every parameter, gradient and buffer, recursively. A
        parameter keeps its identity (its data is replaced, as torch's
        `param.data = fn(param)`), so optimizers built before still hold
        it; a converted buffer is a new tensor."""
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new.dtype != p.dtype or new.device != p.device:
                    p.data = new
                g = p.grad
                if g is not None:
                    new = fn(g)
                    if new.dtype != g.dtype or new.device != g.device:
                        g.data = new
            for k, b in self._buffers.items():
                if b is not None:
                    new = fn(b)
                    if new.dtype != b.dtype or new.device != b.device:
                        self._buffers[k] = new
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to("vulkan"), to(device, dtype), to(tensor): moves
        parameters and buffers to the device and casts the floating ones
        (torch.nn.Module.to); integer buffers keep their dtype."""
        device, dtype = _parse_to(args, kwargs)
        if device is not None:
            self._apply(lambda t: t.to(device))
        if dtype is None:
            return self
        return self._apply(lambda t: t.to(dtype) if _is_floating(t) else t)

    def cpu(self):
        return self.to("cpu")

    def vulkan(self, device=0):
        return self.to(f"vulkan:{device}")

    def type(self, dst_type):
        """Casts every parameter and buffer, integer ones too."""
        return self._apply(lambda t: t.to(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if _is_floating(t) else t)

    def double(self):
        return self._apply(lambda t: t.double() if _is_floating(t) else t)

    def half(self):
        return self._apply(lambda t: t.half() if _is_floating(t) else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if _is_floating(t) else t)

    # ---- state

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by PyTorch's dotted names
        ("0.weight", "bn.running_mean"), detached, sharing storage."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination,
                             prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _local_state(self):
        state = OrderedDict((k, v) for k, v in self._parameters.items()
                            if v is not None)
        for k, v in self._buffers.items():
            if v is not None and k not in self._non_persistent_buffers_set:
                state[k] = v
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copies every entry into the module's tensors in place. Missing
        and unexpected keys (with strict) and shape mismatches (always) are
        listed in one RuntimeError in PyTorch's words; on error nothing is
        copied. Returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, dict):
            raise TypeError("Expected state_dict to be dict-like, got "
                            f"{type(state_dict).__name__}.")
        missing, unexpected, errors, copies = [], [], [], []
        for prefix, mod in self.named_modules(remove_duplicate=False):
            prefix = prefix + "." if prefix else ""
            local = mod._local_state()
            for name, t in local.items():
                key = prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{key}"'
                                  ", expected ditto.Tensor from checkpoint "
                                  f"but received {type(value)}")
                    continue
                if value.shape != t.shape:
                    errors.append(f"size mismatch for {key}: copying a param "
                                  f"with shape {value.shape} from checkpoint,"
                                  " the shape in current model is "
                                  f"{t.shape}.")
                    continue
                copies.append((t, value))
            for key in state_dict:
                if prefix and not key.startswith(prefix):
                    continue
                head = key[len(prefix):].split(".", 1)[0]
                if head not in mod._modules and head not in local:
                    unexpected.append(key)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}"
                               .format(type(self).__name__,
                                       "\n\t".join(errors)))
        with no_grad():
            for t, value in copies:
                t.copy_(value)
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing

    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + k + "): " + _addindent(repr(m), 2)
                       for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

    def __dir__(self):
        keys = list(super().__dir__())
        for table in ("_parameters", "_buffers", "_modules"):
            keys += list(self.__dict__.get(table, {}))
        return sorted(set(keys))

