"""ditto.nn.Module's mechanics with torch's semantics (registration by
assignment, PyTorch's names and order, state_dict, modes, printing) and the
layers' outputs against the PyTorch 1.13 fixtures of tests/nn
(nn_golden.json: "layers", "extra"; rnn_golden.json: "dropout", "ctc")."""
import zlib

import pytest

import ditto
import ditto.nn as nn
import ditto.nn.functional as F


def crc(t):
    return zlib.crc32(t.detach().contiguous().numpy().tobytes())


def rng_crc():
    return zlib.crc32(ditto.get_rng_state().numpy().tobytes())


def f32(values, shape):
    return ditto.tensor(values, dtype=ditto.float64).float().reshape(shape)


def f64(values, shape):
    return ditto.tensor(values, dtype=ditto.float64).reshape(shape)


class Mixed(nn.Module):
    """pytorch-training.md's registration-order example (as the C++
    tests/nn/module_test.cpp): child a, parameter p, child b, buffers."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 3)
        self.p = nn.Parameter(ditto.zeros(4))
        self.b = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
        self.register_buffer("running", ditto.ones(2))
        self.register_buffer("scratch", ditto.ones(1), persistent=False)

    def forward(self, x):
        return self.b(self.a(x))


def test_names_and_order_are_pytorchs():
    m = Mixed()
    assert [n for n, _ in m.named_parameters()] == [
        "p", "a.weight", "a.bias", "b.0.weight", "b.0.bias", "b.2.weight",
        "b.2.bias"]
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert list(m.state_dict()) == [
        "p", "running", "a.weight", "a.bias", "b.0.weight", "b.0.bias",
        "b.2.weight", "b.2.bias"]
    assert [n for n, _ in m.named_children()] == ["a", "b"]
    assert [n for n, _ in m.named_modules()] == [
        "", "a", "b", "b.0", "b.1", "b.2"]
    assert len(list(m.parameters())) == 7
    assert len(list(m.modules())) == 6
    assert m(ditto.ones(5, 2)).shape == (5, 1)
    # state_dict shares storage and holds no graph.
    sd = m.state_dict()
    assert not sd["a.weight"].requires_grad
    assert sd["a.weight"].data_ptr() == m.a.weight.data_ptr()


def test_attribute_assignment_rules():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="Parameter or None"):
        m.weight = ditto.zeros(2, 2)
    m.bias = None
    assert "bias" not in m.state_dict()
    m.extra = nn.ReLU()
    assert [n for n, _ in m.named_children()] == ["extra"]
    del m.extra
    assert list(m.named_children()) == []
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("weight", ditto.zeros(1))
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        m.nothing
    # A shared parameter is listed once.
    s = nn.Sequential(m, m)
    assert len(list(s.parameters())) == 1
    assert list(s.state_dict()) == ["0.weight", "1.weight"]


def test_batchnorm_buffers_and_state_dict_keys():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    assert list(m.state_dict()) == [
        "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
        "1.running_var", "1.num_batches_tracked"]
    nbt = m.state_dict()["1.num_batches_tracked"]
    assert nbt.dtype == ditto.int64 and nbt.item() == 0
    m(ditto.randn(2, 1, 5, 5))
    assert m[1].num_batches_tracked.item() == 1
    m.eval()
    m(ditto.randn(2, 1, 5, 5))
    assert m[1].num_batches_tracked.item() == 1


def test_load_state_dict_round_trip_and_errors():
    ditto.manual_seed(0)
    a = Mixed()
    b = Mixed()
    assert not ditto.equal(a.a.weight, b.a.weight)
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n, p), (_, q) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ditto.equal(p, q), n
    # Strict: missing, unexpected and size mismatches in one RuntimeError
    # (PyTorch's words), and nothing copied.
    c = Mixed()
    before = c.a.weight.clone()
    sd = a.state_dict()
    del sd["p"]
    sd["bogus"] = ditto.zeros(1)
    sd["b.0.bias"] = ditto.zeros(5)
    with pytest.raises(RuntimeError) as e:
        c.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Mixed:")
    assert 'Missing key(s) in state_dict: "p".' in msg
    assert 'Unexpected key(s) in state_dict: "bogus".' in msg
    assert "size mismatch for b.0.bias" in msg
    assert ditto.equal(c.a.weight, before)
    del sd["b.0.bias"]
    keys = c.load_state_dict(sd, strict=False)
    assert keys.missing_keys == ["p", "b.0.bias"]
    assert keys.unexpected_keys == ["bogus"]
    assert ditto.equal(c.a.weight, a.a.weight)


def test_modes_grads_and_apply():
    m = Mixed()
    assert m.training and m.b[1].training
    assert m.eval() is m
    assert not m.training and not m.b[1].training
    m.train()
    assert m.b[2].training
    m(ditto.ones(2, 2)).sum().backward()
    assert all(p.grad is not None for p in m.b.parameters())
    m.zero_grad(set_to_none=False)
    assert m.a.weight.grad.abs().sum().item() == 0
    m.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Linear", "ReLU", "Linear", "Sequential",
                    "Mixed"]


def test_containers():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(s) == 3 and isinstance(s[-1], nn.Linear)
    assert isinstance(s[1:], nn.Sequential) and len(s[1:]) == 2
    s.append(nn.Tanh())
    assert [n for n, _ in s.named_children()] == ["0", "1", "2", "3"]
    with pytest.raises(IndexError):
        s[4]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.append(nn.ReLU())
    assert len(ml) == 4 and list(ml.state_dict())[:2] == ["0.weight",
                                                           "0.bias"]
    assert len(list(ml.parameters())) == 6


def test_printed_forms_are_pytorchs(nn_golden):
    ex = nn_golden["extra"]
    assert repr(nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))) == ex["repr_cnn"]
    assert repr(nn.Sequential(
        nn.Conv2d(8, 8, 3, 2, 1, 2, 2, bias=False), nn.LeakyReLU(0.2),
        nn.Conv1d(4, 6, 3), nn.Softmax(1), nn.Unflatten(1, (2, 5)),
        nn.Sequential(nn.Linear(3, 2, bias=False), nn.Tanh()))) == \
        ex["repr_misc"]
    ct = nn_golden["layers"]["conv_transpose"]
    assert repr(nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                   output_padding=1, groups=2)) == ct["repr"]
    gelu = nn_golden["layers"]["gelu"]
    assert repr(nn.GELU()) == gelu["repr"]
    assert repr(nn.GELU(approximate="tanh")) == gelu["repr_tanh"]
    assert repr(nn.BatchNorm1d(4, momentum=None)) == (
        "BatchNorm1d(4, eps=1e-05, momentum=None, affine=True, "
        "track_running_stats=True)")
    assert repr(nn.Parameter(ditto.zeros(1))).startswith(
        "Parameter containing:\n")


def test_batchnorm2d_is_pytorchs_bits(nn_golden):
    c = nn_golden["layers"]["bn2d"]
    x, x2 = f32(c["x"], (4, 3, 5, 5)), f32(c["x2"], (4, 3, 5, 5))
    bn = nn.BatchNorm2d(3)
    with ditto.no_grad():
        bn.weight.copy_(f32(c["w"], (3,)))
        bn.bias.copy_(f32(c["b"], (3,)))
    assert crc(bn(x)) == c["y1_crc"]
    assert crc(bn(x2)) == c["y2_crc"]
    assert crc(bn.running_mean) == c["running_mean_crc"]
    assert crc(bn.running_var) == c["running_var_crc"]
    assert bn.num_batches_tracked.item() == 2
    bn.eval()
    assert ditto.allclose(bn(x), f32(c["y3"], (4, 3, 5, 5)), rtol=1e-6,
                          atol=1e-6)


def test_batchnorm1d_cumulative_average(nn_golden):
    c = nn_golden["layers"]["bn1d_cumulative"]
    bn = nn.BatchNorm1d(4, momentum=None)
    bn(f32(c["z"], (8, 4)))
    bn(f32(c["z2"], (8, 4)))
    assert bn.num_batches_tracked.item() == c["num_batches_tracked"] == 2
    assert ditto.allclose(bn.running_mean, f32(c["running_mean"], (4,)),
                          rtol=1e-6, atol=1e-7)
    assert ditto.allclose(bn.running_var, f32(c["running_var"], (4,)),
                          rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="2D or 3D"):
        bn(ditto.randn(8, 4, 2, 2))


def test_layernorm_and_embedding(nn_golden):
    c = nn_golden["layers"]["layernorm"]
    ln = nn.LayerNorm(5)
    with ditto.no_grad():
        ln.weight.copy_(f32(c["w"], (5,)))
        ln.bias.copy_(f32(c["b"], (5,)))
    y = ln(f32(c["x"], (3, 4, 5)))
    assert ditto.allclose(y, f32(c["y"], (3, 4, 5)), rtol=1e-5, atol=1e-6)
    e = nn_golden["layers"]["embedding"]
    emb = nn.Embedding(10, 3, padding_idx=8, dtype=ditto.float64)
    with ditto.no_grad():
        emb.weight.copy_(f64(e["w"], (10, 3)))
    idx = ditto.tensor(e["idx"]).reshape(2, 3)
    out = emb(idx)
    assert out.reshape(-1).tolist() == e["y"]


def test_dropout_modules_draw_pytorchs_masks(nn_golden):
    c = nn_golden["layers"]["dropout2d"]
    ditto.manual_seed(5)
    y = nn.Dropout2d(0.3)(ditto.ones(3, 4, 2, 2))
    assert crc(y) == c["y_crc"]
    assert rng_crc() == c["rng_crc"]
    # The same draws as the functional form; none in eval mode.
    ditto.manual_seed(9)
    a = nn.Dropout(0.5)(ditto.ones(100))
    ditto.manual_seed(9)
    b = F.dropout(ditto.ones(100), 0.5)
    assert ditto.equal(a, b)
    d = nn.Dropout(0.5).eval()
    state = ditto.get_rng_state()
    assert ditto.equal(d(ditto.ones(10)), ditto.ones(10))
    assert ditto.equal(ditto.get_rng_state(), state)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_loss_modules_match_pytorch(nn_golden):
    ex = nn_golden["extra"]
    i, want = ex["loss_inputs"], ex["losses"]
    x, w = f64(i["x"], (6, 5)), f64(i["w"], (5,))
    z, y = f64(i["z"], (6, 5)), f64(i["y"], (6, 5))
    t = ditto.tensor(i["t"])
    pw = f64(i["pw"], (5,))

    def close(got, key):
        ref = ditto.tensor(want[key], dtype=ditto.float64)
        assert ditto.allclose(got.reshape(-1), ref.reshape(-1), rtol=1e-12,
                              atol=1e-12), key

    close(nn.CrossEntropyLoss()(x, t), "ce")
    close(nn.CrossEntropyLoss(weight=w, reduction="sum")(x, t), "ce_w_sum")
    close(nn.CrossEntropyLoss(label_smoothing=0.3)(x, t), "ce_smooth")
    close(nn.NLLLoss(reduction="none")(F.log_softmax(x, 1), t), "nll_none")
    close(nn.MSELoss()(z, y), "mse")
    close(nn.L1Loss(reduction="sum")(z, y), "l1_sum")
    close(nn.SmoothL1Loss(beta=0.5)(z, y), "smooth_l1_05")
    close(nn.BCEWithLogitsLoss()(z, y), "bce_logits")
    close(nn.BCEWithLogitsLoss(pos_weight=pw)(z, y), "bce_logits_pw")
    # Class weights are buffers, as PyTorch's.
    assert list(nn.CrossEntropyLoss(weight=w).state_dict()) == ["weight"]


def test_ctc_loss_module_matches_pytorch(rnn_golden):
    for c in rnn_golden["ctc"]:
        T, N, C = c["T"], c["N"], c["C"]
        lp = f64(c["log_probs"], (T, N, C))
        targets = ditto.tensor(c["padded"]).reshape(N, c["S"])
        loss = nn.CTCLoss(blank=c["blank"], reduction=c["reduction"],
                          zero_infinity=c["zero_infinity"])(
            lp, targets, ditto.tensor(c["input_lengths"]),
            ditto.tensor(c["target_lengths"]))
        raw = c["loss"] if isinstance(c["loss"], list) else [c["loss"]]
        want = [float(v) for v in raw]
        got = loss.reshape(-1).tolist()
        assert len(got) == len(want)
        for g, v in zip(got, want):
            assert g == pytest.approx(v, rel=1e-10, abs=1e-12), c


def test_lstm_dropout_is_pytorchs(rnn_golden):
    for c in rnn_golden["dropout"]:
        bf = c["batch_first"]
        ditto.manual_seed(11)
        m = nn.LSTM(3, 4, num_layers=3, dropout=0.4, bidirectional=True,
                    batch_first=bf)
        x = ditto.randn(*c["x_shape"])
        assert x.reshape(-1).tolist() == c["x"]  # drawn after the module
        ditto.manual_seed(7)
        out, (h, cell) = m(x)
        ref = f32(c["out"], out.shape)
        assert ditto.allclose(out, ref, rtol=1e-5, atol=1e-6)
        assert ditto.allclose(h, f32(c["h"], h.shape), rtol=1e-5, atol=1e-6)
        assert ditto.allclose(cell, f32(c["c"], cell.shape), rtol=1e-5,
                              atol=1e-6)
        assert rng_crc() == c["rng_crc"]
        # eval: no dropout, no draws.
        m.eval()
        state = ditto.get_rng_state()
        m(x)
        assert ditto.equal(ditto.get_rng_state(), state)


def test_recurrent_modules_share_parameters_with_cpp():
    ditto.manual_seed(0)
    gru = nn.GRU(3, 4, batch_first=True)
    x = ditto.randn(2, 5, 3)
    out, h = gru(x)
    assert out.shape == (2, 5, 4) and h.shape == (1, 2, 4)
    out.sum().backward()  # the graph reaches the Python parameters
    assert gru.weight_hh_l0.grad is not None
    # load_state_dict copies in place: the C++ forward sees it.
    sd = {k: ditto.zeros_like(v) for k, v in gru.state_dict().items()}
    gru.load_state_dict(sd)
    out0, _ = gru(x)
    assert out0.abs().sum().item() == 0
    cell = nn.LSTMCell(3, 2)
    hc = cell(ditto.randn(4, 3))
    assert hc[0].shape == (4, 2) and hc[1].shape == (4, 2)
    hc[0].sum().backward()
    assert cell.weight_ih.grad is not None
    assert repr(nn.LSTM(3, 4, num_layers=2)) == "LSTM(3, 4, num_layers=2)"
