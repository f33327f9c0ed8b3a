"""ditto.autograd.Function (issue 33): custom ops in Python with
torch.autograd.Function's API, on the C++ CustomOp: analytic gradients,
gradcheck, non-tensor arguments, several outputs, exceptions with their
type, the op's record, trace name and node, and nondeterministic paths."""
import gc
import math
import threading
import weakref
import warnings

import pytest

import ditto
from ditto.autograd import Function, gradcheck


class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class ScaledMul(Function):
    """a * b * scale, with a non-tensor scale and ctx attributes."""

    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        ctx.seen_needs = ctx.needs_input_grad
        return a * b * scale

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * b * ctx.scale if ctx.needs_input_grad[0] else None
        gb = grad * a * ctx.scale if ctx.needs_input_grad[1] else None
        return ga, gb, None


class ExpTanh(Function):
    """Two outputs."""

    @staticmethod
    def forward(ctx, x):
        e, t = x.exp(), x.tanh()
        ctx.save_for_backward(e, t)
        return e, t

    @staticmethod
    def backward(ctx, ge, gt):
        e, t = ctx.saved_tensors
        return ge * e + gt * (1 - t * t)


@pytest.fixture(autouse=True)
def _nondeterministic_mode():
    """Each test starts with the deterministic mode off (another file's
    test may leave it on) and leaves it as it found it."""
    on = ditto.are_deterministic_algorithms_enabled()
    warn = ditto.is_deterministic_algorithms_warn_only_enabled()
    ditto.use_deterministic_algorithms(False)
    yield
    ditto.use_deterministic_algorithms(on, warn_only=warn)


def t64(values, requires_grad=True):
    return ditto.tensor(values, dtype=ditto.float64,
                        requires_grad=requires_grad)


def test_exp_gradient_is_analytic():
    x = t64([0.5, -1.0, 2.0])
    y = MyExp.apply(x)
    assert y.tolist() == x.detach().exp().tolist()
    y.sum().backward()
    assert x.grad.tolist() == x.detach().exp().tolist()


def test_non_tensor_argument_and_ctx_attributes():
    a = t64([1.0, 2.0])
    b = t64([3.0, 4.0], requires_grad=False)
    y = ScaledMul.apply(a, b, 2.5)
    assert y.tolist() == [7.5, 20.0]
    y.sum().backward()
    assert a.grad.tolist() == [7.5, 10.0]
    assert b.grad is None


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            seen["grad_mode"] = ditto.is_grad_enabled()
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    Probe.apply(t64([1.0]), t64([2.0], requires_grad=False), 3)
    assert seen["needs"] == (True, False, False)
    assert seen["grad_mode"] is False  # forward runs with grad mode off
    with ditto.no_grad():
        y = Probe.apply(t64([1.0]), t64([2.0]), 3)
    assert seen["needs"] == (False, False, False)
    assert not y.requires_grad


def test_two_outputs():
    x = t64([0.3, 1.2])
    e, t = ExpTanh.apply(x)
    (e * 2 + t * 3).sum().backward()
    want = [2 * math.exp(v) + 3 * (1 - math.tanh(v) ** 2) for v in (0.3, 1.2)]
    assert x.grad.tolist() == pytest.approx(want, rel=1e-15)


def test_only_one_output_used_gets_zeros_for_the_other():
    x = t64([0.3, 1.2])
    _, t = ExpTanh.apply(x)
    t.sum().backward()
    want = [1 - math.tanh(v) ** 2 for v in (0.3, 1.2)]
    assert x.grad.tolist() == pytest.approx(want, rel=1e-15)


