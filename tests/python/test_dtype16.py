"""float16, bfloat16, int8 and int16 (Note [Storage dtypes] in
ditto/core/dtype.h): conversions, elementwise arithmetic and the draws
give PyTorch 1.13's bits, against dtype16_golden.json (written by
gen_dtype16_golden.py from torch). Functions of their own (exp, tanh, ...)
and sums compute in float32 and round once, so they may differ from
torch's by one unit of the 16-bit type where the float32 results differ."""
import json
import os
import struct

import numpy as np
import pytest

import ditto
import ditto.nn.functional as F

with open(os.path.join(os.path.dirname(__file__), "dtype16_golden.json")) as f:
    G = json.load(f)

D16 = {"float16": ditto.float16, "bfloat16": ditto.bfloat16}


def from_bits16(bits, dtype):
    signed = [b - 65536 if b >= 32768 else b for b in bits]
    return ditto.tensor(signed, dtype=ditto.int16).view(dtype)


def bits16(t):
    return [b & 0xFFFF for b in t.reshape(-1).view(ditto.int16).tolist()]


def f32(bits):
    return ditto.tensor(
        [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits],
        dtype=ditto.float32)


def f64(bits):
    return ditto.tensor(
        [struct.unpack("<d", struct.pack("<Q", b))[0] for b in bits],
        dtype=ditto.float64)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_conversions_round_as_torch(name):
    dt = D16[name]
    short = {"float16": "f16", "bfloat16": "bf16"}[name]
    # NaN included: bfloat16's is 0xFFFF, as torch's vectorized conversion.
    assert bits16(f32(G["f32"]).to(dt)) == G["f32_to_" + short]
    # float64 goes through float32, as c10's constructors.
    assert bits16(f64(G["f64"]).to(dt)) == G["f64_to_" + short]
    assert bits16(ditto.tensor(G["i64"]).to(dt)) == G["i64_to_" + short]
    # Back to float32 exactly, and a round trip keeps every bit.
    back = from_bits16(G["f32_to_" + short], dt)
    assert bits16(back.float().to(dt)) == G["f32_to_" + short]
    assert dt.is_floating_point and dt.itemsize == 2


def test_integer_conversions_wrap():
    ints = ditto.tensor(G["i64"])
    assert ints.to(ditto.int8).tolist() == G["i64_to_i8"]
    assert ints.to(ditto.int16).tolist() == G["i64_to_i16"]


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_elementwise_ops_give_torchs_bits(name):
    dt, c = D16[name], G["ops"][name]
    a, b = from_bits16(c["a"], dt), from_bits16(c["b"], dt)
    exact = {
        "add": a + b, "sub": a - b, "mul": a * b, "div": a / b,
        "add_scalar": a + 0.1, "mul_scalar": a * 1.7,
        "add_alpha": ditto.add(a, b, alpha=0.3), "neg": -a, "abs": a.abs(),
        "maximum": ditto.maximum(a, b), "max": a.max().reshape(1),
        "sum0": a.reshape(16, 16).sum(0), "sum": a.sum().reshape(1),
        "mean": a.mean().reshape(1),
    }
    for op, got in exact.items():
        assert got.dtype == dt, op
        assert bits16(got) == c[op], op
    assert int(a.argmax()) == c["argmax"]
    assert (a < b).tolist() == c["lt"]
    got = a.float().numpy().view(np.uint32).tolist()
    assert got == c["to_f32"]


