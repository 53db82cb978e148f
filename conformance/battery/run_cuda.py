"""Run battery cases on a CUDA GPU.

Kernels are JIT-compiled from the PTX by the driver and launched through
:class:`conformance.clients.cuda.CudaClientDevice` (``cuLaunchKernelEx`` with ``kernelParams``;
tensor maps from the driver's ``cuTensorMapEncodeTiled``).  Never through PyCUDA's parameter-buffer
launch: on an H100 that launch traps every kernel whose tensor map is a kernel parameter (docs/sim.md,
"Kernels with tensor-map parameters").  The battery's kernels bound every wait and never trap, so
one process runs them all; a case that fails anyway is recorded and the rest still run.
"""

from __future__ import annotations

import time

import numpy as np

from conformance.battery.run_sim import case_inputs, kernel_params


class CudaRunner:
    """The opened GPU (``open_cuda_device``'s backend) behind the client adapter."""

    def __init__(self, backend) -> None:
        from conformance.clients.cuda import client_device
        self.backend = backend
        self.dev = client_device(backend)
        self.modules: dict[str, object] = {}

    def describe(self) -> dict:
        b = self.backend
        return {"device": getattr(b, "name", "?"), "compute_capability": list(getattr(b, "compute_capability", ())),
                "driver_version": getattr(b, "driver_version", None),
                "launch": "cuLaunchKernelEx + kernelParams (conformance/clients/cuda.py)"}

    def run_case(self, case: dict, folder: str) -> tuple[np.ndarray | None, dict]:
        rec = {"status": "ok", "error": "", "dropped_ops": {}, "seconds": 0.0}
        allocs: dict[str, tuple[int, int]] = {}
        try:
            module = self._module(case, folder)
            for name, x in case_inputs(case, folder).items():
                n = x.size if isinstance(x, np.ndarray) else int(x)
                addr = self.dev.memory.alloc(max(n, 1))
                if isinstance(x, np.ndarray):
                    self.dev.memory.write(addr, x)
                allocs[name] = (addr, n)
            addrs = {k: v[0] for k, v in allocs.items()}
            t0 = time.perf_counter()
            self.dev.run(module, case["kernel"], kernel_params(case, addrs, self.dev.tensormap_tiled),
                         grid=tuple(case["grid"]), block=tuple(case["block"]),
                         shared_bytes=int(case.get("shared_bytes", 0)))
            rec["seconds"] = round(time.perf_counter() - t0, 4)
            out = [np.frombuffer(self.dev.memory.read(*allocs[b["name"]]), np.uint8)
                   for b in case["buffers"] if b["save"]]
            return (np.concatenate(out) if out else np.zeros(0, np.uint8)), rec
        except Exception as exc:  # noqa: BLE001  (a JIT refusal, a trap: recorded, the run goes on)
            rec.update(status="error", error=f"{type(exc).__name__}: {exc}")
            self.modules.clear()
            return None, rec
        finally:
            for addr, _ in allocs.values():
                self.dev.memory.free(addr)

    def _module(self, case: dict, folder: str):
        if case["ptx"] not in self.modules:
            with open(f"{folder}/{case['ptx']}") as f:
                self.modules[case["ptx"]] = self.dev.load(f.read())
        return self.modules[case["ptx"]]
