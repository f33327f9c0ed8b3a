"""ditto.optim over the C++ optimizers and schedulers: the schedulers'
lr sequences are PyTorch's to the bit (tests/nn/nn_golden.json "sched",
from PyTorch 1.13), short MLP runs follow PyTorch's losses ("train", at
the C++ tests' tolerance: matmul sums round differently), and a Python
training step gives exactly the bits of the same update written with
ditto's functional ops (PyTorch 1.13's single-tensor formulas)."""
import math

import pytest

import ditto
import ditto.nn as nn
import ditto.nn.functional as F
import ditto.optim as optim
from ditto.optim import lr_scheduler as S


def make_mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def batch(b):
    """The fixture's data (gen_nn_golden.py): drawn after the model."""
    x = ditto.randn(b, 1, 28, 28)
    y = ditto.randint(0, 10, (b,))
    for i in range(b):
        x[i, 0, 2 * int(y[i]) + 4, :] += 2.0
    return x, y


SCHEDULERS = {
    "step": lambda o: S.StepLR(o, step_size=3, gamma=0.7),
    "multistep": lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9],
                                         gamma=0.5),
    "exponential": lambda o: S.ExponentialLR(o, gamma=0.9),
    "cosine": lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "linear": lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0,
                                   total_iters=6),
    "onecycle_cos": lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=20),
    "onecycle_linear_3phase": lambda o: S.OneCycleLR(
        o, max_lr=0.1, total_steps=17, anneal_strategy="linear",
        three_phase=True, pct_start=0.25),
    "lambda": lambda o: S.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e),
}


def test_scheduler_sequences_are_pytorchs(nn_golden):
    cases = {c["name"]: c for c in nn_golden["sched"]}
    assert set(SCHEDULERS) <= set(cases)
    for name, make in SCHEDULERS.items():
        c = cases[name]
        p = nn.Parameter(ditto.zeros(1))
        opt = optim.SGD([p], lr=c["base"], momentum=0.9)
        sched = make(opt)
        for k, want in enumerate(c["lrs"]):
            assert opt.param_groups[0]["lr"] == want, (name, k)
            if "momenta" in c:
                assert opt.param_groups[0]["momentum"] == c["momenta"][k]
            p.grad = ditto.ones(1)
            opt.step()
            sched.step()
        assert sched.get_last_lr() == [opt.param_groups[0]["lr"]]
        assert sched.last_epoch == len(c["lrs"])


@pytest.mark.parametrize("name", ["mlp_sgd_nesterov_wd", "mlp_adam_amsgrad",
                                  "mlp_adamw_onecycle"])
def test_mlp_runs_follow_pytorch(nn_golden, name):
    c = {c["name"]: c for c in nn_golden["train"]}[name]
    ditto.manual_seed(c["seed"])
    model = make_mlp()
    o = c["optimizer"]
    if o["type"] == "SGD":
        opt = optim.SGD(model.parameters(), lr=o["lr"],
                        momentum=o["momentum"], dampening=o["dampening"],
                        weight_decay=o["weight_decay"],
                        nesterov=o["nesterov"])
    else:
        cls = optim.AdamW if o["type"] == "AdamW" else optim.Adam
        opt = cls(model.parameters(), lr=o["lr"], betas=tuple(o["betas"]),
                  eps=o["eps"], weight_decay=o["weight_decay"],
                  amsgrad=o["amsgrad"])
    sched = None
    if c["scheduler"] is not None:
        sched = S.OneCycleLR(opt, max_lr=c["scheduler"]["max_lr"],
                             total_steps=c["scheduler"]["total_steps"])
    steps = min(c["steps"], 40)
    for step in range(steps):
        x, y = batch(c["batch"])
        if sched is not None:
            assert opt.param_groups[0]["lr"] == c["lrs"][step]
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        want = c["losses"][step]
        err = abs(loss.item() - want) / max(abs(want), 1e-2)
        assert err < 1e-4, (step, loss.item(), want)


def sgd_reference(params, grads, bufs, lr, momentum, dampening, wd,
                  nesterov):
    """PyTorch 1.13's SGD step, with ditto's ops (ditto/optim)."""
    with ditto.no_grad():
        for i, (p, g) in enumerate(zip(params, grads)):
            d = g
            if wd != 0:
                d = ditto.add(d, p, alpha=wd)
            if momentum != 0:
                if bufs[i] is None:
                    bufs[i] = d.clone()
                else:
                    bufs[i].mul_(momentum).add_(d, alpha=1 - dampening)
                d = ditto.add(d, bufs[i], alpha=momentum) if nesterov \
                    else bufs[i]
            p.add_(d, alpha=-lr)


def adam_reference(params, grads, state, lr, b1, b2, eps, wd, amsgrad,
                   decoupled):
    """PyTorch 1.13's Adam/AdamW step, with ditto's ops."""
    with ditto.no_grad():
        for i, (p, g) in enumerate(zip(params, grads)):
            if i not in state:
                state[i] = [ditto.scalar_tensor(0.0), ditto.zeros_like(p),
                            ditto.zeros_like(p), ditto.zeros_like(p)]
            step_t, m, v, vmax = state[i]
            step_t.add_(1.0)
            if decoupled:
                p.mul_(1 - lr * wd)
            elif wd != 0:
                g = ditto.add(g, p, alpha=wd)
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            step = step_t.item()
            bc1 = 1 - b1 ** step
            bc2 = 1 - b2 ** step
            if amsgrad:
                vmax.copy_(ditto.maximum(vmax, v))
                denom = ditto.div(ditto.sqrt(vmax), math.sqrt(bc2)).add_(eps)
            else:
                denom = ditto.div(ditto.sqrt(v), math.sqrt(bc2)).add_(eps)
            p.addcdiv_(m, denom, value=-(lr / bc1))


