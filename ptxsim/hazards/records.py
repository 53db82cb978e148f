"""The records the rule families keep of tcgen05 operations: a ``tcgen05.ld``/``st``'s cells per
warp, a thread's chain of pipelined issues, and an issued ``mma``/``cp``/``shift`` (its effect)."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.common import PIPELINED

QUARTERS, COLUMNS = 4, 512      # the Tensor Memory shadow's shape per CTA (TmemRules._init_tmem)


class _WarpCells:
    """Where a tcgen05.ld/st by full warps goes, per warp (§9.7.16.8.1): CTA ``cta_w``, lane
    quarter ``q_w`` and column span ``lo..hi``, expanded to one entry per (warp, column of its
    span): ``cc``, ``qq``, ``kk``, ``rd`` (the warp's first thread) and ``rep`` (the warp's position)."""

    def __init__(self, m, s, cta, lanes, cols, col_rows=None) -> None:
        self.lanes, self.cols = lanes, cols
        nw = s.n // 32                                   # tcgen05.ld/st: whole warps (checked at issue)
        self.cta = np.asarray(cta).reshape(-1)
        starts = np.arange(nw) * 32
        self.warps = m.warp_of[s.idx[starts]]
        self.cta_w = self.cta[starts]
        self.q_w = lanes[starts, 0] // 32
        if col_rows is None:
            c3 = cols.reshape(nw, -1)
            self.lo, self.hi = c3.min(axis=1), c3.max(axis=1)
        else:                       # each row's (lowest, highest) column: a warp's span is theirs over its 32 rows
            self.lo, self.hi = col_rows[0].reshape(nw, 32).min(axis=1), col_rows[1].reshape(nw, 32).max(axis=1)
        width = self.hi - self.lo + 1
        self.rep = rep = np.repeat(np.arange(nw), width)
        self.kk = np.arange(rep.size) - np.repeat(np.cumsum(width) - width, width) + self.lo[rep]
        self.cc = self.cta_w[rep]
        self.qq = self.q_w[rep]
        self.rd = (s.idx[starts] - m.lane_of[s.idx[starts]])[rep]
        #: (cc, qq, kk) and (cc, kk) as indices into the raveled shadow arrays ``[cta, quarter,
        #: column]`` and ``[cta, column]``: one index array gathers several times faster than three
        self.flat = (self.cc * QUARTERS + self.qq) * COLUMNS + self.kk
        self.flat_columns = self.cc * COLUMNS + self.kk

    def exact(self):
        """(cta, quarter, column, warp) of the columns the warps touch exactly: a warp's first row
        when all 32 rows of every warp hold the same columns (the 32x32b shapes), else every cell."""
        nw = self.warps.size
        c3 = self.cols.reshape(nw, 32, -1)
        first = c3[:, 0, :]
        if (c3 == first[:, None, :]).all():
            kk = first.ravel()
            rep = np.repeat(np.arange(nw), first.shape[1])
        else:
            kk = self.cols.ravel()
            rep = np.repeat(np.arange(nw), self.cols.size // nw)
        return self.cta_w[rep], self.q_w[rep], kk, self.warps[rep]

    def cell_keys(self, positions: np.ndarray) -> np.ndarray:
        """Flat (cta, lane, column) keys of the cells of the warps at ``positions``."""
        rows = (np.asarray(positions)[:, None] * 32 + np.arange(32)).ravel()
        ctab = np.broadcast_to(self.cta[rows][:, None], self.lanes[rows].shape)
        return ((ctab.astype(np.int64) * 128 + self.lanes[rows]) * 512 + self.cols[rows]).ravel()


class _Chain:
    """Which of a thread's earlier asynchronous operations execute before its next one, of kind
    ``later``, through pipelined pairs (``pairs``, default :data:`PIPELINED`) alone: ``A`` does when ``A -> X``
    is a pair for some operation ``X`` issued after it that does (the next one itself included)."""

    def __init__(self, hist, later: str, pairs=PIPELINED) -> None:
        self.hist = hist
        self.pairs = pairs
        self.before: dict[int, frozenset] = {}    # serial -> kinds of the ordered operations after it
        self.pos = len(hist)
        self.kinds = {later}

    def ordered(self, serial: int, kind: str) -> bool:
        while self.pos > 0 and self.hist[self.pos - 1][0] > serial:     # walk back to ``serial``, once
            self.pos -= 1
            sq, kd = self.hist[self.pos]
            self.before[sq] = frozenset(self.kinds)
            if any((kd, k) in self.pairs for k in self.kinds):
                self.kinds.add(kd)
        return any((kind, k) in self.pairs for k in self.before.get(serial, self.kinds))


class _Effect:
    """An issued mma/cp/shift: who issued it, when, what the issuer knew, what it reads."""

    __slots__ = ("thread", "index", "time", "vc", "ctas", "cols", "granules", "epoch", "tmem_reads", "kind", "serial")

    def __init__(self, thread, index, time, vc, ctas, cols, epoch, kind: str, serial: int) -> None:
        self.thread, self.index, self.time, self.vc, self.ctas, self.cols = thread, index, time, vc, ctas, cols
        self.epoch = epoch              # the issuer's epoch at the issue
        self.granules: list[np.ndarray] = []
        self.tmem_reads: list[tuple[int, int, int]] = []     # (cta, lo, hi) read at completion (an MMA's)
        self.kind = kind                                     # ASYNC_KINDS key: "mma", "cp", "cp.4x256b", "shift"
        self.serial = serial                                 # its place in the thread's issues (op_hist)
