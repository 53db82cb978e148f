"""Happens-before for the hazard checker: vector clocks over a cluster's threads (the package
docstring explains the two clocks ``vc`` and ``vt``)."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.common import _rows, _uniform


class Clocks:
    """Vector clocks of a machine's threads over their cluster (module docstring).

    Columns ``[0, D)`` are thread epochs (cluster-local thread ``rank * ntid + tid``), the columns
    after them commit counts per warp: ``tcgen05.commit`` number ``c`` of warp ``w`` is known to
    thread ``t`` when ``vc[t, D + w] >= c``; the committing warp itself learns it only from the
    mbarrier.
    """

    def __init__(self, m) -> None:
        self.D = m.cluster_size * m.ntid
        self.lt = (m.rank_of * m.ntid + m.tid_of).astype(np.int64)
        self.own = np.ones(m.T, dtype=np.int32)
        self.commits = np.zeros(m.T // 32 + m.ncta + 1, dtype=np.int32)     # per warp
        self.width = self.D + -(-self.D // 32)
        self.vc = np.zeros((m.T, self.width), dtype=np.int32)
        self.vc[np.arange(m.T), self.lt] = 1
        # np.zeros, not np.zeros_like: the allocator's zeroed pages instead of writing every zero
        self.vt = np.zeros(self.vc.shape, dtype=self.vc.dtype)          # what tcgen05.fence::after_thread_sync made visible
        self.vt_pending = np.zeros(self.vc.shape, dtype=self.vc.dtype)  # acquired, waiting for an after_thread_sync
        self.tfence = np.zeros(m.T, dtype=np.int32)   # epoch covered by the last before_thread_sync
        self.fresh = np.zeros(m.T, dtype=bool)        # acquired something since the last after_thread_sync

    def payload(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(vc, vt) released by threads ``idx`` together (max over them), then their epochs advance."""
        idx = np.asarray(idx)
        vc = self.vc[_rows(idx)].max(axis=0)
        vt_rows = self.vt[idx].copy()
        vt_rows[np.arange(idx.size), self.lt[idx]] = self.tfence[idx]
        vt = vt_rows.max(axis=0)
        self.own[idx] += 1
        self.vc[idx, self.lt[idx]] = self.own[idx]
        return vc, vt

    def payload_groups(self, idx: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`payload` of threads ``idx`` per group (their CTA or cluster ``groups``): the groups,
        and their (vc, vt) rows."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size > 1 and (np.diff(groups) < 0).any():
            order = np.argsort(groups, kind="stable")
            idx, groups = idx[order], groups[order]
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        rows = _rows(idx)
        size = _uniform(starts, idx.size)
        if size:                    # equal groups (whole CTAs): a reshape is faster than reduceat
            vc = self.vc[rows].reshape(starts.size, size, -1).max(axis=1)
            vt = self.vt[rows].reshape(starts.size, size, -1).max(axis=1)
        else:
            vc = np.maximum.reduceat(self.vc[rows], starts, axis=0)
            vt = np.maximum.reduceat(self.vt[rows], starts, axis=0)
        # a thread's own column carries its last before_thread_sync (never below what vt holds there)
        g = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, idx.size]))
        lt = self.lt[idx]
        vt[g, lt] = np.maximum(vt[g, lt], self.tfence[idx])
        self.own[idx] += 1
        self.vc[idx, lt] = self.own[idx]
        return groups[starts], vc, vt

    def acquire_groups(self, idx: np.ndarray, groups: np.ndarray, vc: np.ndarray, vt: np.ndarray,
                       ordered: bool = False) -> None:
        """:meth:`acquire` of threads ``idx`` (ascending), each from the release of its group:
        ``vc[groups[i]]``, ``vt[groups[i]]``."""
        rows = _rows(idx)
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        size = _uniform(starts, idx.size) if isinstance(rows, slice) else 0
        if not size:
            self.acquire(idx, vc[groups], vt[groups], ordered)
            return
        keys = groups[starts]
        pv, pt = vc[keys][:, None, :], vt[keys][:, None, :]
        n = starts.size
        for arr, p in ((self.vt, pt),) * ordered + ((self.vc, pv), (self.vt_pending, pt)):
            view = arr[rows].reshape(n, size, -1)
            np.maximum(view, p, out=view)
        self.fresh[rows] = True

    def acquire(self, idx: np.ndarray, vc: np.ndarray, vt: np.ndarray, ordered: bool = False) -> None:
        """Threads ``idx`` synchronize with a release carrying ``(vc, vt)``; ``ordered``: the
        synchronization itself orders tcgen05 operations (Q-SYNC-FENCE ``acquire-orders``)."""
        rows = _rows(np.asarray(idx))
        if ordered:
            if isinstance(rows, slice):
                np.maximum(self.vt[rows], vt, out=self.vt[rows])
            else:
                self.vt[rows] = np.maximum(self.vt[rows], vt)
        if isinstance(rows, slice):
            np.maximum(self.vc[rows], vc, out=self.vc[rows])
            np.maximum(self.vt_pending[rows], vt, out=self.vt_pending[rows])
        else:
            self.vc[rows] = np.maximum(self.vc[rows], vc)
            self.vt_pending[rows] = np.maximum(self.vt_pending[rows], vt)
        self.fresh[rows] = True

    def before_thread_sync(self, idx: np.ndarray) -> None:
        self.tfence[idx] = self.own[idx]
        self.own[idx] += 1
        self.vc[idx, self.lt[idx]] = self.own[idx]

    def after_thread_sync(self, idx: np.ndarray) -> None:
        rows = _rows(idx[self.fresh[idx]])
        if isinstance(rows, slice):
            np.maximum(self.vt[rows], self.vt_pending[rows], out=self.vt[rows])
        elif rows.size:
            self.vt[rows] = np.maximum(self.vt[rows], self.vt_pending[rows])
        self.fresh[rows] = False
