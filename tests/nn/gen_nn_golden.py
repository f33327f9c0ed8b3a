#!/usr/bin/python3
"""Writes tests/nn/nn_golden.json: what PyTorch 1.13's nn and optim produce,
for the C++ tests of ditto's nn/optim to match bit for bit.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_nn_golden.py
It writes tests/nn/nn_golden.json, with four sections:

  "init"      default initialization of modules (Linear, Conv, Embedding,
              LayerNorm, BatchNorm2d, and the Sequential models "cnn" and
              "mlp") after torch.manual_seed(seed): per parameter its shape,
              the crc32 of its float32 bytes and its first values, plus the
              crc32 of the default generator's state afterwards.
  "init_fns"  the torch.nn.init functions on a fresh tensor, recorded the
              same way, and calculate_gain's values ("gains").
  "train"     short training runs (SGD, Adam, AdamW, OneCycleLR) on
              synthetic data drawn from the default generator: the loss of
              every step, the learning rate of every step when a scheduler
              is used, and the final parameters.
  "sched"     learning-rate (and OneCycle momentum) sequences of the
              schedulers: plain double arithmetic.

crc(t) is zlib.crc32 of t's contiguous float32 little-endian bytes; rng_crc
is zlib.crc32 of torch.get_rng_state(). Floats are written with Python's
repr, so they round-trip exactly. The tests never need PyTorch.
"""
import json
import os
import time
import warnings
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "nn_golden.json")


def crc(t):
    """crc32 of a tensor's float32 little-endian bytes, as an int."""
    return zlib.crc32(t.detach().contiguous().numpy().tobytes())


def rng_crc():
    """crc32 of the default CPU generator's state bytes."""
    return zlib.crc32(torch.get_rng_state().numpy().tobytes())


def head(t, n):
    """The first min(n, numel) values of t (in memory order) as floats."""
    return [float(v) for v in t.detach().reshape(-1)[:n].tolist()]


# ---------------------------------------------------------------------------
# Models shared by "init" and "train".

def make_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))


def make_mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 10))


MODELS = {"cnn": make_cnn, "mlp": make_mlp}


# ---------------------------------------------------------------------------
# 1) Module default initialization.

INIT_CASES = [
    ("linear_3_2", lambda: nn.Linear(3, 2)),
    ("linear_784_128", lambda: nn.Linear(784, 128)),
    ("linear_1000_10", lambda: nn.Linear(1000, 10)),
    ("linear_5_4_nobias", lambda: nn.Linear(5, 4, bias=False)),
    ("conv2d_3_8_3", lambda: nn.Conv2d(3, 8, 3)),
    ("conv2d_16_32_5", lambda: nn.Conv2d(16, 32, 5)),
    ("conv2d_8_8_3_g2", lambda: nn.Conv2d(8, 8, 3, groups=2)),
    ("conv1d_4_6_3", lambda: nn.Conv1d(4, 6, 3)),
    ("cnn", make_cnn),
    ("mlp", make_mlp),
    ("seq_small", lambda: nn.Sequential(nn.Linear(4, 3), nn.ReLU(),
                                        nn.Linear(3, 2))),
    ("convtranspose2d_6_4_3_s2", lambda: nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1,
                                                            output_padding=1)),
    ("convtranspose2d_4_6_2_g2", lambda: nn.ConvTranspose2d(4, 6, 2, groups=2, bias=False)),
    ("embedding_10_4", lambda: nn.Embedding(10, 4)),
    ("embedding_10_4_pad", lambda: nn.Embedding(10, 4, padding_idx=-2)),
    ("layernorm_6", lambda: nn.LayerNorm(6)),
    ("batchnorm2d_3", lambda: nn.BatchNorm2d(3)),
]
INIT_SEEDS = [0, 1234]
# Cases whose buffers are recorded too.
WITH_BUFFERS = {"batchnorm2d_3"}


def gen_init():
    cases = []
    for name, make in INIT_CASES:
        for seed in INIT_SEEDS:
            torch.manual_seed(seed)
            m = make()
            case = {
                "name": name,
                "seed": seed,
                "params": [{"name": n, "shape": list(p.shape), "crc": crc(p),
                            "head": head(p, 6)}
                           for n, p in m.named_parameters()],
                "rng_crc": rng_crc(),
            }
            if name in WITH_BUFFERS:
                # running_mean/var are float; num_batches_tracked is an
                # int64 scalar (tolist gives a Python int).
                case["buffers"] = [{"name": n, "shape": list(b.shape),
                                    "values": b.reshape(-1).tolist()}
                                   for n, b in m.named_buffers()]
            cases.append(case)
    return cases


