"""Every script in benchmarks/ runs on a tiny input (a benchmark that crashes is a bug, issue 23).

Speed targets are the benchmarks' business, not these tests': a script may report a missed target
(``mma_models.py`` exits 1 then), but it must finish, print its numbers and raise no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.harness.toolchain import find_tool

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))

#: the tiny input of each script, and the exit codes that mean "ran" (1: a target missed)
TINY = {
    "assemble.py": (["--level", "smoke", "--family", "alloc", "--workers", "1", "--no-sass"], (0,)),
    "case_axis.py": (["--level", "smoke", "--limit", "12", "--calls", "3"], (0,)),
    "compare_outcomes.py": (["--example"], (1,)),
    "execute.py": (["--level", "smoke", "--limit", "12"], (0,)),
    "host_digests.py": (["--level", "smoke", "--limit", "12"], (0,)),
    "mma_models.py": (["--repeats", "1"], (0, 1)),
    "sim_clients.py": (["--ctas", "1", "-k", "mbarrier"], (0,)),
    "sim_digests.py": (["--level", "smoke", "--limit", "8", "--deletions", "2"], (0,)),
    "sim_hazards.py": (["--level", "smoke", "--limit", "8", "--repeat", "1"], (0,)),
}


def run(script: str, args: list[str], tmp_path: Path, **env) -> subprocess.CompletedProcess:
    environ = {**os.environ, "TCGEN05_CTS_CACHE": str(tmp_path / "cache"), **env}
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=tmp_path,
                          capture_output=True, text=True, env=environ, timeout=600)


def test_every_benchmark_has_a_tiny_input():
    assert sorted(TINY) == BENCHMARKS


@pytest.mark.slow
@pytest.mark.parametrize("script", BENCHMARKS)
def test_benchmark_runs_on_a_tiny_input(tmp_path, script):
    if script == "assemble.py" and find_tool("ptxas") is None:
        pytest.skip("NotSupported: no ptxas found")
    args, ok = TINY[script]
    proc = run(script, args, tmp_path)
    assert proc.returncode in ok and "Traceback" not in proc.stderr, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.strip(), "printed no numbers"


@pytest.mark.slow
def test_execution_benchmark_through_the_fake_cuda_driver(tmp_path):
    if find_tool("ptxas") is None:
        pytest.skip("NotSupported: no ptxas found")
    fake = ROOT / "tests" / "fake_cuda"
    proc = run("execute.py", ["--device", "cuda", "--level", "smoke", "--family", "warp.mma.sp"], tmp_path,
               PYTHONPATH=f"{fake}{os.pathsep}{ROOT}", TCGEN05_FAKE_CUDA_CC="9.0")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert any(line.startswith("launch alone:") for line in lines) and lines[-1].startswith("cases/s")
    assert "16 cases" in proc.stdout and "12 NotSupported" in proc.stdout and " 16 pass " in proc.stdout


def test_execution_benchmark_without_a_gpu_says_so(tmp_path):
    proc = run("execute.py", ["--device", "cuda", "--level", "smoke", "--limit", "1"], tmp_path,
               PYTHONPATH=str(ROOT), TCGEN05_CTS_FAKE_NOTHING="1")
    if proc.returncode == 0:
        pytest.skip("a CUDA driver is installed here")
    assert proc.returncode == 2 and "--device cuda:" in proc.stderr and "Traceback" not in proc.stderr
