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


def test_a_cnn_trains_on_the_device_to_the_cpu_weights():
    # Conv, pool, cross entropy and Adam, as a PyTorch script writes them.
    # (Dropout draws from the device's own generator there, as in PyTorch:
    # see test_the_device_generator.)
    def run(device):
        ditto.manual_seed(9)
        nn = ditto.nn
        model = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(4 * 7 * 7, 10)
        ).to(device)
        opt = ditto.optim.Adam(model.parameters(), lr=1e-3)
        g = ditto.Generator().manual_seed(10)
        for _ in range(3):
            x = ditto.randn(8, 1, 14, 14, generator=g).to(device)
            t = ditto.randint(0, 10, (8,), generator=g).to(device)
            loss = ditto.nn.functional.cross_entropy(model(x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return [p.cpu().tolist() for p in model.parameters()]
    assert run("cpu") == run("vulkan")


def test_the_device_generator():
    assert ditto.vulkan.is_available()
    assert ditto.vulkan.device_count() >= 1
    assert isinstance(ditto.vulkan.get_device_name(0), str)
    ditto.manual_seed(21)  # every device
    a = ditto.rand(1000, device="vulkan")
    assert a.device == "vulkan:0"
    # The device's stream is ditto's Philox stream from that seed.
    want = ditto.rand(1000, generator=ditto.Generator.philox(21))
    assert a.cpu().tolist() == want.tolist()
    state = ditto.vulkan.get_rng_state()
    b = ditto.randn(50, device="vulkan")
    ditto.vulkan.set_rng_state(state)
    assert ditto.randn(50, device="vulkan").cpu().tolist() == b.cpu().tolist()
    ditto.vulkan.manual_seed(21)
    assert ditto.rand(1000, device="vulkan").cpu().tolist() == want.tolist()
    # Dropout on the device draws there, with the CPU Philox's bits.
    x = ditto.ones(64, 64, device="vulkan")
    ditto.vulkan.manual_seed(4)
    on_device = ditto.nn.functional.dropout(x, 0.5)
    on_cpu = ditto.nn.functional.dropout(
        ditto.ones(64, 64), 0.5, generator=ditto.Generator.philox(4))
    assert on_device.cpu().tolist() == on_cpu.tolist()
