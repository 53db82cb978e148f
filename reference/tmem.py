"""Tensor Memory: cells, addresses and who may touch which lanes (PTX ISA §9.7.16.1, §9.7.16.8.1).

Per CTA (``sm_100a``/``sm_100f``, §9.7.16.1): 128 lanes (rows) × 512 columns of 32-bit cells.
A ``cta_group::2`` operation touches the Tensor Memory of both CTAs of a CTA pair (§9.7.16.5.1):
:class:`TensorMemory` is one CTA's, a pair is a tuple of two (index = ``%cluster_ctarank & 1``).

Address (§9.7.16.1.1)::

    31            16 15             0
   +----------------+----------------+
   |   lane index   |  column index  |
   +----------------+----------------+

Access restriction of ``tcgen05.ld``/``.st`` (§9.7.16.8.1, Table 46): warp ``w`` of a warpgroup
(``w = warp_id % 4``) reaches lanes ``32*w .. 32*w+31`` only; every warp reaches every column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got

LANES = 128
COLUMNS = 512
CELL_BITS = 32
LANES_PER_WARP = 32          # one quarter of the lanes per warp of a warpgroup (§9.7.16.8.1)
SECTION_ADDRESS = "9.7.16.1.1"
SECTION_ACCESS = "9.7.16.8.1"


@dataclass(frozen=True)
class TmemAddress:
    """A Tensor Memory address split into its fields (§9.7.16.1.1)."""

    lane: int
    column: int

    def __post_init__(self) -> None:
        check_cell(self.lane, self.column)

    @property
    def value(self) -> int:
        """The 32-bit address ``lane << 16 | column``."""
        return tmem_address(self.lane, self.column)

    def offset(self, lanes: int = 0, columns: int = 0) -> TmemAddress:
        """The address ``lanes`` rows down and ``columns`` columns right (checked in bounds)."""
        return TmemAddress(self.lane + lanes, self.column + columns)


def check_cell(lane: int, column: int) -> None:
    """Raise SpecError unless (lane, column) names a cell of one CTA's Tensor Memory (§9.7.16.1)."""
    if not isinstance(lane, (int, np.integer)) or not 0 <= lane < LANES:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got("lane", f"0 <= lane < {LANES}", lane))
    if not isinstance(column, (int, np.integer)) or not 0 <= column < COLUMNS:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got("column", f"0 <= column < {COLUMNS}", column))


def tmem_address(lane: int, column: int) -> int:
    """Encode ``lane << 16 | column`` (§9.7.16.1.1)."""
    check_cell(lane, column)
    return (int(lane) << 16) | int(column)


def split_address(address: int) -> TmemAddress:
    """Decode a 32-bit Tensor Memory address into lane and column (§9.7.16.1.1)."""
    if not isinstance(address, (int, np.integer)) or not 0 <= address < 1 << 32:
        raise SpecError(SECTION_ADDRESS, "Tensor Memory Addressing", expects_but_got("address", "a 32-bit unsigned value", address))
    return TmemAddress(int(address) >> 16, int(address) & 0xFFFF)


def warp_quarter(warp_id: int) -> int:
    """Which quarter of the lanes warp ``warp_id`` of the CTA reaches: ``warp_id % 4`` (§9.7.16.8.1)."""
    if not isinstance(warp_id, (int, np.integer)) or warp_id < 0:
        raise SpecError(SECTION_ACCESS, "Access restrictions", expects_but_got("warp id", "a non-negative integer", warp_id))
    return int(warp_id) % 4


def accessible_lanes(warp_id: int) -> range:
    """Lanes warp ``warp_id`` may reach with tcgen05.ld/st: ``32*(w%4) .. +31`` (§9.7.16.8.1 table)."""
    q = warp_quarter(warp_id)
    return range(LANES_PER_WARP * q, LANES_PER_WARP * (q + 1))


def check_warp_access(warp_id: int, lanes) -> None:
    """Raise SpecError if warp ``warp_id`` would touch a lane outside its quarter (§9.7.16.8.1)."""
    allowed = accessible_lanes(warp_id)
    bad = sorted({int(lane) for lane in lanes if int(lane) not in allowed})
    if bad:
        raise SpecError(SECTION_ACCESS, "Access restrictions", expects_but_got(
            f"lanes reached by warp {warp_id} (warp {warp_quarter(warp_id)} of its warpgroup)",
            f"lanes {allowed.start}-{allowed.stop - 1}", f"lane {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")))


class TensorMemory:
    """One CTA's Tensor Memory: ``cells[lane, column]`` are uint32 (§9.7.16.1).

    A plain state container for the simulator and the tests; instructions are functions in
    :mod:`reference.tmem_fragments`, :mod:`reference.tmem_cp` and :mod:`reference.tmem_shift`.
    Fresh memory is filled with ``fill`` (default 0); real hardware leaves it undefined.
    """

    def __init__(self, fill: int = 0) -> None:
        self.cells = np.full((LANES, COLUMNS), fill, dtype=np.uint32)

    def read(self, lane: int, column: int) -> int:
        check_cell(lane, column)
        return int(self.cells[lane, column])

    def write(self, lane: int, column: int, value: int) -> None:
        check_cell(lane, column)
        self.cells[lane, column] = np.uint32(int(value) & 0xFFFFFFFF)

    def copy(self) -> TensorMemory:
        other = TensorMemory()
        other.cells = self.cells.copy()
        return other


def cta_pair(fill: int = 0) -> tuple[TensorMemory, TensorMemory]:
    """The Tensor Memories of a CTA pair, even CTA first (§9.7.16.5.1)."""
    return TensorMemory(fill), TensorMemory(fill)


def memories_for(tmem, cta_group: int) -> tuple[TensorMemory, ...]:
    """Normalize ``tmem`` (one memory or a pair) to the CTAs a ``cta_group`` operation touches.

    ``cta_group::1``: the issuing CTA's memory (a pair: its first element). ``cta_group::2``: both
    memories of the pair (§9.7.16.9.2, §9.7.16.9.3).
    """
    if cta_group not in (1, 2):
        raise SpecError("9.7.16.5", "Table 46", expects_but_got(".cta_group", "::1 or ::2", cta_group))
    pair = (tmem,) if isinstance(tmem, TensorMemory) else tuple(tmem)
    if cta_group == 1:
        return pair[:1]
    if len(pair) != 2:
        raise SpecError("9.7.16.5.1", "CTA Pair", expects_but_got("Tensor Memories for .cta_group::2", "two (a CTA pair)", len(pair)))
    return pair
