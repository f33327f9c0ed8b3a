"""ditto.optim.lr_scheduler (torch.optim.lr_scheduler's) over the C++
schedulers (ditto/optim/schedulers.h): PyTorch 1.13's recursive
arithmetic, so the lr sequences are PyTorch's to the last bit. Building one
performs the first step, as PyTorch's; last_epoch other than -1 (resuming
by epoch) is not supported: restore state_dict instead."""
from .. import _C

_optim = _C._optim


def _check(last_epoch, name):
    if last_epoch != -1:
        raise ValueError(f"[{name}] last_epoch={last_epoch} is not supported:"
                         " load the scheduler's state_dict to resume")


class LRScheduler:
    def __init__(self, optimizer, impl):
        self.optimizer = optimizer
        self._impl = impl

    def step(self, epoch=None):
        if epoch is not None:
            raise ValueError("step(epoch) is not supported (deprecated in "
                             "PyTorch): call step() once per epoch or step")
        self._impl.step()

    def get_last_lr(self):
        return self._impl.get_last_lr()

    @property
    def last_epoch(self):
        return self._impl.last_epoch

    @property
    def base_lrs(self):
        return self._impl.base_lrs

    def state_dict(self):
        """ditto's layout: name -> float64 tensor (last_epoch, base_lrs,
        last_lr)."""
        return dict(self._impl.state_dict())

    def load_state_dict(self, state_dict):
        self._impl.load_state_dict(list(state_dict.items()))


_LRScheduler = LRScheduler


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1,
                 verbose=False):
        _check(last_epoch, "StepLR")
        super().__init__(optimizer, _optim.StepLR(optimizer._impl, step_size,
                                                  gamma))


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1,
                 verbose=False):
        _check(last_epoch, "MultiStepLR")
        super().__init__(optimizer, _optim.MultiStepLR(
            optimizer._impl, list(milestones), gamma))


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        _check(last_epoch, "ExponentialLR")
        super().__init__(optimizer, _optim.ExponentialLR(optimizer._impl,
                                                         gamma))


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1,
                 verbose=False):
        _check(last_epoch, "CosineAnnealingLR")
        super().__init__(optimizer, _optim.CosineAnnealingLR(
            optimizer._impl, T_max, float(eta_min)))


class LinearLR(LRScheduler):
    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0,
                 total_iters=5, last_epoch=-1, verbose=False):
        _check(last_epoch, "LinearLR")
        super().__init__(optimizer, _optim.LinearLR(
            optimizer._impl, start_factor, end_factor, total_iters))


class LambdaLR(LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        _check(last_epoch, "LambdaLR")
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != 1:
                raise ValueError("ditto's LambdaLR takes one lr_lambda for "
                                 "every group")
            lr_lambda = lr_lambda[0]
        super().__init__(optimizer, _optim.LambdaLR(
            optimizer._impl, lambda epoch: float(lr_lambda(epoch))))


class OneCycleLR(LRScheduler):
    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None,
                 steps_per_epoch=None, pct_start=0.3, anneal_strategy="cos",
                 cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1, verbose=False):
        _check(last_epoch, "OneCycleLR")
        if isinstance(max_lr, (list, tuple)):
            if len(set(max_lr)) != 1:
                raise ValueError("ditto's OneCycleLR takes one max_lr for "
                                 "every group")
            max_lr = max_lr[0]
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR "
                                 "(epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must by one of 'cos' or "
                             f"'linear', instead got {anneal_strategy}")
        super().__init__(optimizer, _optim.OneCycleLR(
            optimizer._impl, float(max_lr), int(total_steps),
            float(pct_start), anneal_strategy == "cos", bool(cycle_momentum),
            float(base_momentum), float(max_momentum), float(div_factor),
            float(final_div_factor), bool(three_phase)))




