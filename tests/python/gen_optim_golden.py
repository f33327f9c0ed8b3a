"""Writes optim_golden.json: torch 1.13's parameters after each step of
Adamax, NAdam, RAdam and Adadelta (fixed gradients, so only the update is
compared), and the lr sequences of ConstantLR, PolynomialLR,
MultiplicativeLR, CosineAnnealingWarmRestarts, CyclicLR and
ReduceLROnPlateau, for test_optim_golden.py. Run with Debian's torch:

    /usr/bin/python3 tests/python/gen_optim_golden.py
"""
import json
import os

import torch

from optim_cases import lbfgs_run

P0 = [0.5, -1.25, 2.0, 0.0, -0.75, 3.5, 1e-3]


def grads(step):
    return [((i * 37 + step * 11) % 17) / 8.0 - 1.0 for i in range(len(P0))]


OPTIMIZERS = [
    ("Adamax", {}), ("Adamax", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {}), ("NAdam", {"lr": 0.01, "weight_decay": 0.05,
                              "momentum_decay": 0.01}),
    ("RAdam", {}), ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9)}),
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8,
                                    "weight_decay": 0.1}),
]

SCHEDULERS = [
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}, "SGD"),
    ("PolynomialLR", {"total_iters": 6, "power": 2.0}, "SGD"),
    ("MultiplicativeLR", {"lr_lambda": "0.95"}, "SGD"),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2,
                                     "eta_min": 0.001}, "SGD"),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3},
     "SGD"),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2,
                  "step_size_down": 3, "mode": "triangular2"}, "SGD"),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2,
                  "mode": "exp_range", "gamma": 0.9}, "SGD"),
]
METRICS = [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.71, 0.72, 0.73, 0.74]


def bits(t):
    return t.detach().view(torch.int32).tolist()


def main():
    out = {"torch": torch.__version__, "p0": P0, "optimizers": [],
           "schedulers": [], "plateau": []}
    for name, kw in OPTIMIZERS:
        p = torch.tensor(P0, requires_grad=True)
        opt = getattr(torch.optim, name)([p], **kw)
        steps = []
        for s in range(6):
            p.grad = torch.tensor(grads(s))
            opt.step()
            steps.append(bits(p))
        kw = {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()}
        out["optimizers"].append({"name": name, "kwargs": kw, "steps": steps})
    for name, kw, _ in SCHEDULERS:
        p = torch.tensor(P0, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
        args = dict(kw)
        if "lr_lambda" in args:
            factor = float(args["lr_lambda"])
            args["lr_lambda"] = lambda epoch, f=factor: f
        sched = getattr(torch.optim.lr_scheduler, name)(opt, **args)
        lrs, moms = [], []
        for _ in range(12):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
            moms.append(opt.param_groups[0]["momentum"])
        out["schedulers"].append({"name": name, "kwargs": kw, "lrs": lrs,
                                  "momentums": moms})
    for kw in ({"patience": 2}, {"patience": 1, "mode": "max",
                                  "factor": 0.5, "cooldown": 1},
               {"patience": 0, "threshold_mode": "abs", "threshold": 0.05,
                "min_lr": 0.02}):
        p = torch.tensor(P0, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        lrs = []
        for m in METRICS:
            sched.step(m)
            lrs.append(opt.param_groups[0]["lr"])
        out["plateau"].append({"kwargs": kw, "metrics": METRICS, "lrs": lrs})
    out["lbfgs"] = lbfgs_run(torch)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "optim_golden.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
