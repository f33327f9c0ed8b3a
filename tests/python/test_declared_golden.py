"""The ops added by declaration alone or with a one-line kernel (rsqrt,
reciprocal, floor, ceil, trunc, round, frac; docs/ops.md) give torch
1.13's bits, values and gradients, in float32 and float64 (ties, signed
zeros, infinities, values already integral). NaN is compared as NaN: its
sign and payload are not reproducible across CPUs (docs/fingerprint.md).
The values come from gen_declared_golden.py."""
import json
import os

import numpy as np
import pytest

import ditto

with open(os.path.join(os.path.dirname(__file__), "declared_golden.json")) as f:
    GOLDEN = json.load(f)

INT = {"float32": np.int32, "float64": np.int64}


def values(b, dtype):
    return np.array(b, dtype=INT[dtype]).view(dtype)


def assert_same_bits(got, want, what):
    got = np.asarray(got)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), what
    g = got[~nan].view(INT[str(want.dtype)])
    w = want[~nan].view(INT[str(want.dtype)])
    bad = np.nonzero(g != w)[0]
    assert bad.size == 0, (
        f"{what}: {bad.size} differ, first at {bad[0]}: "
        f"{got[~nan][bad[0]]!r} against torch's {want[~nan][bad[0]]!r}")


@pytest.mark.parametrize(
    "case", GOLDEN["cases"],
    ids=[f"{c['op']}-{c['dtype']}-{c['label']}" for c in GOLDEN["cases"]])
def test_values_and_gradients_are_torchs(case):
    dt = case["dtype"]
    x = ditto.tensor(values(case["x"], dt))
    op = case["op"]
    y = getattr(ditto, op)(x)
    assert_same_bits(y.numpy(), values(case["y"], dt), f"{op} {dt}")
    # The method and the in-place form give the function's bits.
    assert_same_bits(getattr(x, op)().numpy(), values(case["y"], dt), op)
    z = x.clone()
    getattr(z, op + "_")()
    assert_same_bits(z.numpy(), values(case["y"], dt), op + "_")
    if "dx" in case:
        xg = x.clone().requires_grad_(True)
        getattr(ditto, op)(xg).backward(ditto.tensor(values(case["g"], dt)))
        assert_same_bits(xg.grad.numpy(), values(case["dx"], dt),
                         f"d{op} {dt}")


def test_integer_inputs_follow_torch():
    # floor, ceil, trunc and round keep an integer tensor as it is; rsqrt
    # and reciprocal compute in float32.
    x = ditto.tensor([-3, 0, 7])
    for op in ("floor", "ceil", "trunc", "round"):
        y = getattr(ditto, op)(x)
        assert y.dtype == ditto.int64
        assert y.tolist() == [-3, 0, 7]
    r = ditto.reciprocal(x)
    assert r.dtype == ditto.float32
    assert r.tolist()[2] == np.float32(1) / np.float32(7)
    with pytest.raises(TypeError, match="floor"):
        ditto.floor(ditto.tensor([True, False]))
