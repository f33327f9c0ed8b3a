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
    with pytest.raises(TypeError, match="not a ditto.Tensor"):
        ditto.save({"x": [1, 2]}, good)
    with pytest.raises(TypeError, match="dict of tensors"):
        ditto.save(ditto.zeros(2), good)


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
