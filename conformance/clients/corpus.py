"""The corpus: every configuration, by name (``CORPUS``), from the kernel modules of this package."""

from __future__ import annotations

from conformance.clients.model import ClientKernel

#: Kernel modules of this package, each with ``configs() -> list[ClientKernel]``.
MODULES = ("kernels_basic", "kernels_dot", "kernels_dot_scaled", "kernels_gluon")


def load_corpus() -> list[ClientKernel]:
    """All configurations (imports Triton: call only when :func:`build.triton_or_skip_reason` is "")."""
    import importlib

    kernels: list[ClientKernel] = []
    for name in MODULES:
        kernels.extend(importlib.import_module(f"conformance.clients.{name}").configs())
    names = [k.name for k in kernels]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"corpus names expect to be unique, but got duplicates {duplicates}")
    return kernels
