"""tcgen05.shift.down: rows of 32-byte elements move down one row (§9.7.16.9.3, shape .31x256b).

Text: "shifting of 32-byte elements downwards across all the rows, except the last, by one row";
the lane of ``taddr`` is aligned to 32; ``.cta_group::2`` shifts in both CTAs of the pair.
Model: the matrix is the 32 lanes ``L .. L+31`` (one warp quarter) x 8 columns (256 bits) from
``taddr`` (lane L, column C). Rows 0..30 (the ".31" of the implicit shape) move to rows 1..31:
lane L+k+1 receives what lane L+k held, so the old last row is overwritten and the old row 0
is duplicated into row 1. Row 0 afterwards: spec question ``Q-SHIFT-ROW0`` (the text does not
say): ``keeps`` (the pick: its content stays) or ``zero`` (cleared). Cases compare it only when the
reading was chosen (``--reading``, a probe); otherwise it is :func:`undefined_rows`.
"""

from __future__ import annotations

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import is_explicit, resolve
from reference.tmem import COLUMNS, TmemAddress, memories_for, split_address

SECTION = "9.7.16.9.3"
SHIFT_ROWS = 32                 # the matrix: one warp quarter of lanes
SHIFT_COLUMNS = 8               # 32-byte elements = 256 bits = 8 cells
SHIFT_UNDEFINED_ROWS = (0,)     # rows whose content after the shift the text does not define


def shift_source_rows(reading: str | None = None) -> np.ndarray:
    """Row (0..31) each row of the matrix holds after the shift; -1: zero. Rows r >= 1 take r - 1;
    row 0 per spec question ``Q-SHIFT-ROW0`` (``keeps``: 0, ``zero``: -1)."""
    first = -1 if resolve("Q-SHIFT-ROW0", reading) == "zero" else 0
    return np.concatenate([[first], np.arange(SHIFT_ROWS - 1)]).astype(np.int64)


def undefined_rows(reading: str | None = None) -> tuple[int, ...]:
    """Rows a case must not compare: row 0 unless ``Q-SHIFT-ROW0``'s reading was chosen."""
    return () if reading is not None or is_explicit("Q-SHIFT-ROW0") else SHIFT_UNDEFINED_ROWS


def check_shift(taddr) -> TmemAddress:
    """The address rules of tcgen05.shift: lane aligned to 32, the 8 columns in bounds."""
    base = taddr if isinstance(taddr, TmemAddress) else split_address(taddr)
    if base.lane % 32:
        raise SpecError(SECTION, "lane alignment", expects_but_got("lane of taddr", "a multiple of 32", base.lane))
    if base.column + SHIFT_COLUMNS > COLUMNS:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got(
            "columns of tcgen05.shift", f"column + 8 <= {COLUMNS}", base.column))
    return base


def shift_down(tmem, taddr, *, cta_group: int = 1, reading: str | None = None) -> None:
    """``tcgen05.shift.cta_group::G.down [taddr]`` on one CTA's memory or a pair (::2: both);
    ``reading``: of spec question ``Q-SHIFT-ROW0`` (None = the reading in force)."""
    base = check_shift(taddr)
    lanes = slice(base.lane, base.lane + SHIFT_ROWS)
    cols = slice(base.column, base.column + SHIFT_COLUMNS)
    for memory in memories_for(tmem, cta_group):
        block = memory.cells[lanes, cols].copy()
        src = shift_source_rows(reading)
        memory.cells[lanes, cols] = np.where((src < 0)[:, None], 0, block[np.maximum(src, 0)])
