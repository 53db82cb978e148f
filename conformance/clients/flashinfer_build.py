"""FlashInfer's standalone CUDA kernels (the third real client): sources from the PyPI package, PTX from nvcc.

``flashinfer-python`` ships the ``.cu`` files its JIT compiles at run time under
``flashinfer/data/csrc``.  The corpus takes them from the installed distribution's files
(``importlib.metadata``), never importing ``flashinfer`` (whose dependencies include torch): CI installs
the wheel alone, ``pip install --no-deps flashinfer-python==0.7.2.post1`` (``.ci/run``).  nvcc is the
CuTe tier's (the ``nvidia-cuda-nvcc`` wheel, :mod:`conformance.clients.cute_build`), its PTX cached under
``$TCGEN05_CTS_CACHE/cute`` keyed by the source text, the flags and the wheel versions.
:func:`flashinfer_or_skip_reason` says why the family cannot run (missing package or compiler).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

FLASHINFER_PIN = "0.7.2.post1"
DISTRIBUTION = "flashinfer-python"
INSTALL = f"pip install --no-deps {DISTRIBUTION}=={FLASHINFER_PIN}"
#: nvcc flags of every FlashInfer source, as its JIT passes them (``flashinfer/jit/cake_vsa.py``: C++17)
FLAGS = ("-DNDEBUG",)


class FlashInferMissing(RuntimeError):
    """The package (or one of its sources) is not here; the message says how to install it."""


@lru_cache(maxsize=1)
def _csrc() -> tuple[Path | None, str]:
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None, f"NotSupported: the FlashInfer client family needs the {DISTRIBUTION}=={FLASHINFER_PIN} sources ({INSTALL})"
    if dist.version != FLASHINFER_PIN:
        return None, (f"NotSupported: the FlashInfer client family is pinned to {DISTRIBUTION}=={FLASHINFER_PIN}, "
                      f"found {dist.version} ({INSTALL})")
    root = Path(dist.locate_file("flashinfer/data/csrc"))
    if not root.is_dir():
        return None, f"NotSupported: {DISTRIBUTION} {dist.version} has no flashinfer/data/csrc directory ({INSTALL})"
    return root, ""


def flashinfer_or_skip_reason() -> str:
    """"" when the sources and nvcc are here, else the reason (starts with ``NotSupported:``)."""
    from conformance.clients.cute_build import cute_or_skip_reason

    return _csrc()[1] or cute_or_skip_reason()


def source(relative: str) -> str:
    """The text of ``flashinfer/data/csrc/<relative>`` of the installed package."""
    root, reason = _csrc()
    if root is None:
        raise FlashInferMissing(reason)
    path = root / relative
    if not path.is_file():
        raise FlashInferMissing(f"{DISTRIBUTION} {FLASHINFER_PIN} expects flashinfer/data/csrc/{relative}, but it is missing")
    return path.read_text()


@dataclass(frozen=True)
class FlashInferEntry:
    """A kernel of one FlashInfer source, compiled unmodified: a corpus ``ClientKernel.fn``.
    ``shared`` is the dynamic shared memory its launcher asks for (``flashinfer/jit/cake_vsa.py``
    ``Profile.smem_bytes``)."""

    source: str              # path under flashinfer/data/csrc
    name: str                # the extern "C" __global__ entry
    shared: int
    arch: int = 100

    @property
    def __name__(self) -> str:          # the corpus listings read fn.__name__
        return self.name


def compile_client(kernel):
    """A corpus ``ClientKernel`` of language ``cuda`` as :class:`conformance.clients.model.Compiled`:
    nvcc's PTX of the unmodified source, its entry, the launcher's dynamic shared memory, no scratch
    parameters (the kernel takes exactly its own parameters)."""
    from conformance.clients.cute_build import compile_ptx
    from conformance.clients.model import Compiled

    entry = kernel.fn
    ptx = compile_ptx(source(entry.source), f"sm_{entry.arch}a", FLAGS)
    return Compiled(ptx, entry.name, entry.shared, kernel.num_warps, kernel.num_ctas, 0, 1, 0, 1, (),
                    f"{DISTRIBUTION} {FLASHINFER_PIN}", scratch_params=False)
