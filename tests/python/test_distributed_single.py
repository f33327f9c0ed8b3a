"""ditto.distributed in one process without mpirun: `import ditto` does not
load Open MPI, and the calls that need a process group say so as torch's
do (the multi-process checks run under mpirun: tests/distributed/
python_same_bits)."""
import subprocess
import sys

import pytest

import ditto


def _loaded_libraries(code):
    out = subprocess.run(
        [sys.executable, "-c", code + "\nprint(open('/proc/self/maps').read())"],
        check=True, capture_output=True, text=True).stdout
    return out


def test_import_ditto_does_not_load_mpi():
    maps = _loaded_libraries("import ditto, ditto.nn.parallel")
    assert "libmpi" not in maps
    assert "libditto_distributed" not in maps
    maps = _loaded_libraries("import ditto.distributed")
    assert "libditto_distributed" in maps


def test_calls_before_init_raise_as_torch_does():
    import ditto.distributed as dist
    assert dist.is_available()
    assert ditto.distributed is dist
    if dist.is_initialized():
        pytest.fail("another test initialized MPI in this process")
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.all_reduce(ditto.ones(2))
    with pytest.raises(RuntimeError, match="has not been initialized"):
        ditto.nn.parallel.DistributedDataParallel(ditto.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Requires distributed package"):
        ditto.utils.data.DistributedSampler(list(range(4)))
    with pytest.raises(ValueError, match="backend 'nccl' is not available"):
        dist.init_process_group("nccl")
    # Explicit replicas and rank need no process group (torch's behaviour).
    s = ditto.utils.data.DistributedSampler(list(range(5)), num_replicas=2,
                                            rank=1, shuffle=False)
    assert list(s) == [1, 3, 0]
