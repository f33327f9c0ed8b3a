"""MultiheadAttention and RMSNorm (torch.nn's), over ditto's ops."""
import math

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention with torch's parameters, names and
    initial bits (out_proj drawn as a Linear, then in_proj_weight
    xavier_uniform_, the biases zero), batch_first, key_padding_mask,
    attn_mask, need_weights (averaged over heads unless
    average_attn_weights=False). kdim and vdim other than embed_dim are
    not supported."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True,
                 add_bias_kv=False, add_zero_attn=False, kdim=None,
                 vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError("[MultiheadAttention] embed_dim must be "
                             "divisible by num_heads, got "
                             f"{embed_dim} and {num_heads}")
        if (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise ValueError("[MultiheadAttention] kdim and vdim other than "
                             "embed_dim are not supported")
        if add_bias_kv or add_zero_attn:
            raise ValueError("[MultiheadAttention] add_bias_kv and "
                             "add_zero_attn are not supported")
        self.embed_dim = embed_dim
        self.kdim = embed_dim
        self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        dtype = dtype or _C.float32
        self.in_proj_weight = Parameter(_C.empty(3 * embed_dim, embed_dim,
                                                 dtype=dtype))
        self.register_parameter("q_proj_weight", None)
        self.register_parameter("k_proj_weight", None)
        self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.)
            init.constant_(self.out_proj.bias, 0.)

    def forward(self, query, key, value, key_padding_mask=None,
                need_weights=True, attn_mask=None, average_attn_weights=True,
                is_causal=False):
        _check_attention_args(self.embed_dim, query, key, value,
                              key_padding_mask, attn_mask)
        batched = query.dim() == 3
        if not batched:
            query, key, value = (query.unsqueeze(1), key.unsqueeze(1),
                                 value.unsqueeze(1))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (query.transpose(0, 1), key.transpose(0, 1),
                                 value.transpose(0, 1))
        L, N, E = query.shape
        S = key.shape[0]
        H, D = self.num_heads, self.head_dim
        op = "[MultiheadAttention]"
        if key.shape[1] != N:
            raise ValueError(f"{op} key's batch {key.shape[1]} differs from "
                             f"query's {N}")
        if attn_mask is not None:
            want = {2: (L, S), 3: (N * H, L, S)}.get(attn_mask.dim())
            if want is None or tuple(attn_mask.shape) != want:
                raise ValueError(
                    f"{op} the shape of the {attn_mask.dim()}D attn_mask is "
                    f"{tuple(attn_mask.shape)}, but should be "
                    f"{(L, S)} or {(N * H, L, S)}")
        if key_padding_mask is not None and \
                tuple(key_padding_mask.shape) != (N, S):
            raise ValueError(f"{op} expecting key_padding_mask shape of "
                             f"{(N, S)}, but got "
                             f"{tuple(key_padding_mask.shape)}")
        w = self.in_proj_weight
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (
            b[0:E], b[E:2 * E], b[2 * E:])
        q = F.linear(query, w[0:E], bq)
        k = F.linear(key, w[E:2 * E], bk)
        v = F.linear(value, w[2 * E:], bv)
        # (L, N, E) -> (N, H, L, D)
        q = q.reshape(L, N * H, D).transpose(0, 1).reshape(N, H, L, D)
        k = k.reshape(S, N * H, D).transpose(0, 1).reshape(N, H, S, D)
        v = v.reshape(S, N * H, D).transpose(0, 1).reshape(N, H, S, D)
        mask = None
        if attn_mask is not None:
            m = attn_mask
            if m.dtype == _C.bool:
                m = _C.zeros(list(m.shape), dtype=q.dtype).masked_fill(
                    m, float("-inf"))
            mask = m.reshape(N, H, L, S) if m.dim() == 3 else m
        elif is_causal:
            mask = _C.zeros([L, S], dtype=q.dtype).masked_fill(
                F._causal_mask(L, S), float("-inf"))
        if key_padding_mask is not None:
            kp = key_padding_mask
            if kp.dtype == _C.bool:
                kp = _C.zeros(list(kp.shape), dtype=q.dtype).masked_fill(
                    kp, float("-inf"))
            kp = kp.reshape(N, 1, 1, S)
            mask = kp if mask is None else mask + kp
        scores = _C.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        if mask is not None:
            scores = scores + mask
        weights = _C.softmax(scores, -1)
        if self.dropout > 0.0 and self.training:
            weights = F.dropout(weights, self.dropout, True)
        out = _C.matmul(weights, v)  # (N, H, L, D)
        out = out.permute(2, 0, 1, 3).reshape(L, N, E)
        out = self.out_proj(out)
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean([1])
        if not batched:
            weights = weights.squeeze(0)
        return out, weights

    def extra_repr(self):
        return ""


