#!/usr/bin/env python3
"""Writes the seeds of issue 32's defects into the fuzz corpora (plain
Python, no PyTorch): 100,000 levels of '[' wherever ditto reads JSON from a
file (a checkpoint's settings, loader and progress metadata, a tuning cache,
a loader state, a trace's header and end line), and the safetensors headers
the reader now refuses (an empty tensor name, a key twice in one object).
Run from the repository root: python3 fuzz/corpus/gen_hostile_seeds.py"""
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)))
DEEP = "[" * 100000


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


def safetensors(header_text, data=b""):
    raw = header_text.encode()
    return struct.pack("<Q", len(raw)) + raw + data


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8 : 8 + n]), blob[8 + n :]


# safetensors: refused headers.
entry = '{"dtype":"U8","shape":[2],"data_offsets":[0,2]}'
write("safetensors", "empty_name", safetensors('{"":' + entry + "}", b"\x01\x02"))
write(
    "safetensors",
    "duplicate_key",
    safetensors('{"a":' + entry + ',"a":' + entry + "}", b"\x01\x02"),
)
write(
    "safetensors",
    "duplicate_metadata_key",
    safetensors('{"__metadata__":{"k":"1","k":"2"}}'),
)
write(
    "safetensors",
    "deep_metadata_string",
    safetensors(json.dumps({"__metadata__": {"settings": DEEP}})),
)

# train_state: each JSON field of the metadata nested 100,000 deep.
header, data = read_safetensors(os.path.join(ROOT, "train_state", "stripped"))
for field in ("settings", "loader", "progress"):
    h = json.loads(json.dumps(header))
    h.setdefault("__metadata__", {})[field] = DEEP
    write("train_state", "deep_" + field, safetensors(json.dumps(h), data))

# Whole-file JSON readers.
write("tuning_cache", "deep", DEEP)
write("loader_state", "deep", DEEP)

# Traces: a deep header, and a deep registry in the end line.
with open(os.path.join(ROOT, "trace", "small.jsonl")) as f:
    lines = f.read().splitlines()
write("trace", "deep_header", DEEP + "\n")
write(
    "trace",
    "deep_registry",
    "\n".join(lines[:-1]) + '\n{"end":true,"records":%d,"registry":%s}\n'
    % (len(lines) - 2, DEEP),
)
