"""ditto.save and ditto.load: a dict of tensors (a state_dict) as a
safetensors file (ditto/io/safetensors.h), written atomically (a temporary
beside the file, renamed over it). Files from huggingface's safetensors
(safetensors.torch.save_file) load, and ditto's load there.

Any other object of tensors, numbers, strings, None, lists, tuples and
dicts (torch.save's usual checkpoint: {"epoch": 3, "model": sd,
"optimizer": opt.state_dict()}) is a safetensors file too: its tensors
under the names "0", "1", ... in the order met, and the object's shape as
JSON in the header's metadata key "ditto.object" (Note [Objects in a
safetensors file]). Nothing is pickled: a file cannot run code on load.
"""
from collections import OrderedDict
from collections.abc import Mapping
import errno
import json
import os
import stat
import tempfile

from . import _C
from ._C import Tensor


def _rebuild_tensor(array, requires_grad=False):
    """A pickled Tensor (Tensor.__reduce__): its values and requires_grad."""
    t = _C.from_numpy(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _path(f):
    try:
        path = os.fspath(f)
    except TypeError:
        raise TypeError("ditto.save/load take a file path (str or "
                        f"os.PathLike), got {type(f).__name__}") from None
    # As open(): a NUL would cut the path where the C library reads it.
    if ("\0" if isinstance(path, str) else b"\0") in path:
        raise ValueError(f"embedded null byte in the path {path!r}")
    return path


# Note [Objects in a safetensors file]
# The metadata value "ditto.object" is the object as JSON, each node a
# one-key dict: {"T": i} the tensor named str(i) ("g": 1 when it required
# grad, "p": 1 for an nn.Parameter), {"D": [[key, value], ...]} a dict
# ("o": 1 for an OrderedDict; keys are nodes too, so int keys stay ints),
# {"L": [...]} a list, {"U": [...]} a tuple, {"S": s}, {"I": "123"} an int
# (as text: any size), {"F": float.hex(x)} a float (every bit, inf and
# NaN), {"B": b}, {"N": 0} None. One tensor object met twice is one entry
# (loaded as one object); tensors that share memory otherwise are written
# as copies.
_OBJECT_KEY = "ditto.object"


def _encode(obj, tensors, seen, where):
    if isinstance(obj, Tensor):
        if id(obj) not in seen:
            seen[id(obj)] = len(tensors)
            tensors.append(obj)
        node = {"T": seen[id(obj)]}
        if obj.requires_grad and obj.grad_fn is None:
            node["g"] = 1
        if type(obj).__name__ == "Parameter":
            node["p"] = 1
        return node
    if obj is None:
        return {"N": 0}
    if isinstance(obj, bool):
        return {"B": obj}
    if isinstance(obj, int):
        return {"I": str(int(obj))}
    if isinstance(obj, float):
        return {"F": float(obj).hex()}
    if isinstance(obj, str):
        return {"S": obj}
    if isinstance(obj, (list, tuple)):
        items = [_encode(v, tensors, seen, f"{where}[{i}]")
                 for i, v in enumerate(obj)]
        return {"U": items} if isinstance(obj, tuple) else {"L": items}
    if isinstance(obj, Mapping):
        pairs = [[_encode(k, tensors, seen, f"{where} key {k!r}"),
                  _encode(v, tensors, seen, f"{where}[{k!r}]")]
                 for k, v in obj.items()]
        node = {"D": pairs}
        if isinstance(obj, OrderedDict):
            node["o"] = 1
        return node
    raise TypeError(f"ditto.save: {where} is a {type(obj).__name__}: ditto "
                    "saves tensors, numbers, strings, None, and lists, "
                    "tuples and dicts of them (it pickles nothing)")


def _decode(node, tensors, made):
    (kind, value), = [(k, v) for k, v in node.items() if k.isupper()]
    if kind == "T":
        t = tensors[str(value)]
        if value in made:
            return made[value]
        if node.get("p"):
            from .nn.parameter import Parameter
            t = Parameter(t, requires_grad=bool(node.get("g")))
        elif node.get("g"):
            t.requires_grad_(True)
        made[value] = t
        return t
    if kind == "N":
        return None
    if kind == "B":
        return bool(value)
    if kind == "I":
        return int(value)
    if kind == "F":
        return float.fromhex(value)
    if kind == "S":
        return str(value)
    if kind in ("L", "U"):
        items = [_decode(v, tensors, made) for v in value]
        return tuple(items) if kind == "U" else items
    if kind == "D":
        out = OrderedDict() if node.get("o") else {}
        for k, v in value:
            out[_decode(k, tensors, made)] = _decode(v, tensors, made)
        return out
    raise ValueError(f"ditto.load: an unknown node {kind!r} in the file's "
                     f"{_OBJECT_KEY!r} metadata")


def _is_state_dict(obj):
    return isinstance(obj, Mapping) and len(obj) > 0 and all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())


