#!/usr/bin/python3
"""Golden bytes for tests/random from PyTorch 1.13 on CPU (Debian's python3-torch).

Run from the repository root:
    /usr/bin/python3 tests/random/gen_golden.py
It writes tests/random/golden.bin (the raw little-endian bytes of every case,
concatenated) and tests/random/golden.txt (one line per case: name, dtype,
byte offset, byte count). The tests read these; they never need PyTorch.
"""
import os
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = [0, 1, 42, 2**32 + 5, -1]
SIZES = [1, 3, 15, 16, 17, 31, 100, 1000, 4099]

cases = []  # (name, tensor)

for seed in SEEDS:
    for dt, dn in [(torch.float32, "float32"), (torch.float64, "float64")]:
        torch.manual_seed(seed)
        # One continuing stream: each size is drawn after the previous one.
        parts = [torch.rand(n, dtype=dt) for n in SIZES]
        cases.append((f"rand_seed{seed}_{dn}", torch.cat(parts)))

torch.manual_seed(0)
cases.append(("uniform_m0.1_0.1_seed0_float32",
              torch.empty(5000).uniform_(-0.1, 0.1)))
torch.manual_seed(3)
cases.append(("uniform_2_5_seed3_float32", torch.empty(5000).uniform_(2, 5)))
torch.manual_seed(3)
cases.append(("uniform_m3_7.5_seed3_float64",
              torch.empty(3000, dtype=torch.float64).uniform_(-3, 7.5)))
cases.append(("rand_new_generator_float32",
              torch.rand(3, generator=torch.Generator())))
g = torch.Generator()
g.manual_seed(99)
cases.append(("rand_generator99_float32", torch.rand(2, 5, generator=g)))

# A transposed tensor is filled in memory order; stored in logical order.
torch.manual_seed(7)
x = torch.empty(3, 4).t()
x.uniform_()
cases.append(("uniform_transposed_seed7_float32", x.contiguous()))

# The state blob after some draws, and what follows it.
torch.manual_seed(0)
torch.rand(5)
cases.append(("state_after_seed0_rand5", torch.get_rng_state()))
torch.manual_seed(123)
torch.rand(10)
torch.randn(3)  # leaves a cached normal in the state
cases.append(("state_seed123_mid", torch.get_rng_state()))
cases.append(("rand_after_state_seed123_float32", torch.rand(20)))

# Normal: PyTorch's three paths in one continuing stream per seed (sizes
# below 16 use the cached scalar Box-Muller, the others the 16-block fill).
for seed in [0, 42, -1]:
    for dt, dn in [(torch.float32, "float32"), (torch.float64, "float64")]:
        torch.manual_seed(seed)
        parts = [torch.randn(n, dtype=dt) for n in SIZES]
        cases.append((f"randn_seed{seed}_{dn}", torch.cat(parts)))
for dt, dn in [(torch.float32, "float32"), (torch.float64, "float64")]:
    torch.manual_seed(5)
    a = torch.empty(1000, dtype=dt).normal_(-3, 7.5)
    b = torch.empty(5, dtype=dt).normal_(-3, 7.5)
    c = torch.empty(40, 3, dtype=dt).t()
    c.normal_(2, 0.5)  # non-contiguous: scalar path, memory order
    cases.append((f"normal_m3_7.5_seed5_{dn}",
                  torch.cat([a, b, c.contiguous().flatten()])))

torch.manual_seed(0)
ints = [torch.randint(0, 10, (5,)), torch.randint(-5, 2**31, (100,)),
        torch.randint(0, 2**40, (100,)), torch.randint(-2**62, 2**62, (10,))]
cases.append(("randint_seed0_int64", torch.cat(ints)))
torch.manual_seed(1)
cases.append(("randint_seed1_int32",
              torch.randint(-100, 100, (50,), dtype=torch.int32)))
torch.manual_seed(1)
cases.append(("randint_seed1_float32",
              torch.randint(0, 1000, (50,), dtype=torch.float32)))
torch.manual_seed(2)
cases.append(("random_seed2_uint8",
              torch.empty(20, dtype=torch.uint8).random_(0, 256)))
