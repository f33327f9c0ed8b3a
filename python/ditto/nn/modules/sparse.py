"""Embedding (torch.nn's): weight drawn normal(0, 1), the padding row
zeroed."""
from ... import _C
from ...grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None,
                 dtype=None):
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx = num_embeddings + padding_idx
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.weight = Parameter(_C.empty(num_embeddings, embedding_dim,
                                         dtype=dtype or _C.float32))
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
