"""The evaluation environment of the wave goldens, shared by
gen_wave_golden.py (run on torch) and test_wave_golden.py (on ditto): the
same inputs and helpers, the library passed in as t."""


def env(t, F, inputs, matrix, requires_grad=False, dtype=None):
    dtype = dtype or t.float64
    e = {k: t.tensor(v, dtype=dtype) for k, v in inputs.items()}
    e["m"] = t.tensor(matrix, dtype=dtype)
    if requires_grad:
        for k in ("x", "y", "u", "p", "m"):
            e[k].requires_grad_(True)
    e["t"], e["F"] = t, F

    def mha(q, causal):
        t.manual_seed(0)
        m = t.nn.MultiheadAttention(6, 2).to(q.dtype)
        mask = None
        if causal:
            n = q.shape[0]
            mask = t.arange(n).reshape(1, n) > t.arange(n).reshape(n, 1)
        out, weights = m(q, q, q, attn_mask=mask)
        return (out, weights, m.in_proj_weight)
    e["mha"] = mha

    def encoder(x, norm_first, act, batch_first):
        t.manual_seed(0)
        layer = t.nn.TransformerEncoderLayer(
            6, 2, 12, 0.0, act, batch_first=batch_first, norm_first=norm_first)
        return t.nn.TransformerEncoder(layer, 2).to(x.dtype)(x)

    def transformer(src, tgt):
        t.manual_seed(1)
        m = t.nn.Transformer(6, 2, 2, 2, 12, 0.0).to(src.dtype)
        mask = m.generate_square_subsequent_mask(tgt.shape[0]).to(src.dtype)
        return m(src, tgt, tgt_mask=mask)
    e["encoder"], e["transformer"] = encoder, transformer
    def sdpa(q, k, v, mask=None, is_causal=False, scale=None):
        # torch 1.13 has no F.scaled_dot_product_attention: its math
        # reference (torch 2.x's documentation) on torch, the op on ditto
        if t.__name__ == "ditto":
            return F.scaled_dot_product_attention(q, k, v, mask, 0.0,
                                                  is_causal, scale=scale)
        s = scale if scale is not None else 1.0 / q.shape[-1] ** 0.5
        scores = q @ k.transpose(-2, -1) * s
        L, S = q.shape[-2], k.shape[-2]
        if is_causal:
            mask = t.ones(L, S, dtype=t.bool).tril()
        if mask is not None and mask.dtype == t.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        elif mask is not None:
            scores = scores + mask
        return t.softmax(scores, -1) @ v

    def rmsnorm(x, shape, w=None, eps=None):
        # torch 2.4's F.rms_norm, written out on torch 1.13
        if t.__name__ == "ditto":
            return F.rms_norm(x, shape, w, eps)
        dims = list(range(x.dim() - len(shape), x.dim()))
        e = eps if eps is not None else t.finfo(x.dtype).eps
        out = x * t.rsqrt((x * x).mean(dims, keepdim=True) + e)
        return out if w is None else out * w
    e["sdpa"], e["rmsnorm"] = sdpa, rmsnorm
    # a call after manual_seed(n): modules and ops that draw, torch's bits
    e["seeded"] = lambda n, f: (t.manual_seed(n), f())[1]
    return e
