"""The ``--device cuda`` path in CI, through a faithful fake driver (tests/fake_cuda, issue 23).

The fake refuses what the real driver refuses (checked here against real ptxas output), and the
harness runs the smoke execution tier through it for five compute capabilities: each case runs or
is NotSupported exactly as on that GPU, passes where it runs, and no worker aborts at exit.
Injected driver faults (trap, hang, out of memory) land on the right cases only.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.harness.toolchain import find_tool

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fake_cuda"
PTXAS = find_tool("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="NotSupported: no ptxas found")
ABORT_MESSAGE = "PyCUDA ERROR: The context stack was not empty upon module cleanup"

TINY = """.version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{{
  .reg .u64 %a; .reg .u32 %v; .reg .pred %q;
  ld.param.u64 %a, [p]; ld.param.u32 %v, [n];
  setp.eq.u32 %q, %v, 7;
  @%q trap;
  st.global.u32 [%a], %v;
  ret;
}}
"""


def tiny_ptx(target: str, version: str = "8.8") -> str:
    return TINY.format(target=target, version=version)


def assemble(tmp_path: Path, target: str, arch: str) -> bytes:
    src, out = tmp_path / f"{target}.ptx", tmp_path / f"{target}-{arch}.cubin"
    src.write_text(tiny_ptx(target))
    subprocess.run([PTXAS.path, f"-arch={arch}", str(src), "-o", str(out)], check=True, capture_output=True)
    return out.read_bytes()


@contextlib.contextmanager
def fake_driver(monkeypatch, cc: str, faults: str = ""):
    """``pycuda.driver`` as the fake, for a device of compute capability ``cc``; every context is
    popped at the end (so this test process never aborts at exit)."""
    saved = {k: v for k, v in sys.modules.items() if k == "pycuda" or k.startswith("pycuda.")}
    for name in saved:
        del sys.modules[name]
    monkeypatch.syspath_prepend(str(FAKE))
    monkeypatch.setenv("TCGEN05_FAKE_CUDA_CC", cc)
    monkeypatch.setenv("TCGEN05_FAKE_CUDA_FAULTS", faults)
    driver = importlib.import_module("pycuda.driver")
    driver.init()
    try:
        yield driver
    finally:
        driver._STATE.stack.clear()
        for name in [k for k in sys.modules if k == "pycuda" or k.startswith("pycuda.")]:
            del sys.modules[name]
        sys.modules.update(saved)


# --- the fake's rules ---------------------------------------------------------------------------------

@needs_ptxas
@pytest.mark.parametrize("target, arch, sm, specific", [
    ("sm_80", "sm_80", 80, False), ("sm_80", "sm_90", 90, False), ("sm_90", "sm_90a", 90, True),
    ("sm_100a", "sm_100a", 100, True), ("sm_100f", "sm_100f", 100, False), ("sm_100f", "sm_103f", 103, False),
    ("sm_103a", "sm_103a", 103, True), ("sm_120a", "sm_120a", 120, True), ("sm_120f", "sm_120f", 120, False),
])
def test_cubin_reader_against_ptxas(tmp_path, monkeypatch, target, arch, sm, specific):
    with fake_driver(monkeypatch, "10.0"):
        from pycuda._cubin import read_cubin

        info = read_cubin(assemble(tmp_path, target, arch))
    assert (info.sm, info.arch_specific, info.functions) == (sm, specific, frozenset({"k"}))


@needs_ptxas
@pytest.mark.parametrize("target, arch, cc, loads", [
    ("sm_80", "sm_80", "9.0", False),          # the first H100 run: SASS runs only within its major version
    ("sm_80", "sm_90", "9.0", True),
    ("sm_90", "sm_90a", "9.0", True),
    ("sm_90", "sm_90a", "10.0", False),
    ("sm_100a", "sm_100a", "10.3", False),     # arch-specific: its exact chip only
    ("sm_100f", "sm_100f", "10.3", True),      # others: same major, equal or higher minor
    ("sm_100f", "sm_103f", "10.0", False),
    ("sm_80", "sm_100", "10.3", True),
    ("sm_80", "sm_120", "12.0", True),
    ("sm_80", "sm_100", "12.0", False),
])
def test_fake_loads_cubins_as_the_driver_does(tmp_path, monkeypatch, target, arch, cc, loads):
    cubin = assemble(tmp_path, target, arch)
    with fake_driver(monkeypatch, cc) as cuda:
        cuda.register_ptx(cubin, [tiny_ptx(target)])
        ctx = cuda.Device(0).make_context()
        if loads:
            assert cuda.module_from_buffer(cubin).get_function("k") is not None
        else:
            with pytest.raises(cuda.RuntimeError) as info:
                cuda.module_from_buffer(cubin)
            assert str(info.value) == ("cuModuleLoadDataEx failed: no kernel image is available for "
                                       "execution on the device")
        ctx.pop()


@pytest.mark.parametrize("target, version, cc, error", [
    ("sm_80", "8.8", "9.0", None), ("sm_90a", "8.8", "9.0", None), ("sm_90a", "8.8", "10.0", "a PTX JIT compilation failed"),
    ("sm_100f", "8.8", "10.3", None), ("sm_103a", "8.8", "10.0", "a PTX JIT compilation failed"),
    ("sm_90", "9.1", "9.0", "the provided PTX was compiled with an unsupported toolchain."),
])
def test_fake_jit_accepts_only_targets_the_device_runs(monkeypatch, target, version, cc, error):
    with fake_driver(monkeypatch, cc) as cuda:
        ctx = cuda.Device(0).make_context()
        if error is None:
            cuda.module_from_buffer(tiny_ptx(target, version).encode() + b"\0").get_function("k")
        else:
            with pytest.raises(cuda.LogicError, match=f"cuModuleLoadDataEx failed: {error}"):
                cuda.module_from_buffer(tiny_ptx(target, version).encode())
        ctx.pop()


def _launch(cuda, function, value: int, **kwargs):
    out = cuda.mem_alloc(4)
    function(out, np.uint32(value), **{"block": (32, 1, 1), "grid": (1, 1), **kwargs})
    return out


def test_fake_launch_limits(monkeypatch):
    with fake_driver(monkeypatch, "9.0") as cuda:
        ctx = cuda.Device(0).make_context()
        fn = cuda.module_from_buffer(tiny_ptx("sm_90").encode()).get_function("k")
        for kwargs in ({"block": (1025, 1, 1)}, {"shared": 48 * 1024 + 16}):
            with pytest.raises(cuda.LogicError, match="cuLaunchKernel failed: invalid argument"):
                _launch(cuda, fn, 1, **kwargs)
        with pytest.raises(cuda.LogicError, match="cuFuncSetAttribute failed: invalid argument"):
            fn.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, 228 * 1024)
        fn.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024)
        _launch(cuda, fn, 1, shared=100 * 1024)
        with pytest.raises(cuda.LogicError, match="invalid argument"):
            fn(np.uint32(1), block=(32, 1, 1), grid=(1, 1))          # wrong parameter size
        clustered = tiny_ptx("sm_90").replace(".visible .entry k(.param .u64 p, .param .u32 n)",
                                              ".visible .entry k(.param .u64 p, .param .u32 n) .reqnctapercluster 2, 1, 1")
        fn2 = cuda.module_from_buffer(clustered.encode()).get_function("k")
        with pytest.raises(cuda.LogicError, match="cluster size"):
            _launch(cuda, fn2, 1, grid=(3, 1))
        _launch(cuda, fn2, 1, grid=(2, 1))
        ctx.pop()


def test_fake_sticky_error_after_a_trap(monkeypatch):
    with fake_driver(monkeypatch, "9.0") as cuda:
        ctx = cuda.Device(0).make_context()
        fn = cuda.module_from_buffer(tiny_ptx("sm_90").encode()).get_function("k")
        out = _launch(cuda, fn, 5)
        host = np.zeros(1, np.uint32)
        cuda.memcpy_dtoh(host, out)
        assert host[0] == 5
        _launch(cuda, fn, 7)                       # traps; reported at the next call, and every one after
        for call in (lambda: cuda.Event(), lambda: cuda.mem_alloc(16), lambda: cuda.memcpy_dtoh(host, out)):
            with pytest.raises(cuda.LogicError, match="an illegal instruction was encountered"):
                call()
        ctx.pop()
        ctx.detach()
        ctx = cuda.Device(0).make_context()        # a new context works, the old module does not
        with pytest.raises(cuda.LogicError, match="invalid device context"):
            fn.module.get_function("k")
        fn = cuda.module_from_buffer(tiny_ptx("sm_90").encode()).get_function("k")
        out = _launch(cuda, fn, 9)
        cuda.memcpy_dtoh(host, out)
        assert host[0] == 9
        ctx.pop()


def _python(code: str, **env) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": f"{FAKE}{os.pathsep}{ROOT}", **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)


def test_a_context_left_behind_aborts_the_process_as_pycuda_does():
    proc = _python("import pycuda.driver as d; d.init(); d.Device(0).make_context(); print('made')")
    assert "made" in proc.stdout
    assert proc.returncode != 0 and ABORT_MESSAGE in proc.stderr


def test_the_harness_leaves_an_empty_context_stack():
    proc = _python("from conformance.harness.devices import open_device\n"
                   "dev, why = open_device('cuda'); assert dev is not None, why\n"
                   "print(dev.name, dev.compute_capability)", TCGEN05_FAKE_CUDA_CC="10.3")
    assert proc.returncode == 0, proc.stderr
    assert "NVIDIA B300 (fake driver) (10, 3)" in proc.stdout and ABORT_MESSAGE not in proc.stderr


def test_harness_device_rebuilds_its_context_after_a_trap(monkeypatch):
    from conformance.harness.device import CaseBuffers, CaseCrash
    from conformance.harness.device_cuda import PyCudaDevice

    kernel = tiny_ptx("sm_90").replace("ld.param.u64 %a, [p]; ld.param.u32 %v, [n];",
                                       "ld.param.u64 %a, [p]; ld.global.u64 %a, [%a+8]; ld.param.u32 %v, [n];")
    with fake_driver(monkeypatch, "9.0") as cuda:
        dev = PyCudaDevice(cuda)
        module = dev.load(kernel.encode())
        record = bytes(256)
        with pytest.raises(CaseCrash, match="an illegal instruction was encountered; context rebuilt"):
            dev.launch(module, "k", record * 7, [CaseBuffers(b"", 4)] * 7, (7, 1, 1), (32, 1, 1), case_ids=list("abcdefg"))
        result = dev.launch(module, "k", record * 3, [CaseBuffers(b"", 4)] * 3, (3, 1, 1), (32, 1, 1))
        assert int(result.outputs[0][0]) == 3                 # every CTA writes case 0's first word
        dev.close()
        assert cuda._STATE.stack == []


# --- the smoke execution tier through the fake ---------------------------------------------------------

def run_suite(results: Path, cc: str, *args: str, faults: str = "", cache: Path, **env) -> tuple[subprocess.CompletedProcess, dict]:
    environ = {**os.environ, "PYTHONPATH": f"{FAKE}{os.pathsep}{ROOT}", "TCGEN05_FAKE_CUDA_CC": cc,
               "TCGEN05_FAKE_CUDA_FAULTS": faults, "TCGEN05_CTS_CACHE": str(cache), **env}
    environ.pop("PYTEST_XDIST_WORKER", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--device", "cuda", "--level", "smoke",
           "-m", "execute", "--results", str(results), *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=environ, timeout=1200)
    outcomes = {}
    for path in results.glob("**/outcomes*.jsonl"):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            outcomes[rec["case_id"]] = rec
    return proc, outcomes


def runs_on(target: str, cc: tuple[int, int]) -> bool:
    """The fake driver's own rule (tests/fake_cuda/pycuda/driver.py ``_runs_on``), not the harness's gating."""
    body = target[3:]
    suffix = body[-1] if body[-1] in "af" else ""
    digits = body[:-1] if suffix else body
    major, minor = int(digits[:-1]), int(digits[-1])
    return cc == (major, minor) if suffix == "a" else (cc[0] == major and cc[1] >= minor if suffix == "f"
                                                         else cc >= (major, minor))


@pytest.fixture(scope="session")
def assembly_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fake-cuda-cache")


@needs_ptxas
@pytest.mark.slow
@pytest.mark.parametrize("cc, load", [("8.0", "cubin"), ("9.0", "cubin"), ("9.0", "ptx"), ("10.0", "cubin"),
                                      ("10.3", "cubin"), ("12.0", "cubin")])
def test_smoke_execution_tier_through_the_fake_driver(tmp_path, assembly_cache, cc, load):
    from generators.variants import cases

    proc, outcomes = run_suite(tmp_path / "r", cc, "-n", "2", "--load", load, "conformance", cache=assembly_cache)
    assert ABORT_MESSAGE not in proc.stdout + proc.stderr
    assert "worker crashed" not in proc.stdout.lower() and "restarting" not in proc.stderr.lower()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    device = tuple(int(x) for x in cc.split("."))
    legal = {c.case_id: c for c in cases("smoke") if c.legal}
    ran = 0
    for case_id, rec in outcomes.items():
        case = legal.get(case_id.removesuffix(".numerics"))
        if case is None:
            continue                                   # probes and other non-case tests
        if not any(runs_on(t, device) for t in case.targets):
            assert rec["status"] == "NotSupported", (case_id, rec["status"], rec.get("details", "")[:300])
            continue
        if case.family == "sync.hazard":             # hazard reports need the simulator (docs/hazards.md)
            assert rec["status"] == "NotSupported" and "needs the simulated device" in rec["details"], rec
            continue
        assert rec["status"] == "Pass", (case_id, rec["status"], rec.get("details", "")[:500])
        ran += 1
    expected = sum(1 for c in legal.values() if c.family != "sync.hazard"
                   and any(runs_on(t, device) for t in c.targets))
    assert ran >= expected > 0


# --- injected driver faults land on the right cases only ----------------------------------------------

def kernel_cases() -> tuple[str, dict[str, str]]:
    """The smoke mma.ws kernel with the most cases (one launch, many cases) and each case's record
    digest (the fake driver's fault key)."""
    from collections import Counter

    from generators.inputs import SEMANTIC, case_record, synthesize
    from generators.variants import cases

    legal = [c for c in cases("smoke", families=["mma.ws"]) if c.legal]
    kernel = Counter(c.kernel.name for c in legal).most_common(1)[0][0]
    picked = [c for c in legal if c.kernel.name == kernel]
    digests = {c.case_id: hashlib.sha256(case_record(c, synthesize(c, SEMANTIC))[28:]).hexdigest()[:16] for c in picked}
    assert len(picked) >= 4 and len(set(digests.values())) == len(picked)
    return kernel, digests


@needs_ptxas
@pytest.mark.slow
@pytest.mark.parametrize("fault, status", [("trap", "Crash"), ("hang", "Timeout")])
def test_a_faulting_kernel_fails_its_own_case_only(tmp_path, assembly_cache, fault, status):
    kernel, digests = kernel_cases()
    culprit = sorted(digests)[2]
    proc, outcomes = run_suite(tmp_path / "r", "10.0", "--family", "mma.ws", "conformance/test_execute_mma.py",
                               faults=f"{fault}:{kernel}:{digests[culprit]}", cache=assembly_cache,
                               TCGEN05_CTS_HOST_TIMEOUT="1")
    assert ABORT_MESSAGE not in proc.stderr
    assert outcomes[culprit]["status"] == status, outcomes[culprit]
    others = {k: v["status"] for k, v in outcomes.items() if k != culprit and v["status"] != "NotSupported"}
    assert others and set(others.values()) == {"Pass"}, others
    assert set(digests) - {culprit} <= set(others)


@needs_ptxas
@pytest.mark.slow
def test_out_of_memory_is_retried_and_then_reported_as_a_resource_error(tmp_path, assembly_cache):
    args = ("--family", "mma.ws", "conformance/test_execute_mma.py")
    proc, outcomes = run_suite(tmp_path / "once", "10.0", *args, faults="oom-once:1", cache=assembly_cache)
    assert proc.returncode == 0 and {r["status"] for r in outcomes.values()} <= {"Pass", "NotSupported"}
    proc, outcomes = run_suite(tmp_path / "always", "10.0", *args, faults="oom-over:1", cache=assembly_cache)
    ran = [r for r in outcomes.values() if r["status"] != "NotSupported"]
    assert ran and all(r["status"] == "Fail" and "ResourceError" in r["details"] and "out of memory" in r["details"]
                       for r in ran), [(r["case_id"], r["status"]) for r in ran][:5]
    assert ABORT_MESSAGE not in proc.stderr


def test_a_launcher_that_ends_badly_is_reported():
    proc = _python("import os, signal\n"
                   "from conformance.harness.devices import open_device\n"
                   "dev, why = open_device('cuda'); assert dev is not None, why\n"
                   "os.kill(dev._proc.pid, signal.SIGABRT); dev._proc.wait()\n"
                   "print('killed')", TCGEN05_FAKE_CUDA_CC="9.0")
    assert proc.returncode == 0 and "killed" in proc.stdout, proc.stderr
    assert "tcgen05-cts: the CUDA launcher process ended with status -6" in proc.stderr


def test_an_in_memory_stand_in_driver_is_driven_in_the_worker():
    """A driver a test puts in sys.modules (no file a launcher process could import) runs in-process."""
    code = ("import sys, types, importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('pycuda.driver', {str(FAKE / 'pycuda' / 'driver.py')!r})\n"
            f"sys.path.insert(0, {str(FAKE)!r})\n"
            "import pycuda._cubin\n"
            "drv = types.ModuleType('pycuda.driver'); sys.modules['pycuda.driver'] = drv\n"
            "exec(open(spec.origin).read(), drv.__dict__)\n"
            "from conformance.harness.devices import open_device\n"
            "dev, why = open_device('cuda'); assert dev is not None, why\n"
            "print(type(dev).__name__, dev.compute_capability)")
    proc = _python(code, TCGEN05_FAKE_CUDA_CC="12.0", PYTHONPATH=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "PyCudaDevice (12, 0)" in proc.stdout and ABORT_MESSAGE not in proc.stderr