def test_backward_returning_none_for_an_input():
    class FirstOnly(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2 + b

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    a, b = t64([1.0]), t64([2.0])
    FirstOnly.apply(a, b).sum().backward()
    assert a.grad.tolist() == [2.0]
    assert b.grad is None


def test_gradcheck_passes():
    x = t64([0.1, -0.4, 0.9])
    assert gradcheck(MyExp.apply, (x,))
    assert gradcheck(ScaledMul.apply, (t64([1.0, 2.0]), t64([0.5, 3.0]), 1.5))
    assert gradcheck(ExpTanh.apply, (x,))


def test_gradcheck_catches_a_wrong_backward():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2 x g

    x = t64([1.0, 2.0])
    with pytest.raises(ditto.autograd.GradcheckError, match="output 0"):
        gradcheck(Wrong.apply, (x,))
    assert gradcheck(Wrong.apply, (x,), raise_exception=False) is False


class Boom(Exception):
    pass


def test_exception_in_forward_propagates_with_its_type():
    class BadForward(Function):
        @staticmethod
        def forward(ctx, x):
            raise Boom("forward failed")

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(Boom, match="forward failed"):
        BadForward.apply(t64([1.0]))
    with pytest.raises(KeyError):
        class KeyForward(BadForward):
            @staticmethod
            def forward(ctx, x):
                return {}["missing"]
        KeyForward.apply(t64([1.0]))
    # The thread's state is as it was: ops still record.
    x = t64([1.0])
    MyExp.apply(x).sum().backward()
    assert x.grad is not None


def test_exception_in_backward_propagates_with_its_type():
    class BadBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("backward failed")

    x = t64([1.0])
    y = BadBackward.apply(x).sum()
    with pytest.raises(ValueError, match="backward failed"):
        y.backward()
    with pytest.raises(ValueError, match="backward failed"):
        ditto.autograd.grad(BadBackward.apply(x).sum(), x)


def test_wrong_number_of_gradients_raises():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooFew.apply(t64([1.0]), t64([2.0])).sum().backward()


def test_gradient_for_a_non_tensor_argument_raises():
    class GradForInt(Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="not a tensor"):
        GradForInt.apply(t64([1.0]), 2).sum().backward()


def test_double_apply_and_composition():
    x = t64([0.5, 1.5])
    y = MyExp.apply(MyExp.apply(x))
    y.sum().backward()
    want = [math.exp(v) * math.exp(math.exp(v)) for v in (0.5, 1.5)]
    assert x.grad.tolist() == pytest.approx(want, rel=1e-14)
    # The same class applied twice on one graph.
    x.grad = None
    z = MyExp.apply(x) + MyExp.apply(x * 2)
    z.sum().backward()
    want = [math.exp(v) + 2 * math.exp(2 * v) for v in (0.5, 1.5)]
    assert x.grad.tolist() == pytest.approx(want, rel=1e-14)


def test_autograd_grad_through_it():
    x = t64([0.25, 0.75])
    (g,) = ditto.autograd.grad(MyExp.apply(x).sum(), x)
    assert g.tolist() == x.detach().exp().tolist()
    assert x.grad is None


def test_retain_graph_runs_backward_twice():
    x = t64([0.5])
    y = MyExp.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [2 * math.exp(0.5)]


def test_record_name_node_and_trace():
    x = t64([1.0])
    y = MyExp.apply(x)
    name = f"{__name__}.MyExp"
    assert y.grad_fn.name() == "MyExpBackward"  # torch's node name
    recs = {r["name"]: r for r in ditto.op_records()}
    assert recs[name]["family"] == "custom"
    assert recs[name]["callables"] == ["MyExp.apply(x)"]
    assert recs[name]["determinism"] == "always"
    assert recs[name]["differentiable"] is True
    # One record per class, registered once.
    MyExp.apply(x)
    assert sum(r["name"] == name for r in ditto.op_records()) == 1


@pytest.mark.hostile
def test_a_subclass_and_a_namesake_get_their_own_records():
    class Twice(MyExp):
        pass

    x = t64([1.0])
    assert Twice.apply(x).grad_fn.name() != MyExp.apply(x).grad_fn.name()

    def make():
        class Local(Function):
            @staticmethod
            def forward(ctx, x):
                return x + 1

            @staticmethod
            def backward(ctx, g):
                return g
        return Local

    a, b = make(), make()
    # One definition made twice: one record (since issue 61, item 15; it
    # was two, the second named "#2"), one node name, as torch's.
    assert a.apply(x).grad_fn.name() == b.apply(x).grad_fn.name() == \
        "LocalBackward"
    assert b._ditto_op.name == a._ditto_op.name


def test_forward_returning_an_input_keeps_the_leaf():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = t64([1.0, 2.0])
    y = Identity.apply(x)
    assert x.is_leaf and x.grad_fn is None
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_mark_non_differentiable_and_non_tensor_outputs():
    class ArgMaxish(Function):
        @staticmethod
        def forward(ctx, x):
            idx = ditto.tensor([1.0])
            ctx.mark_non_differentiable(idx)
            return x * 2, idx, "label"

        @staticmethod
        def backward(ctx, g, g_idx, g_label):
            assert g_idx.tolist() == [0.0] and g_label is None
            return g * 2

    x = t64([1.0])
    y, idx, label = ArgMaxish.apply(x)
    assert label == "label"
    assert not idx.requires_grad and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0]


def test_without_a_backward_a_gradient_raises_naming_the_op():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = t64([1.0])
    y = NoBackward.apply(x)
    name = f"{__name__}.{NoBackward.__qualname__}"
    rec = {r["name"]: r for r in ditto.op_records()}[name]
    assert rec["differentiable"] is False
    with pytest.raises(Exception, match="NoBackward"):
        y.sum().backward()


