"""Opening the device for ``--device cuda|sim|none``.

``--device cuda`` drives the GPU from a launcher process the worker replaces after a sticky error
or a hang (:mod:`conformance.harness.cuda_launcher`); ``TCGEN05_CTS_CUDA_LAUNCHER=in-process``
opens CUDA in the worker itself (:mod:`conformance.harness.device_cuda`), as does a ``pycuda.driver``
stand-in placed in ``sys.modules`` without a file (a launcher process could not import it).

The backends import the device layer (:mod:`conformance.harness.device`); this module imports the
backends, lazily, so a machine without PyCUDA never imports it and imports go one way only.
"""

from __future__ import annotations

import os
import sys

from conformance.harness.device import Device, NullDevice


def _in_memory_driver() -> bool:
    """Whether ``pycuda.driver`` is a module placed in ``sys.modules`` with no file behind it (a test's
    stand-in driver): a launcher process could not import it, so the worker drives it itself."""
    module = sys.modules.get("pycuda.driver")
    return module is not None and not getattr(module, "__file__", None)


def open_device(kind: str) -> tuple[Device | None, str]:
    """The device for ``--device kind``, or ``(None, why)`` when there is none."""
    if kind == "none":
        return NullDevice(), "--device none"
    if kind == "cuda":
        if os.environ.get("TCGEN05_CTS_CUDA_LAUNCHER") == "in-process" or _in_memory_driver():
            from conformance.harness.device_cuda import open_cuda_device

            return open_cuda_device()
        from conformance.harness.cuda_launcher import open_isolated_device

        return open_isolated_device()
    if kind == "sim":
        try:
            from conformance.harness.device_sim import open_sim_device
        except ImportError as exc:
            return None, f"the simulated device is not available ({exc})"
        return open_sim_device()
    raise ValueError(f"--device expects cuda, sim or none, but got {kind!r}")
