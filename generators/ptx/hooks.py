"""Hooks into the reference model that other work fills in.

1. **TMEM allocation rules** (§9.7.16.7.1; checker of the TMEM issue). Every generated kernel
   lists the Tensor Memory operations it performs, in program order, as :class:`TmemOp` values
   (``generators.ptx.kernel.tmem_ops(spec)``); :func:`check_tmem_ops` hands that sequence to the
   checker ``reference.tmem.check_allocation_ops`` when the module provides it, and returns its
   verdict (None when the sequence is legal). Until then it returns None and
   :func:`allocation_checker` is None, so callers can say the check was skipped.

2. **Input synthesis** (§9.7.16.10.6 layouts; shared-memory layout issue): operand images are
   packed by ``reference.smem_layout.pack_operand`` when it exists; ``generators.inputs`` calls
   :func:`layout_packer` and falls back to raw bytes sized by the layout otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TmemOp:
    """One Tensor Memory operation of a kernel.

    ``op``: ``alloc``, ``dealloc``, ``relinquish_alloc_permit``, ``ld``, ``st``, ``wait::ld``,
    ``wait::st``, ``mma``, ``cp``, ``shift``, ``commit``, ``fence``; ``cta_group``: its
    ``.cta_group`` (None for instructions without one); ``ncols``: nCols of alloc/dealloc;
    ``by``: who issues it ("warp 0", "thread 0", "all warps", "warp 0 of each CTA").
    """

    op: str
    cta_group: int | None
    ncols: int | None
    by: str


def _lookup(module: str, name: str) -> Callable | None:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    fn = getattr(mod, name, None)
    return fn if callable(fn) else None


def allocation_checker() -> Callable | None:
    """The TMEM issue's checker ``reference.tmem.check_allocation_ops(ops)`` if present."""
    return _lookup("reference.tmem", "check_allocation_ops")


def check_tmem_ops(ops: tuple[TmemOp, ...]):
    """Run the allocation-rules checker on a kernel's op sequence; None = legal or no checker."""
    checker = allocation_checker()
    if checker is None:
        return None
    return checker(ops)


def layout_packer() -> Callable | None:
    """The layout issue's ``reference.smem_layout.pack_operand`` if present."""
    return _lookup("reference.smem_layout", "pack_operand")
