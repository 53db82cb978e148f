"""ptxas / nvdisasm discovery, versions, and cached batched assembly.

Discovery order (issue 6): an explicit path (``--ptxas``), ``$TCGEN05_CTS_PTXAS``, the
``nvidia-cuda-nvcc`` wheel (``nvidia/cu*/bin/ptxas``), ``$CUDA_HOME/bin``, then ``PATH``.
nvdisasm likewise (``$TCGEN05_CTS_NVDISASM``, wheel ``nvidia-cuda-nvdisasm``, CUDA_HOME, PATH).

Assembly is content-addressed: the key of a job is sha256(PTX text, target, tool version,
flags). Results (accepted or not, diagnostics, SASS opcodes) are JSON files under the cache
directory (``$TCGEN05_CTS_CACHE`` or ``~/.cache/tcgen05-cts``), cubins are stored by content
hash; every write is atomic (temp file + ``os.replace``), so pytest-xdist workers can share the
cache. Misses are assembled in batches: many PTX files per ptxas process (ptxas links them into
one cubin); when a batch fails, the files named by the diagnostics are set aside and the rest
re-run, bisecting when nothing is attributable.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.harness import sass

ENV_PTXAS, ENV_NVDISASM, ENV_CACHE = "TCGEN05_CTS_PTXAS", "TCGEN05_CTS_NVDISASM", "TCGEN05_CTS_CACHE"
CACHE_FORMAT = 2               # 2: key has the SASS architecture; cubins keep their PTX beside them
CLAIM_TIMEOUT_S = 900          # a claim older than this is abandoned work


@dataclass(frozen=True)
class Tool:
    """A found executable: ``path`` and its ``version`` (e.g. ``13.0.88``), ``source`` says how."""

    name: str
    path: str
    version: str
    source: str

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


def _wheel_candidates(name: str) -> list[str]:
    out: list[str] = []
    try:
        import nvidia  # the namespace package of the NVIDIA wheels
    except ImportError:
        return out
    for root in list(getattr(nvidia, "__path__", [])):
        out += sorted(glob.glob(os.path.join(root, "cu*", "bin", name)), reverse=True)
        out += sorted(glob.glob(os.path.join(root, "cuda_nvcc", "bin", name)))
    return out


def _candidates(name: str, env: str, explicit: str | None) -> list[tuple[str, str]]:
    cands: list[tuple[str, str]] = []
    if explicit:
        cands.append((explicit, "option"))
    if os.environ.get(env):
        cands.append((os.environ[env], env))
    cands += [(p, "wheel") for p in _wheel_candidates(name)]
    if os.environ.get("CUDA_HOME"):
        cands.append((os.path.join(os.environ["CUDA_HOME"], "bin", name), "CUDA_HOME"))
    which = shutil.which(name)
    if which:
        cands.append((which, "PATH"))
    return cands


_VERSION_RE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_version_cache: dict[tuple[str, float], str] = {}


def tool_version(path: str) -> str:
    """``13.0.88`` from ``<tool> --version``; raises OSError if it cannot run."""
    key = (path, os.path.getmtime(path))
    if key not in _version_cache:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        m = _VERSION_RE.search(out.stdout + out.stderr)
        if not m:
            raise OSError(f"{path} --version expects 'release X.Y, VX.Y.Z', but got {out.stdout.strip()[:80]!r}")
        _version_cache[key] = m.group(2)
    return _version_cache[key]


def find_tool(name: str, explicit: str | None = None) -> Tool | None:
    """First working ``name`` (``ptxas``/``nvdisasm``) in discovery order, or None."""
    env = ENV_PTXAS if name == "ptxas" else ENV_NVDISASM
    if explicit and not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
        raise OSError(f"--{name} expects an executable {name}, but got {explicit!r}")
    for path, source in _candidates(name, env, explicit):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            try:
                return Tool(name, os.path.abspath(path), tool_version(path), source)
            except (OSError, subprocess.SubprocessError):
                if source == "option":
                    raise
    return None


def find_ptxas(explicit: Sequence[str] = ()) -> list[Tool]:
    """The ptxas toolchains to use: every explicit path, else the first one discovered."""
    if explicit:
        return [find_tool("ptxas", p) for p in explicit]  # type: ignore[misc]
    tool = find_tool("ptxas")
    return [tool] if tool else []


def cache_dir() -> Path:
    return Path(os.environ.get(ENV_CACHE) or Path.home() / ".cache" / "tcgen05-cts")


@dataclass(frozen=True)
class Job:
    """One kernel to assemble: entry ``name``, PTX ``target`` (its ``.target``), PTX text, and the
    SASS architecture ``arch`` given to ``ptxas -arch`` (the target itself when empty).

    The execution tier assembles for the device that runs the kernel (``sm_80`` PTX as ``sm_90``
    SASS on an H100: ``conformance.harness.gating.sass_arch``); the assembly tier for the target.
    """

    name: str
    target: str
    ptx: str
    arch: str = ""

    @property
    def sass(self) -> str:
        """The ``-arch`` value."""
        return self.arch or self.target

    @property
    def key(self) -> tuple[str, ...]:
        """Result key: ``(name, target)``, plus the SASS architecture when it is not the target."""
        return (self.name, self.target) if self.sass == self.target else (self.name, self.target, self.sass)


@dataclass
class Result:
    """Outcome of one job: accepted?, ptxas diagnostics, SASS opcode mnemonics, cubin path."""

    name: str
    target: str
    ok: bool
    diagnostics: str = ""
    opcodes: list[str] = field(default_factory=list)
    cubin: str | None = None
    cached: bool = False

    def has_tensor_mma(self) -> bool:
        return sass.has_tensor_mma(self.opcodes)


def ptx_beside(cubin: Path) -> Path:
    """Where the PTX a cached cubin was assembled from is kept (``<sha256>.ptx.json``:
    ``{"modules": [ptx, ...]}``, one entry per PTX file ptxas linked into it). A test double of
    the driver (tests/fake_cuda) executes a loaded cubin by running this PTX on the simulator."""
    return cubin.with_suffix(".ptx.json")


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


_DIAG_RE = re.compile(r"^ptxas (?P<file>[^,\n]+), line (?P<line>\d+); (?P<sev>\w+)\s*: (?P<msg>.*)$")
_FUNC_RE = re.compile(r"Function '(?P<func>[^']+)'")


class Assembler:
    """Cached, batched ptxas (and optional nvdisasm) for one toolchain and flag set."""

    def __init__(self, ptxas: Tool, nvdisasm: Tool | None = None, cache: Path | None = None,
                 flags: Sequence[str] = (), batch_size: int = 64, workers: int = 1) -> None:
        self.ptxas, self.nvdisasm = ptxas, nvdisasm
        self.cache = Path(cache) if cache else cache_dir()
        self.flags, self.batch_size, self.workers = tuple(flags), batch_size, max(1, workers)
        self.stats = {"hits": 0, "assembled": 0, "ptxas_runs": 0}
        self._lock = threading.Lock()

    # -- keys and cache ----------------------------------------------------------------------
    def key(self, job: Job) -> str:
        h = hashlib.sha256()
        for part in (str(CACHE_FORMAT), self.ptxas.version, " ".join(self.flags), job.target, job.sass,
                     self.nvdisasm.version if self.nvdisasm else "-", job.ptx):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def _result_path(self, key: str) -> Path:
        return self.cache / "results" / key[:2] / f"{key}.json"

    def lookup(self, job: Job) -> Result | None:
        path = self._result_path(self.key(job))
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if data.get("cubin") and not os.path.exists(data["cubin"]):
            return None
        return Result(**{**data, "cached": True})

    def _store(self, job: Job, result: Result) -> None:
        data = {k: v for k, v in asdict(result).items() if k != "cached"}
        _atomic_write(self._result_path(self.key(job)), json.dumps(data, sort_keys=True).encode())

    # -- assembly ------------------------------------------------------------------------------
    def assemble(self, jobs: Iterable[Job], optional: Iterable[Job] = ()) -> dict[tuple[str, ...], Result]:
        """Results keyed by :attr:`Job.key`; cache hits first, misses in batches per (target, SASS arch).

        Several processes (pytest-xdist workers) may share the cache: each miss is *claimed*
        (a file created with O_EXCL under ``claims/``) before it is assembled. ``optional``
        jobs (look-ahead) claimed by another process are left to it; required ones are waited
        for (until their result appears or the claiming process is gone).
        """
        results: dict[tuple[str, str], Result] = {}
        mine: dict[str, list[Job]] = {}
        waiting: list[Job] = []
        seen: set[tuple[str, str]] = set()
        required = list(jobs)
        for job, is_optional in [(j, False) for j in required] + [(j, True) for j in optional]:
            if job.key in seen:
                continue
            seen.add(job.key)
            hit = self.lookup(job)
            if hit is not None:
                results[job.key] = hit
                self.stats["hits"] += 1
            elif self._claim(job):
                mine.setdefault((job.target, job.sass), []).append(job)
            elif not is_optional:
                waiting.append(job)
        batches = [group[i:i + self.batch_size] for group in mine.values()
                   for i in range(0, len(group), self.batch_size)]
        if self.workers > 1 and len(batches) > 1:
            with ThreadPoolExecutor(self.workers) as pool:
                for part in pool.map(self._assemble_batch, batches):
                    results.update(part)
        else:
            for batch in batches:
                results.update(self._assemble_batch(batch))
        for job in waiting:
            results[job.key] = self._wait_for(job)
        return results

    # -- claims (cross-process work sharing) ------------------------------------------------------
    def _claim_path(self, job: Job) -> Path:
        return self.cache / "claims" / self.key(job)

    def _claim(self, job: Job) -> bool:
        path = self._claim_path(job)
        path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if not self._stale(path):
                    return False
                path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            return self.lookup(job) is None or not self._release(job)
        return False

    def _release(self, job: Job) -> bool:
        self._claim_path(job).unlink(missing_ok=True)
        return True

    @staticmethod
    def _stale(path: Path) -> bool:
        try:
            pid = int(path.read_text() or "0")
            age = time.time() - path.stat().st_mtime
        except (OSError, ValueError):
            return True
        if pid == os.getpid() or age > CLAIM_TIMEOUT_S:
            return age > CLAIM_TIMEOUT_S
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def _wait_for(self, job: Job) -> Result:
        deadline = time.time() + CLAIM_TIMEOUT_S
        while time.time() < deadline:
            hit = self.lookup(job)
            if hit is not None:
                return hit
            if not self._claim_path(job).exists() or self._stale(self._claim_path(job)):
                break
            time.sleep(0.1)
        self._release(job)
        self._claim(job)
        return self._assemble_batch([job])[job.key]

    def _run(self, jobs: list[Job], workdir: str) -> tuple[int, str, str | None, dict[str, str]]:
        files = {}
        for job in jobs:
            path = os.path.join(workdir, f"{job.name}.ptx")
            if not os.path.exists(path):
                Path(path).write_text(job.ptx)
            files[job.name] = path
        out_path = os.path.join(workdir, f"out-{len(os.listdir(workdir))}.cubin")
        cmd = [self.ptxas.path, f"-arch={jobs[0].sass}", *self.flags, *files.values(), "-o", out_path]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        with self._lock:
            self.stats["ptxas_runs"] += 1
        output = (proc.stdout + proc.stderr).replace(workdir + os.sep, "")
        return proc.returncode, output, out_path if proc.returncode == 0 else None, files

    def _attribute(self, output: str, jobs: list[Job], files: dict[str, str]) -> dict[str, list[str]]:
        by_file = {os.path.basename(path): name for name, path in files.items()}
        names = {job.name for job in jobs}
        diags: dict[str, list[str]] = {}
        for line in output.splitlines():
            m = _DIAG_RE.match(line.strip())
            name = by_file.get(os.path.basename(m.group("file"))) if m else None
            if name is None:
                fm = _FUNC_RE.search(line)
                name = fm.group("func") if fm and fm.group("func") in names else None
            if name is not None:
                diags.setdefault(name, []).append(line.strip())
        return diags

    def _assemble_batch(self, jobs: list[Job]) -> dict[tuple[str, ...], Result]:
        results: dict[tuple[str, ...], Result] = {}
        with tempfile.TemporaryDirectory(prefix="tcgen05-cts-") as workdir:
            self._settle(jobs, workdir, results)
        with self._lock:
            self.stats["assembled"] += len(jobs)
        for job in jobs:
            self._store(job, results[job.key])
            self._release(job)
        return results

    def _settle(self, jobs: list[Job], workdir: str, results: dict) -> None:
        """Assemble ``jobs`` together; files a failed run names are re-run alone (ptxas 13.5 was
        seen to report errors against innocent files of a batch after a real error in another),
        the rest re-run together; nothing attributable -> bisect."""
        pending = list(jobs)
        while pending:
            rc, output, cubin, files = self._run(pending, workdir)
            if rc == 0:
                self._accept(pending, cubin, self._attribute(output, pending, files), results)
                return
            diags = self._attribute(output, pending, files)
            suspects = [j for j in pending if any(("error" in d or "fatal" in d) for d in diags.get(j.name, []))]
            if not suspects:
                if len(pending) == 1:
                    job = pending[0]
                    results[job.key] = Result(job.name, job.target, False, output.strip())
                    return
                half = len(pending) // 2
                self._settle(pending[:half], workdir, results)
                self._settle(pending[half:], workdir, results)
                return
            for job in suspects:
                self._solo(job, workdir, results)
            pending = [j for j in pending if j not in suspects]

    def _solo(self, job: Job, workdir: str, results: dict) -> None:
        """The authoritative verdict on one file: ptxas on it alone."""
        rc, output, cubin, files = self._run([job], workdir)
        diags = self._attribute(output, [job], files)
        if rc == 0:
            self._accept([job], cubin, diags, results)
        else:
            text = "\n".join(diags.get(job.name, [])) or output.strip()
            results[job.key] = Result(job.name, job.target, False, text)

    def _accept(self, jobs: list[Job], cubin: str | None, diags: dict, results: dict) -> None:
        stored = None
        opcodes: dict[str, list[str]] = {}
        if cubin and os.path.exists(cubin):
            data = Path(cubin).read_bytes()
            stored = self.cache / "cubins" / f"{hashlib.sha256(data).hexdigest()}.cubin"
            if not stored.exists():
                _atomic_write(ptx_beside(stored), json.dumps({"modules": [j.ptx for j in jobs]}).encode())
                _atomic_write(stored, data)
            if self.nvdisasm is not None:
                opcodes = sass.opcodes_by_function(self.nvdisasm.path, str(stored))
        for job in jobs:
            results[job.key] = Result(
                job.name, job.target, True, "\n".join(diags.get(job.name, [])),
                sorted(opcodes.get(job.name, [])), str(stored) if stored else None)
