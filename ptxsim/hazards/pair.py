"""The CTA pair: a ``.cta_group::2`` operation needs the peer CTA launched and still active
(§9.7.16.5 Table 46, §9.7.16.7.1; rules ``peer-launched``, ``peer-active``, ``peer-dealloc``)."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.common import ALLOC_OPS, SEC_ALLOC, SEC_ISSUE, _index, _instr, _threads


class PairRules:
    """Mixin of :class:`~ptxsim.hazards.Hazards`: the CTA pair."""

    def _init_pair(self, m, pair_collective: bool) -> None:
        #: spec question Q-PAIR-DEALLOC: under ``collective`` a CTA that performed its own collective
        #: alloc/dealloc/relinquish .cta_group::2 stays active for its peer's matching one (rule peer-active)
        self.pair_collective = pair_collective
        self.collectives: dict[tuple[int, str], int] = {}   # (cta, opcode) -> collective ops issued
        self.pair_last: dict[int, tuple[int, int, int]] = {}   # thread -> (epoch, line, commits) of its last pair op
        self.pair_coll: dict[int, list] = {}    # thread -> [(opcode, n-th of its CTA, line)] (Q-PAIR-DEALLOC collective)
        self.exited_at: dict[int, int] = {}                     # cta -> instruction index of its last exit
        self.p_freed = np.zeros((m.ncta, 512), dtype=np.int64)  # thread + 1 of the CTA's own cta_group::2 dealloc,
        self.p_freed_index = np.zeros((m.ncta, 512), dtype=np.int32)  # kept until the peer's dealloc checked it
        self.any_pfreed = False

    # -- the CTA pair: .cta_group::2 needs the peer CTA launched and still active (§9.7.16.5) --------

    def _peer_columns(self, cta: int) -> np.ndarray:
        """Clock columns of the peer CTA's threads and of its warps' commit counts."""
        m, c = self.m, self.clocks
        lt = (int(m.rank_of[cta]) ^ 1) * m.ntid + np.arange(m.ntid)
        return np.concatenate([lt, c.D + np.unique(lt // 32)])

    def pair_op(self, thread: int, cta: int, what: str) -> None:
        """``thread`` of ``cta`` issues a ``.cta_group::2`` operation ``what``: it must be ordered
        after some event of the peer CTA (rule peer-launched) and, if the peer already exited, it
        is too late (peer-active); the issue is remembered for the peer's exit (:meth:`pair_exit`)."""
        m, c = self.m, self.clocks
        ins = m.prog.code[m.current_pc].instr
        section = SEC_ALLOC if what in ALLOC_OPS else SEC_ISSUE
        peer = cta ^ 1
        who = f"CTA {cta} ({_threads(m, [thread])}), peer CTA {peer}"
        if m.live_per_cta[peer] == 0:
            first = _instr(m, self.exited_at[peer]) if peer in self.exited_at else None
            self._report("peer-active", section, first, ins, who,
                         f"{what}.cta_group::2 is issued after its peer CTA exited (the peer must still be active "
                         "when the operation is issued: order the peer's exit after it, e.g. by a cluster barrier)")
        if not (c.vc[thread, self._peer_columns(cta)] > 0).any():
            self._report("peer-launched", section, None, ins, who,
                         f"{what}.cta_group::2 is not ordered after any event of the peer CTA, so nothing makes sure "
                         "the peer was launched (synchronize with it first, e.g. a cluster barrier)")
        if what in ALLOC_OPS and self.pair_collective:       # Q-PAIR-DEALLOC collective: matched at the exit
            key = (cta, what)
            self.collectives[key] = self.collectives.get(key, 0) + 1
            self.pair_coll.setdefault(thread, []).append((what, self.collectives[key], _index(m, ins)))
            return
        self.pair_last[thread] = (int(c.own[thread]), _index(m, ins), int(c.commits[m.warp_of[thread]]))

    def pair_exit(self, m, ctas: np.ndarray) -> None:
        """CTAs ``ctas`` exited: every ``.cta_group::2`` operation their peer issued so far must be
        ordered before the exit (rule peer-active): seen by one of the CTA's threads, as the issuing
        thread's epoch or a later tcgen05.commit of its warp (a CTA exits after all its threads)."""
        ins = m.prog.code[m.current_pc].instr
        for p in ctas.tolist():
            self.exited_at[p] = _index(m, ins)
        for p in ctas.tolist():       # collective reading: the exiting CTA must have matched each one itself
            for t, ops in self.pair_coll.items():
                if int(m.cta_of[t]) == p ^ 1 and m.cluster_of[t] == m.cluster_of[m.cta_of == p][0]:
                    for what, nth, index in ops:
                        if self.collectives.get((p, what), 0) < nth:
                            self._report("peer-active", SEC_ALLOC, _instr(m, index), ins,
                                         f"CTA {p} exits, peer CTA {p ^ 1} ({_threads(m, [t])}) issued",
                                         f"the CTA exits without performing its part of the peer's collective "
                                         f"{what}.cta_group::2 (reading collective of Q-PAIR-DEALLOC)")
        if not self.pair_last:
            return
        c = self.clocks
        for p in ctas.tolist():
            mine = np.flatnonzero(m.cta_of == p)
            for t, (ep, index, commits) in self.pair_last.items():
                if int(m.cta_of[t]) != p ^ 1 or m.cluster_of[t] != m.cluster_of[mine[0]]:
                    continue
                if c.vc[mine, c.lt[t]].max() >= ep or c.vc[mine, c.D + c.lt[t] // 32].max() > commits:
                    continue
                self._report("peer-active", SEC_ALLOC if _instr(m, index).opcode.startswith(ALLOC_OPS) else SEC_ISSUE,
                             _instr(m, index), ins, f"CTA {p} exits, peer CTA {p ^ 1} ({_threads(m, [t])}) issued",
                             "the CTA exits while its peer's .cta_group::2 operation is not ordered before the exit "
                             "(the peer must be active when the operation is issued: a cluster barrier after it)")

    def _after_peer_dealloc(self, ctas, cols, ins, what: str) -> None:
        """Columns ``cols`` of ``ctas`` (arrays) touched after the peer CTA's tcgen05.dealloc.cta_group::2,
        which may have freed them (rule peer-dealloc, conservative)."""
        ctas = np.asarray(ctas)
        cols = np.asarray(cols)
        hit = self.p_freed[ctas ^ 1, cols] > 0
        if hit.any():
            j = int(np.flatnonzero(hit.ravel())[0])
            c, k = int(ctas.ravel()[j]), int(cols.ravel()[j])
            self._report("peer-dealloc", SEC_ALLOC, _instr(self.m, int(self.p_freed_index[c ^ 1, k])), ins,
                         f"{_threads(self.m, [int(self.p_freed[c ^ 1, k]) - 1])} then CTA {c}",
                         f"{what} touches column {k} of CTA {c} after the peer CTA's tcgen05.dealloc.cta_group::2, "
                         "which frees the pair's columns (the access must be ordered before it)")
