import os

import pytest

ROOT = os.environ.get("DITTO_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def golden():
    """The C++ random tests' golden bytes (tests/random/golden.bin), made
    from PyTorch 1.13 by tests/random/gen_golden.py: name -> (dtype, bytes)."""
    d = os.path.join(ROOT, "tests", "random")
    with open(os.path.join(d, "golden.bin"), "rb") as f:
        blob = f.read()
    cases = {}
    with open(os.path.join(d, "golden.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, dtype, off, n = line.split()
            cases[name] = (dtype, blob[int(off):int(off) + int(n)])
    return cases
