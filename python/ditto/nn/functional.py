"""ditto.nn.functional (torch.nn.functional) over ditto's C++ ops."""
import math
import warnings
from .. import _C
from .._C._nn import (  # noqa: F401
    gru_cell_gates,
    lstm_cell_gates, max_pool2d_backward, max_pool3d_backward,
    split_rows)


_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to "
    "align_corners=False since 1.3.0. Please specify align_corners=True if "
    "the old behavior is desired. See the documentation of grid_sample for "
    "details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros",
                align_corners=None):
    """torch.nn.functional.grid_sample: the mode names to ATen's numbers,
    then ditto.grid_sampler (bicubic is refused there)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', "
            f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be "
            f"'zeros', 'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING)
        align_corners = False
    mode_enum = ("bilinear", "nearest", "bicubic").index(mode)
    padding_enum = ("zeros", "border", "reflection").index(padding_mode)
    return _C.grid_sampler(input, grid, mode_enum, padding_enum,
                           align_corners)


def affine_grid(theta, size, align_corners=None):
    """torch.nn.functional.affine_grid: torch's checks, then
    ditto.affine_grid_generator (2-d affine maps)."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but "
                         f"got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape "
                             f"Nx2x3 for size {size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape "
                             f"Nx3x4 for size {size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
            f"transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed "
                      "for unit-size grids when align_corners=True. This is "
                      "not an issue for standard (non-unit) sizes.")
    elif min(size) <= 0:
        raise ValueError(
            f"Expected non-zero, positive output size. Got {size}")
    return _C.affine_grid_generator(theta, size, align_corners)


# pad and linear are declared (shape/shape.ops.toml, linalg/linalg.ops.toml:
# ditto.pad, ditto.linear, exported here with the declared activations
# below), as torch's are torch._C._nn.pad and linear.


def _same_padding(kernel, dilation):
    """'same' padding per dim as (before, after): dilation * (kernel - 1)
    in all, half before, the odd one after (torch's _convolution_mode)."""
    out = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        out.append((total // 2, total - total // 2))
    return out


def _pad_list(before_after):
    """F.pad's list for per-dim (before, after) pairs: last dim first."""
    pads = []
    for before, after in reversed(before_after):
        pads += [before, after]
    return pads


def _string_padding(input, weight, stride, padding, dilation, n, name):
    """torch's padding='valid' / 'same' (Convolution.cpp's
    _convolution_mode): 'same' pads each dim by dilation * (kernel - 1), half
    on each side; an odd total puts the extra zero after the input, padded
    explicitly (constant_pad_nd) as PyTorch does."""
    if padding == "valid":
        return input, 0
    if padding != "same":
        raise ValueError(f"[{name}] Invalid padding string '{padding}', "
                         "should be one of {'valid', 'same'}")
    strides = (stride,) * n if isinstance(stride, int) else tuple(stride)
    if any(s != 1 for s in strides):
        raise ValueError(f"[{name}] padding='same' is not supported for "
                         "strided convolutions")
    dil = (dilation,) * n if isinstance(dilation, int) else tuple(dilation)
    if len(dil) == 1:
        dil = dil * n
    same = _same_padding(tuple(weight.shape[2:]), dil)
    if any(after != before for before, after in same):
        input = pad(input, _pad_list([(0, after - before)
                                      for before, after in same]))
    return input, [before for before, _ in same]


def _conv(c_fn, n, name):
    def conv(input, weight, bias=None, stride=1, padding=0, dilation=1,
             groups=1):
        if isinstance(padding, str):
            input, padding = _string_padding(input, weight, stride, padding,
                                             dilation, n, name)
        return c_fn(input, weight, bias, stride, padding, dilation, groups)
    conv.__name__ = conv.__qualname__ = name
    conv.__doc__ = (f"torch.nn.functional.{name}; padding may be an int, a "
                    "tuple, 'valid' or 'same'.")
    return conv


conv1d = _conv(_C.conv1d, 1, "conv1d")
conv2d = _conv(_C.conv2d, 2, "conv2d")
conv3d = _conv(_C.conv3d, 3, "conv3d")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """torch.nn.functional.embedding; with sparse, the weight's gradient is
    a sparse COO tensor (max_norm and scale_grad_by_freq are not
    supported)."""
    if max_norm is not None:
        raise ValueError("[embedding] max_norm is not supported")
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += weight.shape[0]
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq,
                        sparse)


def dropout(input, p=0.5, training=True, inplace=False, *, generator=None):
    """torch.nn.functional.dropout over torch.dropout (ditto's generator
    keyword: the mask's draws)."""
    out = _C.dropout(input, p, training, generator=generator)
    if inplace and training and p > 0:
        return input.copy_(out)
    return out


def _feature_dropout(input, p, training, inplace, generator):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, "
                         f"but got {p}")
    out = _C.feature_dropout(input, p, training, generator=generator)
    if inplace and training and p > 0:
        return input.copy_(out)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False, *, generator=None):
    """torch.nn.functional.dropout1d: whole channels of (N, C, L) or (C, L)
    (feature_dropout)."""
    if input.dim() not in (2, 3):
        raise RuntimeError("dropout1d: Expected 2D or 3D input, but "
                           f"received a {input.dim()}D input")
    if input.dim() == 3:
        return _feature_dropout(input, p, training, inplace, generator)
    out = _feature_dropout(input.unsqueeze(0), p, training, False,
                           generator).squeeze(0)
    return input.copy_(out) if inplace and training and p > 0 else out


