#!/usr/bin/python3
"""Writes tests/python/nn_api_golden.json: what PyTorch 1.13 gives for the
parts of torch.nn and torch.optim that tests/python/test_nn_api.py checks
ditto against (the tests never import torch).

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/python/gen_nn_api_golden.py

Sections:
  "optim"  RMSprop and Adagrad runs (and Adam/SGD with add_param_group):
           initial parameters and the gradient of every step are given
           (drawn once from torch.manual_seed(0) and stored), so only the
           update arithmetic is compared; per step every parameter's
           values, and at the end torch's optimizer.state keys, in order,
           with the scalar states' values.
  "clip"   clip_grad_norm_ (norm types 2, 1, inf, 3, with and without
           clipping) and clip_grad_value_ on stored gradients: the total
           norm and the clipped gradients.
  "sched"  SequentialLR's lr sequences.
  "repr"   printed forms of ModuleDict, ParameterList, ParameterDict (with
           "torch." spelled "ditto.").
Float32 values are written with Python's repr of the exact value, so they
round-trip exactly.
"""
import json
import os
from collections import OrderedDict

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "nn_api_golden.json")


def vals(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def optim_case(name, make, shapes, steps, extra_group=None):
    """make(params) -> optimizer; extra_group: (shapes, options) added with
    add_param_group after the first step."""
    g = torch.Generator().manual_seed(0)
    params = [torch.randn(s, generator=g).requires_grad_() for s in shapes]
    init = [vals(p) for p in params]
    opt = make(params)
    added = []
    if extra_group is not None:
        added = [torch.randn(s, generator=g).requires_grad_()
                 for s in extra_group[0]]
    added_init = [vals(p) for p in added]
    grads, after = [], []
    for step in range(steps):
        if step == 1 and extra_group is not None:
            opt.add_param_group(dict(extra_group[1], params=added))
        ps = params + (added if step >= 1 else [])
        gs = [torch.randn(p.shape, generator=g) for p in ps]
        for p, gr in zip(ps, gs):
            p.grad = gr.clone()
        if step == 2 and len(ps) > 1:
            ps[1].grad = None  # a parameter without a gradient is skipped
            gs[1] = None
        opt.step()
        grads.append([None if gr is None else vals(gr) for gr in gs])
        after.append([vals(p) for p in params + added])
    state = []
    for p in params + added:
        st = opt.state[p]
        state.append([[k, float(v) if isinstance(v, (int, float)) or
                       (torch.is_tensor(v) and v.dim() == 0) else None]
                      for k, v in st.items()])
    return {"name": name, "shapes": [list(s) for s in shapes],
            "init": init, "added_shapes":
            [list(s) for s in (extra_group[0] if extra_group else [])],
            "added_init": added_init,
            "added_options": extra_group[1] if extra_group else None,
            "grads": grads, "after": after, "state": state,
            "groups": [{k: v for k, v in grp.items() if k != "params"}
                       for grp in opt.param_groups]}


def optim_cases():
    O = torch.optim
    shapes = [(3, 4), (5,)]
    return [
        optim_case("rmsprop", lambda p: O.RMSprop(p), shapes, 4),
        optim_case("rmsprop_full", lambda p: O.RMSprop(
            p, lr=0.02, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.8,
            centered=True), shapes, 4),
        optim_case("rmsprop_maximize", lambda p: O.RMSprop(
            p, lr=0.01, momentum=0.5, maximize=True), shapes, 3,
            ([(2, 2)], {"lr": 0.05, "centered": True})),
        # (torch 1.13's Adagrad fails to step a group added by
        # add_param_group: it creates state only in its constructor.)
        optim_case("adagrad", lambda p: O.Adagrad(p), shapes, 4),
        optim_case("adagrad_full", lambda p: O.Adagrad(
            p, lr=0.1, lr_decay=0.01, weight_decay=0.05,
            initial_accumulator_value=0.3, eps=1e-8), shapes, 4),
        optim_case("adam_added", lambda p: O.Adam(p, lr=0.01), shapes, 3,
                   ([(2, 3)], {"lr": 0.1, "betas": (0.8, 0.9),
                             "amsgrad": True})),
        optim_case("sgd_added", lambda p: O.SGD(p, lr=0.1, momentum=0.9),
                   shapes, 3, ([(4,)], {"momentum": 0.0,
                                        "weight_decay": 0.1})),
    ]


def clip_cases():
    g = torch.Generator().manual_seed(1)
    shapes = [(150, 7), (129,), (1,)]
    grads = [torch.randn(s, generator=g) * 3 for s in shapes]
    out = {"shapes": [list(s) for s in shapes],
           "grads": [vals(x) for x in grads], "norm": [], "value": []}
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        for max_norm in (0.5, 1e6):
            ps = [torch.zeros(s, requires_grad=True) for s in shapes]
            for p, x in zip(ps, grads):
                p.grad = x.clone()
            total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
            clipped = [vals(p.grad) for p in ps]
            out["norm"].append({
                "norm_type": "inf" if norm_type == float("inf") else
                norm_type, "max_norm": max_norm, "total": float(total),
                # Under the limit torch multiplies by 1.0: the input.
                "grads": clipped if clipped != out["grads"] else "input"})
    for clip in (0.5, 2.0):
        ps = [torch.zeros(s, requires_grad=True) for s in shapes]
        for p, x in zip(ps, grads):
            p.grad = x.clone()
        torch.nn.utils.clip_grad_value_(ps, clip)
        out["value"].append({"clip": clip,
                             "grads": [vals(p.grad) for p in ps]})
    return out


def sched_cases():
    S = torch.optim.lr_scheduler
    out = {}
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
        p = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
        sched = make(opt)
        lrs = []
        for _ in range(14):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        out[name] = lrs
    return out


def repr_cases():
    torch.manual_seed(0)
    nn = torch.nn
    md = nn.ModuleDict({"lin": nn.Linear(2, 3), "act": nn.ReLU()})
    md.update([("z", nn.Identity()), ("a", nn.Tanh())])
    pl = nn.ParameterList([nn.Parameter(torch.zeros(2, 3)),
                           torch.ones(4), "tag"])
    pl.append(nn.Parameter(torch.zeros(1, dtype=torch.float64)))
    pd = nn.ParameterDict({"w": nn.Parameter(torch.zeros(2)),
                           "b": torch.zeros(3, 1)})
    pd["n"] = 7
    pd.update(OrderedDict([("y", torch.zeros(5, dtype=torch.float64)),
                           ("x", nn.Parameter(torch.zeros(1)))]))
    model = nn.Module()
    model.blocks = md
    model.plist = pl
    model.pdict = pd
    fix = lambda s: s.replace("torch.", "ditto.")
    return {"module_dict": fix(repr(md)), "parameter_list": fix(repr(pl)),
            "parameter_dict": fix(repr(pd)), "model": fix(repr(model)),
            "named_parameters": [n for n, _ in model.named_parameters()],
            "state_dict": list(model.state_dict())}


def main():
    out = {"torch_version": torch.__version__, "optim": optim_cases(),
           "clip": clip_cases(), "sched": sched_cases(),
           "repr": repr_cases()}
    with open(OUT, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
