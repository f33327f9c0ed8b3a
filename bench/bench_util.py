"""Helpers shared by the side-by-side comparison scripts in bench/."""

import json
import subprocess


def ditto_time(binary, name, min_time):
    """Seconds per iteration of the Google Benchmark case `name` (or
    `name/real_time`) of `binary`, by wall clock."""
    out = subprocess.run(
        [binary, f"--benchmark_filter=^{name}(/real_time)?$", "--benchmark_format=json",
         f"--benchmark_min_time={min_time}"],
        check=True, capture_output=True, text=True).stdout
    row = json.loads(out)["benchmarks"][0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row["time_unit"]]
    return row["real_time"] * scale
