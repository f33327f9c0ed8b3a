"""ditto.save / ditto.load: state_dicts as safetensors files
(ditto/io/safetensors.h), byte for byte the reference writer's (the
published test vector of huggingface/safetensors v0.7.0 that
tests/io/safetensors_test.cpp checks), written atomically, read
strictly."""
import errno
import os
import struct

import numpy as np
import pytest

import ditto
import ditto.nn as nn


def test_writes_the_published_test_vector(tmp_path):
    path = tmp_path / "one.safetensors"
    ditto.save({"attn.0": ditto.arange(6.0).float().view(1, 2, 3)}, path)
    header = (b'{"attn.0":{"dtype":"F32","shape":[1,2,3],'
              b'"data_offsets":[0,24]}}')
    want = struct.pack("<Q", 64) + header + \
        np.arange(6, dtype="<f4").tobytes()
    assert path.read_bytes() == want


def test_round_trip_of_every_dtype_and_metadata(tmp_path):
    tensors = {
        "f32": ditto.randn(3, 4),
        "f64": ditto.randn(2, dtype=ditto.float64),
        "i64": ditto.arange(5),
        "i32": ditto.tensor([[1, -2], [3, 4]], dtype=ditto.int32),
        "u8": ditto.tensor([0, 255, 7], dtype=ditto.uint8),
        "b": ditto.tensor([True, False]),
        "scalar": ditto.tensor(3.5),
        "strided": ditto.randn(4, 3).t(),  # written contiguous
    }
    path = str(tmp_path / "all.safetensors")
    ditto.save(tensors, path, metadata={"format": "pt", "step": "7"})
    back = ditto.load(path)
    assert set(back) == set(tensors)
    for k, t in tensors.items():
        assert back[k].dtype == t.dtype, k
        assert back[k].shape == t.shape, k
        assert ditto.equal(back[k], t), k
    assert ditto.serialization.load_metadata(path) == {"format": "pt",
                                                       "step": "7"}


def test_a_model_state_dict_round_trips(tmp_path):
    ditto.manual_seed(0)
    a = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(),
                      nn.Linear(8, 2))
    a(ditto.randn(2, 1, 4, 4))  # running stats move
    path = tmp_path / "model.safetensors"
    ditto.save(a.state_dict(), path)
    b = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(),
                      nn.Linear(8, 2))
    b.load_state_dict(ditto.load(path))
    for (n, p), (_, q) in zip(a.state_dict().items(),
                              b.state_dict().items()):
        assert ditto.equal(p, q), n
    assert b[1].num_batches_tracked.item() == 1


def test_writes_are_atomic(tmp_path):
    path = tmp_path / "w.safetensors"
    ditto.save({"x": ditto.zeros(2)}, path)
    ditto.save({"x": ditto.ones(3)}, path)  # replaces the file whole
    assert ditto.equal(ditto.load(path)["x"], ditto.ones(3))
    assert os.listdir(tmp_path) == ["w.safetensors"]  # no temporary left
    # Two names on one storage are refused, as safetensors.torch does.
    t = ditto.zeros(4)
    with pytest.raises(ValueError, match="shares memory"):
        ditto.save({"a": t, "b": t.view(2, 2)}, path)
    assert ditto.equal(ditto.load(path)["x"], ditto.ones(3))


def test_bad_files_raise_naming_the_file(tmp_path):
    bad = tmp_path / "garbage.safetensors"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{oops")
    with pytest.raises(ValueError) as e:
        ditto.load(bad)
    assert str(bad) in str(e.value)
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError, match="HeaderTooSmall") as e:
        ditto.load(short)
    assert str(short) in str(e.value)
    good = tmp_path / "good.safetensors"
    ditto.save({"x": ditto.zeros(100)}, good)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(good.read_bytes()[:-4])
    with pytest.raises(ValueError) as e:
        ditto.load(truncated)
    assert str(truncated) in str(e.value)
    with pytest.raises(FileNotFoundError) as e:
        ditto.load(tmp_path / "missing.safetensors")
    assert "missing.safetensors" in str(e.value)
    before = good.read_bytes()
    with pytest.raises(TypeError, match=r"the object\['x'\]\[1\] is a set"):
        ditto.save({"x": [1, {2}]}, good)
    with pytest.raises(TypeError, match="is a function"):
        ditto.save(lambda: 0, good)
    assert good.read_bytes() == before  # nothing written


@pytest.mark.hostile
def test_a_path_with_a_nul_byte_is_refused_and_nothing_changes(tmp_path):
    # As Python's open: "victim\0.bak" must not replace victim (issue 61,
    # item 12: the C library cut the path at the NUL).
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    sd = {"w": ditto.ones(2)}
    for call in (lambda p: ditto.save(sd, p), lambda p: ditto.load(p),
                 lambda p: ditto.serialization.load_metadata(p)):
        with pytest.raises(ValueError, match="embedded null byte"):
            call(str(victim) + "\0.bak")
    assert victim.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim"]


@pytest.mark.hostile
def test_load_raises_what_open_raises(tmp_path):
    # Issue 61, item 18: a symlink loop was reported as "No such file".
    loop = tmp_path / "loop"
    os.symlink(loop.name, loop)
    with pytest.raises(OSError) as e:
        ditto.load(str(loop))
    assert e.value.errno == errno.ELOOP
    assert not isinstance(e.value, FileNotFoundError)
    with pytest.raises(FileNotFoundError):
        ditto.load(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError):
        ditto.load(str(tmp_path))


