"""RNN, LSTM and GRU and their cells (torch.nn's), wrapping ditto's C++
modules (ditto/nn/rnn.h): the same parameter names, shapes, initial draws
and bits. The Python module's parameters are the C++ module's tensors, so
optimizers and load_state_dict (which copies in place) reach them; a
parameter replaced by assignment is not seen by the C++ forward."""
from ... import _C
from ..parameter import Parameter
from .module import Module

_rnn = _C._rnn


class _Wrapped(Module):
    def _adopt(self, impl):
        object.__setattr__(self, "_impl", impl)
        for name, t in impl.named_parameters():
            self.register_parameter(name, Parameter._wrap(t))

    def extra_repr(self):
        return self._impl.extra_repr()

    def _run(self, *args):
        self._impl.train(self.training)
        return self._impl.forward(*args)


class RNNBase(_Wrapped):
    def __init__(self, mode, input_size, hidden_size, num_layers=1,
                 bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, nonlinearity="tanh"):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        args = (input_size, hidden_size, num_layers)
        rest = (bias, batch_first, float(dropout), bidirectional)
        if mode == "LSTM":
            impl = _rnn.LSTM(*args, *rest, proj_size)
        elif mode == "GRU":
            impl = _rnn.GRU(*args, *rest)
        else:
            impl = _rnn.RNN(*args, nonlinearity, *rest)
        self._adopt(impl)


class RNN(RNNBase):
    """forward(input, h_0=None) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1,
                 nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False):
        self.nonlinearity = nonlinearity
        super().__init__("RNN_" + nonlinearity.upper(), input_size,
                         hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, nonlinearity=nonlinearity)

    def forward(self, input, hx=None):
        return self._run(input, hx)


class LSTM(RNNBase):
    """forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False,
                 proj_size=0):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, proj_size)

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else tuple(hx))


class GRU(RNNBase):
    """forward(input, h_0=None) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional)

    def forward(self, input, hx=None):
        return self._run(input, hx)


class RNNCell(_Wrapped):
    def __init__(self, input_size, hidden_size, bias=True,
                 nonlinearity="tanh"):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.nonlinearity = nonlinearity
        self._adopt(_rnn.RNNCell(input_size, hidden_size, bias,
                                 nonlinearity))

    def forward(self, input, hx=None):
        return self._run(input, hx)


class LSTMCell(_Wrapped):
    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self._adopt(_rnn.LSTMCell(input_size, hidden_size, bias))

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else tuple(hx))


class GRUCell(_Wrapped):
    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self._adopt(_rnn.GRUCell(input_size, hidden_size, bias))

    def forward(self, input, hx=None):
        return self._run(input, hx)
