"""ditto.nn: functional today (modules follow, issue 33)."""
from . import functional  # noqa: F401
