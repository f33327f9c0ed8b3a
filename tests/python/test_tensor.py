"""ditto.Tensor from Python: geometry, values, indexing, operators,
autograd, NumPy exchange."""
import numpy as np
import pytest

import ditto


def test_factories_dtype_shape_and_stride():
    t = ditto.zeros(2, 3)
    assert t.dtype == ditto.float32
    assert t.shape == (2, 3) and isinstance(t.shape, ditto.Size)
    assert repr(t.shape) == "ditto.Size([2, 3])"
    assert t.stride() == (3, 1) and t.stride(0) == 3
    assert t.dim() == 2 and t.numel() == 6 and t.size(1) == 3
    assert ditto.ones((2, 2), dtype=ditto.int64).tolist() == [[1, 1], [1, 1]]
    assert ditto.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert ditto.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert ditto.arange(1, 2, 0.5).dtype == ditto.float32
    assert ditto.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ditto.empty(3).shape == (3,)
    assert ditto.zeros_like(t, dtype=ditto.float64).dtype == ditto.float64
    assert ditto.ones(2, requires_grad=True).requires_grad


def test_tensor_infers_dtypes_as_torch():
    assert ditto.tensor([1, 2]).dtype == ditto.int64
    assert ditto.tensor([1, 2.5]).dtype == ditto.float32
    assert ditto.tensor([True, False]).dtype == ditto.bool
    assert ditto.tensor(3.0).dim() == 0
    assert ditto.tensor([[1, 2], [3, 4]], dtype=ditto.float64).tolist() == [
        [1.0, 2.0], [3.0, 4.0]]
    assert ditto.tensor([2**62]).item() == 2**62
    with pytest.raises(ValueError):
        ditto.tensor([[1, 2], [3]])


def test_item_and_repr_in_torch_format():
    t = ditto.tensor([0.5, 1.0, 2.25])
    assert repr(t) == "tensor([0.5000, 1.0000, 2.2500])"
    assert repr(ditto.tensor([1, 2], dtype=ditto.int32)) == \
        "tensor([1, 2], dtype=ditto.int32)"
    assert t[1].item() == 1.0 and isinstance(ditto.tensor([3])[0].item(), int)
    x = ditto.ones(2, requires_grad=True)
    assert repr(x) == "tensor([1., 1.], requires_grad=True)"
    # torch's Python API wraps the number: mul.Tensor, MulBackward0
    # (LibTorch's x * 2 is mul.Scalar, MulBackward1).
    assert "grad_fn=<MulBackward0>" in repr(x * 2)
    assert (x + 1).grad_fn.name() == "AddBackward0"
    assert repr((x - 1).grad_fn) == "<SubBackward0>"
    assert (x ** 2).grad_fn.name() == "PowBackward0"
    assert repr(ditto.float64) == "ditto.float64"


def test_indexing_and_assignment():
    t = ditto.arange(12).reshape(3, 4)
    assert t[0].tolist() == [0, 1, 2, 3]
    assert t[1, 2].item() == 6
    assert t[-1, -1].item() == 11
    assert t[:, 1].tolist() == [1, 5, 9]
    assert t[0, 1:3].tolist() == [1, 2]
    assert t[::2, ::3].tolist() == [[0, 3], [8, 11]]
    assert t[None].shape == (1, 3, 4)
    assert t[..., 0].tolist() == [0, 4, 8]
    assert t[ditto.tensor([2, 0])].tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    assert t[[0, 2], 1].tolist() == [1, 9]
    assert t[t > 9].tolist() == [10, 11]
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    t[0, 0] = 100
    t[1] = ditto.tensor([5, 5, 5, 5])
    t[2, 1:3] = -1
    t[ditto.tensor([0]), ditto.tensor([3])] = 42
    assert t.tolist() == [[100, 1, 2, 42], [5, 5, 5, 5], [8, -1, -1, 11]]
    # A basic index is a view: writing through it writes the tensor.
    row = t[1]
    row.fill_(0)
    assert t[1].tolist() == [0, 0, 0, 0]


def test_operators_and_inplace_forms():
    a = ditto.tensor([1.0, 2.0, 4.0])
    b = ditto.tensor([2.0, 2.0, 2.0])
    assert (a + b).tolist() == [3.0, 4.0, 6.0]
    assert (a - 1).tolist() == [0.0, 1.0, 3.0]
    assert (1 - a).tolist() == [0.0, -1.0, -3.0]
    assert (2 * a).tolist() == [2.0, 4.0, 8.0]
    assert (a / b).tolist() == [0.5, 1.0, 2.0]
    assert (8 / a).tolist() == [8.0, 4.0, 2.0]
    assert (a ** 2).tolist() == [1.0, 4.0, 16.0]
    assert (2 ** a).tolist() == [2.0, 4.0, 16.0]
    assert (-a).tolist() == [-1.0, -2.0, -4.0]
    assert (a > 1.5).tolist() == [False, True, True]
    assert (a == b).tolist() == [False, True, False]
    m = ditto.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ m).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    c = a.clone()
    alias = c
    c += 1
    c *= b
    assert c is alias and c.tolist() == [4.0, 6.0, 10.0]
    assert c.add_(b, alpha=2) is c and c.tolist() == [8.0, 10.0, 14.0]
    assert ditto.add(a, b, alpha=3).tolist() == [7.0, 8.0, 10.0]
    assert a.sum().item() == 7.0
    s = m.sum(1, keepdim=True)
    assert s.shape == (2, 1) and s.tolist() == [[3.0], [7.0]]
    assert ditto.sum(m, dim=0).tolist() == [4.0, 6.0]
    mx = m.max(dim=1)
    assert mx.values.tolist() == [2.0, 4.0] and mx.indices.tolist() == [1, 1]