class RMSNorm(Module):
    """torch.nn.RMSNorm (torch 2.4): x / sqrt(mean(x^2) + eps) * weight,
    weight ones."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.ones(list(self.normalized_shape),
                                            dtype=dtype or _C.float32))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


def _check_attention_args(embed_dim, query, key, value, key_padding_mask,
                          attn_mask):
    """torch's checks of MultiheadAttention's inputs, as ValueErrors naming
    the op and the values, before anything is computed."""
    op = "[MultiheadAttention]"
    if query.dim() not in (2, 3) or key.dim() != query.dim() or \
            value.dim() != query.dim():
        raise ValueError(f"{op} expected query, key and value of 2 or 3 dims "
                         f"alike, got {query.dim()}, {key.dim()} and "
                         f"{value.dim()}")
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.shape[-1] != embed_dim:
            raise ValueError(f"{op} was expecting embedding dimension of "
                             f"{embed_dim}, but got {t.shape[-1]} ({name} of "
                             f"shape {tuple(t.shape)})")
    if key.shape != value.shape:
        raise ValueError(f"{op} key shape {tuple(key.shape)} does not match "
                         f"value shape {tuple(value.shape)}")
    for name, m in (("attn_mask", attn_mask),
                    ("key_padding_mask", key_padding_mask)):
        if m is not None and m.dtype != _C.bool and \
                not m.is_floating_point():
            raise ValueError(f"{op} only bool and floating types of {name} "
                             f"are supported, got {m.dtype}")


class KVCache:
    """The keys and values of the positions decoded so far, per layer:
    ditto's own API for incremental decoding (torch has none in its core).

    A GPT-style model's attention calls ``k, v = cache.update(layer, k, v)``
    with the new positions' keys and values, (..., L_new, E), and attends
    with ``cache.causal_mask(L_new)``; the model is called on the prompt
    (prefill), then on one token at a time. Each step's outputs have the
    bits of the same positions in one forward over the whole sequence
    (R8 (b), docs/design.md): the new rows of every product and norm are
    computed as in the full batch of rows, and the softmax and the product
    with the values only gain exact zeros from the masked keys.

        cache = ditto.nn.KVCache()
        logits = model(prompt, cache)           # positions 0 .. P-1
        logits = model(next_token, cache)       # position P
    """

    def __init__(self):
        self._keys = {}
        self._values = {}

    def update(self, layer, key, value):
        """Appends key and value (..., L_new, E) to the layer's cache along
        the sequence dim; returns the layer's keys and values so far."""
        if layer in self._keys:
            past_k, past_v = self._keys[layer], self._values[layer]
            if past_k.shape[:-2] != key.shape[:-2] or \
                    past_k.shape[-1] != key.shape[-1]:
                raise ValueError(
                    f"[KVCache.update] layer {layer}: key of shape "
                    f"{tuple(key.shape)} does not extend the cached "
                    f"{tuple(past_k.shape)}")
            key = _C.cat([past_k, key], -2)
            value = _C.cat([past_v, value], -2)
        self._keys[layer], self._values[layer] = key, value
        return key, value

    def seq_len(self, layer=0):
        """The positions cached for the layer (0 before the first update)."""
        k = self._keys.get(layer)
        return 0 if k is None else k.shape[-2]

    def causal_mask(self, new, layer=0):
        """(new, past + new) bool, True where a new position attends: the
        new positions are past .. past + new - 1 and see every key up to
        their own (the causal mask aligned to the end, which torch's
        is_causal, aligned to the start, is not once keys are cached).
        Call it after the layer's update."""
        total = self.seq_len(layer)
        past = total - new
        if past < 0:
            raise ValueError(f"[KVCache.causal_mask] {new} new positions but "
                             f"only {total} cached in layer {layer}")
        from ... import arange
        rows = arange(past, total).reshape(new, 1)
        return arange(total).reshape(1, total) <= rows

    def reset(self):
        self._keys.clear()
        self._values.clear()
