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
