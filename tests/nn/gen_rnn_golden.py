#!/usr/bin/python3
"""Writes tests/nn/rnn_golden.json: what PyTorch 1.13's recurrent layers,
PackedSequence helpers and ctc_loss produce, for tests/nn/rnn_test.cpp.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_rnn_golden.py
Sections:
  "init"     default initialization after torch.manual_seed(seed): per
             parameter its name, shape, crc32 of its float32 bytes and first
             values, and the crc32 of the generator state afterwards.
  "forward"  a module's parameters, input, initial state, its outputs and
             the gradients (input, states, every parameter) of
             loss = sum(out * w_out) + sum(h_n * w_h) (+ sum(c_n * w_c)),
             in float32 and float64, padded and packed.
  "dropout"  a 3-layer bidirectional LSTM with dropout 0.4 in training:
             seeded draws, the output and the generator state afterwards.
  "ctc"      ctc_loss values and gradients for each reduction and layout.
Floats are written with Python's repr (exact round trip). The tests never
need PyTorch.
"""
import json
import os
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "rnn_golden.json")


def crc(t):
    return zlib.crc32(t.detach().float().contiguous().numpy().tobytes())


def rng_crc():
    return zlib.crc32(torch.get_rng_state().numpy().tobytes())


def num(v):
    """A float, or "inf", "-inf", "nan" (JSON has no non-finite numbers)."""
    v = float(v)
    return v if v == v and abs(v) != float("inf") else str(v)


def vals(t):
    return [num(v) for v in t.detach().reshape(-1).tolist()]


def make(kind, kw):
    cls = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU, "RNNCell": nn.RNNCell,
           "LSTMCell": nn.LSTMCell, "GRUCell": nn.GRUCell}[kind]
    return cls(**kw)


INIT = [
    ("LSTM", dict(input_size=4, hidden_size=6, num_layers=2, bidirectional=True), 0),
    ("LSTM", dict(input_size=5, hidden_size=7, proj_size=3, num_layers=2), 1),
    ("GRU", dict(input_size=3, hidden_size=5, num_layers=2, bias=False), 2),
    ("RNN", dict(input_size=4, hidden_size=3, nonlinearity="relu", bidirectional=True), 3),
    ("LSTM", dict(input_size=128, hidden_size=256, num_layers=2, batch_first=True, dropout=0.1), 4),
    ("RNNCell", dict(input_size=4, hidden_size=3), 5),
    ("LSTMCell", dict(input_size=4, hidden_size=3), 6),
    ("GRUCell", dict(input_size=4, hidden_size=3, bias=False), 7),
]


def gen_init():
    out = []
    for kind, kw, seed in INIT:
        torch.manual_seed(seed)
        m = make(kind, kw)
        out.append({"kind": kind, "kw": kw, "seed": seed,
                    "params": [{"name": n, "shape": list(p.shape), "crc": crc(p), "head": vals(p)[:4]}
                               for n, p in m.named_parameters()],
                    "rng_crc": rng_crc()})
    return out


FORWARD = [
    # kind, kwargs, T, B, with initial state, packed lengths (None: padded)
    ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True), 5, 3, True, None),
    ("LSTM", dict(input_size=3, hidden_size=5, proj_size=2, batch_first=True), 4, 2, True, None),
    ("LSTM", dict(input_size=3, hidden_size=4, bidirectional=True, proj_size=3, num_layers=2), 5, 4, True, [2, 5, 3, 5]),
    ("GRU", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True), 5, 3, True, None),
    ("GRU", dict(input_size=2, hidden_size=3, bias=False, batch_first=True), 4, 3, False, [4, 1, 3]),
    ("RNN", dict(input_size=3, hidden_size=4, num_layers=2), 4, 2, True, None),
    ("RNN", dict(input_size=3, hidden_size=4, nonlinearity="relu", bidirectional=True), 5, 3, True, [3, 5, 1]),
    ("LSTM", dict(input_size=8, hidden_size=16, num_layers=2, batch_first=True), 10, 4, False, None),
    ("RNNCell", dict(input_size=3, hidden_size=4), 1, 3, True, None),
    ("RNNCell", dict(input_size=3, hidden_size=4, nonlinearity="relu", bias=False), 1, 3, False, None),
    ("LSTMCell", dict(input_size=3, hidden_size=4), 1, 3, True, None),
    ("GRUCell", dict(input_size=3, hidden_size=4), 1, 3, True, None),
]