def test_ctx_misuse_raises():
    class SaveInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x

    with pytest.raises(TypeError, match="save_for_backward"):
        SaveInt.apply(t64([1.0]))
    with pytest.raises(RuntimeError):
        MyExp()
    ctx = ditto.autograd.FunctionCtx((True,))
    with pytest.raises(RuntimeError):
        ctx.saved_tensors
    with pytest.raises(NotImplementedError):
        ctx.mark_dirty(t64([1.0]))


def test_saved_tensor_modified_in_place_raises():
    x = t64([0.5])
    y = MyExp.apply(x)
    with ditto.no_grad():
        y.mul_(2)
    # ditto raises ValueError where torch raises RuntimeError.
    with pytest.raises(ValueError, match="modified by an inplace"):
        y.sum().backward()


def test_the_graph_frees_ctx_and_outputs():
    """No reference cycle through C++ (invisible to Python's collector):
    the node holds the backward, not forward's outputs."""
    refs = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            ctx.k = 3
            ctx.mark_non_differentiable()
            refs.append(weakref.ref(ctx))
            return y, y * 2

        @staticmethod
        def backward(ctx, g1, g2):
            (y,) = ctx.saved_tensors
            return (g1 + 2 * g2) * y

    x = t64([0.5])
    a, b = Keep.apply(x)
    (a + b).sum().backward(retain_graph=True)
    assert refs[0]() is not None  # the graph is alive
    del a, b
    gc.collect()
    assert refs[0]() is None
    Keep.apply(x)  # no grad kept
    gc.collect()
    assert refs[1]() is None


