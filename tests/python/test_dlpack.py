"""DLPack both ways without copies (issue 33): Tensor.__dlpack__ /
__dlpack_device__ and ditto.from_dlpack, checked against NumPy (>= 1.22
speaks the protocol). Writes through one side are seen through the other;
the capsule is consumed once (renamed "used_dltensor"); the producer's
memory lives exactly as long as the last consumer (no leak, no double
free)."""
import gc
import weakref

import numpy as np
import pytest

import ditto
from ditto.utils import dlpack


class Owner(np.ndarray):
    """An ndarray that can be weakly referenced: its death shows that every
    handle on its memory is gone."""


def owned(*shape, dtype=np.float32):
    return np.zeros(shape, dtype=dtype).view(Owner)


def test_numpy_reads_a_ditto_tensor_in_place():
    t = ditto.arange(12.0).float().reshape(3, 4)
    a = np.from_dlpack(t)
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert a.__array_interface__["data"][0] == t.data_ptr()
    # NumPy marks arrays imported through DLPack read-only; writes
    # through ditto show in the array.
    assert not a.flags.writeable
    t[0, 0] = 42.0
    assert a[0, 0] == 42.0
    # Strides survive (a transposed view).
    v = t.t()
    b = np.from_dlpack(v)
    assert b.strides == (4, 16)
    assert b[2, 1] == v[2, 1].item()
    assert t.__dlpack_device__() == (1, 0)


def test_ditto_reads_a_numpy_array_in_place():
    for dtype, want in [(np.float32, ditto.float32),
                        (np.float64, ditto.float64),
                        (np.int64, ditto.int64), (np.int32, ditto.int32),
                        (np.uint8, ditto.uint8)]:
        a = np.arange(6, dtype=dtype).reshape(2, 3)
        t = ditto.from_dlpack(a)
        assert t.dtype == want and t.shape == (2, 3)
        assert t.data_ptr() == a.__array_interface__["data"][0]
        a[1, 1] = 9
        assert t[1, 1].item() == 9
        t[0, 2] = 7
        assert a[0, 2] == 7
    s = np.arange(20, dtype=np.float64).reshape(4, 5)[::2, 1:]
    t = ditto.from_dlpack(s)
    assert t.stride() == (10, 1) and t.tolist() == s.tolist()
    h = ditto.from_dlpack(np.arange(3, dtype=np.float16))
    assert h.dtype == ditto.float16 and h.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="dtype"):
        ditto.from_dlpack(np.zeros(3, dtype=np.complex64))
    with pytest.raises(TypeError, match="__dlpack__"):
        ditto.from_dlpack([1, 2, 3])


def test_capsules_are_consumed_once():
    t = ditto.ones(3)
    cap = dlpack.to_dlpack(t)
    assert "dltensor" in repr(cap)
    u = ditto.from_dlpack(cap)
    assert "used_dltensor" in repr(cap)
    u[0] = 2.0
    assert t[0].item() == 2.0
    with pytest.raises(ValueError, match="already consumed"):
        ditto.from_dlpack(cap)
    x = ditto.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="require gradient"):
        x.__dlpack__()
    assert ditto.from_dlpack(x.detach()).data_ptr() == x.data_ptr()


def test_the_producer_lives_as_long_as_the_consumer():
    # NumPy -> ditto: the array stays alive through the tensor alone.
    a = owned(4)
    ref = weakref.ref(a)
    t = ditto.from_dlpack(a)
    del a
    gc.collect()
    assert ref() is not None
    t[1] = 3.0
    assert t.tolist() == [0.0, 3.0, 0.0, 0.0]
    del t
    gc.collect()
    assert ref() is None  # the deleter ran: no leak
    # ditto -> NumPy: the tensor's storage (here NumPy memory seen through
    # from_numpy) stays alive through the consumer's array alone.
    base = owned(3)
    ref = weakref.ref(base)
    t = ditto.from_numpy(base)
    n = np.from_dlpack(t)
    del base, t
    gc.collect()
    assert ref() is not None
    assert n.tolist() == [0.0, 0.0, 0.0]
    del n
    gc.collect()
    assert ref() is None
    # A capsule nobody consumed frees what it holds, once.
    base = owned(2)
    ref = weakref.ref(base)
    cap = ditto.from_numpy(base).__dlpack__()
    del base
    gc.collect()
    assert ref() is not None
    del cap
    gc.collect()
    assert ref() is None
    # A consumed capsule frees nothing itself: the tensor still reads.
    base = owned(2)
    ref = weakref.ref(base)
    cap = ditto.from_numpy(base).__dlpack__()
    t = ditto.from_dlpack(cap)
    del base, cap
    gc.collect()
    assert ref() is not None and t.tolist() == [0.0, 0.0]
    del t
    gc.collect()
    assert ref() is None


def test_resize_cannot_free_memory_an_array_holds():
    """resize_ moves a tensor's bytes when it grows; an array made by
    numpy() or through DLPack keeps their address, so such a storage refuses
    to grow (it read freed memory before)."""
    for export in (lambda t: t.numpy(), np.from_dlpack,
                   lambda t: dlpack.to_dlpack(t)):
        t = ditto.arange(0, 100, dtype=ditto.float64)
        a = export(t)
        with pytest.raises(ValueError, match="shared by address"):
            t.resize_(10**5)
        with pytest.raises(ValueError, match="shared by address"):
            t[10:].resize_(10**5)  # a view: the same storage
        t.resize_(50)  # shrinking keeps the bytes where they are
        assert t.tolist() == list(map(float, range(50)))
        del a
    t = ditto.arange(0, 100, dtype=ditto.float64)
    t.resize_(10**5)  # never shared: grows
    assert t[:100].tolist() == list(map(float, range(100)))


def test_from_numpy_refuses_read_only_memory():
    """Writing through a tensor on a read-only mapping crashed the
    interpreter; from_numpy refuses read-only arrays (ditto.tensor copies)."""
    import mmap
    m = mmap.mmap(-1, 64, prot=mmap.PROT_READ)
    a = np.frombuffer(m, dtype=np.float32)
    assert not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        ditto.from_numpy(a)
    with pytest.raises(ValueError, match="read-only"):
        ditto.from_numpy(np.frombuffer(b"\0" * 16, dtype=np.float32))
    assert ditto.tensor(a).tolist() == [0.0] * 16  # a copy
    del a
    m.close()
