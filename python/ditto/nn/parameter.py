"""ditto.nn.Parameter: a Tensor that a Module registers as a parameter
(torch.nn.Parameter)."""
from .._C import Tensor, empty


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and that a Module
    registers when assigned as an attribute. It shares data's storage (as
    torch's, a new autograd leaf)."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError("Parameter() expects a ditto.Tensor, got "
                            f"{type(data).__name__}")
        super().__init__(data.detach())
        self.requires_grad_(requires_grad)

    @staticmethod
    def _wrap(t):
        """A Parameter that is t's own tensor (no detach): the parameters
        of the C++ modules that ditto.nn wraps."""
        p = Parameter.__new__(Parameter)
        Tensor.__init__(p, t)
        return p

    def __deepcopy__(self, memo):
        """copy.deepcopy (of a model, say) as torch's: a Parameter on a
        clone of the data, with the same requires_grad and no grad."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce__(self):
        """pickle: a Parameter again, on the pickled values."""
        return (type(self), (self.detach(), self.requires_grad))

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__
