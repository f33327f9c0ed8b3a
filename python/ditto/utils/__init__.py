"""ditto.utils."""
from . import deterministic  # noqa: F401