def test_autograd_backward_grad_fn_and_no_grad():
    x = ditto.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    assert y.grad_fn is not None and y.grad_fn.name() == "SumBackward0"
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert x.is_leaf and not y.is_leaf
    assert not x.detach().requires_grad
    with ditto.no_grad():
        z = x * 2
        assert not ditto.is_grad_enabled()
        with ditto.enable_grad():
            assert (x * 2).requires_grad
    assert not z.requires_grad and ditto.is_grad_enabled()

    @ditto.no_grad()
    def f(v):
        return v * 3

    assert not f(x).requires_grad
    (g,) = ditto.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [3.0, 3.0, 3.0]
    x.grad = None
    assert x.grad is None


def test_numpy_shares_memory_both_ways():
    t = ditto.zeros(2, 3)
    a = t.numpy()
    assert a.dtype == np.float32 and a.shape == (2, 3)
    a[1, 2] = 5.0
    assert t[1, 2].item() == 5.0
    t[0, 0] = 7.0
    assert a[0, 0] == 7.0
    tt = t.t()
    assert tt.numpy().strides == (4, 12)

    arr = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]
    u = ditto.from_numpy(arr)
    assert u.dtype == ditto.int64 and u.stride() == (4, 2)
    u[0, 1] = -1
    assert arr[0, 1] == -1
    arr[2, 0] = 99
    assert u[2, 0].item() == 99
    for dt, want in [(np.float64, ditto.float64), (np.int32, ditto.int32),
                     (np.uint8, ditto.uint8), (np.bool_, ditto.bool),
                     (np.float16, ditto.float16), (np.int8, ditto.int8),
                     (np.int16, ditto.int16)]:
        assert ditto.from_numpy(np.zeros(2, dtype=dt)).dtype == want
    with pytest.raises(TypeError):
        ditto.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(ValueError):
        ditto.from_numpy(np.arange(3)[::-1])
    # ditto.tensor copies, as torch.tensor does.
    src = np.ones(3, dtype=np.float32)
    c = ditto.tensor(src)
    src[0] = 9
    assert c[0].item() == 1.0
    with pytest.raises(RuntimeError):
        ditto.ones(1, requires_grad=True).numpy()
    assert np.asarray(ditto.arange(3)).tolist() == [0, 1, 2]


def test_views_and_shape_methods():
    t = ditto.arange(6)
    assert t.view(2, 3).shape == (2, 3)
    assert t.view((3, 2)).shape == (3, 2)
    assert t.reshape(3, -1).permute(1, 0).shape == (2, 3)
    assert t.view(2, 3).transpose(0, 1).is_contiguous() is False
    assert t.unsqueeze(0).shape == (1, 6)
    assert t.view(1, 6).squeeze().shape == (6,)
    assert t.view(2, 3).flatten().shape == (6,)
    assert t.narrow(0, 1, 2).tolist() == [1, 2]
    assert t.view(2, 3).T.shape == (3, 2)
    assert t.float().dtype == ditto.float32
    assert t.to(ditto.float64).dtype == ditto.float64
    assert ditto.cat([t, t]).shape == (12,)
    assert ditto.stack([t, t], 1).shape == (6, 2)


def test_index_reduce_is_pytorchs():
    # Values from PyTorch 1.13: torch.ones(3, 2).index_reduce_(0,
    # torch.tensor([0, 2, 0]), torch.tensor([[2., 3.], [4., 5.], [6., 7.]]),
    # "prod") and the same with "amax", include_self=False.
    src = ditto.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    idx = ditto.tensor([0, 2, 0])
    x = ditto.ones(3, 2)
    assert x.index_reduce_(0, idx, src, "prod") is x
    assert x.tolist() == [[12.0, 21.0], [1.0, 1.0], [4.0, 5.0]]
    y = ditto.index_reduce(ditto.ones(3, 2), 0, idx, src, "amax",
                           include_self=False)
    assert y.tolist() == [[6.0, 7.0], [1.0, 1.0], [4.0, 5.0]]
    m = ditto.ones(3, 2).index_reduce(0, idx, src, "mean")
    assert m.tolist() == [[3.0, 3.6666667461395264], [1.0, 1.0], [2.5, 3.0]]
    with pytest.raises(ValueError, match="prod, mean, amax or amin"):
        ditto.ones(3, 2).index_reduce_(0, idx, src, "sum")
    with pytest.raises(IndexError):
        ditto.ones(3, 2).index_reduce_(0, ditto.tensor([0, 3, 1]), src, "prod")