def test_bfloat16_functions_within_one_unit():
    c = G["ops"]["bfloat16"]
    a = from_bits16(c["a"], ditto.bfloat16)
    b = from_bits16(c["b"], ditto.bfloat16)
    got = {op: getattr(a, op)() for op in ("exp", "tanh", "sigmoid", "sin",
                                           "relu")}
    got["softmax"] = F.softmax(a, 0)
    # A product accumulates in float32 (the float32 product's chain) and
    # rounds once: more exact than torch 1.13's bfloat16 matmul, which is
    # held to a tolerance only.
    mm = a.reshape(16, 16) @ b.reshape(16, 16)
    assert bits16(mm) == bits16(
        (a.float().reshape(16, 16) @ b.float().reshape(16, 16)).bfloat16())
    want = from_bits16([x for row in c["matmul"] for x in row],
                       ditto.bfloat16).float().reshape(16, 16)
    assert ditto.allclose(mm.float(), want, rtol=0.05, atol=0.5)
    for op, t in got.items():
        assert t.dtype == ditto.bfloat16, op
        mine = np.array(bits16(t), dtype=np.int64)
        want = np.array(c[op], dtype=np.int64).reshape(-1)
        # Same sign; at most one unit of bfloat16 apart (bits are ordered).
        assert np.all((mine >> 15) == (want >> 15)), op
        assert np.max(np.abs(mine - want)) <= 1, op
    assert bits16(got["relu"]) == c["relu"]


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_draws_give_torchs_bits(name):
    dt = D16[name]
    for n in (5, 16, 37, 300):
        ditto.manual_seed(7)
        assert bits16(ditto.rand(n, dtype=dt)) == G["draws"][f"{name}_rand_{n}"]
        ditto.manual_seed(7)
        assert bits16(ditto.randn(n, dtype=dt)) == G["draws"][f"{name}_randn_{n}"]
        ditto.manual_seed(7)
        t = ditto.empty(n, dtype=dt).uniform_(-2, 3)
        assert bits16(t) == G["draws"][f"{name}_uniform_{n}"]
        ditto.manual_seed(7)
        t = ditto.empty(n, dtype=dt).normal_(0.5, 2)
        assert bits16(t) == G["draws"][f"{name}_normal_{n}"]
    ditto.manual_seed(7)
    got = ditto.randint(-100, 100, (50,), dtype=ditto.int8)
    assert got.dtype == ditto.int8 and got.tolist() == G["draws"]["int8_randint"]


def test_serial_float64_draws_give_torchs_float32_bits():
    # cauchy_, log_normal_ and geometric_: float64 draws cast to float32
    # (ditto/_aliases.py); the generator ends where torch's does.
    fills = {"cauchy": lambda t: t.cauchy_(0.5, 2.0),
             "log_normal": lambda t: t.log_normal_(0.3, 0.7),
             "geometric": lambda t: t.geometric_(0.2)}
    for name, fill in fills.items():
        ditto.manual_seed(9)
        got = fill(ditto.empty(301)).numpy().view(np.uint32).tolist()
        assert got == G["draws"][f"float32_{name}"], name
        nxt = ditto.rand(2).numpy().view(np.uint32).tolist()
        assert nxt == G["draws"][f"float32_{name}_next"], name
    with pytest.raises(RuntimeError, match="sigma"):
        ditto.empty(2).cauchy_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="p to be in"):
        ditto.empty(2).geometric_(1.5)


def test_int8_arithmetic_wraps_as_torch():
    c = G["int8"]
    a = ditto.tensor(c["a"], dtype=ditto.int8)
    b = ditto.tensor(c["b"], dtype=ditto.int8)
    assert (a + b).tolist() == c["add"] and (a + b).dtype == ditto.int8
    assert (a * b).tolist() == c["mul"]
    assert (a - b).tolist() == c["sub"]
    assert (-a).tolist() == c["neg"]
    assert int(a.sum()) == c["sum"] and str(a.sum().dtype) == "ditto.int64"
    assert str((a + a.to(ditto.uint8)).dtype) == "ditto." + c["mixed_uint8"].split(".")[1]
    assert (a.to(ditto.int16) * 300).tolist() == c["int16_mul"]


