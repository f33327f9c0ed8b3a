"""ditto.utils."""
from . import deterministic, dlpack  # noqa: F401
