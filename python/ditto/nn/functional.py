"""ditto.nn.functional (torch.nn.functional) over ditto's C++ ops."""
from .. import _C
from .._C._nn import (  # noqa: F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
    adaptive_max_pool1d, adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d, adaptive_max_pool3d_with_indices, affine_grid,
    avg_pool1d, avg_pool2d, avg_pool3d, batch_norm, binary_cross_entropy,
    binary_cross_entropy_with_logits, conv1d, conv2d, conv3d,
    conv_transpose2d, conv_transpose3d,
    cross_entropy, ctc_loss, dropout, dropout2d,
    fractional_max_pool2d, fractional_max_pool2d_with_indices,
    fractional_max_pool3d, fractional_max_pool3d_with_indices, gelu,
    grid_sample, group_norm, gru_cell_gates, instance_norm, interpolate,
    kl_div, l1_loss, layer_norm, leaky_relu, linear, log_softmax,
    lstm_cell_gates, max_pool1d, max_pool1d_with_indices, max_pool2d,
    max_pool2d_backward, max_pool2d_with_indices, max_pool3d,
    max_pool3d_backward, max_pool3d_with_indices, max_unpool1d,
    max_unpool2d, max_unpool3d, mse_loss, nll_loss, normalize, one_hot,
    pad, silu, smooth_l1_loss, softmax, split_rows, upsample, upsample2d)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """torch.nn.functional.embedding; with sparse, the weight's gradient is
    a sparse COO tensor (max_norm and scale_grad_by_freq are not
    supported)."""
    if max_norm is not None or scale_grad_by_freq:
        raise ValueError("[embedding] max_norm and scale_grad_by_freq are not "
                         "supported")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return _C._nn.embedding(input, weight, padding_idx, sparse)


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
