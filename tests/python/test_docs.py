"""The README's Python examples run as written (in a temporary directory:
they write files)."""
import os
import re

from conftest import ROOT


def python_blocks(path):
    with open(os.path.join(ROOT, path)) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


def test_readme_python_examples_run(tmp_path, monkeypatch):
    blocks = python_blocks("README.md")
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    scope = {}
    for code in blocks:  # later blocks use earlier ones' names (import ditto)
        exec(compile(code, "README.md", "exec"), scope)
    assert os.path.exists(tmp_path / "model.safetensors")
    assert tuple(scope["images"].shape) == (64, 1, 28, 28)
