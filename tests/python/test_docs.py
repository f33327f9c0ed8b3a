"""The README's Python examples run as written (in a temporary directory:
they write files)."""
import os
import re
import textwrap

from conftest import ROOT


def python_blocks(path):
    with open(os.path.join(ROOT, path)) as f:
        # A block inside a list item is indented with it.
        return [textwrap.dedent(b) for b in
                re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)]


def test_readme_python_examples_run(tmp_path, monkeypatch):
    blocks = python_blocks("README.md")
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    import ditto
    deterministic = ditto.are_deterministic_algorithms_enabled()
    scope = {}
    try:
        for code in blocks:  # later blocks use earlier ones' names
            exec(compile(code, "README.md", "exec"), scope)
    finally:  # the README turns deterministic mode on: not for later tests
        ditto.use_deterministic_algorithms(deterministic)
    assert os.path.exists(tmp_path / "model.safetensors")
    assert tuple(scope["images"].shape) == (64, 1, 28, 28)