def test_deterministic_variant_and_nondeterministic_path():
    seen = []

    class Racy(Function):
        nondeterministic = [{"reason": "its backward adds in thread order "
                             "(a test op)", "backward": True,
                             "has_deterministic_variant": False}]

        @staticmethod
        def forward(ctx, x):
            seen.append(("forward", ctx.deterministic()))
            return x * 3

        @staticmethod
        def backward(ctx, g):
            seen.append(("backward", ctx.deterministic()))
            return g * 3

    name = f"{__name__}.{Racy.__qualname__}"
    x = t64([1.0])
    Racy.apply(x).sum().backward()
    rec = {r["name"]: r for r in ditto.op_records()}[name]
    assert rec["determinism"] == "alert"
    assert seen == [("forward", False), ("backward", False)]
    ditto.use_deterministic_algorithms(True)
    try:
        y = Racy.apply(x).sum()
        assert seen[-1] == ("forward", True)
        with pytest.raises(RuntimeError, match=name + "_backward"):
            y.backward()
        ditto.use_deterministic_algorithms(True, warn_only=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            Racy.apply(x).sum().backward()
        assert any(name + "_backward" in str(m.message) for m in w)
    finally:
        ditto.use_deterministic_algorithms(False)


def test_bad_nondeterministic_declaration_raises():
    class BadDecl(Function):
        nondeterministic = ["just a string"]

        @staticmethod
        def forward(ctx, x):
            return x

    with pytest.raises(TypeError, match="nondeterministic"):
        BadDecl.apply(t64([1.0]))


def test_once_differentiable_and_create_graph():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ditto.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = t64([3.0])
    (g,) = ditto.autograd.grad(Square.apply(x).sum(), x)
    assert g.tolist() == [6.0]


def test_threads_apply_concurrently():
    errors = []

    def work():
        try:
            for _ in range(20):
                x = t64([0.5, 1.0])
                MyExp.apply(x).sum().backward()
                assert x.grad.tolist() == x.detach().exp().tolist()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_torch_style_example_from_the_docs():
    class LinearFn(Function):
        @staticmethod
        def forward(ctx, x, w, bias=None):
            ctx.save_for_backward(x, w, bias)
            out = x @ w.t()
            return out + bias if bias is not None else out

        @staticmethod
        def backward(ctx, grad_out):
            x, w, bias = ctx.saved_tensors
            gx = grad_out @ w if ctx.needs_input_grad[0] else None
            gw = grad_out.t() @ x if ctx.needs_input_grad[1] else None
            gb = grad_out.sum(0) if bias is not None and \
                ctx.needs_input_grad[2] else None
            return gx, gw, gb

    ditto.manual_seed(0)
    x = ditto.randn(4, 3, dtype=ditto.float64, requires_grad=True)
    w = ditto.randn(2, 3, dtype=ditto.float64, requires_grad=True)
    b = ditto.randn(2, dtype=ditto.float64, requires_grad=True)
    assert gradcheck(LinearFn.apply, (x, w, b))
    assert gradcheck(LinearFn.apply, (x, w))


def test_a_graph_alive_at_exit_does_not_crash_the_interpreter(tmp_path):
    """The node's Python callbacks are dropped while the interpreter shuts
    down (then they are left alone), and from a thread without the GIL."""
    import os
    import subprocess
    import sys
    script = tmp_path / "alive.py"
    script.write_text(
        "import threading\n"
        "import ditto\n"
        "class Double(ditto.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n"
        "        return x * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g * 2\n"
        "x = ditto.ones(3, requires_grad=True)\n"
        "kept = Double.apply(x)\n"  # alive until the interpreter ends
        "def drop():\n"
        "    y = Double.apply(x)\n"
        "    y.sum().backward()\n"  # freed on this thread
        "t = threading.Thread(target=drop)\n"
        "t.start()\n"
        "t.join()\n"
        "print('ok', x.grad.tolist())\n")
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(ditto.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run([sys.executable, str(script)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok [2.0, 2.0, 2.0]"


def test_vjp_is_another_name_for_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def vjp(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = t64([2.0])
    Cube.apply(x).sum().backward()
    assert x.grad.tolist() == [12.0]


def test_a_function_inside_forward_is_nested():
    class Outer(Function):
        @staticmethod
        def forward(ctx, x):
            return MyExp.apply(x) * 2  # neither recorded nor traced apart

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = t64([0.0])
    y = Outer.apply(x)
    assert y.tolist() == [2.0]
    assert y.grad_fn.name() == "OuterBackward"
    assert [n for n, _ in y.grad_fn.next_functions if n is not None] != []
    y.sum().backward()
    assert x.grad.tolist() == [5.0]


def test_gradcheck_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(KeyError):
        gradcheck(lambda x: {}["missing"], (x,))
    with pytest.raises(ValueError, match="no floating tensor"):
        gradcheck(lambda x: 3, (x,))
    with pytest.raises(TypeError, match="float64"):
        gradcheck(lambda x: x * 2, (ditto.ones(2, requires_grad=True),))


@pytest.mark.hostile
def test_two_threads_backward_through_one_graph():
    # Issue 61, item 6: two threads calling backward() on one graph
    # corrupted the heap. As torch: with retain_graph both run and both
    # gradients arrive; without, a thread that comes second is refused
    # ("a second time"), and nothing else ever happens.
    ditto.manual_seed(1)
    w = ditto.randn(64, requires_grad=True)
    c = ditto.randn(64)
    v = w.detach().requires_grad_()
    (v.exp() * c).tanh().sum().backward()
    once = v.grad.clone()
    barrier = threading.Barrier(2)
    for retain in (True, False):
        for _ in range(50):
            w.grad = None
            loss = (w.exp() * c).tanh().sum()
            refused, other = [], []

            def run():
                barrier.wait()
                try:
                    loss.backward(retain_graph=retain)
                except RuntimeError as e:
                    (refused if "a second time" in str(e) else other).append(e)

            t = threading.Thread(target=run)
            t.start()
            run()
            t.join()
            assert other == []
            if retain:
                assert refused == []
                assert ditto.equal(w.grad, once * 2)
            else:
                assert len(refused) <= 1
                assert w.grad is not None


@pytest.mark.hostile
def test_a_function_defined_every_step_registers_one_op():
    # Issue 61, item 15: a Function subclass defined inside a per-step
    # function is a new class each call; it used to register a new op
    # record each time (the op list and the time per call grew without
    # bound).
    def step(x):
        class Twice(ditto.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return Twice.apply(x)

    x = ditto.ones(3, requires_grad=True)
    step(x)
    before = len(ditto.op_records())
    for _ in range(300):
        y = step(x)
    assert len(ditto.op_records()) == before
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]

    # Two different definitions still get two ops.
    def other(x):
        class Twice(ditto.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 3

            @staticmethod
            def backward(ctx, g):
                return g * 3
        return Twice.apply(x)
    other(x)
    assert len(ditto.op_records()) == before + 1


@pytest.mark.hostile
def test_an_in_place_change_of_a_view_output_is_refused():
    # Issue 61, item 18: a Function whose forward returns a view of its
    # input (or the input itself) let an in-place op on the output change
    # the leaf behind autograd's back. As torch: refused, the leaf
    # unchanged; a clone of the output may be changed.
    class View(Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g

    class Same(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    for fn in (View, Same):
        x = ditto.ones(3, requires_grad=True)
        y = fn.apply(x)
        with pytest.raises((ValueError, RuntimeError), match="view"):
            y.add_(1)
        assert x.tolist() == [1.0, 1.0, 1.0]
        z = fn.apply(x).clone()
        z.add_(1)
        z.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0, 1.0]
        assert x.tolist() == [1.0, 1.0, 1.0]
