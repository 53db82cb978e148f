"""Tensor Memory accessed by ``tcgen05.ld``/``st`` and completed by ``tcgen05.wait`` (rules
``wait-ld``, ``wait-st``, ``tmem-race``; the ``tcgen05-fence`` and ``async-read`` reports of a
cell's ordering against its last completed writer).  The Tensor Memory shadow itself, one entry per
(CTA, lane quarter, column), lives here; the asynchronous operations (:mod:`.async_ops`) write it too."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.common import SEC_ASYNC, SEC_MBAR, SEC_PIPE, SEC_REG, SEC_SYNC, _instr, _rows, _threads
from ptxsim.hazards.records import _WarpCells


class TmemRules:
    """Mixin of :class:`~ptxsim.hazards.Hazards`: tcgen05.ld/st, tcgen05.wait and the TMEM shadow."""

    def _init_tmem(self, m) -> None:
        prog = m.prog
        # -- rule wait-ld: registers written by tcgen05.ld, per thread, until its wait::ld ------------
        n = len(prog.ld_rows)
        # tcgen05.ld executions are numbered 1, 2, ...: a register row of a thread is pending while
        # the number of the ld that wrote it is above the last number the thread waited for
        self.ld_stamp = np.zeros((max(n, 1), m.T), dtype=np.int32)   # number of the ld that wrote it
        self.ld_last = np.zeros(m.T, dtype=np.int32)                 # per thread: its latest ld
        self.ld_waited = np.zeros(m.T, dtype=np.int32)               # the ld count at its last wait::ld
        self.ld_lines: list[int] = [0]                               # ld number -> instruction index
        self.ld_any = False
        # Tensor Memory shadow per (cta, lane quarter, column): see tmem_* methods
        shape = (m.ncta, 4, 512)
        self.t_writer = np.zeros(shape, dtype=np.int64)    # thread + 1 of the last completed write
        self.t_stamp = np.zeros(shape, dtype=np.int32)     # its epoch (st) or commit count (async)
        self.t_kind = np.zeros(shape, dtype=np.int8)       # 0 none, 1 tcgen05.st, 2 mma/cp/shift
        self.t_index = np.zeros(shape, dtype=np.int32)     # instruction index of the write
        self.t_st_pending = np.zeros(shape, dtype=np.int64)  # warp + 1 of a tcgen05.st not yet waited for
        self.t_rd = np.zeros(shape, dtype=np.int64)        # warp's first thread + 1 of the last tcgen05.ld
        self.t_rd_ep = np.zeros(shape, dtype=np.int32)     # its epoch at the ld
        self.t_rd_index = np.zeros(shape, dtype=np.int32)
        self.any_rd = False
        self.ld_records: list[tuple] = []                  # (warps, cta, quarter, col lo, col hi, index)
        #: tcgen05.st not yet waited for: its cells, its line and which of its warps have not waited
        self.st_records: list[tuple[_WarpCells, int, np.ndarray]] = []
        self.any_st_pending = False                        # t_st_pending has a nonzero entry
        self._cells_memo: _WarpCells | None = None

    # -- rule wait-ld --------------------------------------------------------------------------------

    def check_regs(self, s, rows: np.ndarray, ins) -> None:
        """``ins`` (executed by ``s``) overwrites the ld-destination registers ``rows``."""
        stamps = self.ld_stamp[rows][:, s.ix]
        pend = stamps > self.ld_waited[s.ix]
        if not pend.any():
            return
        r, j = np.unravel_index(int(np.flatnonzero(pend)[0]), pend.shape)
        row = int(rows[r])
        ld = self.m.prog.instrs[self.ld_lines[int(stamps[r, j])]]
        name = self.m.prog.ld_rows[row]
        self._report("wait-ld", SEC_PIPE, ld, ins, _threads(self.m, s.idx[pend.any(axis=0)]),
                     f"register {name}, the destination of a tcgen05.ld, is overwritten before the thread's "
                     f"tcgen05.wait::ld (an anti-dependency, §{SEC_REG}; reading it is a true dependency and legal)")

    def on_ld(self, s, rows: np.ndarray, index: int) -> None:
        """tcgen05.ld by ``s`` (instruction ``index``) writes the registers ``rows``."""
        if rows.size:
            self.ld_lines.append(index)
            stamp = len(self.ld_lines) - 1
            ix = _rows(s.idx)
            if isinstance(ix, slice):
                self.ld_stamp[rows, ix] = stamp
            else:
                self.ld_stamp[np.ix_(rows, ix)] = stamp
            self.ld_last[ix] = stamp
            self.ld_any = True

    def on_wait_ld(self, s) -> None:
        if self.ld_any:
            self.ld_waited[s.ix] = len(self.ld_lines) - 1
            self.ld_any = bool((self.ld_last > self.ld_waited).any())

    def _order(self, reader: int, writers, stamps, kinds, rule_cell: str, first_index, ins, what: str,
               vc_row=None, vt_row=None) -> None:
        """Raise unless each completed write (writer thread, stamp, kind) is ordered before
        ``reader``'s tcgen05 access: through the tcgen05 clock (fence pattern), else name the gap."""
        c = self.clocks
        m = self.m
        col = np.where(kinds == 2, c.D + c.lt[writers] // 32, c.lt[writers])
        readers = np.broadcast_to(np.asarray(reader), writers.shape)
        vc = c.vc[readers, col] if vc_row is None else vc_row[col]
        vt = c.vt[readers, col] if vt_row is None else vt_row[col]
        same = (writers == readers) & (kinds == 1)
        ok_t = same | (vt >= stamps)
        if ok_t.all():
            return
        j = int(np.flatnonzero(~ok_t)[0])
        w = int(writers[j])
        reader = int(readers[j])
        first = _instr(m, int(first_index[j]))
        threads = f"{_threads(m, [w])} then {_threads(m, [reader])}"
        if "tcgen05-fence" in self.waived:
            bad = ~ok_t & (vc < stamps)
            if not bad.any():
                return
            j = int(np.flatnonzero(bad)[0])
            w, reader = int(writers[j]), int(readers[j])
            first = _instr(m, int(first_index[j]))
            threads = f"{_threads(m, [w])} then {_threads(m, [reader])}"
        if vc[j] >= stamps[j]:
            self._report("tcgen05-fence", SEC_SYNC, first, ins, threads,
                         f"{what} is ordered after the {'completed asynchronous operation' if kinds[j] == 2 else 'tcgen05.st'} "
                         "by thread synchronization alone: the pattern tcgen05.fence::before_thread_sync -> sync -> "
                         "tcgen05.fence::after_thread_sync (§9.7.16.6.4) is incomplete")
        if kinds[j] == 2:
            self._report("async-read", SEC_MBAR, first, ins, threads,
                         f"{what} reads Tensor Memory written by an asynchronous tcgen05 operation whose completion "
                         "the reading thread has not observed (tcgen05.commit -> mbarrier wait)")
        self._report(rule_cell, SEC_SYNC, first, ins, threads,
                     f"{what} accesses Tensor Memory cells another warp wrote with tcgen05.st, with no "
                     "synchronization between them")

    def _warp_cells(self, s, cta, lanes, cols, col_rows=None) -> _WarpCells:
        """The per-warp geometry of a tcgen05.ld/st by the full warps of ``s`` (cached for the
        instruction's after_ld/after_st, which get the same ``cols``)."""
        got = self._cells_memo
        if got is not None and got.cols is cols:
            return got
        got = self._cells_memo = _WarpCells(self.m, s, cta, lanes, cols, col_rows)
        return got

    def tmem_access(self, s, cta, lanes, cols, ins, what: str, write: bool, col_rows=None) -> None:
        """A tcgen05.ld (``write`` False) or tcgen05.st by the warps of ``s``: ``cta`` per row,
        ``lanes``/``cols`` ``[row, entry]``; ``col_rows``: each row's lowest and highest column,
        when the caller knows them (else they are reduced from ``cols``)."""
        m = self.m
        wc = self._warp_cells(s, cta, lanes, cols, col_rows)
        cc, qq, kk, rd, f = wc.cc, wc.qq, wc.kk, wc.rd, wc.flat
        # pending tcgen05.st (not waited for)
        same = False        # the warp's own pending tcgen05.st on these columns (a st -> st write-after-write?)
        if self.any_st_pending:
            pend = self.t_st_pending.reshape(-1)[f]
            if write:       # st -> st of one warp: compared cell by cell below (_st_over_pending_st)
                mine = pend == m.warp_of[rd] + 1
                same = bool(mine.any())
                pend = np.where(mine, 0, pend)
            if pend.any():
                j = int(np.flatnonzero(pend)[0])
                first = _instr(m, int(self.t_index[cc[j], qq[j], kk[j]]))
                self._report("wait-st", SEC_PIPE, first, ins, _threads(m, s.idx[:1]),
                             f"{what} accesses Tensor Memory cells written by a tcgen05.st before that warp's "
                             "tcgen05.wait::st")
        self._pending_ops(cc, kk, ins, what)
        if self.any_pfreed:
            self._after_peer_dealloc(cc, kk, ins, what)
        if self.any_alloc:
            fa = wc.flat_columns
            a = self.a_thread.reshape(-1)[fa]
            other = (a > 0) & (m.warp_of[np.maximum(a - 1, 0)] != m.warp_of[rd])
            if other.any():
                self._issue_order(rd[other], a[other] - 1, self.a_ep.reshape(-1)[fa][other],
                                  self.a_index.reshape(-1)[fa][other], ins, what, "tcgen05.alloc of its columns")
        if write:
            if same and self.st_records:
                self._st_over_pending_st(wc, ins)
            if self.ld_records:
                self._pending_lds(cc, qq, kk, ins, what)
            self.overwrites_async_reads(rd, cc, kk, ins, what, None)
        kinds = self.t_kind.reshape(-1)[f]
        done = kinds > 0
        if done.any():
            reader = rd[done]
            fd = f[done]
            wr = self.t_writer.reshape(-1)[fd] - 1
            same_warp = (m.warp_of[wr] == m.warp_of[reader]) & (kinds[done] == 1)
            keep = ~same_warp
            if keep.any():
                self._order(reader[keep], wr[keep], self.t_stamp.reshape(-1)[fd][keep], kinds[done][keep], "tmem-race",
                            self.t_index.reshape(-1)[fd][keep], ins, what)

    def _st_over_pending_st(self, wc: _WarpCells, ins) -> None:
        """A tcgen05.st writes cells an earlier tcgen05.st wrote that its warp has not waited for:
        asynchronous operations of one thread are unordered unless pipelined (§9.7.16.6.1), and
        st -> st is no pipelined pair (§9.7.16.6.2), so the two writes may land in either order."""
        for old, index, alive in reversed(self.st_records):     # the latest pending store first
            # the same warp (not waited since), overlapping column spans: then compare the cells themselves
            pos = np.minimum(np.searchsorted(old.warps, wc.warps), old.warps.size - 1)
            near = (old.warps[pos] == wc.warps) & alive[pos] & (old.lo[pos] <= wc.hi) & (wc.lo <= old.hi[pos])
            if not near.any():
                continue
            hit = np.isin(wc.cell_keys(np.flatnonzero(near)), old.cell_keys(pos[near]))
            if hit.any():
                r = int(np.flatnonzero(near)[int(np.flatnonzero(hit)[0]) // (hit.size // int(near.sum()))])
                self._report("wait-st", SEC_ASYNC, _instr(self.m, index), ins,
                             f"warp {int(wc.warps[r])} then {_threads(self.m, wc.rd[wc.rep == r][:1])}",
                             "tcgen05.st overwrites Tensor Memory cells an earlier tcgen05.st writes before that "
                             "warp's tcgen05.wait::st (st -> st is not pipelined, §9.7.16.6.2: a write-after-write)")

    def _pending_lds(self, cc, qq, kk, ins, what) -> None:
        for rwarps, rcta, rq, lo, hi, index in self.ld_records:
            for w, c, q_, a, b in zip(rwarps.tolist(), rcta.tolist(), rq.tolist(), lo.tolist(), hi.tolist(), strict=True):
                hit = (cc == c) & (qq == q_) & (kk >= a) & (kk <= b)
                if hit.any():
                    self._report("wait-ld", SEC_REG, _instr(self.m, index), ins, f"warp {w}",
                                 f"{what} overwrites Tensor Memory that a tcgen05.ld reads before that warp's "
                                 "tcgen05.wait::ld (an anti-dependency)")

    def after_ld(self, s, cta, lanes, cols, index: int) -> None:
        wc = self._warp_cells(s, cta, lanes, cols)
        self.ld_records.append((wc.warps, wc.cta_w, wc.q_w, wc.lo, wc.hi, index))
        self.t_rd.reshape(-1)[wc.flat] = wc.rd + 1
        self.t_rd_ep.reshape(-1)[wc.flat] = self.clocks.own[wc.rd]
        self.t_rd_index.reshape(-1)[wc.flat] = index
        self.any_rd = True

    def after_st(self, s, cta, lanes, cols, index: int) -> None:
        wc = self._warp_cells(s, cta, lanes, cols)
        cc, qq, kk, w = wc.exact()
        self.t_st_pending[cc, qq, kk] = w + 1
        self.t_index[cc, qq, kk] = index
        self.any_st_pending = True
        self.st_records.append((wc, index, np.ones(wc.warps.size, dtype=bool)))

    def wait(self, s, stores: bool) -> None:
        m = self.m
        w = m.warp_of[s.idx]
        warps = w[np.flatnonzero(np.diff(w, prepend=-1))]        # s.idx ascending: its warps, once each
        waiting = np.zeros(m.T // 32 + m.ncta + 1, dtype=bool)
        waiting[warps] = True
        if not stores:
            if self.ld_records:
                self.ld_records = [r for r in ((rw[keep], rc[keep], rq[keep], lo[keep], hi[keep], ix)
                                               for rw, rc, rq, lo, hi, ix in self.ld_records
                                               for keep in [~waiting[rw]]) if r[0].size]
            return
        if self.st_records:
            for wc, _, alive in self.st_records:
                alive &= ~waiting[wc.warps]
            self.st_records = [r for r in self.st_records if r[2].any()]
        if not self.any_st_pending:
            return
        pend = self.t_st_pending
        ctas = np.unique(m.cta_of[s.idx])
        sub = pend[ctas]
        mine = (sub > 0) & waiting[np.maximum(sub - 1, 0)]
        if mine.any():
            c_i, q_i, k_i = np.nonzero(mine)
            c_i = ctas[c_i]
            wr = pend[c_i, q_i, k_i] - 1
            first = m.warps_per_cta
            lead = (wr // first) * m.ntid + (wr % first) * 32          # the warp's first thread
            thread = np.minimum(lead, m.T - 1)
            self.t_writer[c_i, q_i, k_i] = thread + 1
            self.t_stamp[c_i, q_i, k_i] = self.clocks.own[thread]
            self.t_kind[c_i, q_i, k_i] = 1
            pend[c_i, q_i, k_i] = 0
            self.any_st_pending = bool(pend.any())