def test_promotion_follows_torch():
    P = ditto.promote_types
    assert P(ditto.float16, ditto.bfloat16) == ditto.float32
    assert P(ditto.uint8, ditto.int8) == ditto.int16
    assert P(ditto.int8, ditto.float16) == ditto.float16
    assert P(ditto.float16, ditto.float32) == ditto.float32
    assert P(ditto.int16, ditto.int32) == ditto.int32
    h = ditto.ones(3, dtype=ditto.float16)
    assert (h + 1.5).dtype == ditto.float16  # a Python number: lower priority
    assert (h + ditto.ones(3)).dtype == ditto.float32
    assert (h + ditto.tensor(2.0)).dtype == ditto.float16  # a 0-d tensor too
    assert (ditto.ones(2, dtype=ditto.int8) // 2).dtype == ditto.int8


def test_models_in_half_and_bfloat16_train():
    for dt in (ditto.float16, ditto.bfloat16):
        ditto.manual_seed(0)
        model = ditto.nn.Sequential(
            ditto.nn.Conv2d(1, 4, 3), ditto.nn.ReLU(), ditto.nn.Flatten(),
            ditto.nn.Linear(4 * 6 * 6, 3))
        assert model.to(dt) is model
        assert all(p.dtype == dt for p in model.parameters())
        x = ditto.randn(2, 1, 8, 8, dtype=dt)
        loss = F.cross_entropy(model(x), ditto.tensor([0, 2]))
        assert loss.dtype == dt
        loss.backward()
        assert all(p.grad.dtype == dt for p in model.parameters())
        opt = ditto.optim.SGD(model.parameters(), lr=0.1)
        opt.step()
    m = ditto.nn.Linear(2, 2)
    assert m.half().weight.dtype == ditto.float16
    assert m.bfloat16().weight.dtype == ditto.bfloat16
    assert m.float().weight.dtype == ditto.float32


def test_values_out_and_printing():
    h = ditto.tensor([1.0, 2.5, 65504.0], dtype=ditto.float16)
    assert h.tolist() == [1.0, 2.5, 65504.0] and h[1].item() == 2.5
    assert repr(h).endswith("dtype=ditto.float16)")
    assert h.numpy().dtype == np.float16
    assert ditto.from_numpy(np.array([1.5], dtype=np.float16)).dtype == ditto.float16
    with pytest.raises(TypeError, match="BFloat16"):
        h.bfloat16().numpy()
    assert "{:.1f}".format(h[0]) == "1.0"
    assert ditto.finfo(ditto.float16).max == 65504.0
    assert ditto.finfo(ditto.bfloat16).eps == 0.0078125
    assert ditto.iinfo(ditto.int8).min == -128
    assert ditto.zeros(2, dtype=ditto.int16).dtype == ditto.int16
    assert ditto.tensor([300.0]).half().isinf().tolist() == [False]
    assert ditto.tensor([70000.0]).half().isinf().tolist() == [True]


def test_same_bits_every_thread_count():
    x = ditto.randn(300, 70).bfloat16()
    w = ditto.randn(70, 50).bfloat16()
    out = []
    for n in (1, 2, 3):
        ditto.set_num_threads(n)
        out.append(bits16(((x @ w).tanh().sum(0) + x.sum(1)[:50]).reshape(-1)))
    ditto.set_num_threads(1)
    assert out[0] == out[1] == out[2]


def test_view_as_another_dtype_checks_sizes():
    h = ditto.ones(2, dtype=ditto.float16)
    assert h.view(ditto.int16).tolist() == [15360, 15360]
    with pytest.raises(ValueError, match="view"):
        h.view(ditto.float32)


def test_autocast_follows_torchs_cpu_lists():
    c = G["autocast"]
    x = f32(c["x"]).reshape(8, 64)
    lin = ditto.nn.Linear(64, 32)
    with ditto.no_grad():
        lin.weight.copy_(f32(c["w"]).reshape(32, 64))
        lin.bias.copy_(f32(c["b"]))
    conv = ditto.nn.Conv2d(3, 4, 3)
    with ditto.no_grad():
        conv.weight.copy_(f32(c["cw"]).reshape(4, 3, 3, 3))
        conv.bias.copy_(f32(c["cb"]))
    img = f32(c["img"]).reshape(2, 3, 9, 9)
    with ditto.autocast("cpu"):
        assert ditto.is_autocast_cpu_enabled()
        y = lin(x)
        got = {"linear": y, "mm": x @ x.t(), "conv": conv(img)}
        assert str(F.mse_loss(y, ditto.zeros(8, 32)).dtype) == \
            "ditto." + c["mse_dtype"].split(".")[1]
    assert not ditto.is_autocast_cpu_enabled()
    assert str(y.dtype) == "ditto." + c["linear_dtype"].split(".")[1]
    for op, t in got.items():
        # float32 accumulation in both, rounded once: equal but where the
        # two float32 sums round to different sides of a bfloat16 tie.
        mine = np.array(bits16(t), dtype=np.int64)
        want = np.array(c[op], dtype=np.int64)
        assert np.max(np.abs(mine - want)) <= 1, op
        assert np.mean(mine == want) > 0.98, op
    assert lin(x).dtype == ditto.float32  # outside: as given
    with pytest.warns(UserWarning, match="not supported"):
        with ditto.autocast("cpu", dtype=ditto.float16):
            assert lin(x).dtype == ditto.float32
    with ditto.cpu.amp.autocast():
        assert lin(x).dtype == ditto.bfloat16


def test_draws_refuse_bad_bounds_and_change_nothing():
    for dt in (ditto.float16, ditto.bfloat16):
        t = ditto.zeros(3, dtype=dt)
        for lo, hi, what in ((0, 1e39, "out of bounds"),
                             (float("nan"), 1, "out of bounds"),
                             (2, 1, "range"),
                             (-3e38, 3e38, "to-from")):
            if dt == ditto.float16 and what == "to-from":
                lo, hi = -60000, 60000
            with pytest.raises(ValueError, match=what):
                t.uniform_(lo, hi)
        with pytest.raises(ValueError, match="std"):
            t.normal_(0.0, -1.0)
        assert t.tolist() == [0.0, 0.0, 0.0]