# ---------------------------------------------------------------------------
# 2) torch.nn.init functions.

INIT_FN_CASES = [
    ("uniform_m2_3", [7, 5], lambda t: init.uniform_(t, -2.0, 3.0)),
    # 99 elements >= 16: normal_'s vectorized path.
    ("normal_1_05", [33, 3], lambda t: init.normal_(t, 1.0, 0.5)),
    # 15 elements < 16: normal_'s scalar path.
    ("normal_small", [3, 5], lambda t: init.normal_(t, 0.0, 2.0)),
    ("kaiming_uniform_relu", [20, 30],
     lambda t: init.kaiming_uniform_(t, nonlinearity="relu")),
    ("kaiming_uniform_fanout_leaky", [8, 4, 3, 3],
     lambda t: init.kaiming_uniform_(t, a=0.2, mode="fan_out",
                                     nonlinearity="leaky_relu")),
    ("kaiming_normal_relu", [20, 30],
     lambda t: init.kaiming_normal_(t, nonlinearity="relu")),
    ("kaiming_normal_fanout", [6, 4, 5],
     lambda t: init.kaiming_normal_(t, mode="fan_out")),
    ("xavier_uniform", [12, 7], lambda t: init.xavier_uniform_(t)),
    ("xavier_uniform_tanh_gain", [16, 8, 3],
     lambda t: init.xavier_uniform_(t, gain=init.calculate_gain("tanh"))),
    ("xavier_normal", [12, 7], lambda t: init.xavier_normal_(t)),
    ("xavier_normal_gain2", [40, 9],
     lambda t: init.xavier_normal_(t, gain=2.0)),
    ("constant_0_3", [4, 4], lambda t: init.constant_(t, 0.3)),
    ("eye", [3, 5], lambda t: init.eye_(t)),
]
INIT_FN_SEEDS = [0, 99]


def gen_init_fns():
    cases = []
    for name, shape, fn in INIT_FN_CASES:
        for seed in INIT_FN_SEEDS:
            torch.manual_seed(seed)
            t = torch.empty(shape)
            fn(t)
            cases.append({"name": name, "seed": seed, "shape": shape,
                          "crc": crc(t), "head": head(t, 6),
                          "rng_crc": rng_crc()})
    return cases


def gen_gains():
    return {
        "linear": float(init.calculate_gain("linear")),
        "conv2d": float(init.calculate_gain("conv2d")),
        "sigmoid": float(init.calculate_gain("sigmoid")),
        "tanh": float(init.calculate_gain("tanh")),
        "relu": float(init.calculate_gain("relu")),
        "leaky_relu": float(init.calculate_gain("leaky_relu")),
        "leaky_relu_0.2": float(init.calculate_gain("leaky_relu", 0.2)),
        "selu": float(init.calculate_gain("selu")),
    }


# ---------------------------------------------------------------------------
# 3) Training curves.
#
# Each step draws x = randn(B,1,28,28) then y = randint(0,10,(B,)) from the
# default generator, and brightens row 2*y+4 of each image by 2.0 so that the
# label is learnable. The model stays in train mode: the CNN's Dropout draws
# from the default generator during forward, after the data of its step.

TRAIN_CASES = [
    # name, model, seed, batch, steps, optimizer, scheduler (or None)
    ("mlp_sgd_momentum", "mlp", 0, 32, 100,
     ("SGD", dict(lr=0.01, momentum=0.9)), None),
    ("cnn_sgd_momentum", "cnn", 0, 16, 100,
     ("SGD", dict(lr=0.01, momentum=0.9)), None),
    ("mlp_adamw_onecycle", "mlp", 1, 32, 100,
     ("AdamW", dict(lr=1e-3, weight_decay=0.01)),
     ("OneCycleLR", dict(max_lr=0.01, total_steps=100))),
    # max_lr 0.002: at 0.01 Adam's steps on this small CNN are chaotic and
    # any rounding difference grows without bound.
    ("cnn_adamw_onecycle", "cnn", 1, 16, 100,
     ("AdamW", dict(lr=1e-3, weight_decay=0.01)),
     ("OneCycleLR", dict(max_lr=0.002, total_steps=100))),
    ("mlp_sgd_nesterov_wd", "mlp", 2, 32, 30,
     ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4,
                  dampening=0)), None),
    ("mlp_adam_amsgrad", "mlp", 3, 32, 30,
     ("Adam", dict(lr=2e-3, betas=(0.8, 0.99), eps=1e-7, weight_decay=1e-3,
                   amsgrad=True)), None),
]