def test_load_names_pytorchs_own_formats(tmp_path):
    # torch.save's zip archive and its legacy pickle: the first bytes,
    # which is all the check reads (the test needs no torch)
    import zipfile
    pt = tmp_path / "model.pt"
    with zipfile.ZipFile(pt, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    with pytest.raises(ValueError, match="PyTorch .pt file"):
        ditto.load(str(pt))
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(b"\x80\x02\x8a\x0alz\xfc\x9cF\xf9 j\xa8P\x19." + b"\x00" * 16)
    with pytest.raises(ValueError, match="pickle"):
        ditto.load(str(legacy))


def test_a_training_checkpoint_object_round_trips(tmp_path):
    # torch.save's usual checkpoint: numbers, strings, None, tuples, a
    # model's and an optimizer's state dicts (int keys), one tensor twice.
    import io
    import math
    from collections import OrderedDict
    ditto.manual_seed(0)
    m = ditto.nn.Linear(3, 2)
    opt = ditto.optim.Adam(m.parameters(), lr=1e-3)
    m(ditto.randn(4, 3)).sum().backward()
    opt.step()
    shared = ditto.arange(5.0)
    ck = {"epoch": 3, "model": m.state_dict(), "optimizer": opt.state_dict(),
          "best": float("inf"), "nan": float("nan"), "tiny": 5e-324,
          "name": "run", "none": None, "t": (1, 2.5, [True]),
          "big": 2 ** 70, "same": [shared, shared, shared[1:]],
          "p": ditto.nn.Parameter(ditto.ones(2)), 7: "int key"}
    path = tmp_path / "ck.pt"
    ditto.save(ck, path)
    r = ditto.load(path, map_location="cpu")
    assert list(r) == list(ck)
    assert (r["epoch"], r["best"], r["name"], r["none"], r["t"], r["big"],
            r["tiny"], r[7]) == (3, math.inf, "run", None, (1, 2.5, [True]),
                                 2 ** 70, 5e-324, "int key")
    assert math.isnan(r["nan"]) and isinstance(r["model"], OrderedDict)
    for k, v in m.state_dict().items():
        assert ditto.equal(r["model"][k], v)
    assert r["same"][0] is r["same"][1]
    assert r["same"][2].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert type(r["p"]).__name__ == "Parameter" and r["p"].requires_grad
    assert r["optimizer"]["param_groups"] == opt.state_dict()["param_groups"]
    again = ditto.optim.Adam(m.parameters(), lr=1e-3)
    again.load_state_dict(r["optimizer"])
    for k, v in opt.state_dict()["state"][0].items():
        assert ditto.equal(again.state_dict()["state"][0][k], v)
    # A file object, and a tensor alone, as torch.save takes them.
    buf = io.BytesIO()
    ditto.save(shared, buf)
    buf.seek(0)
    assert ditto.load(buf).tolist() == shared.tolist()
    # A state dict stays plain safetensors (huggingface's tools read it).
    ditto.save(m.state_dict(), path)
    from ditto.serialization import load_metadata
    assert "ditto.object" not in load_metadata(path)
    with pytest.raises(ValueError, match="ditto's own"):
        ditto.save(ck, path, metadata={"ditto.object": "{}"})


@pytest.mark.hostile
def test_a_malformed_object_description_is_a_value_error(tmp_path):
    # The "ditto.object" metadata is a format ditto parses: mutated,
    # truncated, mistyped, pointing at missing tensors, nested 100000 deep,
    # it loads or raises ValueError naming the key, never anything else.
    import json
    import random
    from ditto import _C
    from ditto.serialization import _OBJECT_KEY
    good = {"epoch": 3, "w": ditto.ones(2), "t": (1, [2.5, None]),
            "d": {7: "x", "y": True}}
    path = tmp_path / "good.pt"
    ditto.save(good, path)
    from ditto.serialization import load_metadata
    text = load_metadata(path)[_OBJECT_KEY]
    tensors = [("0", ditto.ones(2))]
    rng = random.Random(61)
    pieces = ['{"T":5}', '{"T":[]}', '{"I":[1]}', '{"F":5}', '{"D":[[1]]}',
              '{"D":[[{"L":[]},{"N":0}]]}', '[]', '"x"', '{}', '{"Q":1}',
              '{"T":0,"S":"a"}', '{"B":"yes"}', '{"F":"0x1.8p+1"}', 'null']
    cases = ['{"L":' * 100000 + '[]' + '}' * 100000, '', '{', text[:-1]]
    cases += pieces
    for _ in range(300):
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(chars))
            op = rng.randrange(3)
            if op == 0:
                del chars[i]
            elif op == 1:
                chars[i] = rng.choice('{}[]",:0123456789TDLUSIFBNxe-')
            else:
                chars.insert(i, rng.choice(pieces))
        cases.append("".join(chars))
    loaded = 0
    for k, meta in enumerate(cases):
        f = tmp_path / f"m{k}.pt"
        _C._save_safetensors(str(f), tensors, {_OBJECT_KEY: meta})
        try:
            ditto.load(f)
            loaded += 1
        except ValueError as e:
            assert _OBJECT_KEY in str(e) or "ditto.load" in str(e), str(e)
    assert 0 < loaded < len(cases)
    # json itself: a valid description of a missing tensor is refused too.
    bad = tmp_path / "missing.pt"
    _C._save_safetensors(str(bad), tensors,
                         {_OBJECT_KEY: json.dumps({"T": 3})})
    with pytest.raises(ValueError, match="does not describe"):
        ditto.load(bad)
