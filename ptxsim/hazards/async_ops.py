"""The asynchronous tcgen05 operations ``mma``/``cp``/``shift`` (§9.7.16.6.1-2): their issue, their
effect at completion (``tcgen05.commit``), and how they are ordered against each other and against
other threads' tcgen05 operations, in one thread through pipelined pairs and across threads through
the fence pattern of §9.7.16.6.3 (rules ``async-write``, ``async-order``, ``tmem-overwrite``, the
cross-thread ``tmem-race``/``tcgen05-fence`` reports of :meth:`AsyncRules._issue_order`)."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.common import (
    ASYNC_KIND_NAMES,
    ASYNC_KINDS,
    PIPELINED,
    SEC_ASYNC,
    SEC_MBAR,
    SEC_PIPE,
    SEC_SYNC,
    _async_kind,
    _distinct,
    _index,
    _instr,
    _threads,
)
from ptxsim.hazards.records import _Chain, _Effect


class AsyncRules:
    """Mixin of :class:`~ptxsim.hazards.Hazards`: issued and completed mma/cp/shift."""

    def _init_async(self, m, mma_cp_in_order: bool = False) -> None:
        # Q-MMA-CP-ORDER: a tcgen05.cp may overwrite Tensor Memory an earlier tcgen05.mma of its thread reads
        # (scale factors) with the MMA's issue alone ordered before it (in-order), or only after its completion
        self.mma_cp_in_order = mma_cp_in_order
        self.pairs = PIPELINED | ({("mma", "cp"), ("mma", "cp.4x256b")} if mma_cp_in_order else set())
        shape = (m.ncta, 4, 512)
        self.t_iss = np.zeros(shape, dtype=np.int64)       # issuer + 1 of the last completed mma/cp/shift write
        self.t_iss_ep = np.zeros(shape, dtype=np.int32)    # the issuer's epoch at the issue
        self.t_akind = np.zeros(shape, dtype=np.int8)      # which one wrote it: ASYNC_KINDS code (1 mma, 2 cp, ...)
        self.t_aseq = np.zeros(shape, dtype=np.int32)      # and its serial (op_hist)
        self.op_serial = 0                                 # mma/cp/shift issues so far
        self.op_hist: dict[int, list[tuple[int, str]]] = {}   # thread -> its issues: (serial, kind)
        self.effect = None                                 # the asynchronous effect running now
        # Tensor Memory an mma read at completion (A, metadata, scale factors), per (cta, column), all lanes
        self.r_reader = np.zeros((m.ncta, 512), dtype=np.int64)   # committer + 1
        self.r_count = np.zeros((m.ncta, 512), dtype=np.int32)    # its commit count
        self.r_index = np.zeros((m.ncta, 512), dtype=np.int32)    # the reading instruction
        self.r_iss = np.zeros((m.ncta, 512), dtype=np.int64)      # issuer + 1
        self.r_iss_ep = np.zeros((m.ncta, 512), dtype=np.int32)   # the issuer's epoch at the issue
        self.any_tmem_reads = False

    def _queued(self) -> list:
        """The issued, uncompleted mma/cp/shift the checker recorded (``Pending`` with ``hz``), in queue order."""
        tc = self.m.ext.get("tcgen05")
        if tc is None or not tc.queues:
            return []
        return [p for queue in tc.queues.values() for p in queue if p.hz is not None]

    def _pending_ops(self, cc, kk, ins, what) -> None:
        """Raise when cells (cta ``cc``, column ``kk``) are written by a queued (uncompleted) mma/cp/shift."""
        for p in self._queued():
            e = p.hz
            lo, hi = e.cols
            hit = np.isin(cc, e.ctas) & (kk >= lo) & (kk < hi)
            if hit.any():
                self._report("async-write", SEC_MBAR, _instr(self.m, e.index), ins, _threads(self.m, [e.thread]),
                             f"{what} accesses Tensor Memory columns {lo}..{hi - 1} that an issued "
                             f"tcgen05.{p.kind} has not completed writing")

    def _issue_order(self, reader, issuers: np.ndarray, epochs: np.ndarray, first_index, ins, what: str,
                     done: str, race: tuple[str, str] = ("tmem-race", SEC_SYNC)) -> None:
        """Raise unless each tcgen05 operation issued by ``issuers`` at ``epochs`` (the same thread
        excepted: program order) is ordered before ``reader``'s instruction by the pattern
        fence::before_thread_sync -> synchronization -> fence::after_thread_sync (§9.7.16.6.3)."""
        c = self.clocks
        col = c.lt[issuers]
        bad = (issuers != reader) & (c.vt[reader, col] < epochs)
        if not bad.any():
            return
        j = int(np.flatnonzero(bad)[0])
        reader = int(np.broadcast_to(reader, issuers.shape)[j])
        first = _instr(self.m, int(np.broadcast_to(first_index, issuers.shape)[j]))
        threads = f"{_threads(self.m, [int(issuers[j])])} then {_threads(self.m, [reader])}"
        if c.vc[reader, col[j]] >= epochs[j]:
            self._report("tcgen05-fence", SEC_SYNC, first, ins, threads,
                         f"{what} is ordered after another thread's {done} by thread synchronization alone: the "
                         "pattern tcgen05.fence::before_thread_sync -> sync -> tcgen05.fence::after_thread_sync "
                         "(§9.7.16.6.4) is incomplete")
        self._report(race[0], race[1], first, ins, threads,
                     f"{what} is not ordered after another thread's {done} (no synchronization between them)")

    def _queued_by_others(self, thread: int, cta: int, lo: int, hi: int, ins, what: str) -> None:
        """Issued, uncompleted mma/cp/shift of other threads writing these columns: pipelined with
        ``thread``'s MMA only when their issue is ordered before it (§9.7.16.6.4.3)."""
        for p in self._queued():
            e = p.hz
            if e.thread == thread or cta not in e.ctas.tolist():
                continue
            if e.cols[0] < hi and lo < e.cols[1]:
                self._issue_order(thread, np.array([e.thread]), np.array([e.epoch]), e.index, ins, what,
                                  f"tcgen05.{p.kind} writing its Tensor Memory (pipelined only in issue order)")

    def _war(self, thread: int, cta: int, lo: int, hi: int, ins, what: str) -> None:
        """The MMA writes D cells other warps read with tcgen05.ld: those loads must be ordered before
        it (wait::ld, then the fence pattern; §9.7.16.6.4.4 example 1)."""
        rd = self.t_rd[cta, :, lo:hi]
        has = (rd > 0) & (self.m.warp_of[np.maximum(rd - 1, 0)] != self.m.warp_of[thread])
        if has.any():
            q_, k_ = np.nonzero(has)
            self._issue_order(thread, rd[q_, k_] - 1, self.t_rd_ep[cta, q_, lo + k_],
                              self.t_rd_index[cta, q_, lo + k_], ins, what, "tcgen05.ld of the cells it overwrites")

    def mma_reads_tmem(self, thread: int, cta_list, col_ranges, ins, what: str) -> None:
        """An issued MMA writes D (the first of ``col_ranges``) and reads (A, metadata, D) these
        columns of all lanes."""
        for cta in cta_list:
            if self.any_rd:
                self._war(thread, cta, *col_ranges[0], ins, what)
            for lo, hi in col_ranges:
                self._reads_columns(thread, cta, lo, hi, ins, what)
                if self.ld_records:
                    cc = np.full(hi - lo, cta)
                    for q_ in range(4):
                        self._pending_lds(cc, np.full(hi - lo, q_), np.arange(lo, hi), ins, what)

    def mma_reads_cells(self, thread: int, cells, ins, what: str) -> None:
        """An issued MMA reads columns ``(cta, lo, hi)`` (all lanes; its scale factors) at completion:
        ordered after their writers like A and the metadata (:meth:`mma_reads_tmem`)."""
        for cta, lo, hi in cells:
            self._reads_columns(thread, cta, lo, hi, ins, what)

    def _reads_columns(self, thread: int, cta: int, lo: int, hi: int, ins, what: str) -> None:
        """``thread``'s MMA reads columns ``[lo, hi)`` of ``cta``: every write to them (tcgen05.st,
        another thread's mma/cp/shift, another warp's alloc) is ordered before it."""
        m = self.m
        if self.any_pfreed and hi > lo:
            self._after_peer_dealloc(np.full(hi - lo, cta), np.arange(lo, hi), ins, what)
        if self.any_alloc:
            self.after_alloc(thread, cta, lo, hi, ins, what)
        self._queued_by_others(thread, cta, lo, hi, ins, what)
        iss = self.t_iss[cta, :, lo:hi]
        kinds = self.t_kind[cta, :, lo:hi]          # a view (st below reads it too)
        other = (kinds == 2) & (iss > 0) & (iss - 1 != thread)
        if other.any():
            q_, k_ = np.nonzero(other)
            self._completed_async(thread, cta, q_, lo + k_, ins, what)
        pend = self.t_st_pending[cta, :, lo:hi]
        if pend.any():
            q_, k_ = np.nonzero(pend)
            first = _instr(m, int(self.t_index[cta, q_[0], lo + k_[0]]))
            self._report("wait-st", SEC_PIPE, first, ins, _threads(m, [thread]),
                         f"{what} accesses Tensor Memory cells written by a tcgen05.st before that warp's "
                         "tcgen05.wait::st")
        st = kinds == 1
        if st.any():
            q_, k_ = np.nonzero(st)
            wr = self.t_writer[cta, q_, lo + k_] - 1
            self._order(thread, wr, self.t_stamp[cta, q_, lo + k_], kinds[q_, k_], "tmem-race",
                        self.t_index[cta, q_, lo + k_], ins, what)

    def _completed_async(self, reader: int, cta: int, q_, k_, ins, what: str,
                         race: tuple[str, str] = ("tmem-race", SEC_SYNC)) -> None:
        """Cells a completed mma/cp/shift of another thread wrote: ``reader`` observed the completion
        (the commit's mbarrier, then fence::after_thread_sync) or its issue is ordered before (pipelined)."""
        c = self.clocks
        committer = self.t_writer[cta, q_, k_] - 1
        seen = c.vt[reader, c.D + c.lt[committer] // 32] >= self.t_stamp[cta, q_, k_]
        if seen.all():
            return
        q_, k_ = q_[~seen], k_[~seen]
        self._issue_order(reader, self.t_iss[cta, q_, k_] - 1, self.t_iss_ep[cta, q_, k_], self.t_index[cta, q_, k_],
                          ins, what, "completed asynchronous tcgen05 operation writing its Tensor Memory", race)

    def issue(self, thread: int, ins, ctas, cols) -> _Effect:
        c = self.clocks
        if self.any_pfreed and cols[1] > cols[0]:
            for cta in np.atleast_1d(np.asarray(ctas)).tolist():
                self._after_peer_dealloc(np.full(cols[1] - cols[0], cta), np.arange(cols[0], cols[1]), ins,
                                         f"tcgen05.{ins.opcode.split('.')[1]}")
        if self.any_alloc and cols[1] > cols[0]:
            for cta in np.atleast_1d(np.asarray(ctas)).tolist():
                self.after_alloc(thread, int(cta), int(cols[0]), int(cols[1]), ins, f"tcgen05.{ins.opcode.split('.')[1]}")
        # shift reads the rows it moves (§9.7.16.9.3); shift and cp write every lane of their columns: ordered
        # after other warps' tcgen05.ld (WAR) and tcgen05.st (WAW) of them and other threads' mma/cp/shift like
        # an MMA's D (§9.7.16.6.3; §9.7.16.6.4.4 example 1 is ld -> cp)
        what = "tcgen05." + ins.opcode.split(".")[1]
        kind = _async_kind(ins)
        cp_or_shift = kind != "mma" and cols[1] > cols[0]
        if cp_or_shift:
            self.mma_reads_tmem(thread, np.atleast_1d(np.asarray(ctas)).tolist(), [tuple(cols)], ins, what)
        if cols[1] > cols[0]:
            self.issue_overwrites_async_reads(thread, ctas, cols, ins)
        if cp_or_shift:
            self._same_thread_order(thread, ins, np.atleast_1d(np.asarray(ctas)), cols, what, kind)
        self.op_serial += 1
        self.op_hist.setdefault(thread, []).append((self.op_serial, kind))
        return _Effect(thread, _index(self.m, ins), self.m.steps, (c.vc[thread].copy(), c.vt[thread].copy()),
                       np.asarray(ctas), cols, int(c.own[thread]), kind, self.op_serial)

    def _same_thread_order(self, thread: int, ins, ctas: np.ndarray, cols, what: str, later: str) -> None:
        """A ``cp``/``shift`` of ``thread`` writes columns ``cols`` of ``ctas``: the same thread's
        earlier ``mma``/``cp``/``shift`` writing them is ordered before it only through pipelined
        pairs (§9.7.16.6.2: into a ``cp`` only ``shift -> cp.4x256b``, into a ``shift`` only
        ``mma -> shift``; a chain of pairs through the thread's operations between them orders too:
        each pair executes in issue order), else only once the thread observed its completion
        (commit -> mbarrier wait -> ``fence::after_thread_sync``, §9.7.16.6.4.2): asynchronous
        operations of one thread are unordered otherwise (§9.7.16.6.1).  ``later``: the
        :data:`ASYNC_KINDS` key of ``ins``."""
        lo, hi = int(cols[0]), int(cols[1])
        chain = _Chain(self.op_hist.get(thread, ()), later, self.pairs)
        for p in self._queued():
            e = p.hz
            if e.thread != thread or not (e.cols[0] < hi and lo < e.cols[1]):
                continue
            if np.isin(ctas, e.ctas).any() and not chain.ordered(e.serial, e.kind):
                self._report("async-order", SEC_ASYNC, _instr(self.m, e.index), ins, _threads(self.m, [thread]),
                             f"{what} writes Tensor Memory columns {max(lo, e.cols[0])}..{min(hi, e.cols[1]) - 1} "
                             f"that the same thread's issued tcgen05.{e.kind.split('.')[0]} writes: "
                             f"{e.kind.split('.')[0]} -> {what[8:]} is no pipelined pair (§9.7.16.6.2), so the "
                             "two may execute in either order (wait for its completion: commit -> mbarrier "
                             "wait -> tcgen05.fence::after_thread_sync, §9.7.16.6.4.2)")
        c = self.clocks
        for cta in ctas.tolist():
            mine = (self.t_kind[cta, :, lo:hi] == 2) & (self.t_iss[cta, :, lo:hi] == thread + 1)
            if not mine.any():
                continue
            q_, k_ = np.nonzero(mine)
            k_ = lo + k_
            serials, kinds = self.t_aseq[cta, q_, k_], self.t_akind[cta, q_, k_]
            ops, inverse = np.unique(serials, return_inverse=True)      # a few operations over many cells
            kind_of = dict(zip(serials.tolist(), kinds.tolist(), strict=True))
            ordered = np.array([chain.ordered(sq, ASYNC_KIND_NAMES[kind_of[sq]]) for sq in ops.tolist()],
                               dtype=bool)[inverse]
            committer = self.t_writer[cta, q_, k_] - 1
            col = c.D + c.lt[committer] // 32
            stamp = self.t_stamp[cta, q_, k_]
            bad = ~(ordered | (c.vt[thread, col] >= stamp))
            if "tcgen05-fence" in self.waived:
                bad &= c.vc[thread, col] < stamp
            if not bad.any():
                continue
            j = int(np.flatnonzero(bad)[0])
            earlier = ASYNC_KIND_NAMES[int(kinds[j])].split(".")[0]
            first = _instr(self.m, int(self.t_index[cta, q_[j], k_[j]]))
            if c.vc[thread, col[j]] >= stamp[j]:
                self._report("tcgen05-fence", SEC_SYNC, first, ins, _threads(self.m, [thread]),
                             f"{what} writes Tensor Memory the same thread's completed tcgen05.{earlier} wrote, "
                             "ordered after its completion by the mbarrier wait alone: tcgen05.fence::after_thread_sync "
                             "is missing (§9.7.16.6.4.2 example 2)")
            self._report("async-order", SEC_ASYNC, first, ins, _threads(self.m, [thread]),
                         f"{what} writes Tensor Memory column {int(k_[j])} that the same thread's completed "
                         f"tcgen05.{earlier} wrote, and the thread has not observed that completion: "
                         f"{earlier} -> {what[8:]} is no pipelined pair (§9.7.16.6.2; commit -> mbarrier wait -> "
                         "tcgen05.fence::after_thread_sync, §9.7.16.6.4.2)")

    def begin_effect(self, e: _Effect | None) -> None:
        self.effect = e

    def async_units(self, cta: int, linear) -> None:
        """The async proxy reads the 16-byte units at shared addresses ``linear`` of ``cta``."""
        e = self.effect
        if e is None:
            return
        from ptxsim.memory.global_memory import SHARED_BASE
        # the first granule of each 128-byte row read (whole rows: the swizzle moves units within
        # one); made unique and expanded to 8 granules once, at the completion (end_effect)
        rows = (np.asarray(linear, dtype=np.int64).ravel() - SHARED_BASE) >> 7
        e.granules.append((cta * self.m.smem_bytes >> 4) + rows * 8)

    def end_effect(self, e: _Effect | None, committer: int) -> None:
        self.effect = None
        if e is None:
            return
        ins = _instr(self.m, e.index)
        if e.granules:
            g = (_distinct(np.concatenate(e.granules))[:, None] + np.arange(8)[None, :]).ravel()
            g = g[(g >= 0) & (g < self.g_writer.size)]
            self.async_read(e.thread, g, ins, e.vc[0], e.time)
            self.g_reader[g] = committer + 1
            self.g_rcount[g] = self.clocks.commits[self.m.warp_of[committer]]
            self.g_rindex[g] = e.index
            self.any_reads = True
        self._record_async_reads(e, committer)
        lo, hi = e.cols
        if hi > lo:
            for cta in e.ctas.tolist():
                self.t_writer[cta, :, lo:hi] = committer + 1
                self.t_stamp[cta, :, lo:hi] = self.clocks.commits[self.m.warp_of[committer]]
                self.t_kind[cta, :, lo:hi] = 2
                self.t_index[cta, :, lo:hi] = e.index
                self.t_iss[cta, :, lo:hi] = e.thread + 1
                self.t_iss_ep[cta, :, lo:hi] = e.epoch
                self.t_akind[cta, :, lo:hi] = ASYNC_KINDS[e.kind]
                self.t_aseq[cta, :, lo:hi] = e.serial

    def _record_async_reads(self, e: _Effect, committer: int) -> None:
        """The completed MMA ``e`` read its Tensor Memory operands; later writers must observe this commit."""
        for cta, lo, hi in e.tmem_reads:
            self.r_reader[cta, lo:hi] = committer + 1
            self.r_count[cta, lo:hi] = self.clocks.commits[self.m.warp_of[committer]]
            self.r_index[cta, lo:hi] = e.index
            self.r_iss[cta, lo:hi] = e.thread + 1
            self.r_iss_ep[cta, lo:hi] = e.epoch
            self.any_tmem_reads = True

    def issue_overwrites_async_reads(self, thread: int, ctas, cols, ins) -> None:
        """An issued mma/cp/shift of ``thread`` writes columns ``cols`` of ``ctas``."""
        if not self.any_tmem_reads and not self._queued_reads():
            return
        kind = ins.opcode.split(".")[1]
        ctas = np.atleast_1d(np.asarray(ctas)).astype(np.int64)
        kk = np.tile(np.arange(cols[0], cols[1]), ctas.size)
        cc = np.repeat(ctas, cols[1] - cols[0])
        self.overwrites_async_reads(np.full(kk.size, thread), cc, kk, ins, f"tcgen05.{kind}", kind)

    def overwrites_async_reads(self, writers, cc, kk, ins, what: str, kind: str | None) -> None:
        """Threads ``writers`` write Tensor Memory columns ``kk`` of CTAs ``cc`` (all lanes of the
        column are taken as read) with a tcgen05.st (``kind`` None) or an mma/cp/shift.  An MMA reads
        A, metadata and scale factors when it executes, so the write must follow its completion: the
        writer observed the commit's mbarrier (then ``fence::after_thread_sync``).  Only mma -> mma
        and mma -> shift are pipelined (§9.7.16.6.2): those need the MMA's issue ordered before
        (same thread, or the fence pattern, §9.7.16.6.4.3); mma -> st is not, and mma -> cp only under
        spec question Q-MMA-CP-ORDER's reading ``in-order`` (CUTLASS's block-scaled mainloops)."""
        pipelined = kind in ("mma", "shift") or (kind == "cp" and self.mma_cp_in_order)
        for e in self._queued_reads():
            if not self._hits(e.tmem_reads, cc, kk):
                continue
            if pipelined:
                self._issue_order(int(writers[0]), np.array([e.thread]), np.array([e.epoch]), e.index, ins,
                                  what, "tcgen05.mma reading these columns (pipelined only in issue order)")
                continue
            self._report("tmem-overwrite", SEC_MBAR, _instr(self.m, e.index), ins,
                         f"{_threads(self.m, [e.thread])} then {_threads(self.m, [int(writers[0])])}",
                         f"{what} overwrites Tensor Memory that an issued tcgen05.mma reads (A, metadata or "
                         "scale factors, read when it executes) before its completion")
        if self.any_tmem_reads:
            self._after_async_reads(np.asarray(writers, dtype=np.int64), np.asarray(cc), np.asarray(kk), ins, what,
                                    pipelined)

    def _queued_reads(self) -> list[_Effect]:
        """Issued, uncompleted MMAs that read Tensor Memory when they execute."""
        return [p.hz for p in self._queued() if p.hz.tmem_reads]

    @staticmethod
    def _hits(reads, cc, kk) -> bool:
        return any(bool(((cc == c) & (kk >= lo) & (kk < hi)).any()) for c, lo, hi in reads)

    def _after_async_reads(self, w, cc, kk, ins, what: str, pipelined: bool) -> None:
        """Writes by ``w`` to columns read by completed MMAs: ordered after each MMA's completion."""
        r = self.r_reader[cc, kk] - 1
        has = r >= 0
        if not has.any():
            return
        c = self.clocks
        w, cc, kk, r = w[has], cc[has], kk[has], r[has]
        col = c.D + c.lt[r] // 32
        count = self.r_count[cc, kk]
        ok = c.vt[w, col] >= count
        if pipelined:
            iss = self.r_iss[cc, kk] - 1
            ok |= (iss == w) | (c.vt[w, c.lt[iss]] >= self.r_iss_ep[cc, kk])
        bad = ~ok
        if "tcgen05-fence" in self.waived:
            bad &= c.vc[w, col] < count
        if not bad.any():
            return
        j = int(np.flatnonzero(bad)[0])
        first = _instr(self.m, int(self.r_index[cc[j], kk[j]]))
        threads = f"{_threads(self.m, [int(r[j])])} then {_threads(self.m, [int(w[j])])}"
        if c.vc[w[j], col[j]] >= count[j]:
            self._report("tcgen05-fence", SEC_SYNC, first, ins, threads,
                         f"{what} overwrites Tensor Memory a completed tcgen05.mma read, ordered after its "
                         "completion by thread synchronization alone: the pattern (tcgen05.commit or "
                         "tcgen05.fence::before_thread_sync) -> sync -> tcgen05.fence::after_thread_sync "
                         "(§9.7.16.6.4) is incomplete")
        self._report("tmem-overwrite", SEC_MBAR, first, ins, threads,
                     f"{what} overwrites Tensor Memory (A, metadata or scale factors) a tcgen05.mma reads, and the "
                     "writing thread has not observed its completion (tcgen05.commit -> mbarrier wait)")

    def commit(self, thread: int) -> None:
        self.clocks.before_thread_sync(np.array([thread]))
        self.clocks.commits[self.m.warp_of[thread]] += 1
