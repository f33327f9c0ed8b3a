"""ditto.random: the default generator's seed and state (torch.random's
functions), and ditto's named streams (docs/randomness.md)."""
from . import _C
from ._C import get_rng_state, initial_seed, seed, set_rng_state  # noqa: F401


def manual_seed(seed):
    """Seeds the default generator; returns it (torch.random.manual_seed)."""
    _C._manual_seed(seed)
    return _C.default_generator()


def derive_seed(root, name):
    """The 64-bit seed ditto derives from a root seed and a name (Philox of
    the name's FNV-1a hash, fixed forever)."""
    return _C._derive_seed(root, name)


def stream(name):
    """The named stream: a Philox generator keyed by derive_seed(the
    default generator's initial seed, name). manual_seed re-derives every
    stream; drawing from one never shifts another or the default
    generator."""
    return _C._stream(name)


def stream_names():
    """The names of the streams used so far, sorted."""
    return _C._stream_names()