for seed in [0, 42]:
    torch.manual_seed(seed)
    perms = [torch.randperm(n) for n in [10, 1, 0, 1000]]
    cases.append((f"randperm_seed{seed}_int64", torch.cat(perms)))

torch.manual_seed(0)
cases.append(("bernoulli_0.5_seed0_float32", torch.empty(8).bernoulli_(0.5)))
torch.manual_seed(4)
cases.append(("bernoulli_0.3_seed4_bool",
              torch.empty(100, dtype=torch.bool).bernoulli_(0.3)))
pf = torch.linspace(0, 1, 100)
torch.manual_seed(4)
cases.append(("bernoulli_tensor_seed4_float32", torch.bernoulli(pf)))
torch.manual_seed(4)
cases.append(("bernoulli_tensor_seed4_float64",
              torch.bernoulli(pf.to(torch.float64))))

x = torch.arange(20, dtype=torch.float32) * 0.5 - 3
torch.manual_seed(6)
cases.append(("dropout_0.3_seed6_float32",
              torch.nn.functional.dropout(x, 0.3, training=True)))
torch.manual_seed(6)
cases.append(("dropout_0.021_seed6_float32",
              torch.nn.functional.dropout(torch.ones(1000), 0.021, True)))
torch.manual_seed(8)
cases.append(("exponential_1.5_seed8_float64",
              torch.empty(100, dtype=torch.float64).exponential_(1.5)))
torch.manual_seed(8)
cases.append(("exponential_1.5_seed8_float32",
              torch.empty(100).exponential_(1.5)))

w = torch.tensor([0.1, 0.0, 2.0, 0.5, 1.4, 0.0, 3.0])
torch.manual_seed(9)
cases.append(("multinomial_repl_seed9",
              torch.multinomial(w, 200, replacement=True)))
w2 = torch.rand(4, 50, generator=torch.Generator().manual_seed(1)).double()
torch.manual_seed(9)
cases.append(("multinomial_repl_2d_seed9_float64",
              torch.multinomial(w2, 30, replacement=True)))
torch.manual_seed(9)
cases.append(("multinomial_norepl_seed9",
              torch.multinomial(w2.float(), 10, replacement=False)))
torch.manual_seed(9)
cases.append(("multinomial_one_seed9", torch.multinomial(w, 1)))

# random_'s other forms (2026-12-05): random_() draws [0, the dtype's
# largest] (2^digits for floating dtypes), random_(from, None) [from, that],
# random_(INT64_MIN, None) every int64, random_(to) [0, to).
for dn in ["int64", "int32", "int16", "int8", "uint8", "bool", "float32",
           "float64", "float16", "bfloat16"]:
    torch.manual_seed(11)
    cases.append((f"random_noargs_seed11_{dn}",
                  torch.empty(40, dtype=getattr(torch, dn)).random_()))
for dn, lo in [("int64", -3), ("int32", -3), ("float32", -3), ("float64", 5),
               ("uint8", 200), ("int64", -2**63)]:
    torch.manual_seed(12)
    cases.append((f"random_from{lo}_none_seed12_{dn}",
                  torch.empty(40, dtype=getattr(torch, dn)).random_(lo, None)))
torch.manual_seed(12)
cases.append(("random_from_min_none_seed12_float32",
              torch.empty(40).random_(-2**63, None)))
torch.manual_seed(13)
cases.append(("random_to1000_seed13_int64",
              torch.empty(40, dtype=torch.int64).random_(1000)))

with open(os.path.join(HERE, "golden.bin"), "wb") as fb, \
        open(os.path.join(HERE, "golden.txt"), "w") as ft:
    ft.write(f"# generated by gen_golden.py with torch {torch.__version__}\n")
    off = 0
    for name, t in cases:
        # numpy has no bfloat16: its bytes through int16
        v = t.view(torch.int16) if t.dtype == torch.bfloat16 else t
        b = v.contiguous().numpy().tobytes()
        ft.write(f"{name} {str(t.dtype).replace('torch.', '')} {off} {len(b)}\n")
        fb.write(b)
        off += len(b)
print(f"{len(cases)} cases, {off} bytes")
