#!/usr/bin/python3
"""Writes tests/nn/attention_golden.json: what PyTorch 1.13's (LibTorch's)
nn.MultiheadAttention draws and computes in float32, for
tests/nn/attention_golden_test.cpp: per case the constructor's arguments
and seed, the initial parameters (bit for bit), the inputs, the output and
the attention weights (averaged over heads, and per head), and the input
projection's gradient for a given output gradient; and
nn.TransformerEncoderLayer's initial parameters and eval-mode output.

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
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases,
                   "encoder_layers": layers}, f, indent=0)
        f.write("\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
