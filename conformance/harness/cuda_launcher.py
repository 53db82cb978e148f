"""The CUDA launcher process: each pytest worker's GPU work runs in a child process it can replace.

NVIDIA's advice for a sticky CUDA error (a trapping or faulting kernel) is to end the process that
owns the context: a new context in the same process is not guaranteed to work.  A kernel that
never finishes cannot be stopped from the host either; ending the process is what ends it.  So a
worker never opens CUDA itself.  :class:`IsolatedCudaDevice` (the harness's ``--device cuda``)
starts ``python -m conformance.harness.cuda_launcher``, which opens the GPU through PyCUDA
(:class:`conformance.harness.device_cuda.PyCudaDevice`, ``recover=False``) and serves ``load``
and ``launch`` requests over its stdin/stdout.

* A sticky error: the launcher answers ``Crash`` and exits; the next launch starts a new one.
* A kernel still running after the host timeout: the launcher answers ``Timeout`` and exits at
  once (``os._exit``: no context teardown that could wait for the kernel); the worker kills it if
  it has not gone within a few seconds.  A launcher that does not answer at all within the host
  timeout plus a margin is killed, and the launch is a ``Timeout``.
* A launcher that dies (segfault, abort) is a ``Crash`` naming its exit status and the tail of its
  stderr.
* At the end, the worker asks the launcher to pop and detach its context and exit; a launcher that
  ends with an error (PyCUDA's "context stack was not empty" abort, say) is reported on stderr.

Messages are pickled tuples, each framed by its 8-byte length.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Sequence

from conformance.harness.device import CaseBuffers, CaseCrash, CaseResourceError, CaseTimeout, LaunchResult
from conformance.harness.device_cuda import HOST_TIMEOUT_S, PyCudaDevice, close_cuda_device, open_cuda_device

ENV_MODE = "TCGEN05_CTS_CUDA_LAUNCHER"       # "in-process": --device cuda opens CUDA in the worker itself
REPLY_MARGIN_S = 30.0                          # beyond the host timeout, for the launcher to answer
EXIT_WAIT_S = 5.0


class NoDevice(Exception):
    """The launcher found no usable GPU (or no PyCUDA)."""


# --- framing --------------------------------------------------------------------------------------

def send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(fd: int, deadline: float | None = None) -> Any:
    """The next message, ``None`` at end of stream; ``TimeoutError`` past ``deadline``."""
    head = _read_exact(fd, 8, deadline)
    if head is None:
        return None
    body = _read_exact(fd, struct.unpack("<Q", head)[0], deadline)
    return None if body is None else pickle.loads(body)


# --- the worker's side ------------------------------------------------------------------------------

@dataclass
class LauncherModule:
    """A kernel image the worker loaded; (re)loaded into each launcher process on first use."""

    image: bytes
    key: int
    loaded_in: int = -1


class IsolatedCudaDevice:
    """``--device cuda``: the device layer's interface over a replaceable launcher process."""

    kind = "cuda"

    def __init__(self, host_timeout_s: float) -> None:
        self.host_timeout_s = host_timeout_s
        self.generation = 0
        self._proc: subprocess.Popen | None = None
        self._stderr: Any = None
        self._keys = 0
        self.name, self.compute_capability, self.driver_version = self._start()

    # -- the launcher process ------------------------------------------------------------------------
    def _start(self) -> tuple[str, tuple[int, int], str]:
        env = {**os.environ, ENV_MODE: "in-process",
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())}
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, "-m", "conformance.harness.cuda_launcher"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        self.generation += 1
        reply = self._request(("open",), timeout=120.0, ids=())
        if reply[0] != "ok":
            self._stop()
            raise NoDevice(reply[1])
        name, cc, driver = reply[1]
        return name, (int(cc[0]), int(cc[1])), driver

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return text[-1500:]

    def _stop(self, kill: bool = True) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            return proc.wait(EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            if kill:
                proc.send_signal(signal.SIGKILL)
            return proc.wait()

    def _request(self, message: tuple, timeout: float, ids: Sequence[str]) -> tuple:
        proc = self._proc
        try:
            send(proc.stdin, message)
            reply = receive(proc.stdout.fileno(), time.monotonic() + timeout)
        except TimeoutError:
            proc.send_signal(signal.SIGKILL)
            self._stop()
            raise CaseTimeout(ids, f"the CUDA launcher did not answer within {timeout:g} s; killed") from None
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:
            code = self._stop()
            raise CaseCrash(ids, f"the CUDA launcher process died (exit status {code}): {self._stderr_tail()}")
        return reply

    # -- device layer ----------------------------------------------------------------------------------
    def load(self, image: bytes) -> LauncherModule:
        self._keys += 1
        return LauncherModule(bytes(image), self._keys)

    def launch(self, module: LauncherModule, kernel_name: str, case_records: bytes, buffers: Sequence[CaseBuffers],
               grid, block, cluster_dims=(1, 1, 1), *, case_ids: Sequence[str] = (),
               shared_bytes: int = 0) -> LaunchResult:
        ids = list(case_ids) or [f"case {i}" for i in range(len(buffers))]
        if self._proc is None:
            self._start()
        if module.loaded_in != self.generation:
            reply = self._request(("load", module.key, module.image), timeout=600.0, ids=ids)
            if reply[0] != "ok":
                raise RuntimeError(reply[1])
            module.loaded_in = self.generation
        reply = self._request(("launch", module.key, kernel_name, bytes(case_records), list(buffers), tuple(grid),
                               tuple(block), tuple(cluster_dims), ids, int(shared_bytes)),
                              timeout=self.host_timeout_s + REPLY_MARGIN_S, ids=ids)
        kind, payload = reply
        if kind == "ok":
            return payload
        if kind in ("crash", "timeout"):
            self._stop()                       # the launcher ends itself; a new one serves the next launch
            raise (CaseCrash if kind == "crash" else CaseTimeout)(ids, payload + "; CUDA launcher process replaced")
        if kind == "resource":
            raise CaseResourceError(ids, payload)
        raise RuntimeError(payload)

    def close(self) -> None:
        """Ask the launcher to pop its context and exit; report on stderr if it ends badly."""
        proc = self._proc
        if proc is None:
            return
        try:
            send(proc.stdin, ("close",))
        except OSError:
            pass
        code = self._stop()
        if code:
            sys.stderr.write(f"tcgen05-cts: the CUDA launcher process ended with status {code}: {self._stderr_tail()}\n")


_OPENED: list[tuple[IsolatedCudaDevice | None, str]] = []


def open_isolated_device() -> tuple[IsolatedCudaDevice | None, str]:
    """This worker's launcher-backed device, opened once; ``(None, why)`` where there is none."""
    if not _OPENED:
        from conformance.harness.device import pin_worker_gpu

        pin_worker_gpu()                       # the launcher inherits CUDA_VISIBLE_DEVICES
        try:
            _OPENED.append((IsolatedCudaDevice(HOST_TIMEOUT_S), ""))
            atexit.register(close_isolated_device)
        except (NoDevice, CaseCrash, CaseTimeout) as exc:
            _OPENED.append((None, str(exc)))
    return _OPENED[0]


def close_isolated_device() -> None:
    if _OPENED and _OPENED[0][0] is not None:
        _OPENED[0][0].close()


# --- the launcher process ---------------------------------------------------------------------------

def serve(inp: BinaryIO, out: BinaryIO) -> None:

    device: PyCudaDevice | None = None
    modules: dict[int, Any] = {}
    fd = inp.fileno()
    while True:
        message = receive(fd)
        if message is None or message[0] == "close":
            break
        op = message[0]
        if op == "open":
            device, why = open_cuda_device(recover=False)
            send(out, ("ok", (device.name, device.compute_capability, device.driver_version)) if device else ("none", why))
            continue
        try:
            if op == "load":
                modules[message[1]] = device.load(message[2])
                send(out, ("ok", None))
            elif op == "launch":
                _, key, name, records, buffers, grid, block, cluster, ids, shared = message
                send(out, ("ok", device.launch(modules[key], name, records, buffers, grid, block, cluster,
                                               case_ids=ids, shared_bytes=shared)))
            else:
                send(out, ("error", f"the CUDA launcher expects open, load, launch or close, but got {op!r}"))
        except (CaseCrash, CaseTimeout) as exc:
            send(out, ("crash" if isinstance(exc, CaseCrash) else "timeout", str(exc).split(" (cases:")[0]))
            sys.stderr.flush()
            os._exit(0)                        # the context is beyond repair, or still running a kernel
        except CaseResourceError as exc:
            send(out, ("resource", str(exc).split(" (cases:")[0].removeprefix("ResourceError: ")))
        except Exception as exc:  # noqa: BLE001  (the worker reports it as the launch's failure)
            send(out, ("error", f"{type(exc).__name__}: {exc}"))
    close_cuda_device()


def main() -> int:
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
