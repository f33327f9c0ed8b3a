"""The Vulkan device from Python (docs/device.md): lavapipe in `make test`.
The device's results are compared with the CPU's bit for bit."""
import numpy as np
import pytest

import ditto


def test_the_device_is_there():
    assert ditto.is_vulkan_available()


def test_copies_and_products_give_the_cpu_bits():
    g = ditto.Generator().manual_seed(3)
    a = ditto.randn(40, 70, generator=g)
    b = ditto.randn(70, 30, generator=g)
    da, db = a.to("vulkan"), b.vulkan()
    assert da.device == "vulkan:0" and da.is_vulkan and not da.is_cpu
    y = ditto.relu(ditto.matmul(da, db) + 0.5)
    assert y.device == "vulkan:0"
    want = ditto.relu(ditto.matmul(a, b) + 0.5)
    np.testing.assert_array_equal(y.cpu().numpy().view(np.uint32),
                                  want.numpy().view(np.uint32))
    assert y.tolist() == want.tolist()


def test_factories_take_a_device():
    z = ditto.zeros(2, 3, device="vulkan")
    assert z.device == "vulkan:0"
    assert ditto.ones_like(z).device == "vulkan:0"
    assert ditto.full((2,), 1.5, device="vulkan").cpu().tolist() == [1.5, 1.5]
    assert ditto.zeros(2, device="cpu").device == "cpu"


def test_what_has_no_kernel_raises_naming_op_and_device():
    d = ditto.ones(3, device="vulkan")
    with pytest.raises(NotImplementedError, match=r"\[tanh\].*vulkan:0"):
        ditto.tanh(d)
    with pytest.raises(ValueError, match="same device"):
        d + ditto.ones(3)
    with pytest.raises(ValueError, match="cpu"):
        d.numpy()
    with pytest.raises(ValueError, match="device type"):
        d.to("cuda")


def test_a_module_trains_on_the_device_to_the_cpu_weights():
    def run(device):
        ditto.manual_seed(5)
        model = ditto.nn.Sequential(ditto.nn.Linear(6, 8), ditto.nn.ReLU(),
                                    ditto.nn.Linear(8, 2)).to(device)
        opt = ditto.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        g = ditto.Generator().manual_seed(6)
        for _ in range(5):
            x = ditto.randn(4, 6, generator=g).to(device)
            y = ditto.randn(4, 2, generator=g).to(device)
            loss = ditto.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        assert all(p.device == ("cpu" if device == "cpu" else "vulkan:0")
                   for p in model.parameters())
        return [p.cpu().tolist() for p in model.parameters()]
    assert run("cpu") == run("vulkan")
