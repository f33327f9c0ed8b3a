"""ditto.nn's modules and ditto.nn.init draw PyTorch's initial bits: the
fixtures tests/nn/nn_golden.json and rnn_golden.json that
tests/nn/gen_nn_golden.py and gen_rnn_golden.py made with PyTorch 1.13
(the C++ tests check the same records): crc32 of every parameter's float32
bytes and of the generator state after construction."""
import zlib

import pytest

import ditto
import ditto.nn as nn
import ditto.nn.init as init


def crc(t):
    return zlib.crc32(t.detach().float().contiguous().numpy().tobytes())


def rng_crc():
    return zlib.crc32(ditto.get_rng_state().numpy().tobytes())


def make_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))


def make_mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 10))


# gen_nn_golden.py's INIT_CASES.
MODULES = {
    "linear_3_2": lambda: nn.Linear(3, 2),
    "linear_784_128": lambda: nn.Linear(784, 128),
    "linear_1000_10": lambda: nn.Linear(1000, 10),
    "linear_5_4_nobias": lambda: nn.Linear(5, 4, bias=False),
    "conv2d_3_8_3": lambda: nn.Conv2d(3, 8, 3),
    "conv2d_16_32_5": lambda: nn.Conv2d(16, 32, 5),
    "conv2d_8_8_3_g2": lambda: nn.Conv2d(8, 8, 3, groups=2),
    "conv1d_4_6_3": lambda: nn.Conv1d(4, 6, 3),
    "cnn": make_cnn,
    "mlp": make_mlp,
    "seq_small": lambda: nn.Sequential(nn.Linear(4, 3), nn.ReLU(),
                                       nn.Linear(3, 2)),
    "convtranspose2d_6_4_3_s2": lambda: nn.ConvTranspose2d(
        6, 4, 3, stride=2, padding=1, output_padding=1),
    "convtranspose2d_4_6_2_g2": lambda: nn.ConvTranspose2d(
        4, 6, 2, groups=2, bias=False),
    "embedding_10_4": lambda: nn.Embedding(10, 4),
    "embedding_10_4_pad": lambda: nn.Embedding(10, 4, padding_idx=-2),
    "layernorm_6": lambda: nn.LayerNorm(6),
    "batchnorm2d_3": lambda: nn.BatchNorm2d(3),
}

# gen_nn_golden.py's INIT_FN_CASES.
INIT_FNS = {
    "uniform_m2_3": lambda t: init.uniform_(t, -2.0, 3.0),
    "normal_1_05": lambda t: init.normal_(t, 1.0, 0.5),
    "normal_small": lambda t: init.normal_(t, 0.0, 2.0),
    "kaiming_uniform_relu": lambda t: init.kaiming_uniform_(
        t, nonlinearity="relu"),
    "kaiming_uniform_fanout_leaky": lambda t: init.kaiming_uniform_(
        t, a=0.2, mode="fan_out", nonlinearity="leaky_relu"),
    "kaiming_normal_relu": lambda t: init.kaiming_normal_(
        t, nonlinearity="relu"),
    "kaiming_normal_fanout": lambda t: init.kaiming_normal_(
        t, mode="fan_out"),
    "xavier_uniform": lambda t: init.xavier_uniform_(t),
    "xavier_uniform_tanh_gain": lambda t: init.xavier_uniform_(
        t, gain=init.calculate_gain("tanh")),
    "xavier_normal": lambda t: init.xavier_normal_(t),
    "xavier_normal_gain2": lambda t: init.xavier_normal_(t, gain=2.0),
    "constant_0_3": lambda t: init.constant_(t, 0.3),
    "eye": lambda t: init.eye_(t),
}


