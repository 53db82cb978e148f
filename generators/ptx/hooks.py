"""Hooks into the reference model that other work fills in.

1. **TMEM allocation rules** (§9.7.16.7.1; checker of the TMEM issue). Every generated kernel
   lists the Tensor Memory operations it performs, in program order, as :class:`TmemOp` values
   (``generators.ptx.kernel.tmem_ops(spec)``); :func:`check_tmem_ops` translates them into the
   checker's vocabulary (:func:`checker_ops`: ``("alloc", ncols, cta_group, warp)``,
   ``("dealloc", name, ncols, cta_group, warp)``, ``("relinquish", cta_group, warp)``,
   ``(op, cta_group)`` for mma/cp/shift/commit, ``(op,)`` for ld/st/wait/fence) and hands them
   to ``reference.tmem_alloc.check_allocations`` when that module exists, returning its verdict
   (None when the sequence is legal). Without it, :func:`allocation_checker` is None and
   :func:`check_tmem_ops` returns None, so callers can say the check was skipped.

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
    """The TMEM issue's checker ``reference.tmem_alloc.check_allocations(ops)`` if present."""
    return _lookup("reference.tmem_alloc", "check_allocations")


def _warp(by: str) -> int:
    return int(by.split()[1]) if by.startswith("warp ") and by.split()[1].isdigit() else 0


def checker_ops(ops: tuple[TmemOp, ...]) -> list[tuple]:
    """TmemOp sequence -> the checker's tuple vocabulary (one CTA; allocations named a0, a1, ...)."""
    out: list[tuple] = []
    names: list[tuple[str, int]] = []
    for op in ops:
        if op.op == "alloc":
            names.append((f"a{len(names)}", op.ncols))
            out.append(("alloc", op.ncols, op.cta_group, _warp(op.by)))
        elif op.op == "dealloc":
            name = next((n for n, c in reversed(names) if c == op.ncols), names[-1][0] if names else "a0")
            out.append(("dealloc", name, op.ncols, op.cta_group, _warp(op.by)))
        elif op.op == "relinquish_alloc_permit":
            out.append(("relinquish", op.cta_group, _warp(op.by)))
        elif op.op in ("mma", "cp", "shift", "commit"):
            out.append((op.op, op.cta_group))
        else:                                    # ld, st, wait::ld, wait::st, fence
            out.append((op.op.split("::")[0],))
    return out


def check_tmem_ops(ops: tuple[TmemOp, ...]):
    """Run the allocation-rules checker on a kernel's op sequence; None = legal or no checker."""
    checker = allocation_checker()
    if checker is None:
        return None
    return checker(checker_ops(ops))


def layout_packer() -> Callable | None:
    """The layout issue's ``reference.smem_layout.pack_operand`` if present."""
    return _lookup("reference.smem_layout", "pack_operand")
