"""Issue 59's ops (ditto/ops/elementwise/math.ops.toml, composite.ops.toml, the
Python wrappers in ditto/_composite.py, nn.functional and linalg) give
torch 1.13's results: each case is a Python expression run unchanged on
ditto, against the values gen_wave_golden.py recorded from torch. Moves,
predicates and IEEE-exact arithmetic must match exactly; transcendental
functions, sums and eliminations within tolerance (each library computes
its own): float64 1e-10 relative, float32 2e-5."""
import json
import math
import os

import numpy as np
import pytest

import ditto
import ditto.nn.functional as F
import wave_cases

with open(os.path.join(os.path.dirname(__file__), "wave_golden.json")) as f:
    GOLDEN = json.load(f)


def env(dtype, requires_grad=False):
    return wave_cases.env(ditto, F, GOLDEN["inputs"], GOLDEN["matrix"],
                          requires_grad, dtype)


def compare(got, want, exact, dtype, what):
    if isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, exact, dtype, f"{what}[{i}]")
        return
    assert list(got.shape) == want["shape"], (what, list(got.shape), want["shape"])
    g = np.asarray(got.detach().double().numpy(), dtype=np.float64).ravel()
    w = np.array(want["values"], dtype=np.float64)
    if exact:
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        assert same.all(), f"{what}: {g[~same][:4]} against torch's {w[~same][:4]}"
    else:
        rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 1e-5)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["expr"] for c in GOLDEN["cases"]])
def test_results_are_torchs(case):
    for dtype in ("float64", "float32"):
        out = eval(case["expr"], env(getattr(ditto, dtype)))
        compare(out, case[dtype], case["exact"], dtype, f"{case['expr']} {dtype}")


@pytest.mark.parametrize("case", GOLDEN["grads"], ids=[c["expr"] for c in GOLDEN["grads"]])
def test_gradients_are_torchs(case):
    e = env(ditto.float64, True)
    out = eval(case["expr"], e)
    wts = ditto.linspace(-1.0, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
    (out * wts).sum().backward()
    for k, want in case["float64"].items():
        assert e[k].grad is not None, f"{case['expr']}: no gradient for {k}"
        np.testing.assert_allclose(e[k].grad.numpy().ravel(), want,
                                   rtol=1e-9, atol=1e-12,
                                   err_msg=f"d {case['expr']} / d{k}")


def test_sin_of_huge_arguments_is_reduced_exactly():
    # Payne-Hanek beyond 2^19: glibc's correctly rounded values
    xs = [1e22, 2.0 ** 1000, -3.0e10, 1e6 + 0.5]
    got = ditto.sin(ditto.tensor(xs, dtype=ditto.float64)).tolist()
    for x, g in zip(xs, got):
        assert abs(g - math.sin(x)) <= 2 * math.ulp(math.sin(x)), x
    # a block whose elements straddle 2^19 gives each element's own bits
    many = ditto.tensor([0.5 + i * 9000.0 for i in range(300)], dtype=ditto.float64)
    alone = [ditto.sin(many[i:i + 1]).item() for i in range(300)]
    assert ditto.sin(many).tolist() == alone


def reference_attention(q, k, v, mask=None, scale=None):
    q, k, v = (np.asarray(a.numpy(), np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * (scale or 1 / np.sqrt(q.shape[-1]))
    if mask is not None:
        s = s + mask
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v


def test_scaled_dot_product_attention_is_the_math():
    # torch 1.13 has no scaled_dot_product_attention: its definition
    # (torch 2.x's math reference) in float64 NumPy
    rng = np.random.RandomState(1)
    q = ditto.tensor(rng.randn(2, 3, 5, 4))
    k = ditto.tensor(rng.randn(2, 3, 6, 4))
    v = ditto.tensor(rng.randn(2, 3, 6, 4))
    got = F.scaled_dot_product_attention(q, k, v).numpy()
    np.testing.assert_allclose(got, reference_attention(q, k, v), rtol=1e-12)
    bm = rng.rand(5, 6) > 0.3
    got = F.scaled_dot_product_attention(q, k, v, attn_mask=ditto.tensor(bm)).numpy()
    want = reference_attention(q, k, v, np.where(bm, 0.0, -np.inf))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    causal = np.triu(np.full((5, 6), -np.inf), 1)
    got = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3).numpy()
    np.testing.assert_allclose(got, reference_attention(q, k, v, causal, 0.3),
                               rtol=1e-12)
    # dropout draws from the generator: same seed, same bits
    g1, g2 = ditto.Generator().manual_seed(5), ditto.Generator().manual_seed(5)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=g1)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=g2)
    assert a.numpy().tobytes() == b.numpy().tobytes()


def test_rms_norm_is_the_math():
    rng = np.random.RandomState(2)
    x = rng.randn(3, 4, 8)
    m = ditto.nn.RMSNorm(8, eps=1e-6, dtype=ditto.float64)
    got = m(ditto.tensor(x)).detach().numpy()
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