def test_every_fixture_case_has_a_module(nn_golden):
    assert {c["name"] for c in nn_golden["init"]} == set(MODULES)
    assert {c["name"] for c in nn_golden["init_fns"]} == set(INIT_FNS)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_initial_bits_are_pytorchs(nn_golden, name):
    cases = [c for c in nn_golden["init"] if c["name"] == name]
    assert len(cases) == 2
    for c in cases:
        ditto.manual_seed(c["seed"])
        m = MODULES[name]()
        got = list(m.named_parameters())
        assert [n for n, _ in got] == [p["name"] for p in c["params"]]
        for (n, p), want in zip(got, c["params"]):
            assert list(p.shape) == want["shape"], n
            assert crc(p) == want["crc"], (name, c["seed"], n)
            assert isinstance(p, nn.Parameter) and p.requires_grad
        assert rng_crc() == c["rng_crc"], (name, c["seed"])
        if "buffers" in c:
            bufs = list(m.named_buffers())
            assert [n for n, _ in bufs] == [b["name"] for b in c["buffers"]]
            for (n, b), want in zip(bufs, c["buffers"]):
                assert b.reshape(-1).tolist() == want["values"], n


def test_init_functions_draw_pytorchs_bits(nn_golden):
    for c in nn_golden["init_fns"]:
        ditto.manual_seed(c["seed"])
        t = ditto.empty(c["shape"])
        out = INIT_FNS[c["name"]](t)
        assert out is t  # in place, the same object back (as torch)
        assert crc(t) == c["crc"], (c["name"], c["seed"])
        assert rng_crc() == c["rng_crc"], (c["name"], c["seed"])
    gains = nn_golden["gains"]
    assert init.calculate_gain("tanh") == gains["tanh"]
    assert init.calculate_gain("relu") == gains["relu"]
    assert init.calculate_gain("leaky_relu") == gains["leaky_relu"]
    assert init.calculate_gain("leaky_relu", 0.2) == gains["leaky_relu_0.2"]
    assert init.calculate_gain("selu") == gains["selu"]
    with pytest.raises(ValueError, match="nonlinearity"):
        init.calculate_gain("swish")


def test_trunc_normal_is_pytorchs(nn_golden):
    for c in nn_golden["layers"]["init_extra"]:
        if not c["name"].startswith("trunc_normal"):
            continue
        ditto.manual_seed(17)
        t = ditto.empty(c["shape"])
        args = {"trunc_normal_default": (),
                "trunc_normal_shifted": (0.5, 0.3, -0.2, 0.9),
                "trunc_normal_wide": (0.0, 2.0, -3.0, 3.0)}[c["name"]]
        init.trunc_normal_(t, *args)
        assert crc(t) == c["crc"], c["name"]
        assert rng_crc() == c["rng_crc"], c["name"]


def test_recurrent_initial_bits_are_pytorchs(rnn_golden):
    assert len(rnn_golden["init"]) == 8
    for c in rnn_golden["init"]:
        ditto.manual_seed(c["seed"])
        m = getattr(nn, c["kind"])(**c["kw"])
        got = list(m.named_parameters())
        assert [n for n, _ in got] == [p["name"] for p in c["params"]]
        for (n, p), want in zip(got, c["params"]):
            assert list(p.shape) == want["shape"], (c["kind"], n)
            assert crc(p) == want["crc"], (c["kind"], c["kw"], n)
        assert rng_crc() == c["rng_crc"], c["kind"]


def test_modules_draw_in_construction_order():
    # A C++-backed LSTM between two Python layers: each draws when built.
    ditto.manual_seed(3)
    a = nn.Linear(4, 3)
    lstm = nn.LSTM(3, 2)
    b = nn.Linear(2, 2)
    ditto.manual_seed(3)
    a2 = nn.Linear(4, 3)
    lstm2 = nn.LSTM(3, 2)
    b2 = nn.Linear(2, 2)
    for m, m2 in ((a, a2), (lstm, lstm2), (b, b2)):
        for (n, p), (_, q) in zip(m.named_parameters(), m2.named_parameters()):
            assert ditto.equal(p, q), n
    ditto.manual_seed(3)
    nn.Linear(4, 3)
    ditto.manual_seed(3)
    only = nn.LSTM(3, 2)  # drawn first this time: different values
    assert not ditto.equal(only.weight_ih_l0, lstm.weight_ih_l0)
