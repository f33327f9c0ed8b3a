#!/usr/bin/python3
"""Writes tests/nn/attention_golden.json: what PyTorch 1.13's (LibTorch's)
nn.MultiheadAttention draws and computes in float32, for
tests/nn/attention_golden_test.cpp: per case the constructor's arguments
and seed, the initial parameters (bit for bit), the inputs, the output and
the attention weights (averaged over heads, and per head), and the input
projection's gradient for a given output gradient; and
nn.TransformerEncoderLayer's initial parameters and eval-mode output; and
the stacks: nn.TransformerEncoder (with a final norm) and
nn.TransformerDecoder of copies of a layer (post-norm and norm_first), and
nn.Transformer (its xavier re-initialization), each's initial parameters
and eval-mode output with a causal target mask and key padding.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_attention_golden.py
"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attention_golden.json")

# embed_dim, num_heads, bias, L, S, N, masks
CASES = [
    (6, 2, True, 4, 5, 3, True),
    (8, 4, False, 3, 3, 2, False),
]


# TransformerEncoderLayer: d_model, nhead, dim_feedforward, activation,
# norm_first, masks
ENCODER_CASES = [
    (8, 2, 16, "relu", False, True),
    (6, 3, 12, "gelu", True, False),
]


def values(t):
    return [float(v) for v in t.detach().contiguous().reshape(-1).tolist()]


def main():
    cases = []
    for seed, (e, h, bias, L, S, N, masks) in enumerate(CASES):
        torch.manual_seed(seed)
        m = nn.MultiheadAttention(e, h, bias=bias)
        params = {k: values(v) for k, v in m.state_dict().items()}
        torch.manual_seed(100 + seed)
        q = torch.randn(L, N, e)
        k = torch.randn(S, N, e)
        v = torch.randn(S, N, e)
        attn_mask = kp_mask = None
        if masks:
            attn_mask = torch.arange(S).reshape(1, S) > \
                torch.arange(L).reshape(L, 1) + 1
            kp_mask = torch.zeros(N, S, dtype=torch.bool)
            kp_mask[1, S - 1] = True
        out, w = m(q, k, v, key_padding_mask=kp_mask, attn_mask=attn_mask)
        _, w_heads = m(q, k, v, key_padding_mask=kp_mask,
                       attn_mask=attn_mask, average_attn_weights=False)
        g = torch.randn(out.shape)
        out.backward(g)
        cases.append({
            "embed_dim": e, "num_heads": h, "bias": bias, "seed": seed,
            "L": L, "S": S, "N": N, "masks": masks,
            "params": params, "q": values(q), "k": values(k), "v": values(v),
            "out": values(out), "weights": values(w),
            "weights_per_head": values(w_heads), "grad_out": values(g),
            "in_proj_weight_grad": values(m.in_proj_weight.grad),
        })
    layers = []
    # d_model, nhead, dim_feedforward, activation, norm_first, masks
    for seed, (d, h, ff, act, norm_first, masks) in enumerate(ENCODER_CASES):
        torch.manual_seed(10 + seed)
        layer = nn.TransformerEncoderLayer(d, h, ff, 0.1, act,
                                           norm_first=norm_first)
        params = {k: values(v) for k, v in layer.state_dict().items()}
        layer.eval()  # dropout off: the forward compares outputs
        torch.manual_seed(200 + seed)
        src = torch.randn(5, 2, d)
        mask = padding = None
        if masks:
            mask = torch.arange(5).reshape(1, 5) > torch.arange(5).reshape(5, 1)
            padding = torch.zeros(2, 5, dtype=torch.bool)
            padding[0, 4] = True
        with torch.no_grad():
            out = layer(src, src_mask=mask, src_key_padding_mask=padding)
        layers.append({"d_model": d, "nhead": h, "dim_feedforward": ff,
                       "activation": act, "norm_first": norm_first,
                       "masks": masks, "seed": 10 + seed, "params": params,
                       "src": values(src), "out": values(out)})
    stacks = []
    # kind, d_model, nhead, dim_feedforward, layers, norm_first
    for seed, (kind, d, h, ff, n, nf) in enumerate([
            ("encoder", 8, 2, 16, 2, False),
            ("decoder", 8, 2, 16, 2, False),
            ("decoder", 6, 3, 12, 3, True),
            ("transformer", 8, 2, 16, 2, False)]):
        torch.manual_seed(30 + seed)
        if kind == "encoder":
            m = nn.TransformerEncoder(
                nn.TransformerEncoderLayer(d, h, ff, 0.1, norm_first=nf), n,
                norm=nn.LayerNorm(d))
        elif kind == "decoder":
            m = nn.TransformerDecoder(
                nn.TransformerDecoderLayer(d, h, ff, 0.1, "gelu",
                                           norm_first=nf), n)
        else:
            m = nn.Transformer(d, h, n, n, ff, 0.1)
        params = {k: values(v) for k, v in m.state_dict().items()}
        m.eval()
        torch.manual_seed(300 + seed)
        src = torch.randn(5, 2, d)
        tgt = torch.randn(4, 2, d)
        causal = nn.Transformer.generate_square_subsequent_mask(4)
        padding = torch.zeros(2, 5, dtype=torch.bool)
        padding[1, 4] = True
        with torch.no_grad():
            if kind == "encoder":
                out = m(src, src_key_padding_mask=padding)
            elif kind == "decoder":
                out = m(tgt, src, tgt_mask=causal,
                        memory_key_padding_mask=padding)
            else:
                out = m(src, tgt, tgt_mask=causal,
                        src_key_padding_mask=padding,
                        memory_key_padding_mask=padding)
        stacks.append({"kind": kind, "d_model": d, "nhead": h,
                       "dim_feedforward": ff, "layers": n, "norm_first": nf,
                       "seed": 30 + seed, "params": params,
                       "src": values(src), "tgt": values(tgt),
                       "out": values(out)})
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases,
                   "encoder_layers": layers, "stacks": stacks}, f, indent=0)
        f.write("\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
