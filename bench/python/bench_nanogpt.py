"""nanoGPT's training loop, ditto next to PyTorch 1.13, at one thread, in
one run (docs/benchmarks.md). The model is nanoGPT's (model.py of
karpathy/nanoGPT, written out here): token and position embeddings, blocks
of LayerNorm, causal self-attention (one c_attn projection, the causal mask
applied with masked_fill, softmax), LayerNorm and an MLP with nanoGPT's
tanh GELU (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), a final
LayerNorm and an lm_head tied to the token embedding, nanoGPT's
initialization (N(0, 0.02), residual projections scaled); AdamW, cross entropy
over every position, character-level data from a text file. The same code
runs on `torch` and on `ditto`; with ditto's PyTorch-exact random streams
both start from the same weights and draw the same batches, and their
losses agree to rounding.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_nanogpt.py
"""
import argparse
import math
import time


def build(lib, vocab, n_layer, n_head, n_embd, block):
    nn = lib.nn
    F = lib.nn.functional

    def new_gelu(x):
        return 0.5 * x * (1.0 + lib.tanh(
            math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            i = lib.arange(block)
            # torch.tril(torch.ones(block, block)) as a comparison (ditto
            # has no tril yet).
            self.register_buffer(
                "bias", (i.view(block, 1) >= i.view(1, block)).to(
                    lib.float32).view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            qkv = self.c_attn(x)
            q = qkv[:, :, :C]
            k = qkv[:, :, C:2 * C]
            v = qkv[:, :, 2 * C:]
            hs = C // n_head
            k = k.reshape(B, T, n_head, hs).transpose(1, 2)
            q = q.reshape(B, T, n_head, hs).transpose(1, 2)
            v = v.reshape(B, T, n_head, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0,
                                  float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            return self.c_proj(new_gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.lm_head.weight = self.wte.weight
            # nanoGPT's initialization: N(0, 0.02), zero biases, the
            # residual projections N(0, 0.02 / sqrt(2 n_layer)).
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0,
                                    std=0.02 / math.sqrt(2 * n_layer))

        @staticmethod
        def _init_weights(module):
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = lib.arange(t).view(1, t)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)),
                                   targets.view(-1))

    return GPT()


def run(lib, data, a):
    lib.manual_seed(0)
    lib.set_num_threads(a.threads)
    vocab = int(max(data)) + 1
    model = build(lib, vocab, a.n_layer, a.n_head, a.n_embd, a.block)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1,
                          betas=(0.9, 0.95))
    tokens = lib.tensor(data)
    g = lib.Generator().manual_seed(1)
    times = []
    for step in range(a.warmup + a.steps):
        ix = lib.randint(0, len(data) - a.block - 1, (a.batch,), generator=g)
        x = lib.stack([tokens[i:i + a.block] for i in ix.tolist()])
        y = lib.stack([tokens[i + 1:i + 1 + a.block] for i in ix.tolist()])
        t0 = time.perf_counter()
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()
        if step >= a.warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2], loss.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--block", type=int, default=64)
    p.add_argument("--batch", type=int, default=12)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    a = p.parse_args()
    text = open(a.text, encoding="utf-8").read()
    chars = sorted(set(text))
    code = {c: i for i, c in enumerate(chars)}
    data = [code[c] for c in text]
    import torch
    import ditto
    print(f"nanoGPT loop: {a.n_layer} layers, {a.n_head} heads, "
          f"n_embd {a.n_embd}, block {a.block}, batch {a.batch}, "
          f"vocab {len(chars)}, {a.threads} thread(s); median of {a.steps} "
          f"steps after {a.warmup}")
    rows = []
    for rnd in range(2):  # sides in turns: torch, ditto, ditto, torch
        order = [("torch", torch), ("ditto", ditto)]
        for name, lib in (order if rnd == 0 else order[::-1]):
            rows.append((name, *run(lib, data, a)))
    best = {}
    for name, sec, loss in rows:
        best[name] = min(best.get(name, math.inf), sec)
        print(f"  {name}: step {1000 * sec:.1f} ms (last loss {loss:.3f})")
    print(f"ditto / torch: {best['ditto'] / best['torch']:.2f} "
          f"(best of the two rounds' medians: ditto "
          f"{1000 * best['ditto']:.1f} ms, torch {1000 * best['torch']:.1f} ms)")


if __name__ == "__main__":
    main()
