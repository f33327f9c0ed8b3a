"""ditto.trace and `ditto verify` on Python programs (docs/verify.md): the
trace names the Python modules as the C++ ones do, DITTO_TRACE traces a
whole script, and verify finds a divergence planted in a submodule."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import ditto
from ditto import nn
from conftest import cli


def read_trace(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    assert "ditto_trace" in lines[0]
    assert lines[-1]["end"] and lines[-1]["records"] == len(lines) - 2
    return lines[1:-1]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) * 2


def test_module_paths_as_cpp_names_them(tmp_path):
    ditto.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), Block(), nn.Linear(4, 2))
    x = ditto.randn(5, 3)
    path = tmp_path / "t.jsonl"
    with ditto.trace.tracing(path):
        assert ditto.trace.enabled()
        assert ditto.trace.active_path() == str(path)
        model(x).sum().backward()
    assert not ditto.trace.enabled()
    records = read_trace(path)
    seen = [(r["op"], r.get("module"), r.get("type")) for r in records]
    assert ("linear", "0", "Linear") in seen
    assert ("linear", "1.fc", "Linear") in seen
    assert ("relu", "1.act", "ReLU") in seen
    assert ("linear", "2", "Linear") in seen
    # Block's own op runs in its scope; backward nodes keep their module.
    assert any(r.get("module") == "1" and r.get("type") == "Block"
               and r["phase"] == "forward" for r in records)
    assert any(r["phase"] == "backward" and r.get("module") == "1.fc"
               and r["op"].endswith("_backward") for r in records)
    # The ops outside every module carry none.
    assert "module" not in records[-1] or records[-1]["phase"] == "backward"
    assert any(op == "sum" and mod is None for op, mod, _ in seen)


def test_submodule_called_alone_is_its_own_root(tmp_path):
    block = Block()
    path = tmp_path / "t.jsonl"
    with ditto.trace.tracing(path):
        block.fc(ditto.ones(1, 4))
        block(ditto.ones(1, 4))
    mods = [r.get("module") for r in read_trace(path) if r["op"] == "linear"]
    assert mods == ["", "fc"]


def test_hook_and_guards():
    events = []
    ditto.trace.set_hook(events.append)
    try:
        assert ditto.trace.enabled()
        with ditto.trace.ModuleGuard("a.b", "Mine"):
            assert ditto.trace.current_module() == ("a.b", "Mine")
            ditto.ones(2) + 1
        assert ditto.trace.current_module() is None
        with ditto.trace.PhaseGuard("eval"):
            assert ditto.trace.current_phase() == "eval"
            ditto.zeros(1)
        with ditto.trace.Suppress():
            ditto.zeros(3)
        ditto.trace.record_value("batch", "data", [ditto.ones(2)])
    finally:
        ditto.trace.set_hook(None)
    assert not ditto.trace.enabled()
    assert [(e["op"], e["phase"]) for e in events] == [
        ("ones", "forward"), ("add", "forward"), ("zeros", "eval"),
        ("ones", "forward"), ("batch", "data")]
    assert events[1]["outputs"][0].tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="unknown phase"):
        ditto.trace.PhaseGuard("sideways")
    with pytest.raises(TypeError):
        ditto.trace.set_hook(3)


def test_steps():
    step = ditto.trace.current_step()
    ditto.trace.set_step(7)
    assert ditto.trace.current_step() == 7
    ditto.trace.advance_step()
    assert ditto.trace.current_step() == 8
    ditto.trace.set_step(step)


# A small training script; PLANT adds a value that depends on the process
# id in one op of the submodule at path "1.noise".
PROGRAM = textwrap.dedent("""
    import os
    import sys

    import ditto
    from ditto import nn

    PLANT = len(sys.argv) > 1 and sys.argv[1] == "plant"


    class Noisy(nn.Module):
        def forward(self, x):
            return x * (1.0 + (os.getpid() % 97 + 1) * 1e-3 if PLANT else 1.0)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)
            self.noise = Noisy()

        def forward(self, x):
            return self.noise(ditto.tanh(self.fc(x)))


    ditto.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 8), Block(), nn.Linear(8, 1))
    opt = ditto.optim.SGD(model.parameters(), lr=0.1)
    x, y = ditto.randn(16, 4), ditto.randn(16, 1)
    for _ in range(3):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    print("fingerprint", ditto.utils.weights_fingerprint(model))
""")


def run_verify(tmp_path, *args):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run(
        [cli(), "verify", "--timeout", "300", "--", sys.executable,
         str(script), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=600)


def test_verify_names_the_planted_op_and_module(tmp_path):
    r = run_verify(tmp_path, "plant")
    assert r.returncode == 3, r.stdout
    lines = {l.split()[0]: l.split(None, 1)[1] for l in r.stdout.splitlines()
             if l.startswith("  ") and len(l.split()) > 1}
    assert lines["first"].endswith(": mul"), r.stdout
    assert lines["module"] == "1.noise (Noisy)", r.stdout
    assert lines["phase"].startswith("forward, step 0"), r.stdout


def test_verify_identical_runs(tmp_path):
    r = run_verify(tmp_path)
    assert r.returncode == 0, r.stdout
    assert "identical: 2 runs" in r.stdout


def test_ditto_trace_env_traces_a_script(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, DITTO_TRACE=str(tmp_path / "t.jsonl"))
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    subprocess.run([sys.executable, str(script)], env=env, check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    records = read_trace(tmp_path / "t.jsonl")
    assert {r.get("module") for r in records} >= {"0", "1.fc", "1", "2"}
    assert any(r["phase"] == "optimizer" and r["step"] == 2 for r in records)


def test_a_hook_left_at_exit_and_ditto_trace(tmp_path):
    # The hook is dropped at interpreter exit, before the C++ trace that
    # holds it is destroyed; the DITTO_TRACE file is still finished.
    script = tmp_path / "hook.py"
    script.write_text(textwrap.dedent("""
        import sys
        import ditto
        seen = []
        ditto.trace.set_hook(lambda e: seen.append(e["op"]))
        ditto.ones(3) + 1
        print(seen)
        sys.exit(3)
    """))
    env = dict(os.environ, DITTO_TRACE=str(tmp_path / "t.jsonl"))
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    r = subprocess.run([sys.executable, str(script)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    assert r.returncode == 3, r.stderr
    assert r.stdout.strip() == "['ones', 'add']"
    assert [x["op"] for x in read_trace(tmp_path / "t.jsonl")] == ["ones",
                                                                    "add"]
