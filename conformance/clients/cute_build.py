"""Compiling CUTLASS/CuTe C++ with the PyPI wheels, cached on disk (the second real client).

Toolchain, all from wheels of the ``clients``/``toolchain`` extras:

* ``nvidia-cutlass`` (4.2.0.0): CuTe/CUTLASS headers under ``cutlass_library/source/include``;
* ``nvidia-cuda-nvcc``: ``nvidia/cu13/bin/nvcc`` (with cicc, cudafe++, ptxas);
* ``nvidia-cuda-cccl``: libcu++ headers under ``nvidia/cu13/include/cccl``;
* the system ``g++`` as host compiler.

:func:`run_host` compiles a host program and returns what it prints (encoding oracles; with
``host_only`` the system g++ compiles it alone against the same headers, a third of nvcc's CPU time);
:func:`compile_ptx` compiles device code to PTX for ``sm_100a``/``sm_103a`` (kernels the
simulator runs).  Outputs are cached under ``$TCGEN05_CTS_CACHE/cute`` (default
``.cts-cache/cute``), keyed by the SHA-256 of the source, the flags and the wheel versions, so
editing a program or upgrading a wheel recompiles.  :func:`cute_or_skip_reason` says why the
CuTe tier cannot run (missing wheel or compiler); tests skip with that reason.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CUTLASS_PIN = "4.2.0.0"
COMPILE_TIMEOUT_S = 600


class CuteBuildError(RuntimeError):
    """nvcc refused a program; the message carries the compiler's diagnostics."""


@dataclass(frozen=True)
class CuteToolchain:
    nvcc: Path
    includes: tuple[Path, ...]
    versions: str            # wheel versions, part of every cache key

    def flags(self, arch: str) -> list[str]:
        inc = [f"-I{p}" for p in self.includes]
        return ["-std=c++17", f"-arch={arch}", "--expt-relaxed-constexpr", "-w", *inc]


def _site_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""


@lru_cache(maxsize=1)
def _find() -> tuple[CuteToolchain | None, str]:
    cutlass = _site_dir("cutlass_library")
    if cutlass is None or not (cutlass / "source" / "include" / "cute").is_dir():
        return None, (f"NotSupported: the CuTe client tier needs the nvidia-cutlass=={CUTLASS_PIN} wheel "
                      "(pip install -e '.[clients]')")
    nvidia = _site_dir("nvidia")
    cu13 = None
    for root in ([nvidia] if nvidia else []):
        for cand in sorted(root.glob("cu*")):
            if (cand / "bin" / "nvcc").exists():
                cu13 = cand
    if cu13 is None:
        return None, "NotSupported: the CuTe client tier needs nvcc from the nvidia-cuda-nvcc wheel (toolchain extra)"
    cccl = cu13 / "include" / "cccl"
    if not cccl.is_dir():
        return None, "NotSupported: the CuTe client tier needs the nvidia-cuda-cccl wheel's headers (clients extra)"
    if shutil.which("g++") is None:
        return None, "NotSupported: the CuTe client tier needs a host C++ compiler (g++) on PATH"
    versions = ";".join(f"{d}={_version(d)}" for d in ("nvidia-cutlass", "nvidia-cuda-nvcc", "nvidia-cuda-cccl"))
    tc = CuteToolchain(cu13 / "bin" / "nvcc", (cutlass / "source" / "include", cccl, cu13 / "include"), versions)
    return tc, ""


def cute_or_skip_reason() -> str:
    """"" when CuTe programs can be compiled here, else the reason (starts with ``NotSupported:``)."""
    return _find()[1]


def toolchain() -> CuteToolchain:
    tc, reason = _find()
    if tc is None:
        raise CuteBuildError(reason)
    return tc


def cache_dir() -> Path:
    return Path(os.environ.get("TCGEN05_CTS_CACHE", ROOT / ".cts-cache")) / "cute"


def _key(source: str, what: str, flags: list[str], tc: CuteToolchain) -> str:
    h = hashlib.sha256()
    for part in (what, source, " ".join(flags), tc.versions):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _host_only_cmd(tc: CuteToolchain, extra: tuple[str, ...]) -> list[str]:
    """g++ straight on the CUDA C++ source (no ``__CUDACC__``): CuTe's layout algebra and encoders are
    host code, so the program prints the same; nvcc would also run its device front end over every
    CuTe header (about 3x the CPU time of a cold compile)."""
    return [shutil.which("g++") or "g++", "-std=c++17", "-O0", "-w", "-x", "c++",
            *[f"-I{p}" for p in tc.includes], *extra]