def jsonable(d):
    """A dict of hyperparameters with tuples as lists (None stays null)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def gen_train():
    cases = []
    for name, model_name, seed, B, steps, (opt_type, opt_kw), sched_spec in \
            TRAIN_CASES:
        t0 = time.time()
        torch.manual_seed(seed)
        model = MODELS[model_name]()
        opt = getattr(torch.optim, opt_type)(model.parameters(), **opt_kw)
        sched = None
        if sched_spec is not None:
            sched_type, sched_kw = sched_spec
            sched = getattr(torch.optim.lr_scheduler, sched_type)(opt,
                                                                  **sched_kw)
        model.train()

        losses, lrs = [], []
        for _ in range(steps):
            x = torch.randn(B, 1, 28, 28)
            y = torch.randint(0, 10, (B,))
            for i in range(B):
                x[i, 0, 2 * int(y[i]) + 4, :] += 2.0
            out = model(x)
            loss = F.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            lrs.append(float(opt.param_groups[0]["lr"]))  # lr of this step
            opt.step()
            if sched is not None:
                sched.step()
            losses.append(float(loss))

        case = {
            "name": name,
            "model": model_name,
            "seed": seed,
            "batch": B,
            "steps": steps,
            # The optimizer's full defaults (including the ones left at
            # their default values, e.g. maximize, foreach).
            "optimizer": dict(type=opt_type, **jsonable(opt.defaults)),
            "scheduler": (dict(type=sched_spec[0], **jsonable(sched_spec[1]))
                          if sched_spec is not None else None),
            "losses": losses,
        }
        if sched is not None:
            case["lrs"] = lrs
        case["final_params"] = [
            {"name": n, "crc": crc(p), "sum": float(p.detach().double().sum()),
             "head": head(p, 4)}
            for n, p in model.named_parameters()]
        cases.append(case)
        print(f"train {name}: {time.time() - t0:.1f} s, loss "
              f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
    return cases


# ---------------------------------------------------------------------------
# 4) Scheduler sequences.

S = torch.optim.lr_scheduler

SCHED_CASES = [
    # name, base lr, n, make(opt) -> scheduler, records momentum
    ("step", 0.1, 20, lambda o: S.StepLR(o, step_size=3, gamma=0.7), False),
    ("multistep", 0.1, 15,
     lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.5), False),
    ("exponential", 0.05, 15, lambda o: S.ExponentialLR(o, gamma=0.9), False),
    ("cosine", 0.1, 25,
     lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001), False),
    ("linear", 0.1, 12,
     lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0,
                          total_iters=6), False),
    # OneCycleLR overwrites the base lr (max_lr / div_factor) and cycles the
    # optimizer's momentum.
    ("onecycle_cos", 0.1, 20,
     lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=20), True),
    ("onecycle_linear_3phase", 0.1, 17,
     lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=17,
                            anneal_strategy="linear", three_phase=True,
                            pct_start=0.25), True),
    ("lambda", 0.1, 10, lambda o: S.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e),
     False),
    ("sequential", 0.1, 14,
     lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1,
                                             total_iters=4),
                                  S.CosineAnnealingLR(o, T_max=8)],
                              milestones=[4]), False),
]


def gen_sched():
    cases = []
    for name, base, n, make, with_momentum in SCHED_CASES:
        p = nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([p], lr=base, momentum=0.9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = make(opt)
            lrs, momenta = [], []
            for _ in range(n):
                lrs.append(float(opt.param_groups[0]["lr"]))
                momenta.append(float(opt.param_groups[0]["momentum"]))
                opt.step()
                sched.step()
        case = {"name": name, "base": base, "lrs": lrs}
        if with_momentum:
            case["momenta"] = momenta
        cases.append(case)
    return cases


# ---------------------------------------------------------------------------

def main():
    t0 = time.time()
    out = {"torch_version": torch.__version__}
    out["init"] = gen_init()
    out["init_fns"] = gen_init_fns()
    out["gains"] = gen_gains()
    out["train"] = gen_train()
    out["sched"] = gen_sched()
    out["extra"] = extra()
    out["layers"] = layers()
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes) in "
          f"{time.time() - t0:.1f} s")


def flat(t):
    return t.detach().flatten().tolist()


def layers():
    """Normalization, pooling, padding, embedding and dropout2d: outputs
    and gradients of (out * r).sum() for fixed inputs (float32 unless
    noted). "crc" fields are bit-exact claims."""
    g = torch.Generator().manual_seed(21)
    out = {}

    def grads_of(fn, *inputs):
        ins = [t.clone().requires_grad_(True) for t in inputs]
        y = fn(*ins)
        r = torch.randn(y.shape, generator=g, dtype=y.dtype)
        (y * r).sum().backward()
        return y, r, [i.grad for i in ins]

    # BatchNorm2d: two training steps, then eval.
    x = torch.randn(4, 3, 5, 5, generator=g)
    x2 = torch.randn(4, 3, 5, 5, generator=g)
    w = torch.randn(3, generator=g)
    b = torch.randn(3, generator=g)
    bn = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.copy_(w)
        bn.bias.copy_(b)
    y1 = bn(x)
    y2 = bn(x2)
    bn.eval()
    y3 = bn(x)
    out["bn2d"] = {"x": flat(x), "x2": flat(x2), "w": flat(w), "b": flat(b),
                   "y1_crc": crc(y1), "y1": flat(y1), "y2_crc": crc(y2),
                   "y3": flat(y3), "running_mean": flat(bn.running_mean),
                   "running_var": flat(bn.running_var),
                   "running_mean_crc": crc(bn.running_mean),
                   "running_var_crc": crc(bn.running_var)}
    bn_t = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn_t.weight.copy_(w)
        bn_t.bias.copy_(b)
    y, r, (gx,) = grads_of(bn_t, x)
    out["bn2d"]["r"] = flat(r)
    out["bn2d"]["grad_x"] = flat(gx)
    out["bn2d"]["grad_w"] = flat(bn_t.weight.grad)
    out["bn2d"]["grad_b"] = flat(bn_t.bias.grad)
    # BatchNorm1d with the cumulative average (momentum None).
    z = torch.randn(8, 4, generator=g)
    z2 = torch.randn(8, 4, generator=g)
    bn1 = nn.BatchNorm1d(4, momentum=None)
    bn1(z)
    bn1(z2)
    out["bn1d_cumulative"] = {"z": flat(z), "z2": flat(z2),
                              "running_mean": flat(bn1.running_mean),
                              "running_var": flat(bn1.running_var),
                              "num_batches_tracked": int(bn1.num_batches_tracked)}
    # LayerNorm and GroupNorm.
    xl = torch.randn(3, 4, 5, generator=g)
    ln = nn.LayerNorm(5)
    with torch.no_grad():
        ln.weight.copy_(torch.randn(5, generator=g))
        ln.bias.copy_(torch.randn(5, generator=g))
    y, r, (gx,) = grads_of(ln, xl)
    out["layernorm"] = {"x": flat(xl), "w": flat(ln.weight), "b": flat(ln.bias),
                        "y": flat(y), "r": flat(r), "grad_x": flat(gx),
                        "grad_w": flat(ln.weight.grad)}
    xg = torch.randn(2, 6, 3, 3, generator=g)
    gn = nn.GroupNorm(2, 6)
    with torch.no_grad():
        gn.weight.copy_(torch.randn(6, generator=g))
        gn.bias.copy_(torch.randn(6, generator=g))
    y, r, (gx,) = grads_of(gn, xg)
    out["groupnorm"] = {"x": flat(xg), "w": flat(gn.weight), "b": flat(gn.bias),
                        "y": flat(y), "r": flat(r), "grad_x": flat(gx),
                        "grad_w": flat(gn.weight.grad)}
    # Average pooling, adaptive pooling, padding (float64).
    xp = torch.randn(2, 3, 7, 9, generator=g, dtype=torch.float64)
    cases = []
    for name, fn in [
        ("avg_k2", lambda t: F.avg_pool2d(t, 2)),
        ("avg_k3_s2_p1_ceil_nopad", lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True,
                                                           count_include_pad=False)),
        ("avg_k3_s2_p1_ceil", lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True)),
        ("avg_k32_div5", lambda t: F.avg_pool2d(t, (3, 2), (1, 2), divisor_override=5)),
        ("adaptive_3_4", lambda t: F.adaptive_avg_pool2d(t, (3, 4))),
        ("adaptive_5_6", lambda t: F.adaptive_avg_pool2d(t, (5, 6))),
        ("pad_reflect", lambda t: F.pad(t, (2, 1, 3, 0), mode="reflect")),
        ("pad_replicate", lambda t: F.pad(t, (2, 4, 1, 3), mode="replicate")),
        ("pad_constant", lambda t: F.pad(t, (1, 2, 0, 1), value=0.5)),
    ]:
        y, r, (gx,) = grads_of(fn, xp)
        cases.append({"name": name, "shape": list(y.shape), "y": flat(y),
                      "r": flat(r), "grad_x": flat(gx)})
    out["pool_input"] = flat(xp)
    out["pool_cases"] = cases
    # Embedding with a padding row: the gradient skips it.
    we = torch.randn(10, 3, generator=g, dtype=torch.float64)
    idx = torch.tensor([[1, 8, 3], [8, 8, 0]])
    y, r, (gw,) = grads_of(lambda t: F.embedding(idx, t, padding_idx=8), we)
    out["embedding"] = {"w": flat(we), "idx": flat(idx), "y": flat(y), "r": flat(r),
                        "grad_w": flat(gw)}
    # Dropout2d draws one Bernoulli per channel from the default generator.
    torch.manual_seed(5)
    xd = torch.ones(3, 4, 2, 2)
    yd = F.dropout2d(xd, 0.3)
    out["dropout2d"] = {"y_crc": crc(yd), "y": flat(yd), "rng_crc": rng_crc()}
    # ConvTranspose2d (float64): output and gradients.
    ct = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                            dilation=1).double()
    xc = torch.randn(2, 4, 5, 4, generator=g, dtype=torch.float64)
    y, r, (gx,) = grads_of(ct, xc)
    out["conv_transpose"] = {"x": flat(xc), "w": flat(ct.weight), "b": flat(ct.bias),
                             "w_shape": list(ct.weight.shape), "shape": list(y.shape),
                             "y": flat(y), "r": flat(r), "grad_x": flat(gx),
                             "grad_w": flat(ct.weight.grad), "grad_b": flat(ct.bias.grad),
                             "repr": repr(ct)}
    # interpolate (float64 values and gradients; the nearest index pitfall
    # of pytorch-training.md 3.5 included: 2 -> 82).
    xi = torch.randn(2, 3, 5, 7, generator=g, dtype=torch.float64)
    # float32: PyTorch 1.13's float64 nearest kernel with several channels
    # maps indices in double, unlike every other case (ditto: float32 rule).
    xn = torch.randn(1, 2, 2, 3, generator=g)
    icases = []
    for name, inp, kw in [
        ("nearest_size", xi, dict(size=(8, 11))),
        ("nearest_scale", xi, dict(scale_factor=1.7)),
        ("nearest_82", xn, dict(size=(82, 5))),
        ("nearest_exact", xi, dict(size=(9, 4), mode="nearest-exact")),
        ("bilinear", xi, dict(size=(9, 13), mode="bilinear")),
        ("bilinear_ac", xi, dict(size=(9, 13), mode="bilinear", align_corners=True)),
        ("bilinear_scale", xi, dict(scale_factor=(2.5, 0.6), mode="bilinear")),
        ("bilinear_recompute", xi, dict(scale_factor=0.35, mode="bilinear",
                                        recompute_scale_factor=True)),
    ]:
        y, r, (gx,) = grads_of(lambda t: F.interpolate(t, **kw), inp)
        icases.append({"name": name, "in_shape": list(inp.shape), "x": flat(inp),
                       "float32": inp.dtype == torch.float32,
                       "shape": list(y.shape), "y": flat(y), "r": flat(r),
                       "grad_x": flat(gx)})
    out["interpolate"] = icases
    out["upsample_repr"] = [repr(nn.Upsample(scale_factor=2.0)),
                            repr(nn.Upsample(size=(4, 5), mode="bilinear"))]
    # affine_grid and grid_sample (float64): values, input and grid gradients.
    xs = torch.randn(2, 3, 5, 6, generator=g, dtype=torch.float64)
    theta = torch.randn(2, 2, 3, generator=g, dtype=torch.float64) * 0.6
    theta[:, 0, 0] += 1.0
    theta[:, 1, 1] += 1.0
    gcases = []
    for ac in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 7), align_corners=ac) * 1.3
        for mode, pad in [("bilinear", "zeros"), ("bilinear", "border"),
                          ("bilinear", "reflection"), ("nearest", "zeros"),
                          ("nearest", "reflection")]:
            xi_ = xs.clone().requires_grad_(True)
            gi_ = grid.clone().requires_grad_(True)
            y = F.grid_sample(xi_, gi_, mode=mode, padding_mode=pad, align_corners=ac)
            r = torch.randn(y.shape, generator=g, dtype=torch.float64)
            (y * r).sum().backward()
            gcases.append({"mode": mode, "padding": pad, "align_corners": ac,
                           "grid": flat(grid), "y": flat(y), "r": flat(r),
                           "grad_x": flat(xi_.grad),
                           "grad_grid": flat(gi_.grad) if gi_.grad is not None else None})
    th = theta.clone().requires_grad_(True)
    ag = F.affine_grid(th, (2, 3, 4, 7), align_corners=False)
    ra = torch.randn(ag.shape, generator=g, dtype=torch.float64)
    (ag * ra).sum().backward()
    out["grid_sample"] = {"x": flat(xs), "theta": flat(theta), "cases": gcases,
                          "affine": flat(ag), "affine_r": flat(ra),
                          "affine_grad": flat(th.grad)}
    # GELU (exact and tanh) in float64 and float32; erf values.
    xe = torch.linspace(-7, 7, 141, dtype=torch.float64)
    gel = {"x": flat(xe), "erf": flat(torch.erf(xe)), "repr": repr(nn.GELU()),
           "repr_tanh": repr(nn.GELU(approximate="tanh"))}
    for ap in ("none", "tanh"):
        y, r, (gx,) = grads_of(lambda t: F.gelu(t, approximate=ap), xe)
        gel[ap] = {"y": flat(y), "r": flat(r), "grad_x": flat(gx),
                   "y32": flat(F.gelu(xe.float(), approximate=ap))}
    out["gelu"] = gel
    # trunc_normal_ (bit-exact claim: crc) and orthogonal_ (to rounding),
    # both with the generator's state after them.
    ext = []
    for name, shape, fn in [
        ("trunc_normal_default", [50, 7], lambda t: init.trunc_normal_(t)),
        ("trunc_normal_shifted", [33, 3], lambda t: init.trunc_normal_(t, 0.5, 0.3, -0.2, 0.9)),
        ("trunc_normal_wide", [4, 5], lambda t: init.trunc_normal_(t, 0.0, 2.0, -3.0, 3.0)),
        ("orthogonal_tall", [10, 4], lambda t: init.orthogonal_(t)),
        ("orthogonal_wide", [4, 3, 3], lambda t: init.orthogonal_(t, gain=2.0)),
    ]:
        torch.manual_seed(17)
        t = torch.empty(shape)
        fn(t)
        ext.append({"name": name, "shape": shape, "crc": crc(t), "values": flat(t),
                    "rng_crc": rng_crc()})
    out["init_extra"] = ext
    # Gradient clipping (float32): 2-norm and inf-norm.
    grads = [torch.randn(4, 5, generator=g), torch.randn(7, generator=g),
             torch.randn(2, 3, 3, generator=g)]
    clip = {"grads": [flat(t) for t in grads], "shapes": [list(t.shape) for t in grads]}
    for name, kwargs in [("norm2_05", dict(max_norm=0.5)),
                         ("norm_inf_03", dict(max_norm=0.3, norm_type=float("inf"))),
                         ("norm2_big", dict(max_norm=100.0))]:
        ps = [torch.zeros(t.shape, requires_grad=True) for t in grads]
        for p_, t in zip(ps, grads):
            p_.grad = t.clone()
        total = torch.nn.utils.clip_grad_norm_(ps, **kwargs)
        clip[name] = {"total": float(total), "grads": [flat(p_.grad) for p_ in ps]}
    out["clip"] = clip
    return out


def nan_to_none(values):
    """JSON has no NaN: null stands for it (the C++ test reads it back)."""
    return [None if v != v else v for v in values]


# ---- printed forms: printed forms and loss values (small float64 cases)
def extra():
    out = {}
    torch.manual_seed(0)
    out["repr_cnn"] = repr(nn.Sequential(nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
                                         nn.Linear(128, 10)))
    out["repr_misc"] = repr(nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1, 2, 2, bias=False), nn.LeakyReLU(0.2),
                                          nn.Conv1d(4, 6, 3), nn.Softmax(1), nn.Unflatten(1, (2, 5)),
                                          nn.Sequential(nn.Linear(3, 2, bias=False), nn.Tanh())))
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 5, dtype=torch.float64, generator=g)
    t = torch.tensor([0, 4, -100, 2, 1, 4])
    w = torch.rand(5, dtype=torch.float64, generator=g) + 0.5
    p = torch.softmax(torch.randn(6, 5, dtype=torch.float64, generator=g), 1)
    z = torch.randn(6, 5, dtype=torch.float64, generator=g)
    y = torch.rand(6, 5, dtype=torch.float64, generator=g)
    pw = torch.rand(5, dtype=torch.float64, generator=g) + 0.5
    x4 = torch.randn(2, 3, 4, 5, dtype=torch.float64, generator=g)
    t4 = torch.randint(0, 3, (2, 4, 5), generator=g)
    losses = {
        "ce": F.cross_entropy(x, t),
        "ce_w_sum": F.cross_entropy(x, t, weight=w, reduction="sum"),
        "ce_w_smooth": F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
        "ce_smooth": F.cross_entropy(x, t, label_smoothing=0.3),
        "ce_prob": F.cross_entropy(x, p),
        "ce_prob_w_smooth": F.cross_entropy(x, p, weight=w, label_smoothing=0.2),
        "ce_4d": F.cross_entropy(x4, t4),
        "nll_none": F.nll_loss(F.log_softmax(x, 1), t, reduction="none"),
        "mse": F.mse_loss(z, y),
        "l1_sum": F.l1_loss(z, y, reduction="sum"),
        "smooth_l1_05": F.smooth_l1_loss(z, y, beta=0.5),
        "bce_logits": F.binary_cross_entropy_with_logits(z, y),
        "bce_logits_pw": F.binary_cross_entropy_with_logits(z, y, pos_weight=pw),
        "kl_batchmean": F.kl_div(F.log_softmax(z, 1), p, reduction="batchmean"),
        "kl_log_target_sum": F.kl_div(F.log_softmax(z, 1), p.log(), reduction="sum", log_target=True),
        "log_softmax": F.log_softmax(x, 1),
        "softmax0": F.softmax(x, 0),
    }
    out["loss_inputs"] = {k: v.flatten().tolist() for k, v in
                          dict(x=x, w=w, p=p, z=z, y=y, pw=pw, x4=x4).items()}
    out["loss_inputs"]["t"] = t.tolist()
    out["loss_inputs"]["t4"] = t4.flatten().tolist()
    out["losses"] = {k: v.flatten().tolist() for k, v in losses.items()}
    xp = torch.randn(2, 3, 7, 9, dtype=torch.float64, generator=g)
    xp[0, 0, 1, 1] = xp[0, 0, 1, 2]  # a tie
    xp[1, 2, 3, 3] = float("nan")
    pooled = []
    for args in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                 dict(kernel_size=(3, 2), stride=(2, 1), dilation=(2, 1), ceil_mode=True)]:
        o, i = F.max_pool2d(xp, return_indices=True, **args)
        pooled.append({"args": {k: (list(v) if isinstance(v, tuple) else v) for k, v in args.items()},
                       "shape": list(o.shape), "values": nan_to_none(o.flatten().tolist()),
                       "indices": i.flatten().tolist()})
    out["pool_input"] = nan_to_none(xp.flatten().tolist())
    out["pool"] = pooled
    return out


if __name__ == "__main__":
    main()
