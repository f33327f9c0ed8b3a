"""ditto.save and ditto.load: a dict of tensors (a state_dict) as a
safetensors file (ditto/io/safetensors.h), written atomically (a temporary
beside the file, renamed over it). Files from huggingface's safetensors
(safetensors.torch.save_file) load, and ditto's load there."""
from collections import OrderedDict
from collections.abc import Mapping
import errno
import os
import stat

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


def save(obj, f, metadata=None):
    """Writes obj, a mapping of str to Tensor, to the file f. metadata: an
    optional dict of str to str kept in the file's header."""
    if not isinstance(obj, Mapping):
        raise TypeError("ditto.save writes a dict of tensors (a state_dict) "
                        f"as safetensors, got {type(obj).__name__}")
    items = []
    for k, v in obj.items():
        if not isinstance(k, str):
            raise TypeError(f"ditto.save: keys must be str, got {k!r}")
        if not isinstance(v, Tensor):
            raise TypeError(f"ditto.save: {k!r} is a {type(v).__name__}, not "
                            "a ditto.Tensor")
        items.append((k, v.detach()))
    meta = {}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("ditto.save: metadata must map str to str")
        meta[k] = v
    _C._save_safetensors(_path(f), items, meta)


def _read(f):
    path = _path(f)
    # os.stat raises what open() would: FileNotFoundError, PermissionError,
    # OSError(ELOOP) for a symlink loop (os.path.exists would say "no such
    # file" for all of them).
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    return _C._load_safetensors(path)


def load(f, map_location=None):
    """The tensors of the safetensors file f, by name, in the file's order
    (an OrderedDict, as torch.load's state_dicts). A malformed file raises
    ValueError naming the file and the check that failed."""
    if map_location not in (None, "cpu"):
        raise ValueError("ditto tensors live on the CPU: map_location must "
                         "be None or 'cpu'")
    tensors, _ = _read(f)
    return OrderedDict(tensors)


def load_metadata(f):
    """The str -> str metadata of the safetensors file f."""
    return dict(_read(f)[1])
