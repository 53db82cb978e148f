"""Shared memory between the generic and the async proxy (§9.7.16.6.5) and the bulk copies
(rules ``proxy-fence``, ``smem-overwrite``, ``async-write`` of a bulk/TMA load, ``exit-pending`` of
bulk copies and bulk stores).  Shadow state per 16-byte granule."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.common import SEC_BULK, SEC_PROXY, SEC_TENSOR, _index, _instr, _threads


class SmemRules:
    """Mixin of :class:`~ptxsim.hazards.Hazards`: shared memory and bulk copies."""

    def _init_smem(self, m) -> None:
        g = m.smem.size // 16 + 1
        self.g_writer = np.zeros(g, dtype=np.int64)        # thread + 1 of the last generic-proxy write
        self.g_pfc = np.zeros(g, dtype=np.int32)           # the writer's proxy-fence count at the write
        # fence.proxy.async per thread: the k-th fence (counting only fences after a write) made the
        # thread's writes before it visible to the async proxy at epoch pf_epoch[thread, k]
        self.pf_count = np.zeros(m.T, dtype=np.int32)
        self.pf_epoch = np.zeros((m.T, 2), dtype=np.int32)
        self.pf_wrote = np.zeros(m.T, dtype=bool)          # wrote since its last recorded fence
        self.g_time = np.zeros(g, dtype=np.int64)          # step of the last write (any proxy)
        self.g_index = np.zeros(g, dtype=np.int32)
        self.g_reader = np.zeros(g, dtype=np.int64)        # committer + 1 of the last async-proxy read (mma/cp)
        self.g_rcount = np.zeros(g, dtype=np.int32)        # its commit count
        self.g_rindex = np.zeros(g, dtype=np.int32)        # the reading instruction
        self.any_reads = False
        self.g_pend = np.zeros(g, dtype=np.int32)          # instruction index + 1 of a bulk copy not yet landed
        self.g_pend_thread = np.zeros(g, dtype=np.int64)
        self.any_pend = False
        # bulk stores (shared -> global, .bulk_group) whose source reads the issuing thread has not
        # waited for (cp.async.bulk.wait_group{.read}): per granule, how many, and the last one's line + 1
        self.g_bsrc: np.ndarray | None = None
        self.g_bsrc_line: np.ndarray | None = None

    def proxy_fence(self, s) -> None:
        """``fence.proxy.async`` by ``s``: a fence covers the thread's generic writes since its
        previous fence: one record per fence that follows a write (see :meth:`_proxy_fence_epochs`)."""
        t = s.idx[self.pf_wrote[s.idx]]
        if t.size:
            if int(self.pf_count[t].max()) >= self.pf_epoch.shape[1]:
                self._make_fence_room(int(self.pf_count[t].max()))
            k = self.pf_count[t]
            self.pf_epoch[t, k] = self.clocks.own[t]
            self.pf_count[t] = k + 1
            self.pf_wrote[t] = False

    @staticmethod
    def _granules(s, flat, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
        """(granules, writing thread of each) of ``nbytes``-wide stores by ``s`` at flat shared bytes
        ``flat`` (one start per thread; a store straddling two 16-byte granules counts in both)."""
        flat = np.asarray(flat, dtype=np.int64).reshape(s.n, -1)
        first = flat >> 4
        last = (flat + nbytes - 1) >> 4
        # each thread's number once per access of it (read only: no copy for one access per thread)
        t = s.idx if first.shape[1] == 1 else np.repeat(s.idx, first.shape[1])
        g = first.ravel()
        if (last != first).any():
            g = np.concatenate([g, last.ravel()])
            t = np.concatenate([t, t])
        return g, t

    def _write_after_reads(self, g: np.ndarray, t: np.ndarray, ins) -> None:
        """Writes by threads ``t`` to granules ``g``: after the completed async-proxy reads of them
        and not over a pending bulk store's source."""
        if self.any_reads:
            self._after_reads(g, t, ins)
        if self.g_bsrc is not None:
            self._bulk_sources_overwritten(g, t, ins)

    def generic_write(self, s, flat, nbytes: int, ins=None) -> None:
        """Generic-proxy stores by ``s`` to flat shared-memory bytes ``flat`` (one start per thread)."""
        m = self.m
        g, t = self._granules(s, flat, nbytes)
        ins = ins if ins is not None else m.prog.code[m.current_pc].instr
        self._write_after_reads(g, t, ins)
        self.g_writer[g] = t + 1
        self.g_pfc[g] = self.pf_count[t]
        self.pf_wrote[s.idx] = True
        self.g_time[g] = m.steps
        self.g_index[g] = _index(m, ins)

    def cp_async_dest(self, s, flat, nbytes: int, ins) -> None:
        """A non-bulk ``cp.async`` ``ins`` by ``s`` will write ``nbytes`` at flat shared bytes ``flat``
        (one start per thread).  The simulator lands it as late as the thread's program allows
        (:meth:`generic_write` then), but the copy may write its destination at any moment from its
        issue on (PTX ISA §9.7.9.25.3: only cp.async.wait_group/wait_all or its mbarrier arrival say
        when it has), so the write-after-read checks hold at the issue, with what the issuing thread
        has observed then."""
        if self.any_reads or self.g_bsrc is not None:
            self._write_after_reads(*self._granules(s, flat, nbytes), ins)

    def _after_reads(self, g: np.ndarray, t: np.ndarray, ins) -> None:
        """Writes by threads ``t`` to granules ``g`` must follow the completion of every mma/cp that
        read them, as observed through the commit's mbarrier (directly or by synchronization)."""
        r = self.g_reader[g] - 1
        has = r >= 0
        if not has.any():
            return
        c = self.clocks
        g, t, r = g[has], t[has], r[has]
        ok = c.vc[t, c.D + c.lt[r] // 32] >= self.g_rcount[g]
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            self._report("smem-overwrite", SEC_PROXY, _instr(self.m, int(self.g_rindex[g[j]])), ins,
                         _threads(self.m, [int(t[j])]), "shared memory an asynchronous tcgen05 operation reads is "
                         "overwritten before the writing thread observed its completion (tcgen05.commit -> "
                         "mbarrier wait)")

    def async_dest(self, thread: int, dsts, ins) -> None:
        """A bulk/TMA copy issued by ``thread`` will write ``dsts`` (slices or flat byte indices)."""
        parts = [np.arange(d.start >> 4, (d.stop + 15) >> 4) if isinstance(d, slice)
                 else np.unique(np.asarray(d, dtype=np.int64) >> 4) for d in dsts]
        g = np.unique(np.concatenate(parts))
        if self.g_bsrc is not None:
            self._bulk_sources_overwritten(g, np.full(g.size, thread), ins)
        self.g_pend[g] = _index(self.m, ins) + 1
        self.g_pend_thread[g] = thread
        self.any_pend = True
        if self.any_reads:
            self._after_reads(g, np.full(g.size, thread), ins)

    def bulk_source(self, g: np.ndarray, ins) -> None:
        """A bulk store ``ins`` reads granules ``g`` (distinct) until its thread's
        ``cp.async.bulk.wait_group{.read}`` covers its group (:meth:`bulk_source_done` with the same ``g``)."""
        if self.g_bsrc is None:
            self.g_bsrc = np.zeros(self.g_writer.size, dtype=np.int32)
            self.g_bsrc_line = np.zeros(self.g_writer.size, dtype=np.int32)
        self.g_bsrc[g] += 1
        self.g_bsrc_line[g] = _index(self.m, ins) + 1

    def bulk_source_done(self, g: np.ndarray) -> None:
        self.g_bsrc[g] -= 1

    def _bulk_sources_overwritten(self, g: np.ndarray, t: np.ndarray, ins) -> None:
        """Writes by threads ``t`` to granules ``g``: none may be a pending bulk store's source."""
        hit = self.g_bsrc[g] > 0
        if hit.any():
            j = int(np.flatnonzero(hit)[0])
            self._report("smem-overwrite", SEC_TENSOR, _instr(self.m, int(self.g_bsrc_line[g[j]]) - 1), ins,
                         _threads(self.m, [int(t[j])]),
                         "shared memory a bulk store (cp.async.bulk.tensor / cp.reduce.async.bulk.tensor "
                         ".bulk_group) reads is overwritten before the issuing thread's "
                         "cp.async.bulk.wait_group.read covered its group (the store may still be reading it)")

    def async_write(self, dst) -> None:
        """The async proxy (bulk copy, TMA load) wrote shared bytes ``dst`` (a slice or flat indices)."""
        if isinstance(dst, slice):
            g = slice(dst.start >> 4, (dst.stop + 15) >> 4)
        else:
            g = np.unique(np.asarray(dst, dtype=np.int64) >> 4)
        self.g_writer[g] = 0
        self.g_time[g] = self.m.steps
        if self.any_pend:
            self.g_pend[g] = 0

    def async_read(self, thread: int, g: np.ndarray, ins, vc_row=None, issued: int | None = None) -> None:
        """The async proxy reads granules ``g`` for an instruction of ``thread`` (issued at step
        ``issued``, when it knew ``vc_row``)."""
        m = self.m
        c = self.clocks
        vc = c.vc[thread] if vc_row is None else vc_row
        if self.any_pend:
            pend = self.g_pend[g] > 0
            if pend.any():
                j = int(np.flatnonzero(pend)[0])
                self._report("async-write", SEC_PROXY, _instr(m, int(self.g_pend[g[j]]) - 1), ins,
                             f"{_threads(m, [int(self.g_pend_thread[g[j]])])} then {_threads(m, [thread])}",
                             "the async proxy reads shared memory that an issued bulk/TMA copy has not completed "
                             "writing (its mbarrier's transaction count not yet observed complete)")
        if issued is not None:
            late = self.g_time[g] > issued
            if late.any():
                j = int(np.flatnonzero(late)[0])
                self._report("smem-overwrite", SEC_PROXY, ins, _instr(m, int(self.g_index[g[j]])),
                             _threads(m, [thread]), "shared memory an issued asynchronous operation still reads "
                             "(it reads at completion) is overwritten before the operation completed")
        w = self.g_writer[g] - 1
        gen = w >= 0
        if not gen.any():
            return
        g, w = g[gen], w[gen]
        fenced = self._proxy_fence_epochs(g, w)
        unf = fenced == 0
        if unf.any():
            j = int(np.flatnonzero(unf)[0])
            self._report("proxy-fence", SEC_PROXY, _instr(m, int(self.g_index[g[j]])), ins,
                         f"{_threads(m, [int(w[j])])} then {_threads(m, [thread])}",
                         "the async proxy reads shared memory written through the generic proxy with no "
                         "fence.proxy.async by the writing thread after the write")
        other = w != thread
        late = other & (vc[c.lt[w]] < fenced)
        if late.any():
            j = int(np.flatnonzero(late)[0])
            self._report("proxy-fence", SEC_PROXY, _instr(m, int(self.g_index[g[j]])), ins,
                         f"{_threads(m, [int(w[j])])} then {_threads(m, [thread])}",
                         "the async proxy reads shared memory written (and fenced with fence.proxy.async) by "
                         "another thread, with no synchronization ordering that fence before this instruction")

    def _make_fence_room(self, need: int) -> None:
        """Room for fence number ``need`` of some thread: first forget the fences no granule refers
        to any more (renumbering each thread's fences by the ones still referred to), then grow."""
        if self.pf_epoch.shape[1] >= 16:
            self._compact_fences()
            need = int(self.pf_count.max())
        width = self.pf_epoch.shape[1]
        if need >= width:
            grown = np.zeros((self.m.T, max(2 * width, 2 * (need + 1))), dtype=np.int32)
            grown[:, :width] = self.pf_epoch
            self.pf_epoch = grown

    def _compact_fences(self) -> None:
        """Renumber each thread's fence records keeping only those a granule still refers to
        (``g_pfc`` of a granule it last wrote) and its current count; epochs stay as they were."""
        T = self.m.T
        gi = np.flatnonzero(self.g_writer > 0)
        w = np.concatenate([self.g_writer[gi] - 1, np.arange(T)])
        k = np.concatenate([self.g_pfc[gi], self.pf_count]).astype(np.int64)
        span = int(k.max()) + 1
        keys, inverse = np.unique(w * span + k, return_inverse=True)
        uw, uk = keys // span, keys % span
        rank = np.arange(keys.size) - np.searchsorted(uw, uw, side="left")
        epochs = np.zeros((T, max(16, 2 * (int(rank.max()) + 1))), dtype=np.int32)   # headroom: compact rarely
        fenced = uk < self.pf_count[uw]
        epochs[uw[fenced], rank[fenced]] = self.pf_epoch[uw[fenced], uk[fenced]]
        self.g_pfc[gi] = rank[inverse[:gi.size]]
        self.pf_count = rank[inverse[gi.size:]].astype(np.int32)
        self.pf_epoch = epochs

    def _proxy_fence_epochs(self, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Per granule ``g`` written in the generic proxy by thread ``w``: the writer's epoch at its
        first fence.proxy.async after the write (0: not fenced yet)."""
        k = self.g_pfc[g]
        fenced = self.pf_count[w] > k
        return np.where(fenced, self.pf_epoch[w, np.minimum(k, self.pf_epoch.shape[1] - 1)], 0)

    def bulk_stores_at_exit(self, m, s) -> None:
        """A thread exits with bulk stores/reductions (``.bulk_group``) it has not waited for with
        ``cp.async.bulk.wait_group{.read}``: nothing orders their reads of the CTA's shared memory
        before the CTA exits, and no other thread can wait for them (bulk async-groups are per thread)."""
        eng = m.ext.get("cp.async.bulk.tensor")
        if eng is None:
            return
        for t in s.idx.tolist():
            ops = [op for group in eng.groups.get(t, []) + [eng.open.get(t, [])] for op in group]
            if ops:
                self._report("exit-pending", SEC_TENSOR, getattr(ops[0], "instr", None),
                             m.prog.code[m.current_pc].instr, _threads(m, [t]),
                             f"a thread exits with {len(ops)} bulk store(s) (.bulk_group) not waited for by "
                             "cp.async.bulk.commit_group -> cp.async.bulk.wait_group{.read}: their reads of shared "
                             "memory are not ordered before the CTA's exit")

    def bulk_loads_at_cta_exit(self, m, ctas: np.ndarray) -> None:
        """CTAs exit while a bulk/TMA copy into their shared memory has not completed and its
        mbarrier still expects bytes (a nonzero tx-count: no thread can have observed the phase the
        copy completes): the copy would write shared memory that no longer exists.  A copy whose
        mbarrier phase completed anyway (a device fault such as an ignored expect-tx) is the device's
        error, not the kernel's, and is dropped as before."""
        eng = m.ext.get("cp.async.bulk")
        if eng is None or not eng.pending:
            return
        from ptxsim.memory.mbarrier import decode
        gone = set(ctas.tolist())
        view = m.smem.view(np.uint64)
        for c in eng.pending:
            for dst, word in zip(c.dsts, c.mbars, strict=True):
                first = dst.start if isinstance(dst, slice) else int(np.min(dst))
                cta = first // m.smem_bytes
                if cta in gone and decode(view[word])[2] != 0:
                    sec = SEC_TENSOR if c.instr.opcode.startswith("cp.async.bulk.tensor") else SEC_BULK
                    self._report("exit-pending", sec, c.instr, m.prog.code[m.current_pc].instr, f"CTA {cta}",
                                 "the CTA exits while an asynchronous bulk copy into its shared memory has not "
                                 "completed (no thread observed its mbarrier's complete-tx)")
