"""More of torch.nn's modules, each over its nn.functional function:
PReLU, RReLU, the alpha and 1-d/3-d dropouts, LPPool1d/2d and the losses
KLDivLoss, PoissonNLLLoss, GaussianNLLLoss, MultiMarginLoss,
MultiLabelSoftMarginLoss."""
from ... import _C
from .. import functional as F
from ..parameter import Parameter
from .loss import _Loss, _WeightedLoss
from .module import Module


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_C.full([num_parameters], float(init),
                                        dtype=dtype or _C.float32))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training,
                       self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else "")


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and "
                             f"1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(_DropoutNd):
    _fn = staticmethod(lambda x, p, t, i: F.alpha_dropout(x, p, t, i))


class FeatureAlphaDropout(_DropoutNd):
    _fn = staticmethod(lambda x, p, t, i: F.feature_alpha_dropout(x, p, t, i))


class Dropout1d(_DropoutNd):
    _fn = staticmethod(lambda x, p, t, i: F.dropout1d(x, p, t, i))


class Dropout3d(_DropoutNd):
    _fn = staticmethod(lambda x, p, t, i: F.dropout3d(x, p, t, i))


class _LPPool(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}"
                f", stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    def forward(self, input):
        return F.lp_pool1d(input, self.norm_type, self.kernel_size,
                           self.stride, self.ceil_mode)


class LPPool2d(_LPPool):
    def forward(self, input):
        return F.lp_pool2d(input, self.norm_type, self.kernel_size,
                           self.stride, self.ceil_mode)


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean",
                 log_target=False):
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction,
                        log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input=True, full=False, size_average=None,
                 eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, self.log_input,
                                  self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full,
                                   eps=self.eps, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p=1, margin=1.0, weight=None, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(weight, reduction)
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p,
                                   margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, reduction)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target,
                                             weight=self.weight,
                                             reduction=self.reduction)


__all__ = ["PReLU", "RReLU", "AlphaDropout", "FeatureAlphaDropout",
           "Dropout1d", "Dropout3d", "LPPool1d", "LPPool2d", "KLDivLoss",
           "PoissonNLLLoss", "GaussianNLLLoss", "MultiMarginLoss",
           "MultiLabelSoftMarginLoss"]
