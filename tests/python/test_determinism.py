"""The determinism switches from Python, as torch spells them."""
import math
import warnings

import pytest

import ditto


@pytest.fixture(autouse=True)
def restore():
    yield
    ditto.use_deterministic_algorithms(False)
    ditto.backends.conv.benchmark = False
    ditto.backends.conv.deterministic = False
    ditto.utils.deterministic.fill_uninitialized_memory = True


def test_mode_and_debug_mode():
    assert not ditto.are_deterministic_algorithms_enabled()
    ditto.use_deterministic_algorithms(True)
    assert ditto.are_deterministic_algorithms_enabled()
    assert not ditto.is_deterministic_algorithms_warn_only_enabled()
    assert ditto.get_deterministic_debug_mode() == 2
    ditto.use_deterministic_algorithms(True, warn_only=True)
    assert ditto.is_deterministic_algorithms_warn_only_enabled()
    assert ditto.get_deterministic_debug_mode() == 1
    ditto.set_deterministic_debug_mode("default")
    assert not ditto.are_deterministic_algorithms_enabled()
    ditto.set_deterministic_debug_mode(2)
    assert ditto.are_deterministic_algorithms_enabled()


def test_backend_attributes_are_settable():
    conv = ditto.backends.conv
    conv.benchmark = True
    assert ditto.backends.conv.benchmark is True
    conv.deterministic = True
    assert conv.deterministic is True
    limit = conv.benchmark_limit
    conv.benchmark_limit = 3
    assert conv.benchmark_limit == 3
    conv.benchmark_limit = limit
    import ditto.backends.conv as c2
    assert c2.benchmark is True


def test_fill_uninitialized_memory():
    ditto.use_deterministic_algorithms(True)
    assert ditto.utils.deterministic.fill_uninitialized_memory is True
    assert all(math.isnan(v) for v in ditto.empty(4).tolist())
    assert ditto.empty(2, dtype=ditto.int64).tolist() == [2**63 - 1] * 2
    ditto.utils.deterministic.fill_uninitialized_memory = False
    assert ditto.utils.deterministic.fill_uninitialized_memory is False


def test_variants_ops_run_their_deterministic_variant():
    ditto.use_deterministic_algorithms(True)
    x = ditto.tensor([0, 1, 1, 3])
    w = ditto.tensor([1.0, 2.0, 3.0, 4.0])
    assert ditto.bincount(x, w).tolist() == [1.0, 5.0, 0.0, 4.0]
    t = ditto.zeros(3).index_add_(0, ditto.tensor([0, 0, 2]), ditto.ones(3))
    assert t.tolist() == [2.0, 0.0, 1.0]


def test_alert_is_runtime_error_and_warn_only_is_a_user_warning():
    # The alert an op without a deterministic variant raises (custom ops
    # declare such paths; _alert_not_deterministic is their call).
    ditto._C._alert_not_deterministic("my_scatter")  # mode off: nothing
    ditto.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="my_scatter"):
        ditto._C._alert_not_deterministic("my_scatter")
    ditto.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ditto._C._alert_not_deterministic("my_other_scatter")
    assert any("my_other_scatter" in str(w.message) and
               issubclass(w.category, UserWarning) for w in caught)