def _compile(source: str, what: str, arch: str, extra: tuple[str, ...], suffix: str) -> Path:
    """Compile ``source`` once into the cache; return the cached output path (atomic)."""
    tc = toolchain()
    flags = _host_only_cmd(tc, extra) if what == "host-only" else tc.flags(arch) + list(extra)
    key = _key(source, what, flags, tc)
    out = cache_dir() / f"{key}{suffix}"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # one compile per key across parallel test workers: the others wait, then find the output
    with open(out.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not out.exists():
                _compile_into(out, source, what, arch, flags, suffix, tc)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out


def _compile_into(out: Path, source: str, what: str, arch: str, flags: list[str], suffix: str,
                  tc: CuteToolchain) -> None:
    with tempfile.TemporaryDirectory(prefix="cts-cute-") as tmp:
        src = Path(tmp) / "prog.cu"
        src.write_text(source)
        target = Path(tmp) / f"out{suffix}"
        mode = ["-ptx"] if what == "ptx" else []
        cmd = [*flags, str(src)] if what == "host-only" else [str(tc.nvcc), *flags, *mode, str(src)]
        cmd += ["-o", str(target)]
        env = dict(os.environ, PATH=f"{tc.nvcc.parent}{os.pathsep}{os.environ.get('PATH', '')}")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, env=env)
        if proc.returncode != 0:
            raise CuteBuildError(f"{'g++' if what == 'host-only' else 'nvcc'} ({what}, {arch}) failed with exit {proc.returncode}:\n"
                                 f"{proc.stderr.strip()[-4000:]}")
        tmp_out = out.with_suffix(out.suffix + f".{os.getpid()}.tmp")
        shutil.copyfile(target, tmp_out)
        if what.startswith("host"):
            tmp_out.chmod(0o755)
        os.replace(tmp_out, out)


def run_host(source: str, arch: str = "sm_100a", extra: tuple[str, ...] = (), host_only: bool = False) -> str:
    """Compile (cached) and run a host program; return its stdout.  The printed text is cached too.
    ``host_only``: compile with g++ alone (:func:`_host_only_cmd`), for programs without device code."""
    exe = _compile(source, "host-only" if host_only else "host", arch, extra, "")
    printed = exe.with_suffix(".out")
    if printed.exists():
        return printed.read_text()
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    if proc.returncode != 0:
        raise CuteBuildError(f"host program {exe.name} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    tmp = printed.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(proc.stdout)
    os.replace(tmp, printed)
    return proc.stdout


def compile_ptx(source: str, arch: str = "sm_100a", extra: tuple[str, ...] = ()) -> str:
    """Compile (cached) device code to PTX text for ``arch`` (``sm_100a``, ``sm_103a``)."""
    return _compile(source, "ptx", arch, extra, ".ptx").read_text()


PROGRAM_DIR = Path(__file__).resolve().parent / "cute"


#: the pieces every family's header uses (includes, shared-memory staging, the accumulator epilogue)
COMMON_HEADER = "common.cuh"


@dataclass(frozen=True)
class CuteProgram:
    """One CuTe kernel family: ``cute/common.cuh``, a header of this package (``cute/<header>``) and the instantiations,
    compiled together to one PTX module for ``sm_<arch>a`` (one nvcc run per family)."""

    family: str
    header: str
    parts: tuple[str, ...]
    arch: int = 100

    def source(self) -> str:
        shared = (PROGRAM_DIR / COMMON_HEADER).read_text()
        return shared + "\n" + (PROGRAM_DIR / self.header).read_text() + "\n" + "\n\n".join(self.parts) + "\n"

    def entry(self, name: str) -> "CuteEntry":
        return CuteEntry(self, name)


@dataclass(frozen=True)
class CuteEntry:
    """A kernel (``extern "C"`` entry) of a :class:`CuteProgram`: a corpus ``ClientKernel.fn``."""

    program: CuteProgram
    name: str

    @property
    def __name__(self) -> str:          # the corpus' cache key and listings read fn.__name__
        return self.name


#: nvcc flags of every corpus program: asserts off (no ``__assertfail`` calls in the PTX)
PROGRAM_FLAGS = ("-DNDEBUG",)


def compile_program(program: CuteProgram) -> str:
    """The family's PTX (cached by source text, flags and wheel versions)."""
    return compile_ptx(program.source(), f"sm_{program.arch}a", PROGRAM_FLAGS)


def compile_client(kernel):
    """A corpus ``ClientKernel`` of language ``cute`` as :class:`conformance.clients.model.Compiled`:
    its family's PTX, its ``extern "C"`` entry, static shared memory plus ``options["dynamic_shared"]`` bytes of
    dynamic shared memory (default 0), no scratch parameters
    (a CUDA C++ kernel takes exactly its own parameters)."""
    from conformance.clients.model import Compiled

    entry = kernel.fn
    shared = int(kernel.options.get("dynamic_shared", 0))     # extern __shared__ bytes (gemm_k96.cuh)
    return Compiled(compile_program(entry.program), entry.name, shared, kernel.num_warps, kernel.num_ctas, 0, 1, 0, 1, (),
                    f"nvidia-cutlass {_version('nvidia-cutlass')}", scratch_params=False)