def gen_forward():
    out = []
    seed = 100
    for kind, kw, T, B, with_state, lengths in FORWARD:
        for dtype in (torch.float32, torch.float64):
            seed += 1
            torch.manual_seed(seed)
            m = make(kind, kw).to(dtype)
            cell = kind.endswith("Cell")
            bf = kw.get("batch_first", False)
            H = kw["hidden_size"]
            P = kw.get("proj_size", 0) or H
            D = 2 if kw.get("bidirectional") else 1
            L = kw.get("num_layers", 1)
            if cell:
                x = torch.randn(B, kw["input_size"], dtype=dtype)
            else:
                x = torch.randn(*((B, T) if bf else (T, B)), kw["input_size"], dtype=dtype)
            x.requires_grad_(True)
            states = []
            if with_state:
                if cell:
                    states = [torch.randn(B, H, dtype=dtype)]
                    if kind == "LSTMCell":
                        states.append(torch.randn(B, H, dtype=dtype))
                else:
                    states = [torch.randn(L * D, B, P, dtype=dtype)]
                    if kind == "LSTM":
                        states.append(torch.randn(L * D, B, H, dtype=dtype))
                for s in states:
                    s.requires_grad_(True)
            hx = None
            if states:
                hx = tuple(states) if kind in ("LSTM", "LSTMCell") else states[0]
            if cell:
                res = m(x, hx)
                outs = list(res) if isinstance(res, tuple) else [res]
            else:
                inp = pack_padded_sequence(x, torch.tensor(lengths), batch_first=bf,
                                           enforce_sorted=False) if lengths else x
                o, hn = m(inp, hx)
                if lengths:
                    o, _ = pad_packed_sequence(o, batch_first=bf)
                outs = [o] + (list(hn) if isinstance(hn, tuple) else [hn])
            ws = [torch.randn(o.shape, dtype=dtype) for o in outs]
            loss = sum((o * w).sum() for o, w in zip(outs, ws))
            loss.backward()
            out.append({
                "kind": kind, "kw": kw, "dtype": str(dtype).replace("torch.", ""),
                "lengths": lengths,
                "params": [{"name": n, "shape": list(p.shape), "values": vals(p), "grad": vals(p.grad)}
                           for n, p in m.named_parameters()],
                "x": {"shape": list(x.shape), "values": vals(x), "grad": vals(x.grad)},
                "states": [{"shape": list(s.shape), "values": vals(s), "grad": vals(s.grad)} for s in states],
                "outs": [{"shape": list(o.shape), "values": vals(o)} for o in outs],
                "weights": [{"shape": list(w.shape), "values": vals(w)} for w in ws],
            })
    return out


def gen_dropout():
    out = []
    for bf in (False, True):
        torch.manual_seed(11)
        m = nn.LSTM(3, 4, num_layers=3, dropout=0.4, bidirectional=True, batch_first=bf)
        x = torch.randn(5, 2, 3)
        torch.manual_seed(7)
        o, (h, c) = m(x)
        out.append({"batch_first": bf, "x": vals(x), "x_shape": list(x.shape),
                    "out": vals(o), "h": vals(h), "c": vals(c), "rng_crc": rng_crc()})
    return out


def gen_ctc():
    out = []
    torch.manual_seed(5)
    cases = [
        # T, N, C, targets (lists), input lengths, blank
        (6, 4, 5, [[1, 2, 2], [3], [1, 1, 1, 1], []], [6, 5, 4, 3], 0),
        (12, 3, 6, [[1, 2, 3, 4], [5, 5, 1], [2]], [12, 10, 7], 0),
        (10, 2, 4, [[0, 1, 0], [2, 2]], [10, 9], 3),
    ]
    for T, N, C, tg, il, blank in cases:
        lp = torch.randn(T, N, C, dtype=torch.float64).log_softmax(2)
        tl = [len(t) for t in tg]
        S = max(tl)
        padded = torch.tensor([t + [blank if blank != 0 else 1] * (S - len(t)) for t in tg], dtype=torch.int64)
        flat = torch.tensor(sum(tg, []), dtype=torch.int64)
        for red in ("none", "sum", "mean"):
            for zi in (False, True):
                lpg = lp.clone().requires_grad_(True)
                loss = F.ctc_loss(lpg, padded, torch.tensor(il), torch.tensor(tl), blank=blank,
                                  reduction=red, zero_infinity=zi)
                w = torch.randn(loss.shape, dtype=torch.float64)
                (loss * w).sum().backward()
                out.append({"T": T, "N": N, "C": C, "blank": blank, "reduction": red,
                            "zero_infinity": zi, "log_probs": vals(lp),
                            "padded": padded.reshape(-1).tolist(), "S": S, "flat": flat.tolist(),
                            "input_lengths": il, "target_lengths": tl,
                            "loss": vals(loss), "w": vals(w), "grad": vals(lpg.grad)})
    return out


def main():
    data = {"init": gen_init(), "forward": gen_forward(), "dropout": gen_dropout(), "ctc": gen_ctc()}
    with open(OUT, "w") as f:
        json.dump(data, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print("wrote", OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