def test_square_is_torchs():
    x = ditto.tensor([-1.5, 0.0, 2.0, 3.0], requires_grad=True)
    y = x.square()
    assert y.tolist() == [2.25, 0.0, 4.0, 9.0]
    y.sum().backward()
    assert x.grad.tolist() == [-3.0, 0.0, 4.0, 6.0]
    assert ditto.square(ditto.tensor([True, False])).dtype == ditto.int64
    z = ditto.tensor([2, -3])
    assert z.square_() is z and z.tolist() == [4, 9]


@pytest.mark.hostile
def test_tensor_of_sequences_whose_items_are_made_on_access():
    # numpy arrays, array.array and any __getitem__ make their items when
    # read: each is held while ditto reads it (issue 61, item 5: the
    # interpreter read freed objects and died).
    import array
    a = np.array([1, 2, 3], dtype=np.float32)
    b = np.array([4, 5, 6], dtype=np.float32)
    for _ in range(300):
        t = ditto.tensor([a, b])
    assert t.dtype == ditto.float32 and t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert ditto.tensor(array.array("d", [1.5, 2.5])).tolist() == [1.5, 2.5]

    class Fresh:
        def __len__(self):
            return 3

        def __getitem__(self, i):
            if i >= 3:
                raise IndexError(i)
            return [float(i) + 0.5, float(i)]

    for _ in range(300):
        t = ditto.tensor(Fresh())
    assert t.tolist() == [[0.5, 0.0], [1.5, 1.0], [2.5, 2.0]]


@pytest.mark.hostile
def test_tensors_parameters_and_modules_pickle_and_deepcopy():
    # As torch: values, dtype, shape and requires_grad survive pickle; a
    # Parameter stays a Parameter; modules round-trip (issue 61, item 16:
    # every pickle was a TypeError on the capsule of a pybind11 function).
    import copy
    import pickle
    cases = [ditto.arange(6.0).view(2, 3).requires_grad_(),
             ditto.tensor(True), ditto.tensor([1, 2], dtype=ditto.int32),
             ditto.zeros(0, 3), ditto.arange(12.0).view(3, 4).t()]
    for t in cases:
        for u in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
            assert u.dtype == t.dtype and u.shape == t.shape
            assert u.tolist() == t.tolist()
            assert u.requires_grad == t.requires_grad
    p = pickle.loads(pickle.dumps(ditto.nn.Parameter(ditto.ones(2))))
    assert isinstance(p, ditto.nn.Parameter) and p.requires_grad
    ditto.manual_seed(0)
    net = ditto.nn.Sequential(ditto.nn.Linear(2, 3), ditto.nn.ReLU())
    x = ditto.ones(1, 2)
    for twin in (pickle.loads(pickle.dumps(net)), copy.deepcopy(net)):
        assert twin(x).tolist() == net(x).tolist()
        assert isinstance(twin[0].weight, ditto.nn.Parameter)


@pytest.mark.hostile
def test_rough_edges_raise_torchs_exception_classes(tmp_path):
    # Issue 61, item 18: list() of a 0-d tensor was [], bytes were taken as
    # numbers, a directory given to ditto.load was a ValueError.
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(ditto.tensor(3.0))
    assert [r.tolist() for r in ditto.arange(6.0).view(2, 3)] == \
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    for data in (b"abc", bytearray(b"ab"), [b"a"]):
        with pytest.raises(TypeError, match="invalid data type"):
            ditto.tensor(data)
    with pytest.raises(IsADirectoryError):
        ditto.load(str(tmp_path))


@pytest.mark.hostile
def test_grad_of_another_shape_or_dtype_and_bool_bytes_are_refused():
    # Issue 61, item 18: t.grad = a wrong shape or dtype was accepted until
    # the next step; a NumPy bool view of bytes other than 0 and 1 became a
    # bool tensor holding them.
    t = ditto.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="different size"):
        t.grad = ditto.zeros(3)
    with pytest.raises(RuntimeError, match="different type"):
        t.grad = ditto.zeros(2, 3, dtype=ditto.float64)
    assert t.grad is None
    t.grad = ditto.ones(2, 3)
    assert t.grad.sum().item() == 6.0
    raw = np.array([0, 1, 2, 255], dtype=np.uint8).view(np.bool_)
    with pytest.raises(ValueError, match="byte 2 at flat index 2"):
        ditto.from_numpy(raw)
    with pytest.raises(ValueError, match="byte 2"):
        ditto.tensor(raw)
    assert ditto.from_numpy(np.array([True, False])).tolist() == [True, False]
