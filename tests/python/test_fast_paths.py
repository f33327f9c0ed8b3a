"""The CPython fast paths of Tensor (python/src/fast_paths.cpp) answer as the
pybind11 bindings they replace: the same values, types, errors and
messages, with DITTO_PYTHON_FAST_PATHS=0 (the bindings alone) as the
reference."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import ditto

CASES = [
    "a + b", "a - b", "a * b", "a / b", "a + 2", "a * 2.5", "2 + a",
    "a + True", "a + 2**70", "a + 'x'", "a + m", "i + 1", "i / 2",
    "a.add(b)", "a.add(b, alpha=2)", "a.add(2, alpha=3)", "a.add(other=b)",
    "a.sub(1.5)", "a.mul(b)", "a.div(m)", "ditto.Tensor.add(a, b)",
    "a.add(b, alpha=1)", "a.add(b, alpha=2.5)", "a.sub(b, alpha=-1)",
    "a.add(b, alpha=True)", "a.add(b, beta=2)", "a.mul(b, alpha=2)",
    "ditto.add(a, b)", "ditto.add(a, 2, alpha=3)", "ditto.sub(a, b, alpha=0.5)",
    "ditto.add(input=a, other=b)", "ditto.add(a, other=b)", "ditto.mul(2, a)",
    "ditto.div(a, m)", "ditto.div(i, 2)", "ditto.add(a)", "ditto.add.__name__",
    "a.sum()", "m.sum()", "m.sum(0)", "m.sum(dim=1, keepdim=True)",
    "i.sum()", "m.mean()", "i.mean()", "m.mean(1)",
    "m.sum(-1)", "m.sum(5)", "i.mean(0)", "m.sum(2**70)", "m.sum(True)",
    "m.shape", "s.shape", "m.size()", "m.size(1)", "m.size(-1)",
    "m.size(2)", "m.size(dim=0)", "m.size(True)", "m.size('x')",
    "m.dim()", "m.ndim", "s.ndimension()", "m.numel()", "m.nelement()",
    "s.item()", "i[0].item()", "u[0].item()", "bo[0].item()",
    "d[0].item()", "m.item()", "m[1, 2].item()", "m.t()[2][1].item()",
    "ditto.tensor([1, 2], dtype=ditto.int32)[1].item()",
    "p.shape", "p.requires_grad", "p.dim()",
    "p + a", "m.requires_grad", "m.requires_grad_().requires_grad",
]

SCRIPT = textwrap.dedent("""
    import json, sys
    import ditto
    a, b = ditto.tensor([1.0, 2.0]), ditto.tensor([3.0, 4.0])
    m = ditto.arange(6.0).view(2, 3)
    s = ditto.tensor(1.5)
    i = ditto.tensor([7, 8])
    u = ditto.tensor([200], dtype=ditto.uint8)
    bo = ditto.tensor([True])
    d = ditto.tensor([0.1], dtype=ditto.float64)
    p = ditto.nn.Parameter(ditto.ones(2, 2))
    out = []
    for case in json.loads(sys.argv[1]):
        try:
            r = eval(case)
            if isinstance(r, ditto.Tensor):
                r = ["tensor", str(r.dtype), list(r.shape), r.tolist()]
            out.append([type(r).__name__, repr(r)])
        except Exception as e:
            out.append(["raised", type(e).__name__, str(e)])
    print(json.dumps(out))
""")


def run_cases(fast):
    env = dict(os.environ, DITTO_PYTHON_FAST_PATHS="1" if fast else "0")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES)],
                       env=env, stdout=subprocess.PIPE, text=True,
                       check=True, timeout=120)
    return json.loads(r.stdout)


def test_fast_paths_answer_as_the_bindings():
    fast, slow = run_cases(True), run_cases(False)
    for case, f, s in zip(CASES, fast, slow):
        assert f == s, case
    # The fast paths are there (a plain CPython method, not pybind11's).
    assert type(ditto.Tensor.dim).__name__ == "method_descriptor"
    assert type(ditto.Tensor.__add__).__name__ == "method_descriptor"
    assert type(ditto.add).__name__ == "builtin_function_or_method"


def test_an_error_in_a_trace_hook_reaches_the_caller():
    def hook(event):
        raise KeyError("from the hook")
    ditto.trace.set_hook(hook)
    try:
        with pytest.raises(KeyError, match="from the hook"):
            ditto.ones(1) + ditto.ones(1)
    finally:
        ditto.trace.set_hook(None)


def test_requires_grad_setter():
    t = ditto.ones(2)
    t.requires_grad = True
    assert t.requires_grad
    y = t * 2
    with pytest.raises(ValueError, match="leaf"):
        y.requires_grad = False
    assert ditto.Tensor.shape.__doc__
