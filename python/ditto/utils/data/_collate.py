"""default_collate and default_convert, with torch 1.13's rules."""
import collections.abc
import re

import numpy as np

from ... import _C

_NUMPY_STRINGS = re.compile(r"[SaUO]")


def _numpy_to_tensor(a):
    if _NUMPY_STRINGS.search(a.dtype.str) is not None:
        raise TypeError(
            "default_collate: batch must contain tensors, numpy arrays, "
            f"numbers, dicts or lists; found {a.dtype}")
    return _C.tensor(np.ascontiguousarray(a))


def default_convert(data):
    """Numpy arrays to tensors, recursively, without batching (the
    collate of batch_size=None)."""
    if isinstance(data, _C.Tensor):
        return data
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        if _NUMPY_STRINGS.search(np.asarray(data).dtype.str) is not None:
            return data
        return _C.tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(
            data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Puts each field of the samples into a tensor with a new outer
    dimension of the batch size (torch.utils.data.default_collate): tensors
    are stacked, numpy arrays stacked as tensors, floats become float64 and
    ints int64 tensors, strings stay a list, and mappings, named tuples and
    sequences are collated field by field (a tuple gives a list, as torch's
    does)."""
    elem = batch[0]
    if isinstance(elem, _C.Tensor):
        return _C.stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.type is not np.str_:
        return default_collate([_numpy_to_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        if _NUMPY_STRINGS.search(elem.dtype.str) is None:
            return _C.tensor(np.array(batch))
    if isinstance(elem, bool):
        return _C.tensor(list(batch), dtype=_C.bool)
    if isinstance(elem, float):
        return _C.tensor(list(batch), dtype=_C.float64)
    if isinstance(elem, int):
        return _C.tensor(list(batch), dtype=_C.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError(
                "each element in list of batch should be of equal size")
        transposed = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed
        try:
            return type(elem)(transposed)
        except TypeError:
            return transposed
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, "
        f"dicts or lists; found {type(elem)}")
