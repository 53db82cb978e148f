"""``tcgen05-cts doctor`` explains a machine without a GPU and checks a (fake) GPU's whole path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.harness.toolchain import find_tool

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fake_cuda"


def doctor(*args: str, fake_cc: str | None = None, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TCGEN05_CTS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    if fake_cc is not None:
        env.update(PYTHONPATH=f"{FAKE}{os.pathsep}{ROOT}", TCGEN05_FAKE_CUDA_CC=fake_cc)
    return subprocess.run([sys.executable, "-m", "conformance.commands.cli", "doctor", "--level", "smoke", *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)


def test_doctor_explains_a_machine_without_a_gpu(tmp_path):
    try:
        import pycuda.driver  # noqa: F401
        pytest.skip("PyCUDA is installed here")
    except ImportError:
        pass
    proc = doctor(tmp_path=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "PyCUDA:" in out and "not importable" in out and "GPU:" in out and "none usable" in out
    assert "warp.mma.sp" in out and "NotSupported: needs" in out and "found none" in out
    assert "the GPU path cannot work here: PyCUDA is missing" in out and "--device sim" in out


@pytest.mark.skipif(find_tool("ptxas") is None, reason="NotSupported: no ptxas found")
@pytest.mark.parametrize("load", ["cubin", "ptx"])
def test_doctor_on_a_fake_h100(tmp_path, load):
    proc = doctor("--load", load, fake_cc="9.0", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "NVIDIA H100 80GB HBM3 (fake driver), compute capability 9.0" in out
    assert "SASS architecture:   sm_90 " in out and "the GPU path works" in out
    assert "warp.mma.sp  16 run" in out and "12 NotSupported: needs sm_120a; device is sm_90" in out
    if load == "cubin":
        assert "sm_80 -> sm_90" in out


@pytest.mark.skipif(find_tool("ptxas") is None, reason="NotSupported: no ptxas found")
def test_doctor_fails_when_ptxas_cannot_assemble_for_the_device(tmp_path):
    fake_ptxas = tmp_path / "ptxas"
    real = find_tool("ptxas")
    fake_ptxas.write_text(f"#!/bin/sh\nfor a in \"$@\"; do case $a in -arch=sm_90) echo 'ptxas fatal   : Value sm_90 "
                          f"is not defined for option gpu-name' >&2; exit 1;; esac; done\nexec {real.path} \"$@\"\n")
    fake_ptxas.chmod(0o755)
    proc = doctor("--ptxas", str(fake_ptxas), fake_cc="9.0", tmp_path=tmp_path)
    assert proc.returncode == 1
    assert "cannot assemble for -arch=sm_90" in proc.stdout and "is not defined for option gpu-name" in proc.stdout
