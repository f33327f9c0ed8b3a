"""ditto.utils."""
from . import data, deterministic, dlpack  # noqa: F401
