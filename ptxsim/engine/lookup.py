"""Set membership of small non-negative integers (thread, CTA and cluster numbers)."""

from __future__ import annotations

import numpy as np


def member_of(values: np.ndarray, chosen, size: int) -> np.ndarray:
    """``np.isin(values, chosen)`` for integers in ``[0, size)``: a lookup in a table of ``size``
    flags instead of ``np.isin`` (about 5 times cheaper for a batch's 8,192 threads)."""
    table = np.zeros(size, dtype=bool)
    table[chosen] = True
    return table[values]
