"""Thread synchronization, the edges of happens-before: mbarrier arrivals, phases and waits,
``bar``/``barrier`` and ``barrier.cluster`` (rule ``mbarrier-init``).  Under reading
``acquire-orders`` of spec question Q-SYNC-FENCE a release arrival and an acquiring wait also act as
the tcgen05 fences (:attr:`SyncRules.acquire_orders`)."""

from __future__ import annotations

import numpy as np

from ptxsim.engine.lookup import member_of
from ptxsim.hazards.common import SEC_MBAR_INIT, _index, _instr, _threads


class SyncRules:
    """Mixin of :class:`~ptxsim.hazards.Hazards`: mbarrier and barrier synchronization."""

    def _init_sync(self, m, acquire_orders: bool) -> None:
        #: spec question Q-SYNC-FENCE (docs/spec-questions.md): under ``acquire-orders`` a release
        #: arrival acts as tcgen05.fence::before_thread_sync and an acquire wait as ::after_thread_sync
        self.acquire_orders = acquire_orders
        self.mbar: dict[int, list] = {}     # mbarrier word -> [acc vc, acc vt, done vc, done vt]
        self.mbar_inits: dict[int, tuple] = {}  # mbarrier word -> (initing threads, their epochs, line index)
        self.bars: dict[tuple[int, bool], list] = {}  # (barrier id, by cluster) -> per CTA (cluster) [vc, vt, any]

    # -- synchronization ---------------------------------------------------------------------------

    def mbar_init(self, words: np.ndarray) -> None:
        for w in np.atleast_1d(words).tolist():
            self.mbar.pop(int(w), None)

    def mbar_inited(self, words: np.ndarray, threads: np.ndarray, ins) -> None:
        """``mbarrier.init`` of the objects ``words`` (one per thread of ``threads``): a generic-proxy
        write of each object, stamped with the writing thread's epoch (see :meth:`mbar_use`)."""
        words = np.broadcast_to(np.asarray(words), np.shape(threads))
        at = _index(self.m, ins)
        for w in np.unique(words).tolist():
            t = np.asarray(threads)[words == w].astype(np.int64)
            self.mbar_inits[int(w)] = (t, self.clocks.own[t].copy(), at, np.zeros(self.m.T, dtype=bool))

    def mbar_use(self, words: np.ndarray, threads: np.ndarray) -> None:
        """Any other mbarrier operation by ``threads`` on ``words`` (one per thread): each object's
        ``mbarrier.init`` must happen before it (§9.7.13.15.9: an mbarrier object must be initialized
        before use; the init is a shared-memory write, so another thread sees it only through
        synchronization).  The initing thread itself is in program order."""
        if not self.mbar_inits:
            return
        words = np.broadcast_to(np.asarray(words), np.shape(threads))
        threads = np.asarray(threads, dtype=np.int64)
        c = self.clocks
        for w in np.unique(words).tolist():
            init = self.mbar_inits.get(int(w))
            if init is None:
                continue
            initers, epochs, at, ordered = init       # ordered: threads already checked (clocks only grow)
            users = threads[words == w]
            users = users[~ordered[users]]
            if not users.size:
                continue
            seen = c.vc[np.ix_(users, c.lt[initers])] >= epochs
            if seen.all():
                ordered[users] = True
                continue
            u, i = np.argwhere(~seen)[0]
            m = self.m
            self._report("mbarrier-init", SEC_MBAR_INIT, _instr(m, at), m.prog.code[m.current_pc].instr,
                         f"{_threads(m, [int(initers[i])])} then {_threads(m, users[~seen.all(axis=1)])}",
                         "an mbarrier operation uses an object whose mbarrier.init by another thread is not ordered "
                         "before it (fence.mbarrier_init, then a barrier the user waits on, is the pattern)")

    def mbar_arrive(self, word: int, threads, release: bool = False) -> None:
        """Arrival of ``threads`` (None: the async proxy); ``release``: a release-semantics
        ``mbarrier.arrive`` (no ``.relaxed``), an implicit before_thread_sync under Q-SYNC-FENCE
        ``acquire-orders``."""
        st = self.mbar.get(word)
        if st is None:
            z = np.zeros(self.clocks.width, dtype=np.int32)
            st = self.mbar[word] = [z, z.copy(), z.copy(), z.copy()]
        if threads is not None and len(threads):
            if release and self.acquire_orders:
                self.clocks.before_thread_sync(np.unique(np.asarray(threads, dtype=np.int64)))
            vc, vt = self.clocks.payload(np.asarray(threads, dtype=np.int64))
            np.maximum(st[0], vc, out=st[0])
            np.maximum(st[1], vt, out=st[1])

    def mbar_commit(self, word: int, thread: int) -> None:
        """tcgen05.commit: an implicit before_thread_sync (§9.7.16.6.4.2), then the arrival carries
        the thread's commit count (what the completed operations are stamped with)."""
        c = self.clocks
        st = self.mbar.get(word)
        if st is None:
            self.mbar_arrive(word, None)
            st = self.mbar[word]
        col = c.D + int(c.lt[thread]) // 32
        count = int(c.commits[self.m.warp_of[thread]])
        st[0][col] = max(st[0][col], count)
        st[1][col] = max(st[1][col], count)

    def mbar_phase(self, word: int) -> None:
        st = self.mbar.get(word)
        if st is not None:
            np.maximum(st[2], st[0], out=st[2])
            np.maximum(st[3], st[1], out=st[3])
            st[0][:] = 0
            st[1][:] = 0

    def mbar_acquire(self, words: np.ndarray, threads: np.ndarray, acquire: bool = False) -> None:
        """A completed wait of ``threads``; ``acquire``: a wait with acquire semantics (no
        ``.relaxed``), an implicit after_thread_sync under Q-SYNC-FENCE ``acquire-orders``."""
        ordered = acquire and self.acquire_orders
        keys, inverse = np.unique(words, return_inverse=True)
        states = [self.mbar.get(int(w)) for w in keys.tolist()]
        have = np.array([st is not None for st in states])
        if not have.any():
            return
        z = np.zeros(self.clocks.width, dtype=np.int32)
        vc = np.stack([z if st is None else st[2] for st in states])
        vt = np.stack([z if st is None else st[3] for st in states])
        sel = have[inverse]
        self.clocks.acquire_groups(threads[sel], inverse[sel], vc, vt, ordered)

    def bar_arrive(self, b: int, idx: np.ndarray, by_cluster: bool = False, release: bool = True) -> None:
        """``bar``/``barrier`` (always release) or ``barrier.cluster.arrive`` (release unless ``.relaxed``)."""
        m = self.m
        if release and self.acquire_orders:
            self.clocks.before_thread_sync(idx)
        groups = (m.cluster_of if by_cluster else m.cta_of)[idx]
        keys, vc, vt = self.clocks.payload_groups(idx, groups)
        st = self.bars.get((b, by_cluster))
        if st is None:              # per CTA (cluster): [vc, vt, has arrivals]
            n = int((m.cluster_of if by_cluster else m.cta_of).max()) + 1
            st = self.bars[(b, by_cluster)] = [np.zeros((n, self.clocks.width), dtype=np.int32),
                                              np.zeros((n, self.clocks.width), dtype=np.int32),
                                              np.zeros(n, dtype=bool)]
        st[0][keys] = np.maximum(st[0][keys], vc)
        st[1][keys] = np.maximum(st[1][keys], vt)
        st[2][keys] = True

    def bar_complete(self, b: int, ctas, waiting: np.ndarray, by_cluster: bool = False) -> None:
        st = self.bars.get((b, by_cluster))
        if st is None:
            return
        of = (self.m.cluster_of if by_cluster else self.m.cta_of)
        ctas = np.atleast_1d(np.asarray(ctas))
        idx = waiting[st[2][of[waiting]] & member_of(of[waiting], ctas, st[2].size)]
        if idx.size:             # bar.sync and barrier.cluster.wait always acquire
            self.clocks.acquire_groups(idx, of[idx], st[0], st[1], self.acquire_orders)
        st[0][ctas] = 0
        st[1][ctas] = 0
        st[2][ctas] = False
