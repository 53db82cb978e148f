"""The corpus: every configuration, by name (``CORPUS``), from the kernel modules of this package.

Three real clients feed it: Triton 3.9 (Triton and Gluon kernels), CUTLASS 4.2 (CuTe kernels,
compiled with the wheels' nvcc) and FlashInfer 0.7.2.post1 (its CUDA sources, same nvcc).  Each module belongs to one client; a client whose toolchain is
missing contributes no kernels, and :func:`skip_reasons` says why.
"""

from __future__ import annotations

from conformance.clients.model import ClientKernel

#: Kernel modules of this package, each with ``configs() -> list[ClientKernel]``, and their client.
MODULES = {"kernels_basic": "triton", "kernels_dot": "triton", "kernels_dot_scaled": "triton",
           "kernels_gluon": "triton", "kernels_cute": "cutlass",
           "kernels_flashinfer": "flashinfer"}
CLIENTS = ("triton", "cutlass", "flashinfer")
#: Corpus kernels with a documented real race (docs/sim.md "Hazard checker", triage of client
#: reports), name -> the hazard rule the simulator reports for it.  The tier and ``clients crossref``
#: run them with that rule waived; the tier checks that a run without the waiver reports exactly it.
TRIAGED_RACES = {"dot.tf32_tma_m128n64k32": "smem-overwrite"}


def skip_reasons() -> dict[str, str]:
    """Per client, "" when its toolchain is here, else the reason its kernels skip."""
    from conformance.clients.build import triton_or_skip_reason
    from conformance.clients.cute_build import cute_or_skip_reason
    from conformance.clients.flashinfer_build import flashinfer_or_skip_reason

    return {"triton": triton_or_skip_reason(), "cutlass": cute_or_skip_reason(),
            "flashinfer": flashinfer_or_skip_reason()}


def load_corpus(clients: tuple[str, ...] | None = None) -> list[ClientKernel]:
    """The configurations of ``clients`` (default: every client whose toolchain is here)."""
    import importlib

    if clients is None:
        clients = tuple(c for c, reason in skip_reasons().items() if not reason)
    kernels: list[ClientKernel] = []
    for name, client in MODULES.items():
        if client in clients:
            kernels.extend(importlib.import_module(f"conformance.clients.{name}").configs())
    names = [k.name for k in kernels]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"corpus names expect to be unique, but got duplicates {duplicates}")
    return kernels
