"""conv3d, conv_transpose3d, Conv3d and ConvTranspose3d from Python against
the PyTorch 1.13 fixture (tests/nn/conv3d_golden.json, as the C++
tests/nn/conv3d_golden_test.cpp): float64 values and gradients within
1e-12, the layers' initial parameters bit for bit and their repr, and the
same bits at 1 and 2 threads."""
import json
import os

import ditto
import ditto.nn as nn
import ditto.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def golden():
    with open(os.path.join(HERE, "..", "nn", "conv3d_golden.json")) as f:
        return json.load(f)


def f64(values, shape, grad=False):
    t = ditto.tensor(values, dtype=ditto.float64).reshape(shape)
    return t.requires_grad_() if grad else t


def close(t, want, tol=1e-12):
    got = t.detach().reshape(-1).tolist()
    return len(got) == len(want) and all(
        abs(a - b) <= tol * max(1.0, abs(b)) for a, b in zip(got, want))


def test_values_and_gradients_match_pytorch():
    g = golden()
    for op, cases in ((F.conv3d, g["conv3d"]),
                      (F.conv_transpose3d, g["conv_transpose3d"])):
        for c in cases:
            x = f64(c["x"], c["x_sizes"], True)
            w = f64(c["w"], c["w_sizes"], True)
            b = f64(c["b"], [len(c["b"])], True)
            y = op(x, w, b, **c["args"])
            assert list(y.shape) == c["y_sizes"], c["name"]
            assert close(y, c["y"]), c["name"]
            y.backward(f64(c["grad_y"], c["y_sizes"]))
            for t, key in ((x, "grad_x"), (w, "grad_w"), (b, "grad_b")):
                assert close(t.grad, c[key]), (c["name"], key)


def test_layers_draw_pytorchs_initial_parameters():
    makers = {
        "conv3d_4_8_3": lambda: nn.Conv3d(4, 8, 3, padding=1),
        "conv3d_6_4_k232_g2": lambda: nn.Conv3d(6, 4, (2, 3, 2), stride=2,
                                                groups=2, bias=False),
        "convtranspose3d_4_6_3_s2": lambda: nn.ConvTranspose3d(
            4, 6, 3, stride=2, padding=1, output_padding=1),
        "convtranspose3d_4_6_k213_g2": lambda: nn.ConvTranspose3d(
            4, 6, (2, 1, 3), groups=2, dilation=(1, 2, 1)),
    }
    for c in golden()["init"]:
        ditto.manual_seed(c["seed"])
        m = makers[c["name"]]()
        want = ditto.tensor(c["weight"], dtype=ditto.float64).float()
        assert ditto.equal(m.weight.detach().reshape(-1), want), c["name"]
        if c["bias"] is None:
            assert m.bias is None
        else:
            want_b = ditto.tensor(c["bias"], dtype=ditto.float64).float()
            assert ditto.equal(m.bias.detach(), want_b), c["name"]
        assert repr(m) == c["repr"]


def test_a_unet_block_gives_the_same_bits_at_1_and_2_threads():
    threads = ditto.get_num_threads()
    try:
        runs = []
        for t in (1, 2):
            ditto.set_num_threads(t)
            ditto.manual_seed(3)
            down = nn.Conv3d(4, 8, 3, stride=2, padding=1)
            up = nn.ConvTranspose3d(8, 4, 2, stride=2)
            x = ditto.randn(2, 4, 6, 8, 8, requires_grad=True)
            y = up(F.relu(down(x)))
            y.square().sum().backward()
            runs.append([y.detach(), x.grad, down.weight.grad,
                         up.weight.grad])
        for a, b in zip(*runs):
            assert ditto.equal(a, b)
    finally:
        ditto.set_num_threads(threads)
