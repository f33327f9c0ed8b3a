"""The torch.nn / torch.optim surface a PyTorch 1.13 training script
commonly uses (issue 33): forward hooks, ModuleDict / ParameterList /
ParameterDict, Module.to and the dtype casts, optimizer.state,
add_param_group, zero_grad's default, RMSprop, Adagrad, SequentialLR and
nn.utils. Numbers come from PyTorch 1.13 through nn_api_golden.json (made
by gen_nn_api_golden.py); behaviours are torch 1.13's as documented."""
import json
import math
import os
import struct
from collections import OrderedDict

import pytest

import ditto
import ditto.nn as nn
import ditto.optim as optim
from ditto.optim import lr_scheduler as S

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def golden():
    with open(os.path.join(HERE, "nn_api_golden.json")) as f:
        return json.load(f)


def f32(values, shape):
    return ditto.tensor(values, dtype=ditto.float32).reshape(shape)


def bits(values):
    """float32 bit patterns, so that -0.0 and NaN compare exactly."""
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]


def flat(t):
    return t.detach().reshape(-1).tolist()


# ---- forward hooks

class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x, shift=0.0):
        return x * self.scale + shift


def test_forward_pre_hook_replaces_input():
    m = Affine()
    x = ditto.ones(2)
    seen = []
    h1 = m.register_forward_pre_hook(lambda mod, inp: seen.append(
        (mod, inp)))
    # A non-tuple result is wrapped in a tuple; the next hook sees it.
    h2 = m.register_forward_pre_hook(lambda mod, inp: inp[0] + 1)
    h3 = m.register_forward_pre_hook(lambda mod, inp: seen.append(inp))
    assert flat(m(x)) == [4.0, 4.0]
    assert seen[0][0] is m and seen[0][1] == (x,)
    assert isinstance(seen[1], tuple) and flat(seen[1][0]) == [2.0, 2.0]
    # Keyword arguments go to forward, not to the hooks.
    assert flat(m(x, shift=1.0)) == [5.0, 5.0]
    h2.remove()
    h2.remove()  # removing twice is harmless, as torch's
    assert flat(m(x)) == [2.0, 2.0]
    h1.remove()
    h3.remove()
    assert len(m._forward_pre_hooks) == 0


def test_forward_hook_replaces_output_in_order():
    m = Affine()
    calls = []

    def first(mod, inp, out):
        calls.append("first")
        return out * 10

    def second(mod, inp, out):
        calls.append(("second", flat(out)))

    a = m.register_forward_hook(first)
    b = m.register_forward_hook(second)
    assert a.id != b.id
    assert flat(m(ditto.ones(1))) == [20.0]
    assert calls == ["first", ("second", [20.0])]
    with m.register_forward_hook(lambda mod, i, o: o + 1):
        assert flat(m(ditto.ones(1))) == [21.0]
    assert flat(m(ditto.ones(1))) == [20.0]
    a.remove()
    b.remove()
    assert flat(m(ditto.ones(1))) == [2.0]


def test_hooks_on_children_and_global_hooks():
    from ditto.nn.modules.module import (register_module_forward_hook,
                                         register_module_forward_pre_hook)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    names = []
    handles = [m.register_forward_hook(
        lambda mod, i, o: names.append(type(mod).__name__))
        for m in model.modules()]
    model(ditto.ones(1, 3))
    assert names == ["Linear", "ReLU", "Sequential"]
    for h in handles:
        h.remove()
    order = []
    g1 = register_module_forward_pre_hook(
        lambda mod, i: order.append(("global", type(mod).__name__)))
    g2 = register_module_forward_hook(lambda mod, i, o: o * 0)
    local = model[1].register_forward_pre_hook(
        lambda mod, i: order.append(("local", type(mod).__name__)))
    try:
        out = model(ditto.ones(1, 3))
    finally:
        g1.remove()
        g2.remove()
        local.remove()
    assert order == [("global", "Sequential"), ("global", "Linear"),
                     ("global", "ReLU"), ("local", "ReLU")]
    assert flat(out) == [0.0, 0.0]
    assert model(ditto.ones(1, 3)).abs().sum().item() >= 0


def test_backward_hooks_are_refused_clearly():
    m = nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match="backward hooks"):
        m.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.raises(NotImplementedError):
        m.register_backward_hook(lambda mod, gi, go: None)


def test_register_module_alias():
    m = nn.Module()
    m.register_module("lin", nn.Linear(1, 1))
    assert [n for n, _ in m.named_parameters()] == ["lin.weight", "lin.bias"]