class SequentialLR(LRScheduler):
    """Runs schedulers one after another, switching at the milestones
    (torch 1.13's SequentialLR: built from schedulers already attached to
    the optimizer; the lr restarts from the first one's)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1,
                 verbose=False):
        _check(last_epoch, "SequentialLR")
        schedulers = list(schedulers)
        milestones = list(milestones)
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError(
                    "Sequential Schedulers expects all schedulers to belong "
                    "to the same optimizer, but got schedulers at index "
                    f"{i} to be different than the optimizer passed in.")
        self._schedulers = schedulers
        self._milestones = milestones
        super().__init__(optimizer, _optim.SequentialLR(
            optimizer._impl, [s._impl for s in schedulers], milestones))


# ---- Schedulers in Python: torch 1.13's formulas line for line (the
# chainable forms multiply the group's current lr, as torch's), over the
# optimizer's param_groups, whose "lr" writes through to the C++
# optimizer. They hold plain Python state (state_dict() is a dict, as
# torch's).

import math as _math  # noqa: E402


class _PyScheduler:
    def __init__(self, optimizer, last_epoch, name):
        _check(last_epoch, name)
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = -1
        self.step()

    def step(self, epoch=None):
        if epoch is not None:
            raise ValueError("step(epoch) is not supported (deprecated in "
                             "PyTorch): call step() once per epoch or step")
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return self._last_lr

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class ConstantLR(_PyScheduler):
    """lr * factor until total_iters, then lr (torch.optim.lr_scheduler's)."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5,
                 last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be "
                             "between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, "ConstantLR")

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch > self.total_iters or self.last_epoch != self.total_iters:
            return [g["lr"] for g in groups]
        return [g["lr"] * (1.0 / self.factor) for g in groups]


class PolynomialLR(_PyScheduler):
    """lr decayed by a polynomial of power over total_iters."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1,
                 verbose=False):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch, "PolynomialLR")

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        decay = ((1.0 - self.last_epoch / self.total_iters) /
                 (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * decay for g in groups]


class MultiplicativeLR(_PyScheduler):
    """lr times lr_lambda(epoch) each step."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch, "MultiplicativeLR")

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch > 0:
            return [g["lr"] * f(self.last_epoch)
                    for f, g in zip(self.lr_lambdas, groups)]
        return [g["lr"] for g in groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items()
                if k not in ("optimizer", "lr_lambdas")}


class CosineAnnealingWarmRestarts(_PyScheduler):
    """Cosine annealing restarted every T_i steps, T_i growing by T_mult."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1,
                 verbose=False):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch, "CosineAnnealingWarmRestarts")

    def get_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) *
                (1 + _math.cos(_math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        if epoch is not None:
            raise ValueError("step(epoch) is not supported: call step()")
        if self.last_epoch < 0:
            # torch's first step, step(0)
            self.last_epoch = 0
            self.T_i = self.T_0
            self.T_cur = 0
        else:
            self.last_epoch += 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CyclicLR(_PyScheduler):
    """lr cycled between base_lr and max_lr (triangular, triangular2,
    exp_range or scale_fn), momentum cycled the other way."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000,
                 step_size_down=None, mode="triangular", gamma=1.0,
                 scale_fn=None, scale_mode="cycle", cycle_momentum=True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch=-1,
                 verbose=False):
        _check(last_epoch, "CyclicLR")
        groups = optimizer.param_groups
        base_lrs = self._format_param("base_lr", groups, base_lr)
        for lr, group in zip(base_lrs, groups):
            group["lr"] = lr
        self.max_lrs = self._format_param("max_lr", groups, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = (float(step_size_down) if step_size_down is not None
                          else step_size_up)
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and \
                scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        if scale_fn is None:
            self.scale_fn = {
                "triangular": lambda x: 1.0,
                "triangular2": lambda x: 1 / (2. ** (x - 1)),
                "exp_range": lambda x: gamma ** x}[mode]
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        else:
            self.scale_fn = scale_fn
            self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum with "
                                 "`cycle_momentum` option enabled")
            base_momentums = self._format_param("base_momentum", groups,
                                                base_momentum)
            for m, group in zip(base_momentums, groups):
                group["momentum"] = m
            self.base_momentums = [g["momentum"] for g in groups]
            self.max_momentums = self._format_param("max_momentum", groups,
                                                    max_momentum)
        super().__init__(optimizer, last_epoch, "CyclicLR")
        self.base_lrs = base_lrs

    @staticmethod
    def _format_param(name, groups, param):
        if isinstance(param, (list, tuple)):
            if len(param) != len(groups):
                raise ValueError(f"expected {len(groups)} values for {name}, "
                                 f"got {len(param)}")
            return list(param)
        return [param] * len(groups)

    def get_lr(self):
        cycle = _math.floor(1 + self.last_epoch / self.total_size)
        x = 1. + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        # base_height = (max_lr - base_lr) * scale_factor, as torch's
        lrs = [base_lr + ((max_lr - base_lr) * scale_factor) * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bm, mm in zip(self.optimizer.param_groups,
                                     self.base_momentums, self.max_momentums):
                group["momentum"] = mm - ((mm - bm) * scale_factor) * self.scale_fn(at)
        return lrs

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items()
                if k not in ("optimizer", "scale_fn")}


class ReduceLROnPlateau:
    """lr times factor once the metric has not improved for patience
    steps (torch.optim.lr_scheduler.ReduceLROnPlateau)."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10,
                 threshold=1e-4, threshold_mode="rel", cooldown=0, min_lr=0,
                 eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.factor = factor
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.eps = eps
        self.last_epoch = 0
        self.mode_worse = _math.inf if mode == "min" else -_math.inf
        self.best = self.mode_worse
        self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1. - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.)
        return a > best + self.threshold

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for i, group in enumerate(self.optimizer.param_groups):
                old_lr = float(group["lr"])
                new_lr = max(old_lr * self.factor, self.min_lrs[i])
                if old_lr - new_lr > self.eps:
                    group["lr"] = new_lr
                    if self.verbose:
                        print(f"Epoch {self.last_epoch:05d}: reducing learning "
                              f"rate of group {i} to {new_lr:.4e}.")
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self):
        return self._last_lr

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