def dropout2d(input, p=0.5, training=True, inplace=False, *, generator=None):
    """torch.nn.functional.dropout2d: whole channels (dim 1) dropped; a 3-D
    input is (N, C, L) and another rank is warned about, as torch 1.13's."""
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to "
                      "dropout2d, which is deprecated and will result in an "
                      "error in a future release.")
    return _feature_dropout(input, p, training, inplace, generator)


def dropout3d(input, p=0.5, training=True, inplace=False, *, generator=None):
    """torch.nn.functional.dropout3d: whole channels of (N, C, D, H, W) or
    (C, D, H, W)."""
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to "
                      "dropout3d, which is deprecated and will result in an "
                      "error in a future release.")
    if input.dim() == 5:
        return _feature_dropout(input, p, training, inplace, generator)
    out = _feature_dropout(input.unsqueeze(0), p, training, False,
                           generator).squeeze(0)
    return input.copy_(out) if inplace and training and p > 0 else out


def relu(input, inplace=False):
    return input.relu_() if inplace else _C.relu(input)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """torch.nn.functional.embedding_bag (max_norm, scale_grad_by_freq and
    sparse are not supported)."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise ValueError("[embedding_bag] max_norm, scale_grad_by_freq and "
                         "sparse are not supported")
    return _C.embedding_bag(input, weight, offsets, mode, per_sample_weights,
                            include_last_offset, padding_idx)


# ---- the declared activations (ditto/ops/composite/composite.ops.toml), with
# torch.nn.functional's inplace flags
globals().update({_n: getattr(_C, _n)
                  for _n in _C._declared_modules.get("nn.functional", [])})
logsigmoid = _C.log_sigmoid


def _inplace(name):
    def fn(input, *args, inplace=False):
        if inplace:
            return getattr(input, name + "_")(*args)
        return getattr(_C, name)(input, *args)
    fn.__name__ = name
    fn.__doc__ = f"torch.nn.functional.{name}."
    return fn


def elu(input, alpha=1.0, inplace=False):
    return input.elu_(alpha) if inplace else _C.elu(input, alpha)


def celu(input, alpha=1.0, inplace=False):
    return input.celu_(alpha) if inplace else _C.celu(input, alpha)


def selu(input, inplace=False):
    return input.selu_() if inplace else _C.selu(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:
        return input.hardtanh_(min_val, max_val)
    return _C.hardtanh(input, min_val, max_val)


def relu6(input, inplace=False):
    return input.relu6_() if inplace else _C.relu6(input)


def hardsigmoid(input, inplace=False):
    return input.hardsigmoid_() if inplace else _C.hardsigmoid(input)


def hardswish(input, inplace=False):
    return input.hardswish_() if inplace else _C.hardswish(input)


def mish(input, inplace=False):
    return input.mish_() if inplace else _C.mish(input)


def threshold(input, threshold, value, inplace=False):
    out = _C.threshold(input, threshold, value)
    return input.copy_(out) if inplace else out


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.nn.functional.cosine_similarity: x1 . x2 / max(|x1| |x2|, eps)
    (torch 1.13's formula: each norm clamped at eps)."""
    w12 = _C.sum(x1 * x2, dim)
    n1 = _C.sqrt(_C.sum(x1 * x1, dim)).clamp(min=eps)
    n2 = _C.sqrt(_C.sum(x2 * x2, dim)).clamp(min=eps)
    return w12 / (n1 * n2)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.nn.functional.pairwise_distance: the p-norm of x1 - x2 + eps
    over the last dim."""
    d = x1 - x2 + eps
    dim = d.dim() - 1 if d.dim() > 0 else 0
    return _C.norm(d, p, [dim], keepdim)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise ValueError(f"[pixel_shuffle] the channels {c} are not divisible "
                         f"by the square of upscale_factor {r}")
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r != 0 or w % r != 0:
        raise ValueError(f"[pixel_unshuffle] the height {h} and width {w} are "
                         f"not divisible by downscale_factor {r}")
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ---- the normalizations over their declared ATen forms
# (composite/normalization.ops.toml), in torch.nn.functional's order.

def batch_norm(input, running_mean, running_var, weight=None, bias=None,
               training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm."""
    return _C.batch_norm(input, weight, bias, running_mean, running_var,
                         training, momentum, eps, True)


