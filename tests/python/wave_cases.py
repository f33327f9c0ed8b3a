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
    # a call after manual_seed(n): modules and ops that draw, torch's bits
    e["seeded"] = lambda n, f: (t.manual_seed(n), f())[1]
    return e
