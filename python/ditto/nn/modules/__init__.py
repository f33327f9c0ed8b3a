"""ditto.nn's modules (torch.nn.modules)."""
from .module import Module
from .container import (ModuleDict, ModuleList, ParameterDict,
                        ParameterList, Sequential)
from .linear import Flatten, Identity, Linear, Unflatten
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from .activation import (GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid,
                         Softmax, Tanh)
from .activation import (  # noqa: F401
    Softplus, ELU, CELU, SELU, Hardtanh, ReLU6, Hardsigmoid, Hardswish, Mish, LogSigmoid, Softsign, Tanhshrink, Hardshrink, Softshrink, GLU, Threshold, PixelShuffle, PixelUnshuffle, CosineSimilarity, PairwiseDistance, HuberLoss, TripletMarginLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, Unfold, Fold)
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d,
                      AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      FractionalMaxPool2d, FractionalMaxPool3d, MaxPool1d,
                      MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d,
                      MaxUnpool3d)
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad2d)
from .dropout import Dropout, Dropout2d
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm,
                            InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                            LayerNorm)
from .sparse import Embedding
from .attention import KVCache, MultiheadAttention, RMSNorm  # noqa: F401
from .activation import (  # noqa: F401
    Softmin, LocalResponseNorm, Upsample, UpsamplingNearest2d,
    UpsamplingBilinear2d, Softmax2d, ChannelShuffle)
from .linear import Bilinear, LazyLinear  # noqa: F401
from .sparse import EmbeddingBag  # noqa: F401
from .conv import ConvTranspose1d  # noqa: F401
from .transformer import (Transformer, TransformerDecoder,  # noqa: F401
                          TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, CTCLoss,
                   L1Loss, MSELoss, NLLLoss, SmoothL1Loss)
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell
from .extra import *  # noqa: F401,F403
from .extra import __all__ as _extra_all

__all__ = [
    "Softmin", "LocalResponseNorm", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "Softmax2d", "ChannelShuffle", "Bilinear",
    "ConvTranspose1d", "LazyLinear", "EmbeddingBag",
    "KVCache", "MultiheadAttention", "RMSNorm", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
    "Softplus", "ELU", "CELU", "SELU", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "LogSigmoid", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "Threshold", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity", "PairwiseDistance", "HuberLoss", "TripletMarginLoss", "SoftMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "Unfold", "Fold",
    "Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
    "Sequential", "Flatten", "Identity", "Linear",
    "Unflatten", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d",
    "ConvTranspose3d", "GELU", "LeakyReLU",
    "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh", "MaxPool1d",
    "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
    "FractionalMaxPool3d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad2d",
    "Dropout", "Dropout2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm",
    "LayerNorm", "Embedding", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss",
    "CTCLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss", "GRU",
    "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell",
] + _extra_all
