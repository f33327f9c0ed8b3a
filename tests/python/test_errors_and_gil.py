"""Bad input raises the Python class a PyTorch user catches, with ditto's
message; ops release the GIL."""
import threading
import time

import pytest

import ditto


def test_error_classes_and_messages():
    a = ditto.ones(2, 3)
    with pytest.raises(ValueError, match=r"\[add\]"):
        a + ditto.ones(4)  # shapes that do not broadcast
    with pytest.raises(IndexError):
        a[5]
    with pytest.raises(IndexError):
        a.select(0, 7)
    with pytest.raises(ValueError, match="floating point"):
        ditto.zeros(2, dtype=ditto.int64).requires_grad_()
    with pytest.raises(TypeError):
        ditto.zeros("a")
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(ValueError):
        ditto.ones(2, 3).view(4)
    with pytest.raises(ValueError):
        ditto.nn.functional.mse_loss(a, a, reduction="bogus")


def test_errors_leave_the_interpreter_usable():
    for bad in [lambda: ditto.randperm(-1), lambda: ditto.arange(0, 1, 0),
                lambda: ditto.ones(2).view(-1, -1),
                lambda: ditto.multinomial(ditto.zeros(3), 2)]:
        with pytest.raises((ValueError, RuntimeError, TypeError, IndexError)):
            bad()
    assert ditto.ones(1).item() == 1.0


def count_for(seconds, stop=None):
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        if stop is not None and stop.is_set():
            break
        n += 1
    return n


def test_an_op_in_one_thread_does_not_block_another():
    threads = ditto.get_num_threads()
    ditto.set_num_threads(1)  # leave a core to the counting thread
    try:
        a = ditto.rand(1000, 1000)
        t0 = time.perf_counter()
        ditto.mm(a, a)
        op_time = time.perf_counter() - t0
        window = 1.5 * op_time
        alone = count_for(window)

        done = threading.Event()
        started = threading.Event()

        def worker():
            started.set()
            for _ in range(3):
                ditto.mm(a, a)
            done.set()

        th = threading.Thread(target=worker)
        th.start()
        started.wait()
        during = count_for(window, stop=done)
        th.join()
    finally:
        ditto.set_num_threads(threads)
    # Holding the GIL through each mm would leave this thread only the
    # switch intervals between them (a few ms of a window of 1.5 ops).
    assert during > 0.1 * alone, (during, alone, op_time)
