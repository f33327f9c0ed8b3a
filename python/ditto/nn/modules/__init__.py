"""ditto.nn's modules (torch.nn.modules)."""
from .module import Module
from .container import (ModuleDict, ModuleList, ParameterDict,
                        ParameterList, Sequential)
from .linear import Flatten, Identity, Linear, Unflatten
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .activation import (GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid,
                         Softmax, Tanh)
from .pooling import MaxPool2d
from .dropout import Dropout, Dropout2d
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .sparse import Embedding
from .loss import (BCEWithLogitsLoss, CrossEntropyLoss, CTCLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell

__all__ = [
    "Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
    "Sequential", "Flatten", "Identity", "Linear",
    "Unflatten", "Conv1d", "Conv2d", "ConvTranspose2d", "GELU", "LeakyReLU",
    "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh", "MaxPool2d",
    "Dropout", "Dropout2d", "BatchNorm1d", "BatchNorm2d", "GroupNorm",
    "LayerNorm", "Embedding", "BCEWithLogitsLoss", "CrossEntropyLoss",
    "CTCLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss", "GRU",
    "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell",
]