def instance_norm(input, running_mean=None, running_var=None, weight=None,
                  bias=None, use_input_stats=True, momentum=0.1, eps=1e-5):
    """torch.nn.functional.instance_norm."""
    return _C.instance_norm(input, weight, bias, running_mean, running_var,
                            use_input_stats, momentum, eps, True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm."""
    return _C.layer_norm(input, normalized_shape, weight, bias, eps, True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.group_norm."""
    return _C.group_norm(input, num_groups, weight, bias, eps, True)


# ---- the losses over their declared ATen forms (composite/loss.ops.toml),
# as torch's: the reduction string as torch::Reduction's int, the legacy
# size_average/reduce pair as torch's _Reduction maps it.

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, "
                      "please use reduction='{}' instead.".format(
                          _legacy_reduction(size_average, reduce)))
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _legacy_reduction(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _same_size(input, target, op):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"[{op}] Using a target size ({tuple(target.shape)}) that is "
            f"different to the input size ({tuple(input.shape)}) is "
            "deprecated. Please ensure they have the same size.")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,
             reduce=None, reduction="mean"):
    """torch.nn.functional.nll_loss."""
    return _C.nll_loss(input, target, weight,
                       _reduction_enum(reduction, size_average, reduce),
                       ignore_index)


def cross_entropy(input, target, weight=None, size_average=None,
                  ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """torch.nn.functional.cross_entropy."""
    return _C.cross_entropy_loss(
        input, target, weight,
        _reduction_enum(reduction, size_average, reduce), ignore_index,
        label_smoothing)


def mse_loss(input, target, size_average=None, reduce=None,
             reduction="mean"):
    """torch.nn.functional.mse_loss."""
    return _C.mse_loss(input, target,
                       _reduction_enum(reduction, size_average, reduce))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch.nn.functional.l1_loss."""
    return _C.l1_loss(input, target,
                      _reduction_enum(reduction, size_average, reduce))


def smooth_l1_loss(input, target, size_average=None, reduce=None,
                   reduction="mean", beta=1.0):
    """torch.nn.functional.smooth_l1_loss."""
    return _C.smooth_l1_loss(input, target,
                             _reduction_enum(reduction, size_average, reduce),
                             beta)


def binary_cross_entropy(input, target, weight=None, size_average=None,
                         reduce=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy."""
    r = _reduction_enum(reduction, size_average, reduce)
    _same_size(input, target, "binary_cross_entropy")
    return _C.binary_cross_entropy(input, target, weight, r)


def binary_cross_entropy_with_logits(input, target, weight=None,
                                     size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """torch.nn.functional.binary_cross_entropy_with_logits."""
    r = _reduction_enum(reduction, size_average, reduce)
    _same_size(input, target, "binary_cross_entropy_with_logits")
    return _C.binary_cross_entropy_with_logits(input, target, weight,
                                               pos_weight, r)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    """torch.nn.functional.kl_div: batchmean is the sum over the batch
    size, as torch computes it."""
    if size_average is not None or reduce is not None:
        r = _reduction_enum(None, size_average, reduce)
    else:
        r = _reduction_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _C.kl_div(input, target, r, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
             reduction="mean", zero_infinity=False):
    """torch.nn.functional.ctc_loss: lengths as tensors or lists."""
    return _C.ctc_loss(log_probs, targets, input_lengths, target_lengths,
                       blank, _reduction_enum(reduction), zero_infinity)


def _reduce(loss, reduction, op):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"[{op}] {reduction!r} is not a valid value for reduction")


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere."""
    d = (input - target).abs()
    loss = _C.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction, "huber_loss")


def soft_margin_loss(input, target, reduction="mean"):
    return _reduce(_C.log1p(_C.exp(-target * input)), reduction,
                   "soft_margin_loss")


def margin_ranking_loss(input1, input2, target, margin=0.0,
                        reduction="mean"):
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduce(loss, reduction, "margin_ranking_loss")


def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):
    loss = _C.where(target == 1, input, (margin - input).clamp(min=0))
    return _reduce(loss, reduction, "hinge_embedding_loss")


def cosine_embedding_loss(input1, input2, target, margin=0.0,
                          reduction="mean"):
    cos = cosine_similarity(input1, input2, 1, 1e-12) if input1.dim() > 1 \
        else cosine_similarity(input1, input2, 0, 1e-12)
    loss = _C.where(target == 1, 1 - cos, (cos - margin).clamp(min=0))
    return _reduce(loss, reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0,
                        eps=1e-6, swap=False, reduction="mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (d_pos - d_neg + margin).clamp(min=0)
    return _reduce(loss, reduction, "triplet_margin_loss")


def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8,
                     reduction="mean"):
    if log_input:
        loss = _C.exp(input) - target * input
    else:
        loss = input - target * _C.log(input + eps)
    if full:
        approx = target * _C.log(target) - target + 0.5 * _C.log(
            2 * 3.141592653589793 * target)
        loss = loss + _C.where(target > 1, approx, approx * 0)
    return _reduce(loss, reduction, "poisson_nll_loss")


# The poolings: torch's Python over their ATen forms
# (composite/pooling.ops.toml): stride None is the kernel (ATen's []),
# return_indices picks the *_with_indices form, and an adaptive output
# size may name None for a dim the input keeps.

def _stride(stride):
    return [] if stride is None else stride


def _list_with_default(out_size, defaults):
    """torch's: each None of out_size is the input's size there."""
    if isinstance(out_size, int):
        return out_size
    out_size = list(out_size)
    if len(defaults) <= len(out_size):
        raise ValueError("Input dimension should be at least "
                         f"{len(out_size) + 1}")
    return [d if v is None else v
            for v, d in zip(out_size, list(defaults)[-len(out_size):])]


def _max_pool(with_indices, without):
    def with_indices_fn(input, kernel_size, stride=None, padding=0,
                        dilation=1, ceil_mode=False, return_indices=False):
        return with_indices(input, kernel_size, _stride(stride), padding,
                            dilation, ceil_mode)

    def pool(input, kernel_size, stride=None, padding=0, dilation=1,
             ceil_mode=False, return_indices=False):
        if return_indices:
            return with_indices_fn(input, kernel_size, stride, padding,
                                   dilation, ceil_mode)
        return without(input, kernel_size, _stride(stride), padding,
                       dilation, ceil_mode)
    return with_indices_fn, pool


max_pool1d_with_indices, max_pool1d = _max_pool(
    _C.max_pool1d_with_indices, _C.max_pool1d)
max_pool2d_with_indices, max_pool2d = _max_pool(
    _C.max_pool2d_with_indices, _C.max_pool2d)
max_pool3d_with_indices, max_pool3d = _max_pool(
    _C.max_pool3d_with_indices, _C.max_pool3d)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """torch.nn.functional.avg_pool1d."""
    return _C.avg_pool1d(input, kernel_size, _stride(stride), padding,
                         ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool2d."""
    return _C.avg_pool2d(input, kernel_size, _stride(stride), padding,
                         ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool3d."""
    return _C.avg_pool3d(input, kernel_size, _stride(stride), padding,
                         ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool1d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool1d."""
    return _C.adaptive_avg_pool1d(input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d."""
    return _C.adaptive_avg_pool2d(
        input, _list_with_default(output_size, input.size()))


def adaptive_avg_pool3d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool3d."""
    return _C.adaptive_avg_pool3d(
        input, _list_with_default(output_size, input.size()))


def _adaptive_max_pool(aten, n):
    def with_indices_fn(input, output_size, return_indices=False):
        if n > 1:
            output_size = _list_with_default(output_size, input.size())
        return aten(input, output_size)

    def pool(input, output_size, return_indices=False):
        out = with_indices_fn(input, output_size)
        return out if return_indices else out[0]
    return with_indices_fn, pool


adaptive_max_pool1d_with_indices, adaptive_max_pool1d = _adaptive_max_pool(
    _C.adaptive_max_pool1d, 1)
adaptive_max_pool2d_with_indices, adaptive_max_pool2d = _adaptive_max_pool(
    _C.adaptive_max_pool2d, 2)
adaptive_max_pool3d_with_indices, adaptive_max_pool3d = _adaptive_max_pool(
    _C.adaptive_max_pool3d, 3)


def _unpool_output_size(name, input, kernel_size, stride, padding,
                        output_size):
    """torch's: the default (in - 1) stride + kernel - 2 padding per dim,
    or output_size (n or n + 2 sizes) within stride of it."""
    n = len(kernel_size)
    default = [(input.shape[d - n] - 1) * stride[d] + kernel_size[d]
               - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(
            f"[{name}] output_size should be a sequence containing {n} or "
            f"{n + 2} elements, but it has a length of {len(output_size)}")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(
                f"[{name}] invalid output_size {output_size} (dim {d} must "
                f"be between {lo} and {hi})")
    return output_size


def _ntuple(v, n):
    return [v] * n if isinstance(v, int) else list(v)


def _max_unpool(n):
    name = f"max_unpool{n}d"

    def unpool(input, indices, kernel_size, stride=None, padding=0,
               output_size=None):
        k = _ntuple(kernel_size, n)
        st = k if stride is None else _ntuple(stride, n)
        pad = _ntuple(padding, n)
        if len(k) != n or len(st) != n or len(pad) != n:
            raise ValueError(f"[{name}] kernel_size, stride and padding "
                             f"take one value or {n}")
        size = _unpool_output_size(name, input, k, st, pad, output_size)
        if n == 1:
            return _C.max_unpool2d(input.unsqueeze(-1),
                                   indices.unsqueeze(-1),
                                   size + [1]).squeeze(-1)
        if n == 2:
            return _C.max_unpool2d(input, indices, size)
        return _C.max_unpool3d(input, indices, size, st, pad)
    unpool.__name__ = name
    unpool.__doc__ = f"torch.nn.functional.{name}."
    return unpool


max_unpool1d = _max_unpool(1)
max_unpool2d = _max_unpool(2)
max_unpool3d = _max_unpool(3)


def _fractional_max_pool(n):
    name = f"fractional_max_pool{n}d"
    aten = getattr(_C, name)

    def with_indices(input, kernel_size, output_size=None, output_ratio=None,
                     return_indices=False, _random_samples=None):
        if output_size is None:
            if output_ratio is None:
                raise ValueError(f"[{name}] requires specifying either an "
                                 "output_size or an output_ratio")
            ratio = ([output_ratio] * n
                     if isinstance(output_ratio, (int, float))
                     else list(output_ratio))
            if len(ratio) != n:
                raise ValueError(f"[{name}] output_ratio must have 1 or {n} "
                                 f"values, got {len(ratio)}")
            for r in ratio:
                if not 0 < r < 1:
                    raise ValueError(f"[{name}] output_ratio must be "
                                     f"between 0 and 1, got {r}")
            # int(size * ratio), torch's; an input of too few dims is
            # refused by the op
            output_size = ([int(input.shape[d - n] * ratio[d])
                            for d in range(n)]
                           if input.dim() > n else [1] * n)
        # the samples are drawn by the op after it checks its arguments
        # (rand(N, C, n) from the default generator, as torch's Python)
        return aten(input, kernel_size, output_size, _random_samples)

    def pool(input, kernel_size, output_size=None, output_ratio=None,
             return_indices=False, _random_samples=None):
        out = with_indices(input, kernel_size, output_size, output_ratio,
                           False, _random_samples)
        return out if return_indices else out[0]
    with_indices.__name__ = name + "_with_indices"
    pool.__name__ = name
    return with_indices, pool


fractional_max_pool2d_with_indices, fractional_max_pool2d = (
    _fractional_max_pool(2))
fractional_max_pool3d_with_indices, fractional_max_pool3d = (
    _fractional_max_pool(3))


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold: the declared op im2col, (N, C, H, W) ->
    (N, C kh kw, L)."""
    if input.dim() != 4:
        raise ValueError("[unfold] Input Error: Only 4D input Tensors are "
                         f"supported (got {input.dim()}D)")
    return _C.im2col(input, _pair(kernel_size), _pair(dilation),
                     _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: the declared op col2im, (N, C kh kw, L) ->
    (N, C, H, W), each pixel the sum of its blocks in block order."""
    return _C.col2im(input, _pair(output_size), _pair(kernel_size),
                     _pair(dilation), _pair(padding), _pair(stride))


def scaled_dot_product_attention(query, key, value, attn_mask=None,
                                 dropout_p=0.0, is_causal=False, scale=None,
                                 *, generator=None):
    """torch 2.x's F.scaled_dot_product_attention: the declared op (C++,
    one fixed chain per output element); with a generator for the dropout,
    the same chain here, drawing from it."""
    if generator is None or dropout_p == 0.0:
        return _C.scaled_dot_product_attention(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale)
    return _sdpa_with_generator(query, key, value, attn_mask, dropout_p,
                                is_causal, scale, generator)


def _sdpa_with_generator(query, key, value, attn_mask, dropout_p, is_causal,
                         scale, generator):
    """torch 2.x's F.scaled_dot_product_attention, as its math reference:
    softmax(q k^T scale + mask) v, scale 1/sqrt(E) by default; attn_mask
    bool (True = attend) or float (added); is_causal masks the upper
    triangle; dropout_p drops attention weights drawing from generator (or
    the default one). One fixed chain per output element (matmul, softmax),
    forward and backward."""
    L, S = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = _C.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise ValueError("[scaled_dot_product_attention] give attn_mask "
                             "or is_causal, not both")
        scores = scores.masked_fill(_causal_mask(L, S), float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = _C.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True, generator=generator)
    return _C.matmul(weights, value)


def _causal_mask(L, S):
    """(L, S) bool, True above the diagonal: what a causal query must not
    see."""
    from .. import arange
    return arange(S).reshape(1, S) > arange(L).reshape(L, 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """torch.nn.functional.normalize: input over its p-norm along dim, the
    norm at least eps (the C++ library's F::normalize, LibTorch's options:
    the same bits from C++ and Python); out, when given, takes the
    result."""
    result = _C._nn.normalize(input, p, dim, eps)
    if out is None:
        return result
    return out.resize_(input.shape).copy_(result)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch 2.4's F.rms_norm: the declared op, x / sqrt(mean(x^2) + eps) *
    weight over the last len(normalized_shape) dims (eps: the dtype's
    epsilon)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _C.rms_norm(input, list(normalized_shape), weight, eps)


# ---- more of torch.nn.functional as compositions (issue 59)

def softmin(input, dim=None, _stacklevel=3, dtype=None):
    x = input if dtype is None else input.to(dtype)
    return softmax(-x, dim=dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """torch's: Gumbel noise -log(Exponential(1)) drawn with exponential_
    (torch's draws), softmax((logits + g) / tau); hard: the one-hot of the
    argmax with the soft gradient (straight-through)."""
    gumbels = -_C.empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim=dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, True)
    y_hard = _C.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_C.sign(out) * relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) \
        else kernel_size
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_C.sign(out) * relu(out.abs())).mul(kw * kh).pow(1.0 / norm_type)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """torch's: the input over (k + alpha * mean of squares across size
    neighbouring channels)^beta."""
    dim = input.dim()
    if dim < 3:
        raise ValueError("[local_response_norm] Expected 3D or higher "
                         f"dimensionality input (got {dim} dimensions)")
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = list(input.shape)
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def interpolate(input, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """torch.nn.functional.interpolate: torch's checks and choice of ATen
    form (ditto.upsample_bilinear2d ..., declared in
    ditto/ops/composite/interpolation.ops.toml); area is adaptive average
    pooling."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2  # the resized dims
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial "
                    "dimensions, but got input with spatial dimensions of "
                    f"{list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and output size in (o1, o2, ...,oK) format.")
            output_size = size
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of "
                    "spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and scale_factor "
                    f"of shape {scale_factor}. Please provide input tensor "
                    "in (N, C, d1, d2, ...,dK) format and scale_factor in "
                    "(s1, s2, ...,sK) format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError(
            "recompute_scale_factor is not meaningful with an explicit size.")
    # area takes sizes: the recompute path makes them
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(math.floor(float(input.size(i + 2))
                                      * scale_factors[i]))
                       for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic")
                          and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear "
                         "and bicubic modes")
    rank = input.dim()
    nearest = {3: _C.upsample_nearest1d, 4: _C.upsample_nearest2d,
               5: _C.upsample_nearest3d}
    exact = {3: _C._upsample_nearest_exact1d,
             4: _C._upsample_nearest_exact2d,
             5: _C._upsample_nearest_exact3d}
    area = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d,
            5: adaptive_avg_pool3d}
    interpolating = {
        (3, "linear"): _C.upsample_linear1d,
        (4, "bilinear"): (_C._upsample_bilinear2d_aa if antialias
                          else _C.upsample_bilinear2d),
        (5, "trilinear"): _C.upsample_trilinear3d,
        (4, "bicubic"): (_C._upsample_bicubic2d_aa if antialias
                         else _C.upsample_bicubic2d),
    }
    if mode == "nearest" and rank in nearest:
        return nearest[rank](input, output_size, scale_factors)
    if mode == "nearest-exact" and rank in exact:
        return exact[rank](input, output_size, scale_factors)
    if mode == "area" and rank in area:
        return area[rank](input, output_size)
    if (rank, mode) in interpolating:
        return interpolating[(rank, mode)](input, output_size, align_corners,
                                           scale_factors)
    needs = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
    if rank in (3, 4, 5) and mode in needs:
        raise NotImplementedError(
            f"Got {rank}D input, but {mode} mode needs {needs[mode]}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {rank}D) for the modes: nearest | linear | bilinear | "
        f"bicubic | trilinear | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest",
             align_corners=None):
    """torch.nn.functional.upsample (deprecated there): interpolate."""
    warnings.warn("nn.functional.upsample is deprecated. Use "
                  "nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_nearest (deprecated there)."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                  "nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_bilinear (deprecated there)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                  "nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="bilinear",
                       align_corners=True)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None,
                      reduction="mean"):
    x = input if input.dim() == 2 else input.unsqueeze(0)
    tg = target.reshape(-1)
    correct = x.gather(1, tg.reshape(-1, 1))
    z = (margin - correct + x).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, tg).reshape(-1, 1)
    onehot = one_hot(tg, x.shape[1]).to(_C.bool)
    z = z.masked_fill(onehot, 0.0)
    loss = z.sum([1]) / x.shape[1]
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction, "multi_margin_loss")


def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum([loss.dim() - 1]) / input.shape[-1]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def multilabel_margin_loss(input, target, reduction="mean"):
    """torch's: for each sample, the targets are target's entries before
    the first -1; hinge 1 - (x[y] - x[i]) summed over targets y and
    non-targets i, over the number of classes."""
    x = input if input.dim() == 2 else input.unsqueeze(0)
    tg = target if target.dim() == 2 else target.unsqueeze(0)
    losses = []
    n = x.shape[1]
    for row, trow in zip(x.unbind(0), tg.tolist()):
        ys = []
        for v in trow:
            if v < 0:
                break
            ys.append(v)
        is_target = [False] * n
        for y in ys:
            is_target[y] = True
        others = [i for i in range(n) if not is_target[i]]
        total = row.sum() * 0
        if ys and others:
            xo = row.index_select(0, _C.tensor(others, dtype=_C.int64))
            for y in ys:
                total = total + (1 - (row[y] - xo)).clamp(min=0).sum()
        losses.append(total / n)
    loss = _C.stack(losses)
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction, "multilabel_margin_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6,
                      reduction="mean"):
    if var.dim() < input.dim() and var.shape[-1] != 1:
        var = var.unsqueeze(-1)
    v = var.clamp(min=eps)
    loss = 0.5 * (_C.log(v) + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")
