#!/usr/bin/python3
"""Makes torch_cnn.safetensors and torch_cnn.json: weights of `ditto train`'s
CNN trained in PyTorch 1.13, written by PyTorch's side, for train_test.cpp
(`--init-from` loads them; the weights' fingerprint must be PyTorch's).

    /usr/bin/python3 tests/train/gen_torch_checkpoint.py

The safetensors Python package is not in Debian 12, so the file is written
here as safetensors.torch.save_file writes it (tensors sorted by dtype, then
name; compact JSON header padded with spaces to 8 bytes), from the model's
state_dict. The script reads the file back and checks every tensor.
Needs python3-torch and python3-xxhash.
"""
import json
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F
import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}


def save(path, tensors, metadata):
    order = sorted(tensors, key=lambda k: (DTYPES[tensors[k].dtype], k))
    header = {"__metadata__": metadata}
    blobs, pos = [], 0
    for name in order:
        t = tensors[name].detach().contiguous()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [pos, pos + len(raw)]}
        blobs.append(raw)
        pos += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__")
    out = {}
    back = {v: k for k, v in DTYPES.items()}
    for name, info in header.items():
        a, b = info["data_offsets"]
        out[name] = torch.frombuffer(bytearray(blob[8 + n + a:8 + n + b]),
                                     dtype=back[info["dtype"]]).reshape(info["shape"])
    return out


def main():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))
    x = torch.randn(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(20):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    path = os.path.join(HERE, "torch_cnn.safetensors")
    save(path, model.state_dict(), {"format": "pt"})
    back = load(path)
    sd = model.state_dict()
    assert back.keys() == sd.keys()
    for k in sd:
        assert torch.equal(back[k], sd[k]), k
    h = xxhash.xxh3_64()
    for _, p in model.named_parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    model.eval()
    with torch.no_grad():
        logits = model(torch.ones(2, 1, 28, 28, dtype=torch.float32))
    info = {
        "fingerprint": h.hexdigest(),
        "parameters": [n for n, _ in model.named_parameters()],
        "logits_of_ones": logits[0].tolist(),
    }
    with open(os.path.join(HERE, "torch_cnn.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print(path, os.path.getsize(path), "bytes, fingerprint", info["fingerprint"])


if __name__ == "__main__":
    main()