# ---- containers

def build_model():
    """gen_nn_api_golden.py's repr_cases, in ditto."""
    ditto.manual_seed(0)
    md = nn.ModuleDict({"lin": nn.Linear(2, 3), "act": nn.ReLU()})
    md.update([("z", nn.Identity()), ("a", nn.Tanh())])
    pl = nn.ParameterList([nn.Parameter(ditto.zeros(2, 3)),
                           ditto.ones(4), "tag"])
    pl.append(nn.Parameter(ditto.zeros(1, dtype=ditto.float64)))
    pd = nn.ParameterDict({"w": nn.Parameter(ditto.zeros(2)),
                           "b": ditto.zeros(3, 1)})
    pd["n"] = 7
    pd.update(OrderedDict([("y", ditto.zeros(5, dtype=ditto.float64)),
                           ("x", nn.Parameter(ditto.zeros(1)))]))
    model = nn.Module()
    model.blocks = md
    model.plist = pl
    model.pdict = pd
    return model, md, pl, pd


def test_container_reprs_and_names_are_torchs(golden):
    model, md, pl, pd = build_model()
    r = golden["repr"]
    assert repr(md) == r["module_dict"]
    assert repr(pl) == r["parameter_list"]
    assert repr(pd) == r["parameter_dict"]
    assert repr(model) == r["model"]
    assert [n for n, _ in model.named_parameters()] == r["named_parameters"]
    assert list(model.state_dict()) == r["state_dict"]


def test_module_dict():
    md = nn.ModuleDict()
    md["b"] = nn.ReLU()
    md.update(OrderedDict([("a", nn.Tanh())]))
    md.update({"c": nn.Identity()})
    assert list(md) == ["b", "a", "c"] and list(md.keys()) == list(md)
    assert "a" in md and len(md) == 3
    assert isinstance(md.pop("a"), nn.Tanh) and list(md) == ["b", "c"]
    assert [k for k, _ in md.items()] == ["b", "c"]
    assert md.b is md["b"]
    del md["b"]
    assert list(md.values())[0] is md["c"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])
    with pytest.raises(TypeError):
        md.update(3)
    md.clear()
    assert len(md) == 0 and list(md.children()) == []


def test_parameter_list_and_dict():
    a, b = nn.Parameter(ditto.ones(2)), nn.Parameter(ditto.zeros(3))
    pl = nn.ParameterList([a])
    pl += [b]
    assert len(pl) == 2 and pl[0] is a and pl[-1] is b
    assert list(pl) == [a, b] and list(pl.parameters()) == [a, b]
    sub = pl[1:]
    assert isinstance(sub, nn.ParameterList) and list(sub) == [b]
    pl[0] = ditto.full((2,), 3.0)     # a plain tensor becomes a Parameter
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
    with pytest.raises(IndexError, match="index 5 is out of range"):
        pl[5]
    with pytest.raises(TypeError):
        pl.extend(ditto.ones(2))
    with pytest.raises(RuntimeError, match="should not be called"):
        pl()
    pd = nn.ParameterDict({"z": a, "y": b})    # a plain dict is sorted
    assert list(pd) == ["y", "z"]
    assert pd.get("q") is None and pd.get("y") is b
    assert pd.setdefault("q", ditto.ones(1)) is pd["q"]
    assert isinstance(pd["q"], nn.Parameter)
    assert list(pd.keys()) == ["y", "z", "q"]
    assert [n for n, _ in pd.named_parameters()] == ["y", "z", "q"]
    assert pd.pop("y") is b and "y" not in pd
    k, v = pd.popitem()
    assert k == "q" and list(pd) == ["z"]
    merged = pd | nn.ParameterDict(OrderedDict([("w", b)]))
    assert list(merged) == ["z", "w"] and list(pd) == ["z"]
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = b
    # An optimizer over a model with these containers reaches them.
    model, _, pl2, pd2 = build_model()
    opt = optim.SGD(model.parameters(), lr=0.1)
    assert sum(len(g["params"]) for g in opt.param_groups) == 9


# ---- dtype conversion

