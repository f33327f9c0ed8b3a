"""examples/python/gpt.py (the library GPT written with torch's names)
prints `ditto train --model gpt`'s weight fingerprint for the same settings,
and its R8 checks pass: a batch of prompts decodes as each alone, the cache
as the full forward, and the log-probabilities are a training forward's."""
import os
import subprocess
import sys

from conftest import ROOT, cli

SCRIPT = os.path.join(ROOT, "examples", "python", "gpt.py")


def fingerprint(output):
    lines = [l for l in output.splitlines() if l.startswith("fingerprint ")]
    assert lines, output
    return lines[-1].split()[1]


def test_python_gpt_prints_ditto_trains_fingerprint(tmp_path):
    args = ["--max-steps", "5", "--batch-size", "16", "--seed", "2"]
    py = subprocess.run([sys.executable, SCRIPT, *args],
                        capture_output=True, text=True, timeout=300)
    assert py.returncode == 0, py.stdout + py.stderr
    assert py.stdout.count("alone: same bits, trainer's log-probs: same bits") == 3
    c = subprocess.run([cli(), "train", "--quiet", "--model", "gpt",
                        "--optimizer", "adamw", "--lr", "0.003",
                        "--generate", "0", "--out", str(tmp_path / "run"),
                        *args], capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stderr
    assert fingerprint(py.stdout) == fingerprint(c.stdout)
