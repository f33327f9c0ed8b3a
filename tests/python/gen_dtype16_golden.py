"""Writes dtype16_golden.json: PyTorch 1.13's bits for float16, bfloat16,
int8 and int16 (conversions, elementwise ops, reductions), which
test_dtype16.py holds ditto to.

Run with Debian's torch: /usr/bin/python3 tests/python/gen_dtype16_golden.py
"""
import json
import os
import struct

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def f32_bits(t):
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in t.tolist()]


def f64_bits(t):
    return [struct.unpack("<Q", struct.pack("<d", v))[0] for v in t.tolist()]


def bits16(t):
    return t.view(torch.int16).to(torch.int32).bitwise_and(0xFFFF).tolist()


def conversion_inputs():
    # Edge cases: ties at every boundary, subnormals, overflow, NaN, signs.
    special = []
    for e in range(-30, 17):
        for m in (1.0, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 1.0 + 2 ** -8,
                  1.0 + 3 * 2 ** -8, 1.5, 1.9990234375, 1.99951171875):
            special += [m * 2.0 ** e, -m * 2.0 ** e]
    special += [0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e6, 3.4e38,
                2 ** -25, 2 ** -25 * 1.0001, 2 ** -24 * 1.5, 2 ** -24 * 2.5,
                float("inf"), float("-inf"), float("nan")]
    g = torch.Generator().manual_seed(0)
    rnd = torch.randn(2000, generator=g) * torch.exp(
        torch.randn(2000, generator=g) * 6)
    return torch.cat([torch.tensor(special, dtype=torch.float32), rnd])