def test_to_double_keeps_parameter_identity():
    ditto.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    w = m[0].weight
    before = flat(w)
    m(ditto.randn(4, 3)).sum().backward()
    grad = w.grad
    opt = optim.SGD(m.parameters(), lr=0.1)
    assert m.double() is m
    assert m[0].weight is w and w.dtype == ditto.float64
    assert flat(w) == before                 # float32 values, exactly
    assert w.grad.dtype == ditto.float64 and grad.dtype == ditto.float64
    assert m[1].running_mean.dtype == ditto.float64
    assert m[1].num_batches_tracked.dtype == ditto.int64   # not floating
    out = m(ditto.randn(4, 3, dtype=ditto.float64))
    assert out.dtype == ditto.float64
    opt.step()                               # the same tensors, converted
    assert m.to(ditto.float32) is m and w.dtype == ditto.float32
    assert m.float() is m and w.dtype == ditto.float32
    assert m.to(dtype=ditto.float64) is m and w.dtype == ditto.float64
    assert m.to(ditto.zeros(1)) is m and w.dtype == ditto.float32
    assert m.to("cpu", ditto.float64) is m and w.dtype == ditto.float64
    assert m.to(device="cpu") is m and m.cpu() is m
    assert m.to("cpu", non_blocking=True) is m
    # type() casts every tensor, integer buffers too (as torch's).
    m.type(ditto.float32)
    assert w.dtype == ditto.float32
    assert m[1].num_batches_tracked.dtype == ditto.float32


def test_to_refusals():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(ditto.int64)
    with pytest.raises(ValueError, match="device type"):
        m.to("cuda")
    with pytest.raises(ValueError, match="Vulkan"):
        m.cuda()
    assert m.weight.dtype == ditto.float32


def test_recurrent_module_double():
    ditto.manual_seed(0)
    lstm = nn.LSTM(3, 4)
    x = ditto.randn(2, 1, 3)
    out32, _ = lstm(x)
    lstm.double()
    assert all(p.dtype == ditto.float64 for p in lstm.parameters())
    out64, _ = lstm(x.double())
    assert out64.dtype == ditto.float64
    assert (out64.float() - out32).abs().max().item() < 1e-5


def test_tensor_data_assignment():
    p = nn.Parameter(ditto.zeros(2))
    q = p
    p.data = ditto.ones(3, dtype=ditto.float64)
    assert q.shape == (3,) and q.dtype == ditto.float64 and q.requires_grad
    assert flat(q) == [1.0, 1.0, 1.0] and q.is_leaf


# ---- optimizers

def run_case(case, make):
    params = [nn.Parameter(f32(v, s)) for v, s in
              zip(case["init"], case["shapes"])]
    added = [nn.Parameter(f32(v, s)) for v, s in
             zip(case["added_init"], case["added_shapes"])]
    opt = make(params)
    for step, (grads, after) in enumerate(zip(case["grads"],
                                              case["after"])):
        if step == 1 and added:
            opt.add_param_group(dict(case["added_options"], params=added))
        ps = params + (added if step >= 1 else [])
        for p, g in zip(ps, grads):
            p.grad = None if g is None else f32(g, p.shape)
        opt.step()
        for i, (p, want) in enumerate(zip(params + added, after)):
            assert bits(flat(p)) == bits(want), (case["name"], step, i)
    return opt, params + added


