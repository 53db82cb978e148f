"""``tcgen05-cts doctor``: can this machine run the suite on its GPU, and what will run.

Prints the GPU, driver, PyCUDA and ptxas versions and the SASS architecture kernels are assembled
for; checks the whole GPU path on a tiny kernel (assemble for the device, load, launch, read back,
pop the context); then, per tier, what runs here and what is ``NotSupported``, with reasons.
Exit status 0 when the GPU path works, 1 when it cannot (PyCUDA missing, no GPU, no ptxas for the
device's architecture, a load or launch that fails), 2 for bad arguments.  docs/gpu.md.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections import Counter, defaultdict
from pathlib import Path

from conformance.plugin import LEVELS

#: Families each execution module runs (conformance/test_execute_*.py).
EXECUTION_FAMILIES = ("alloc", "commit", "cp", "shift", "fence", "ld", "ld.red", "st", "wait", "mma", "mma.sp",
                      "mma.ws", "mma.ws.sp", "sync", "sync.hazard", "warp.mma.sp")



def register(subparsers) -> None:
    p = subparsers.add_parser("doctor", help="check the GPU path and say what runs here, tier by tier")
    p.add_argument("--level", choices=LEVELS, default="default", help="level whose cases are counted (default: default)")
    p.add_argument("--load", choices=("cubin", "ptx"), default="cubin",
                   help="how kernels reach the GPU: ptxas cubins (default) or the driver's PTX JIT")
    p.add_argument("--ptxas", default=None, metavar="PATH", help="ptxas to use (default: discovery, as the suite does)")
    p.set_defaults(func=handler)


PROBE = """.version 7.8
.target sm_80
.address_size 64
.visible .entry tcgen05_cts_doctor(.param .u64 out)
{
  .reg .u64 %a, %o;
  .reg .u32 %t;
  ld.param.u64 %a, [out];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %o, %t, 4;
  add.u64 %a, %a, %o;
  add.u32 %t, %t, 1000;
  st.global.u32 [%a], %t;
  ret;
}
"""


def _line(label: str, text: str) -> None:
    print(f"{label + ':':20s} {text}")


def _ptxas(explicit: str | None):
    from conformance.harness.toolchain import find_ptxas

    try:
        tools = find_ptxas([explicit] if explicit else ())
    except OSError as exc:
        return None, str(exc)
    return (tools[0], "") if tools else (None, "no ptxas found (--ptxas, $TCGEN05_CTS_PTXAS, the nvidia-cuda-nvcc "
                                               "wheel: pip install -e '.[toolchain]', CUDA_HOME, PATH)")


def _assemble_probe(tool, arch: str) -> tuple[bytes | None, str]:
    """The probe kernel as the suite assembles kernels (cached, with its PTX kept beside the cubin)."""
    from conformance.harness.toolchain import Assembler, Job

    result = Assembler(tool).assemble([Job("tcgen05_cts_doctor", "sm_80", PROBE, arch)])
    result = next(iter(result.values()))
    if not result.ok or not result.cubin:
        return None, (result.diagnostics.strip().splitlines() or ["(no diagnostic)"])[-1]
    return Path(result.cubin).read_bytes(), ""


def _probe_launch(cuda, device, image: bytes) -> str:
    """Load ``image`` (cubin or PTX), launch 32 threads, read back; '' when every word is right."""
    import numpy as np

    try:
        module = device.load(image)
        fn = device._handle(module).get_function("tcgen05_cts_doctor")
        out = cuda.mem_alloc(128)
        fn(out, block=(32, 1, 1), grid=(1, 1))
        host = np.zeros(32, np.uint32)
        cuda.memcpy_dtoh(host, out)
        out.free()
    except Exception as exc:  # noqa: BLE001  (whatever the driver says is the finding)
        return f"{type(exc).__name__}: {exc}"
    if not np.array_equal(host, np.arange(1000, 1032, dtype=np.uint32)):
        return f"the probe kernel wrote {host[:4].tolist()}..., expected [1000, 1001, 1002, 1003]..."
    return ""


def _execution_tier(level: str, cc: tuple[int, int] | None, works: bool, load: str) -> None:
    from conformance.harness.execute_hazard import NEEDS_SIM
    from conformance.harness.gating import not_supported_reason, sass_arch, supported_target
    from generators.variants import cases

    runs: Counter = Counter()
    archs: dict[str, set[str]] = defaultdict(set)
    skipped: dict[str, Counter] = defaultdict(Counter)
    for case in cases(level, families=EXECUTION_FAMILIES, negatives=False):
        target = supported_target(case.targets, cc)
        if target is None:
            skipped[case.family][not_supported_reason(case.targets, cc)] += 1
        elif case.family == "sync.hazard":
            skipped[case.family][NEEDS_SIM.split(";")[0]] += 1
        else:
            runs[case.family] += 1
            archs[case.family].add(f"{target} -> {sass_arch(target, cc)}" if load == "cubin" else f"{target} PTX, JIT")
    print(f"  execute ({level})" + ("" if works or cc is None else ": would run as below, once the problems at the end are fixed"))
    for family in EXECUTION_FAMILIES:
        parts = []
        if runs[family]:
            parts.append(f"{runs[family]} run ({', '.join(sorted(archs[family]))})")
        parts += [f"{n} {reason}" for reason, n in skipped[family].most_common()]
        if parts:
            print(f"    {family:12s} " + "; ".join(parts))
    print(f"    total        {sum(runs.values())} run, {sum(sum(c.values()) for c in skipped.values())} not run")


def handler(args) -> int:
    from conformance.harness.device_cuda import open_cuda_device
    from conformance.harness.gating import device_target

    problems: list[str] = []
    tool, why_no_ptxas = _ptxas(args.ptxas)
    try:
        pycuda = importlib.import_module("pycuda")
        _line("PyCUDA", f"{getattr(pycuda, 'VERSION_TEXT', '?')} ({Path(pycuda.__file__).parent})")
    except ImportError as exc:
        pycuda = None
        _line("PyCUDA", f"not importable ({exc}): pip install -e '.[gpu]', or build it from its sdist (docs/gpu.md)")
        problems.append("PyCUDA is missing")
    device, why = (open_cuda_device() if pycuda is not None else (None, "PyCUDA is missing"))
    cc = device.compute_capability if device is not None else None
    if device is not None:
        _line("GPU", f"{device.name}, compute capability {cc[0]}.{cc[1]}")
        _line("driver", f"CUDA {device.driver_version}")
    else:
        _line("GPU", f"none usable: {why}")
        if pycuda is not None:
            problems.append(f"no usable GPU ({why})")
    _line("ptxas", f"{tool.version} ({tool.path}, found by {tool.source})" if tool else why_no_ptxas)
    _line("load", "cubin: ptxas assembles each kernel for the device's SASS architecture" if args.load == "cubin"
          else "ptx: the driver JIT-compiles each kernel's PTX (cuModuleLoadDataEx)")
    if cc is not None:
        arch = device_target(cc)
        _line("SASS architecture", f"{arch} (PTX of a baseline target), {arch}a (arch-specific), "
                                   f"{arch}f (family): docs/gpu.md")
        if args.load == "cubin":
            if tool is None:
                problems.append("no ptxas to assemble kernels")
            else:
                cubin, err = _assemble_probe(tool, arch)
                if cubin is None:
                    problems.append(f"ptxas {tool.version} cannot assemble for -arch={arch}: {err}")
                else:
                    failed = _probe_launch(device._cuda, device, cubin)
                    if failed:
                        problems.append(f"a probe kernel assembled for {arch} did not run: {failed}")
        else:
            failed = _probe_launch(device._cuda, device, PROBE.encode())
            if failed:
                problems.append(f"the driver's JIT could not run a probe kernel: {failed}")
    print("tiers:")
    print("  reference    runs (CPU only)")
    print("  assemble     " + (f"runs with ptxas {tool.version}" if tool else f"NotSupported: {why_no_ptxas}"))
    _execution_tier(args.level, cc, not problems, args.load)
    clients = [m for m in ("triton", "cutlass") if importlib.util.find_spec(m) is not None]
    if cc == (10, 0) and not problems:
        print(f"  clients      runs ({', '.join(clients) or 'no client package installed: the clients extra'})")
    else:
        print("  clients      NotSupported: needs sm_100a" + (f", found {device_target(cc)}" if cc else ", found none")
              + " (or --device sim)")
    if problems:
        print("the GPU path cannot work here: " + "; ".join(problems))
        print("(without a GPU, run the execution tier on the simulator: pytest --device sim)")
        return 1
    print("the GPU path works: a probe kernel " + ("assembled for " + device_target(cc) if args.load == "cubin"
                                                  else "JIT-compiled by the driver") + " loaded, ran and read back")
    return 0
