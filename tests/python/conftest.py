import os

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "hostile: a hostile-input case (issue 61); the sanitizer build "
        "(make sanitize) runs these under ASan and UBSan, with Python's "
        "objects in malloc'd memory")

ROOT = os.environ.get("DITTO_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli():
    """The built `ditto` command (CTest passes DITTO_CLI)."""
    path = os.environ.get("DITTO_CLI")
    if not path:
        import ditto
        # build/python/ditto/__init__.py -> build/ditto
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(ditto.__file__)))), "ditto")
    assert os.path.exists(path), f"the ditto CLI is not built at {path}"
    return path


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


def _json(*parts):
    import json
    with open(os.path.join(ROOT, "tests", *parts)) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def nn_golden():
    """The C++ nn tests' PyTorch 1.13 fixtures (tests/nn/nn_golden.json,
    made by tests/nn/gen_nn_golden.py)."""
    return _json("nn", "nn_golden.json")


@pytest.fixture(scope="session")
def rnn_golden():
    """The recurrent layers' PyTorch 1.13 fixtures (tests/nn/rnn_golden.json,
    made by tests/nn/gen_rnn_golden.py)."""
    return _json("nn", "rnn_golden.json")