OPTIMIZERS = {
    "rmsprop": lambda p: optim.RMSprop(p),
    "rmsprop_full": lambda p: optim.RMSprop(
        p, lr=0.02, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.8,
        centered=True),
    "rmsprop_maximize": lambda p: optim.RMSprop(p, lr=0.01, momentum=0.5,
                                                maximize=True),
    "adagrad": lambda p: optim.Adagrad(p),
    "adagrad_full": lambda p: optim.Adagrad(
        p, lr=0.1, lr_decay=0.01, weight_decay=0.05,
        initial_accumulator_value=0.3, eps=1e-8),
    "adam_added": lambda p: optim.Adam(p, lr=0.01),
    "sgd_added": lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_are_torchs_bits(golden, name):
    case = next(c for c in golden["optim"] if c["name"] == name)
    opt, params = run_case(case, OPTIMIZERS[name])
    for g, want in zip(opt.param_groups, case["groups"]):
        got = {k: (list(v) if isinstance(v, tuple) else v)
               for k, v in g.items() if k != "params"}
        assert got == want
    assert list(opt.param_groups[0]) == ["params"] + list(case["groups"][0])
    state = opt.state
    for i, (p, want) in enumerate(zip(params, case["state"])):
        # Known differences: ditto's RMSprop keeps no "step" count, and
        # ditto's SGD keeps no state without momentum (torch stores
        # momentum_buffer=None).
        want = [kv for kv in want if not (name.startswith("rmsprop")
                                          and kv[0] == "step")]
        if name == "sgd_added" and i >= 2:
            want = []
        got = state.get(p, {})
        assert list(got) == [k for k, _ in want], (name, i)
        for k, v in want:
            if v is not None:
                assert got[k].item() == v


def test_optimizer_state_is_live():
    p = nn.Parameter(ditto.ones(3))
    opt = optim.Adam([p], lr=0.1)
    assert len(opt.state) == 0 and opt.state[p] == {}
    p.grad = ditto.ones(3)
    opt.step()
    st = opt.state[p]
    assert list(st) == ["step", "exp_avg", "exp_avg_sq"]
    assert st["step"].item() == 1.0 and st["step"].dtype == ditto.float32
    st["exp_avg"].zero_()                   # the optimizer's own tensor
    assert flat(opt.state[p]["exp_avg"]) == [0.0, 0.0, 0.0]
    sd = opt.state_dict()
    assert list(sd["state"][0]) == ["step", "exp_avg", "exp_avg_sq"]
    # Adagrad's state exists from construction, as torch's.
    q = nn.Parameter(ditto.ones(2))
    ada = optim.Adagrad([q], initial_accumulator_value=0.5)
    assert list(ada.state[q]) == ["step", "sum"]
    assert flat(ada.state[q]["sum"]) == [0.5, 0.5]
    r = nn.Parameter(ditto.ones(1))
    ada.add_param_group({"params": r, "initial_accumulator_value": 2.0})
    assert flat(ada.state[r]["sum"]) == [2.0]
    r.grad = ditto.ones(1)
    ada.step()                # torch 1.13 fails here (no state for r)
    assert ada.state[r]["step"].item() == 1.0


def test_add_param_group_checks():
    a, b = nn.Parameter(ditto.ones(1)), nn.Parameter(ditto.ones(1))
    opt = optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {b}})
    with pytest.raises(ValueError, match="non-leaf"):
        opt.add_param_group({"params": [b * 2]})
    with pytest.raises(ValueError, match="momentum"):
        opt.add_param_group({"params": [b], "momentum": -1.0})
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": b, "lr": 0.5, "tag": "head"})
    g = opt.param_groups[1]
    assert g["params"] == [b] and g["lr"] == 0.5 and g["tag"] == "head"
    assert g["momentum"] == 0 and g["foreach"] is None
    b.grad = ditto.ones(1)
    opt.step()
    assert flat(b) == [0.5]
    sd = opt.state_dict()
    assert [grp["params"] for grp in sd["param_groups"]] == [[0], [1]]


def test_zero_grad_default_is_torch_1_13s():
    m = nn.Linear(2, 1)
    opt = optim.SGD(m.parameters(), lr=0.1)
    m(ditto.ones(1, 2)).sum().backward()
    g = m.weight.grad
    opt.zero_grad()                      # set_to_none=False in torch 1.13
    assert m.weight.grad is not None and flat(m.weight.grad) == [0.0, 0.0]
    m(ditto.ones(1, 2)).sum().backward()
    m.zero_grad()
    assert flat(m.weight.grad) == [0.0, 0.0]
    opt.zero_grad(set_to_none=True)
    assert m.weight.grad is None
    del g


def test_optimizer_signatures_accept_torchs_keywords():
    p = nn.Parameter(ditto.ones(1))
    optim.SGD([p], 0.1, 0.9, 0, 0, True, foreach=None, differentiable=False)
    optim.Adam([p], foreach=None, capturable=False, differentiable=False,
               fused=False)
    optim.AdamW([p], foreach=None, capturable=False)
    optim.RMSprop([p], 0.01, 0.99, 1e-8, 0, 0.9, True, None, False, False)
    optim.Adagrad([p], 0.01, 0, 0, 0, 1e-10, None, maximize=True)
    r = optim.RMSprop([{"params": [p], "lr": 0.5}], lr=0.1)
    assert r.param_groups[0]["lr"] == 0.5
    assert "RMSprop (" in repr(r) and "centered: False" in repr(r)


# ---- schedulers

