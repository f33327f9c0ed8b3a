"""Activation modules (torch.nn's)."""
from ... import _C
from .. import functional as F
from .module import Module


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (
            ", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input):
        return _C.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return _C.tanh(input)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


def _activation(name, fn_name, params=(), doc=None):
    """A module class calling F.<fn_name> with its constructor's
    arguments (torch.nn's names, defaults and reprs)."""
    names = [p[0] for p in params]

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(params)
        for k, v in zip(names, args):
            values[k] = v
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}() got an unexpected keyword argument "
                                f"'{k}'")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, *inputs):
        return getattr(F, fn_name)(*inputs, *[getattr(self, k) for k in names])

    def extra_repr(self):
        return ", ".join(f"{k}={getattr(self, k)}" for k in names)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr,
                                  "__doc__": doc or f"torch.nn.{name}."})


Softplus = _activation("Softplus", "softplus", (("beta", 1), ("threshold", 20)))
ELU = _activation("ELU", "elu", (("alpha", 1.0), ("inplace", False)))
CELU = _activation("CELU", "celu", (("alpha", 1.0), ("inplace", False)))
SELU = _activation("SELU", "selu", (("inplace", False),))
Hardtanh = _activation("Hardtanh", "hardtanh", (("min_val", -1.0), ("max_val", 1.0),
                                                ("inplace", False)))
ReLU6 = _activation("ReLU6", "relu6", (("inplace", False),))
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid", (("inplace", False),))
Hardswish = _activation("Hardswish", "hardswish", (("inplace", False),))
Mish = _activation("Mish", "mish", (("inplace", False),))
LogSigmoid = _activation("LogSigmoid", "logsigmoid")
Softsign = _activation("Softsign", "softsign")
Tanhshrink = _activation("Tanhshrink", "tanhshrink")
Hardshrink = _activation("Hardshrink", "hardshrink", (("lambd", 0.5),))
Softshrink = _activation("Softshrink", "softshrink", (("lambd", 0.5),))
GLU = _activation("GLU", "glu", (("dim", -1),))
Threshold = _activation("Threshold", "threshold", (("threshold", 0.0), ("value", 0.0),
                                                   ("inplace", False)))
PixelShuffle = _activation("PixelShuffle", "pixel_shuffle", (("upscale_factor", 2),))
PixelUnshuffle = _activation("PixelUnshuffle", "pixel_unshuffle",
                             (("downscale_factor", 2),))
CosineSimilarity = _activation("CosineSimilarity", "cosine_similarity",
                               (("dim", 1), ("eps", 1e-8)))
PairwiseDistance = _activation("PairwiseDistance", "pairwise_distance",
                               (("p", 2.0), ("eps", 1e-6), ("keepdim", False)))
HuberLoss = _activation("HuberLoss", "huber_loss", (("reduction", "mean"), ("delta", 1.0)))
TripletMarginLoss = _activation(
    "TripletMarginLoss", "triplet_margin_loss",
    (("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False), ("reduction", "mean")))
SoftMarginLoss = _activation("SoftMarginLoss", "soft_margin_loss", (("reduction", "mean"),))
MarginRankingLoss = _activation("MarginRankingLoss", "margin_ranking_loss",
                                (("margin", 0.0), ("reduction", "mean")))
HingeEmbeddingLoss = _activation("HingeEmbeddingLoss", "hinge_embedding_loss",
                                 (("margin", 1.0), ("reduction", "mean")))
CosineEmbeddingLoss = _activation("CosineEmbeddingLoss", "cosine_embedding_loss",
                                  (("margin", 0.0), ("reduction", "mean")))
Unfold = _activation("Unfold", "unfold", (("kernel_size", 1), ("dilation", 1),
                                          ("padding", 0), ("stride", 1)))
Fold = _activation("Fold", "fold", (("output_size", 1), ("kernel_size", 1),
                                    ("dilation", 1), ("padding", 0), ("stride", 1)))
Softmin = _activation("Softmin", "softmin", (("dim", None),))
LocalResponseNorm = _activation("LocalResponseNorm", "local_response_norm",
                                (("size", 2), ("alpha", 1e-4), ("beta", 0.75),
                                 ("k", 1.0)))
Upsample = _activation("Upsample", "interpolate",
                       (("size", None), ("scale_factor", None),
                        ("mode", "nearest"), ("align_corners", None)))


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", True)


class Softmax2d(Module):
    def forward(self, input):
        return F.softmax(input, -3)


class ChannelShuffle(Module):
    """(N, g * c, ...) -> channels interleaved across the g groups."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        n, c = input.shape[0], input.shape[1]
        rest = list(input.shape[2:])
        g = self.groups
        return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(
            n, c, *rest)

    def extra_repr(self):
        return f"groups={self.groups}"