def small_mlp():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def run_both(make_opt, reference, steps=4):
    """The same model trained by the optimizer and by the reference: every
    parameter equal bit for bit after each step."""
    ditto.manual_seed(0)
    model = small_mlp()
    ref = small_mlp()
    ref.load_state_dict(model.state_dict())
    opt = make_opt(model.parameters())
    x = ditto.randn(16, 6)
    y = ditto.randint(0, 3, (16,))
    for _ in range(steps):
        for m in (model, ref):
            m.zero_grad()
            F.cross_entropy(m(x), y).backward()
        opt.step()
        reference(list(ref.parameters()),
                  [p.grad for p in ref.parameters()])
        for (n, p), (_, q) in zip(model.named_parameters(),
                                  ref.named_parameters()):
            assert ditto.equal(p, q), n
    return model


def test_sgd_is_the_functional_update_bit_for_bit():
    for m, damp, wd, nesterov in [(0.9, 0.1, 1e-3, False),
                                  (0.9, 0.0, 1e-2, True),
                                  (0.0, 0.0, 0.0, False)]:
        bufs = [None] * 4
        run_both(lambda ps: optim.SGD(ps, lr=0.05, momentum=m,
                                      dampening=damp, weight_decay=wd,
                                      nesterov=nesterov),
                 lambda ps, gs: sgd_reference(ps, gs, bufs, 0.05, m, damp,
                                              wd, nesterov))


def test_adam_and_adamw_are_the_functional_update_bit_for_bit():
    for cls, wd, ams in [(optim.Adam, 1e-3, True), (optim.Adam, 0, False),
                         (optim.AdamW, 1e-2, False), (optim.AdamW, 0.1, True)]:
        state = {}
        run_both(lambda ps: cls(ps, lr=2e-3, betas=(0.8, 0.99), eps=1e-7,
                                weight_decay=wd, amsgrad=ams),
                 lambda ps, gs: adam_reference(
                     ps, gs, state, 2e-3, 0.8, 0.99, 1e-7, wd, ams,
                     cls is optim.AdamW))


def test_param_groups_are_live_and_settable():
    ditto.manual_seed(1)
    a, b = nn.Linear(2, 2), nn.Linear(2, 1)
    opt = optim.SGD([{"params": a.parameters()},
                     {"params": b.parameters(), "lr": 0.5, "tag": "head"}],
                    lr=0.1, momentum=0.0)
    assert opt.param_groups[0]["lr"] == 0.1
    assert opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["tag"] == "head"
    assert list(opt.param_groups[0]) == [     # torch 1.13's keys, in order
        "params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
        "maximize", "foreach", "differentiable"]
    opt.param_groups[0]["lr"] = 0.25
    w = a.weight.detach().clone()
    a.weight.grad = ditto.ones(2, 2)
    opt.step()
    assert ditto.equal(a.weight, w - 0.25)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="more than one"):
        optim.SGD([{"params": [a.weight]}, {"params": [a.weight]}], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(a.parameters(), lr=0.1, nesterov=True)
    sched = S.StepLR(opt, step_size=1, gamma=0.5)
    sched.step()
    assert opt.param_groups[0]["lr"] == 0.125
    assert opt.param_groups[1]["lr"] == 0.25
    assert opt.param_groups[0]["initial_lr"] == 0.25


def test_state_dict_resumes_exactly():
    def setup():
        ditto.manual_seed(4)
        model = small_mlp()
        opt = optim.AdamW(model.parameters(), lr=1e-2, amsgrad=True)
        sched = S.CosineAnnealingLR(opt, T_max=7)
        return model, opt, sched

    def train(model, opt, sched, x, y, steps):
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            sched.step()

    ditto.manual_seed(5)
    x, y = ditto.randn(8, 6), ditto.randint(0, 3, (8,))
    model, opt, sched = setup()
    train(model, opt, sched, x, y, 3)
    saved = (model.state_dict(), opt.state_dict(), sched.state_dict())
    saved = ({k: v.clone() for k, v in saved[0].items()}, saved[1], saved[2])
    sd = saved[1]
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq",
                                      "max_exp_avg_sq", "step"]
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert sd["param_groups"][0]["amsgrad"] is True
    train(model, opt, sched, x, y, 3)

    model2, opt2, sched2 = setup()
    model2.load_state_dict(saved[0])
    opt2.load_state_dict(saved[1])
    sched2.load_state_dict(saved[2])
    assert opt2.param_groups[0]["lr"] == saved[1]["param_groups"][0]["lr"]
    train(model2, opt2, sched2, x, y, 3)
    for (n, p), (_, q) in zip(model.named_parameters(),
                              model2.named_parameters()):
        assert ditto.equal(p, q), n
    bad = opt2.state_dict()
    bad["state"][0]["exp_avg"] = ditto.zeros(3)
    with pytest.raises(ValueError, match="size mismatch"):
        opt2.load_state_dict(bad)