def test_sequential_lr_is_torchs(golden):
    makes = {
        "linear_cosine": lambda o: S.SequentialLR(o, [
            S.LinearLR(o, start_factor=0.1, total_iters=4),
            S.CosineAnnealingLR(o, T_max=8, eta_min=0.001)], milestones=[4]),
        "three": lambda o: S.SequentialLR(o, [
            S.ExponentialLR(o, gamma=0.9), S.StepLR(o, 2, gamma=0.5),
            S.LinearLR(o, start_factor=0.5, total_iters=3)],
            milestones=[3, 7]),
    }
    for name, make in makes.items():
        p = nn.Parameter(ditto.zeros(1))
        opt = optim.SGD([p], lr=0.1, momentum=0.9)
        sched = make(opt)
        lrs = []
        for _ in range(14):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        assert lrs == golden["sched"][name], name
    other = optim.SGD([nn.Parameter(ditto.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="same optimizer"):
        S.SequentialLR(opt, [S.StepLR(other, 2)], milestones=[])
    with pytest.raises(ValueError, match="one more than the number"):
        S.SequentialLR(opt, [S.StepLR(opt, 2)], milestones=[1])


# ---- nn.utils

def grads_params(clip):
    ps = []
    for g, s in zip(clip["grads"], clip["shapes"]):
        p = nn.Parameter(ditto.zeros(*s))
        p.grad = f32(g, s)
        ps.append(p)
    return ps


def test_clip_grad_norm_is_torchs(golden):
    clip = golden["clip"]
    for case in clip["norm"]:
        ps = grads_params(clip)
        norm_type = float(case["norm_type"])
        total = nn.utils.clip_grad_norm_(ps, case["max_norm"], norm_type)
        assert total.dtype == ditto.float32 and total.dim() == 0
        assert total.item() == case["total"], case["norm_type"]
        want = clip["grads"] if case["grads"] == "input" else case["grads"]
        for p, w in zip(ps, want):
            assert bits(flat(p.grad)) == bits(w), case["norm_type"]


def test_clip_grad_norm_edges():
    p = nn.Parameter(ditto.ones(2))
    total = nn.utils.clip_grad_norm_(p, 1.0)     # one tensor, no grad
    assert total.item() == 0.0
    p.grad = ditto.tensor([3.0, 4.0])
    assert nn.utils.clip_grad_norm_(p, 10).item() == 5.0
    p.grad = ditto.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isnan(flat(p.grad)[0]) and flat(p.grad)[1] == 1.0
    p.grad = ditto.tensor([3.0, 4.0])
    total = nn.utils.clip_grad_norm_(iter([p]), 1.0, norm_type="inf")
    assert total.item() == 4.0


def test_clip_grad_value_is_torchs(golden):
    clip = golden["clip"]
    for case in clip["value"]:
        ps = grads_params(clip)
        assert nn.utils.clip_grad_value_(ps, case["clip"]) is None
        for p, w in zip(ps, case["grads"]):
            assert bits(flat(p.grad)) == bits(w)


def test_parameters_vector_round_trip():
    from ditto.nn.utils import parameters_to_vector, vector_to_parameters
    m = nn.Linear(3, 2)
    vec = parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    assert flat(vec) == flat(m.weight) + flat(m.bias)
    vec.sum().backward()                     # in the graph, as torch's
    assert flat(m.weight.grad) == [1.0] * 6
    new = ditto.arange(8, dtype=ditto.float32)
    w = m.weight
    vector_to_parameters(new, m.parameters())
    assert m.weight is w and w.shape == (2, 3)
    assert flat(w) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and flat(m.bias) == [
        6.0, 7.0]
    new[0] = 9.0                    # the parameters share vec's storage
    assert flat(w)[0] == 9.0
    with pytest.raises(TypeError, match="expected ditto.Tensor"):
        vector_to_parameters([1.0], m.parameters())
    with pytest.raises(ValueError):
        vector_to_parameters(ditto.zeros(3), m.parameters())


# ---- smaller Module gaps

def test_deepcopy_keeps_parameters():
    import copy
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    m[0].weight.grad = ditto.ones(2, 2)
    c = copy.deepcopy(m)
    w = c[0].weight
    assert isinstance(w, nn.Parameter) and w.requires_grad and w.grad is None
    assert w is not m[0].weight and ditto.equal(w, m[0].weight)
    with ditto.no_grad():
        w.zero_()
    assert m[0].weight.abs().sum().item() > 0
    assert [n for n, _ in c.named_parameters()] == [
        n for n, _ in m.named_parameters()]
    assert list(c.state_dict()) == list(m.state_dict())
    shared = nn.Module()
    shared.a = nn.Linear(1, 1)
    shared.b = shared.a
    s2 = copy.deepcopy(shared)
    assert s2.b is s2.a and s2.a is not shared.a


def test_get_parameter_and_buffer():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert m.get_parameter("0.weight") is m[0].weight
    assert m.get_buffer("1.running_mean") is m[1].running_mean
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        m.get_parameter("1.running_mean")
    with pytest.raises(AttributeError, match="is not a buffer"):
        m.get_buffer("0.weight")
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        m.get_parameter("0.nope")
