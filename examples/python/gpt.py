"""A byte-level GPT from Python with torch's names: `ditto train --model
gpt`'s model (ditto/nn/models/gpt.h) written as an nn.Module, trained with
the same settings, prints the same weight fingerprint as

    ditto train --model gpt --seed S --batch-size B --lr LR \\
                --optimizer adamw --max-steps N

then decodes greedily with ditto.nn.KVCache and checks R8 on the way: a
batch of prompts gives each the tokens and log-probabilities it gets
alone, decoding through the cache gives the full forward's bits, and the
log-probabilities equal a training-mode forward's (the on-policy RL
property). Exits 1 if a check fails.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/gpt.py --max-steps 100
"""
import argparse
import math
import os
import sys

import ditto
import ditto.nn as nn
import ditto.nn.functional as F
from ditto.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    """Pre-norm: causal self-attention, then a GELU MLP, each added."""

    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head, self.dropout = n_head, dropout
        self.ln_1 = nn.LayerNorm(n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.attn_proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.mlp_proj = nn.Linear(4 * n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x, cache=None, layer=0):
        B, T, C = x.shape

        def heads(z):
            return z.reshape(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q, k, v = (heads(z) for z in self.c_attn(self.ln_1(x)).split(C, dim=2))
        p = self.dropout if self.training else 0.0
        if cache is None:
            a = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            k, v = cache.update(layer, k, v)
            a = F.scaled_dot_product_attention(
                q, k, v, attn_mask=cache.causal_mask(T, layer), dropout_p=p)
        x = x + self.resid_dropout(self.attn_proj(a.transpose(1, 2).reshape(B, T, C)))
        return x + self.resid_dropout(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab_size=256, block_size=64, n_layer=2, n_head=4,
                 n_embd=64, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList([Block(n_embd, n_head, dropout)
                                for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, cache=None):
        """idx (B, T) -> logits (B, T, vocab); with a cache, idx continues
        the cached positions."""
        past = 0 if cache is None else cache.seq_len()
        pos = ditto.arange(past, past + idx.shape[1])
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for i, block in enumerate(self.h):
            x = block(x, cache, i)
        return self.lm_head(self.ln_f(x))


def read_text(path):
    """A file's bytes, or a directory's regular files (not symlinks) in
    name order, as `ditto train --text` reads them."""
    if not os.path.isdir(path):
        with open(path, "rb") as f:
            return f.read()
    names = sorted(n for n in os.listdir(path)
                   if not os.path.islink(os.path.join(path, n))
                   and os.path.isfile(os.path.join(path, n)))
    return b"".join(open(os.path.join(path, n), "rb").read() for n in names)


def windows(data, block):
    """Sample i: bytes [i block, (i + 1) block) and the bytes after each."""
    n = (len(data) - 1) // block
    t = ditto.tensor(list(data[:n * block + 1]), dtype=ditto.int64)
    return TensorDataset(t[:n * block].reshape(n, block),
                         t[1:n * block + 1].reshape(n, block))


@ditto.no_grad()
def greedy(model, prompts, new):
    """Greedy decoding of equal-length prompts (B, P) with the cache:
    the new tokens (B, new) and their log-probabilities (B, new)."""
    cache = nn.KVCache()
    logits = model(prompts, cache)[:, -1]
    tokens, lps = [], []
    for _ in range(new):
        nxt = logits.argmax(-1, keepdim=True)
        tokens.append(nxt)
        lps.append(F.log_softmax(logits, -1).gather(1, nxt))
        logits = model(nxt, cache)[:, -1]
    return ditto.cat(tokens, 1), ditto.cat(lps, 1)


def same_bits(a, b):
    return a.shape == b.shape and \
        a.detach().numpy().tobytes() == b.detach().numpy().tobytes()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--text", default="/usr/share/common-licenses")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--max-steps", type=int, default=100)
    a = p.parse_args()
    ditto.use_deterministic_algorithms(True)

    text = read_text(a.text)
    train_set = windows(text[:len(text) // 10 * 9], 64)
    ditto.seed_everything(a.seed)
    model = GPT()
    model.train()
    opt = ditto.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0)
    loader = DataLoader(
        train_set, batch_size=a.batch_size, shuffle=True,
        generator=ditto.Generator().manual_seed(
            ditto.random.derive_seed(a.seed, "train.loader")))
    step = 0
    while step < a.max_steps:
        for x, y in loader:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1))
            loss.backward()
            opt.step()
            step += 1
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.4f}", flush=True)
            if step >= a.max_steps:
                break
    print("fingerprint", ditto._C._hex64(ditto.utils.weights_fingerprint(model)))

    # R8, from Python: three prompts of 8 bytes, 24 new ones each.
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
        elif isinstance(m, Block):
            m.dropout = 0.0
    model.eval()
    prompts = ditto.tensor([list(b"This Lic"), list(b"you may "),
                            list(b"Copyrigh")], dtype=ditto.int64)
    tokens, lps = greedy(model, prompts, 24)
    ok = True
    for r in range(3):
        t1, l1 = greedy(model, prompts[r:r + 1], 24)
        alone = same_bits(t1, tokens[r:r + 1]) and same_bits(l1, lps[r:r + 1])
        # The trainer's numbers: a training-mode forward, gradients
        # recorded (dropout set to 0 above: it would draw).
        seq = ditto.cat([prompts[r:r + 1], tokens[r:r + 1]], 1)
        model.train()
        full = F.log_softmax(model(seq[:, :-1]), -1).gather(
            2, seq[:, 1:].unsqueeze(2)).squeeze(2)[:, 7:]
        model.eval()
        trainer = same_bits(full, l1)
        text_out = bytes(t1[0].tolist()).decode("latin-1")
        print(f"{bytes(prompts[r].tolist())!r} -> {text_out!r}  alone: "
              f"{'same bits' if alone else 'DIFFERENT'}, trainer's "
              f"log-probs: {'same bits' if trainer else 'DIFFERENT'}")
        ok = ok and alone and trainer
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
