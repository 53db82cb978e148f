"""Operands in shared memory, read the way the tensor core does: decode the 64-bit descriptor
(``reference.smem_descriptor``), pass it through the ``smem_desc`` fault hook, and read the tile
with ``reference.smem_image.read`` from the *decoded* fields (§9.7.16.3-4).

Shared address ``a`` of CTA ``c`` is byte ``c * m.smem_bytes + (a - SHARED_BASE)`` of ``m.smem``;
the image handed to the reader is the CTA's whole shared memory at its real addresses, so
swizzle phases come from the real address bits.
"""

from __future__ import annotations

import numpy as np

from ptxsim.memory.global_memory import SHARED_BASE
from reference.smem_descriptor import SmemDescriptor
from reference.smem_image import SmemImage, read


def cta_image(m, cta: int) -> SmemImage:
    """CTA ``cta``'s shared memory as a :class:`SmemImage` at its shared addresses: a view of the
    machine's bytes, not a copy (the image is read at once, before anything writes shared memory)."""
    lo = cta * m.smem_bytes
    return SmemImage(SHARED_BASE, memoryview(m.smem[lo:lo + m.smem_bytes]))


def decode_desc(m, raw: int, *, operand: str, kind, instr: str, cta: int, major: str = "K") -> SmemDescriptor:
    """Decoded descriptor after the ``smem_desc`` hook (ctx: operand, raw, kind, major, instr, cta)."""
    desc = SmemDescriptor.decode(int(raw) & 0xFFFF_FFFF_FFFF_FFFF)
    return m.faults.apply("smem_desc", desc, operand=operand, raw=int(raw), kind=kind, major=major, instr=instr, cta=cta)


def read_tile(m, cta: int, desc: SmemDescriptor, mn: int, k: int, dtype: str, major: str,
              kind: str | None = None, instr: str = "") -> np.ndarray:
    """The ``mn x k`` codes (uint64) the descriptor selects in CTA ``cta``'s shared memory (hook
    ``smem_units`` on the linear unit addresses when a fault is active on it)."""
    units = None
    if m.faults.active("smem_units"):
        def units(linear, unit):
            return m.faults.apply("smem_units", linear, unit=unit, desc=desc, major=major, dtype=dtype, kind=kind,
                                  instr=instr, cta=cta)
    if m.hz is not None and m.hz.effect is not None:      # the hazard checker records what the async proxy reads
        inner = units

        def units(linear, unit):
            linear = linear if inner is None else inner(linear, unit)
            m.hz.async_units(cta, linear)
            return linear
    return read(cta_image(m, cta), desc, mn, k, dtype, major, kind=kind, units=units)