def _to_file(f, write):
    """write(path) into f: a path, or a writable binary file object (a
    temporary file's bytes copied into it)."""
    if hasattr(f, "write") and not isinstance(f, (str, bytes, os.PathLike)):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "object.safetensors")
            write(path)
            with open(path, "rb") as src:
                f.write(src.read())
        return
    write(_path(f))


def save(obj, f, metadata=None):
    """Writes obj to the file f (a path or a binary file object): a mapping
    of str to Tensor as plain safetensors, any other object of tensors,
    numbers, strings, None, lists, tuples and dicts with its shape in the
    metadata (Note [Objects in a safetensors file]). metadata: an optional
    dict of str to str kept in the file's header."""
    meta = {}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("ditto.save: metadata must map str to str")
        if k == _OBJECT_KEY:
            raise ValueError(f"ditto.save: the metadata key {_OBJECT_KEY!r} "
                             "is ditto's own")
        meta[k] = v
    if _is_state_dict(obj):
        items = [(k, v.detach()) for k, v in obj.items()]
        _to_file(f, lambda p: _C._save_safetensors(p, items, meta))
        return
    tensors = []
    meta[_OBJECT_KEY] = json.dumps(_encode(obj, tensors, {}, "the object"),
                                   separators=(",", ":"))
    items = [(str(i), t.detach()) for i, t in enumerate(tensors)]

    def write(path):
        try:
            _C._save_safetensors(path, items, meta)
        except ValueError as e:
            if "shares memory" not in str(e):
                raise
            # Tensors that share memory (views of one another): copies.
            _C._save_safetensors(
                path, [(k, t.clone()) for k, t in items], meta)
    _to_file(f, write)


def _read(f):
    path = _path(f)
    # os.stat raises what open() would: FileNotFoundError, PermissionError,
    # OSError(ELOOP) for a symlink loop (os.path.exists would say "no such
    # file" for all of them).
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    return _C._load_safetensors(path)


def load(f, map_location=None, weights_only=False, **kwargs):
    """What ditto.save wrote to f (a path or a binary file object): the
    tensors of a safetensors file by name, in the file's order (an
    OrderedDict, as torch.load's state_dicts), or the object saved (Note
    [Objects in a safetensors file]). A malformed file raises ValueError
    naming the file and the check that failed. weights_only is accepted:
    nothing is ever unpickled."""
    del weights_only, kwargs  # torch's pickle_module and its arguments
    if map_location is not None and str(map_location) != "cpu":
        raise ValueError("ditto tensors load on the CPU: map_location must "
                         "be None or 'cpu' (move them with .to() after)")
    if hasattr(f, "read") and not isinstance(f, (str, bytes, os.PathLike)):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "object.safetensors")
            with open(path, "wb") as dst:
                dst.write(f.read())
            return load(path)
    tensors, meta = _read(f)
    meta = dict(meta)
    if _OBJECT_KEY not in meta:
        return OrderedDict(tensors)
    try:
        shape = json.loads(meta[_OBJECT_KEY])
        return _decode(shape, dict(tensors), {})
    except (ValueError, KeyError, TypeError, AttributeError,
            RecursionError) as e:
        raise ValueError(f"ditto.load: {f}: the {_OBJECT_KEY!r} metadata "
                         f"does not describe the file's tensors ({e})") \
            from None


def load_metadata(f):
    """The str -> str metadata of the safetensors file f."""
    return dict(_read(f)[1])