def main():
    out = {}
    x32 = conversion_inputs()
    out["f32"] = f32_bits(x32)
    out["f32_to_f16"] = bits16(x32.half())
    out["f32_to_bf16"] = bits16(x32.bfloat16())
    g = torch.Generator().manual_seed(1)
    x64 = (torch.randn(500, generator=g, dtype=torch.float64) *
           torch.exp(torch.randn(500, generator=g, dtype=torch.float64) * 4))
    # Doubles near float32 ties: double rounding through float32.
    x64 = torch.cat([x64, torch.tensor(
        [1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -8 + 2 ** -35, -(1 + 2 ** -11),
         1 + 2 ** -11 - 2 ** -30], dtype=torch.float64)])
    out["f64"] = f64_bits(x64)
    out["f64_to_f16"] = bits16(x64.half())
    out["f64_to_bf16"] = bits16(x64.bfloat16())
    ints = torch.tensor([0, 1, -1, 127, 128, -129, 255, 300, 32767, 32768,
                         -32769, 65537, 2049, 4097, 16777217, -123456789],
                        dtype=torch.int64)
    out["i64"] = ints.tolist()
    out["i64_to_i8"] = ints.to(torch.int8).tolist()
    out["i64_to_i16"] = ints.to(torch.int16).tolist()
    out["i64_to_f16"] = bits16(ints.half())
    out["i64_to_bf16"] = bits16(ints.bfloat16())

    # Elementwise ops on random operands of each 16-bit type.
    g = torch.Generator().manual_seed(2)
    a = torch.randn(256, generator=g) * 3
    b = torch.randn(256, generator=g) * 3
    cases = {}
    for dt in (torch.float16, torch.bfloat16):
        name = str(dt).split(".")[-1]
        ah, bh = a.to(dt), b.to(dt)
        cases[name] = {
            "a": bits16(ah), "b": bits16(bh),
            "add": bits16(ah + bh), "sub": bits16(ah - bh),
            "mul": bits16(ah * bh), "div": bits16(ah / bh),
            "add_scalar": bits16(ah + 0.1), "mul_scalar": bits16(ah * 1.7),
            "add_alpha": bits16(torch.add(ah, bh, alpha=0.3)),
            "neg": bits16(-ah), "abs": bits16(ah.abs()),
            "maximum": bits16(torch.maximum(ah, bh)),
            "sum": bits16(ah.sum().reshape(1)),
            "mean": bits16(ah.mean().reshape(1)),
            "sum0": bits16(ah.reshape(16, 16).sum(0)),
            "max": bits16(ah.max().reshape(1)),
            "argmax": int(ah.argmax()),
            "lt": (ah < bh).tolist(),
            "to_f32": f32_bits(ah.float()),
        }
    # bfloat16's transcendental functions (float16's have no CPU kernel in
    # torch 1.13): float32 values rounded once.
    bf = a.bfloat16()
    for op in ("exp", "tanh", "sigmoid", "sin", "relu"):
        cases["bfloat16"][op] = bits16(getattr(bf, op)())
    cases["bfloat16"]["softmax"] = bits16(torch.softmax(bf, 0))
    cases["bfloat16"]["matmul"] = bits16(
        bf.reshape(16, 16) @ b.bfloat16().reshape(16, 16))
    out["ops"] = cases

    # Draws: PyTorch's uniform_real_distribution<Half/BFloat16> and
    # normal_fill in the type's own roundings.
    draws = {}
    for dt in (torch.float16, torch.bfloat16):
        name = str(dt).split(".")[-1]
        for n in (5, 16, 37, 300):
            torch.manual_seed(7)
            draws[f"{name}_rand_{n}"] = bits16(torch.rand(n, dtype=dt))
            torch.manual_seed(7)
            draws[f"{name}_randn_{n}"] = bits16(torch.randn(n, dtype=dt))
            torch.manual_seed(7)
            draws[f"{name}_uniform_{n}"] = bits16(
                torch.empty(n, dtype=dt).uniform_(-2, 3))
            torch.manual_seed(7)
            draws[f"{name}_normal_{n}"] = bits16(
                torch.empty(n, dtype=dt).normal_(0.5, 2))
    # torch's serial float64 distributions cast to float32 (cauchy_,
    # log_normal_, geometric_), and the generator's position after them.
    for name, fill in (("cauchy", lambda t: t.cauchy_(0.5, 2.0)),
                       ("log_normal", lambda t: t.log_normal_(0.3, 0.7)),
                       ("geometric", lambda t: t.geometric_(0.2))):
        torch.manual_seed(9)
        draws[f"float32_{name}"] = f32_bits(fill(torch.empty(301)))
        draws[f"float32_{name}_next"] = f32_bits(torch.rand(2))
    torch.manual_seed(7)
    draws["int8_randint"] = torch.randint(-100, 100, (50,),
                                          dtype=torch.int8).tolist()
    out["draws"] = draws

    # torch.autocast("cpu"): products and convolutions in bfloat16 with
    # float32 accumulation; the float32 list's losses back in float32.
    torch.manual_seed(11)
    lin = torch.nn.Linear(64, 32)
    conv = torch.nn.Conv2d(3, 4, 3)
    x = torch.randn(8, 64)
    img = torch.randn(2, 3, 9, 9)
    with torch.autocast("cpu"):
        y = lin(x)
        out["autocast"] = {
            "x": f32_bits(x.reshape(-1)),
            "w": f32_bits(lin.weight.detach().reshape(-1)),
            "b": f32_bits(lin.bias.detach()),
            "img": f32_bits(img.reshape(-1)),
            "cw": f32_bits(conv.weight.detach().reshape(-1)),
            "cb": f32_bits(conv.bias.detach()),
            "linear": bits16(y.detach().reshape(-1)),
            "linear_dtype": str(y.dtype),
            "mm": bits16((x @ x.t()).reshape(-1)),
            "conv": bits16(conv(img).detach().reshape(-1)),
            "mse_dtype": str(torch.nn.functional.mse_loss(
                y, torch.zeros(8, 32)).dtype),
        }

    i8 = torch.tensor([100, -100, 127, -128, 7, 0, 50, -3], dtype=torch.int8)
    j8 = torch.tensor([100, 100, 1, -1, -7, 3, 3, 2], dtype=torch.int8)
    out["int8"] = {
        "a": i8.tolist(), "b": j8.tolist(),
        "add": (i8 + j8).tolist(), "mul": (i8 * j8).tolist(),
        "sub": (i8 - j8).tolist(), "sum": int(i8.sum()),
        "sum_dtype": str(i8.sum().dtype), "neg": (-i8).tolist(),
        "mixed_uint8": str((i8 + i8.to(torch.uint8)).dtype),
        "int16_mul": (i8.to(torch.int16) * 300).tolist(),
    }
    with open(os.path.join(HERE, "dtype16_golden.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
