#!/usr/bin/env python3
"""Reads a `ditto train` checkpoint with a safetensors reader written from the
format's description (no ditto code, no PyTorch), then rewrites its
model.safetensors with this script's own writer.

    python3 safetensors_roundtrip.py CHECKPOINT_DIR

Prints "fingerprint <16 hex digits>": xxh3-64 of the parameters' bytes
concatenated in named_parameters() order (the order the file's
__metadata__["parameters"] lists), the formula docs/train.md documents.
train_test.cpp compares it with run.json's and resumes from the rewritten
checkpoint. Needs python3 and python3-xxhash (scripts/setup installs both).
"""
import json
import os
import struct
import sys

import xxhash

SIZES = {"F64": 8, "F32": 4, "I64": 8, "I32": 4, "U8": 1, "BOOL": 1}


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    assert len(blob) >= 8, f"{path}: shorter than the header length"
    (n,) = struct.unpack("<Q", blob[:8])
    assert 8 + n <= len(blob), f"{path}: header runs past the end"
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    spans = []
    for name, info in header.items():
        begin, end = info["data_offsets"]
        count = 1
        for d in info["shape"]:
            count *= d
        assert end - begin == count * SIZES[info["dtype"]], f"{name}: size"
        spans.append((begin, end))
        tensors[name] = (info["dtype"], info["shape"], data[begin:end])
    spans.sort()
    pos = 0
    for begin, end in spans:
        assert begin == pos, "offsets do not tile the data"
        pos = end
    assert pos == len(data), "data longer than the tensors"
    return tensors, meta


def write(path, tensors, meta):
    header = {"__metadata__": meta}
    pos = 0
    chunks = []
    # Reverse name order: another layout than ditto's writer.
    for name in sorted(tensors, reverse=True):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [pos, pos + len(raw)]}
        chunks.append(raw)
        pos += len(raw)
    text = json.dumps(header).encode("utf-8")
    tmp = path + ".py.tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
    os.replace(tmp, path)


def main():
    ck = sys.argv[1]
    model, meta = read(os.path.join(ck, "model.safetensors"))
    state, state_meta = read(os.path.join(ck, "train_state.safetensors"))
    assert state_meta["format"] == "ditto-checkpoint", state_meta
    assert "rng.default" in state and state["rng.default"][0] == "U8"
    h = xxhash.xxh3_64()
    for name in json.loads(meta["parameters"]):
        h.update(model[name][2])
    write(os.path.join(ck, "model.safetensors"), model, meta)
    print("fingerprint", h.hexdigest())


if __name__ == "__main__":
    main()
