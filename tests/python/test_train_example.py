"""examples/python/train_fashion_mnist.py prints `ditto train`'s weight
fingerprint for the same settings (a short run: the same model bits, data
order, normalization, dropout masks and SGD steps from Python and from
C++), with workers and in both seed modes."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "examples", "python", "train_fashion_mnist.py")


def cli():
    path = os.environ.get("DITTO_CLI")
    if not path:
        import ditto
        # build/python/ditto/__init__.py -> build/ditto
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(ditto.__file__)))), "ditto")
    assert os.path.exists(path), f"the ditto CLI is not built at {path}"
    return path


def fingerprint(output):
    lines = [l for l in output.splitlines() if l.startswith("fingerprint ")]
    assert lines, output
    return lines[-1].split()[1]


@pytest.mark.parametrize("args", [
    ["--max-steps", "12", "--batch-size", "32", "--seed", "3"],
    ["--max-steps", "8", "--workers", "2", "--seed-mode", "pytorch",
     "--lr", "0.05"],
])
def test_python_loop_prints_ditto_trains_fingerprint(args, tmp_path):
    env = dict(os.environ)
    py = subprocess.run([sys.executable, SCRIPT, *args], env=env,
                        capture_output=True, text=True, timeout=300)
    assert py.returncode == 0, py.stderr
    c = subprocess.run([cli(), "train", "--quiet", "--out",
                        str(tmp_path / "run"), *args],
                       capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stderr
    assert fingerprint(py.stdout) == fingerprint(c.stdout)
