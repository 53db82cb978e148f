"""Tensor Memory allocation (§9.7.16.7.1): ``tcgen05.alloc`` and ``tcgen05.dealloc`` ordered against
the other warps' tcgen05 operations on the columns (rules ``tmem-race``, ``tcgen05-fence``,
``dealloc-pending``; the CTA pair's ``peer-dealloc``), and the other warps' loads of the address
the alloc wrote ordered after it by thread synchronization (``alloc-address``)."""

from __future__ import annotations

import numpy as np

from ptxsim.errors import HazardError
from ptxsim.hazards.common import PEER_DEALLOC, SEC_ALLOC, SEC_SYNC, _index, _instr, _threads


class AllocRules:
    """Mixin of :class:`~ptxsim.hazards.Hazards`: alloc and dealloc."""

    def _init_alloc(self, m) -> None:
        # per (cta, column): the warp (first thread + 1) whose tcgen05.alloc returned it, its epoch, the line
        self.a_thread = np.zeros((m.ncta, 512), dtype=np.int64)
        self.a_ep = np.zeros((m.ncta, 512), dtype=np.int32)
        self.a_index = np.zeros((m.ncta, 512), dtype=np.int32)
        self.any_alloc = False
        #: flat shared byte of a tcgen05.alloc's address -> (warp's first thread, epoch, line, cta, columns)
        self.alloc_slots: dict[int, tuple[int, int, int, int, range]] = {}

    # -- allocation (§9.7.16.7.1): alloc and dealloc are tcgen05 operations ordered by §9.7.16.6.3 --

    def alloc(self, thread: int, cta: int, col: int, ncols: int, ins, slot: int | None = None) -> None:
        """The warp of ``thread`` (its first thread) allocated columns ``[col, col + ncols)`` of ``cta``
        and wrote their address to the flat shared byte ``slot`` (see :meth:`shared_read`)."""
        ep, index = int(self.clocks.own[thread]), _index(self.m, ins)
        if self.any_pfreed and (self.p_freed[cta, col:col + ncols] > 0).any():    # reallocated: forget the old
            for arr in (self.t_kind, self.t_rd, self.t_iss):
                arr[cta, :, col:col + ncols] = 0
            self.r_reader[cta, col:col + ncols] = 0
            self.p_freed[cta, col:col + ncols] = 0
        self.a_thread[cta, col:col + ncols] = thread + 1
        self.a_ep[cta, col:col + ncols] = ep
        self.a_index[cta, col:col + ncols] = index
        self.any_alloc = True
        if slot is not None:
            self.alloc_slots[slot] = (thread, ep, index, cta, range(col, col + ncols))

    def shared_read(self, s, flat: np.ndarray, nbytes: int) -> None:
        """Generic loads by ``s`` of flat shared bytes ``flat`` (rule ``alloc-address``).

        The address a tcgen05.alloc writes is no tcgen05 access: §9.7.16.6.1 lists tcgen05.alloc
        among the synchronous instructions, whose shared-memory accesses "maintain same-address
        ordering with respect to non-tcgen05 instructions", and §9.7.16.7.1 treats the store as a weak
        memory operation of the memory consistency model.  Another warp's load of the address is
        therefore ordered by thread synchronization alone (happens-before, no tcgen05 fence); a load
        not ordered after the store at all is a data race on it."""
        flat = np.asarray(flat, dtype=np.int64).reshape(-1)
        for slot, (thread, ep, index, _cta, _cols) in self.alloc_slots.items():
            hit = (flat <= slot + 3) & (flat + nbytes > slot)
            if not hit.any():
                continue
            readers = np.asarray(s.idx)[hit[:s.n] if hit.size == s.n else np.ones(s.n, dtype=bool)]
            readers = readers[self.m.warp_of[readers] != self.m.warp_of[thread]]
            late = readers[self.clocks.vc[readers, self.clocks.lt[thread]] < ep]
            if late.size:
                m = self.m
                self._report("alloc-address", SEC_ALLOC, _instr(m, index), m.prog.code[m.current_pc].instr,
                             f"{_threads(m, [thread])} then {_threads(m, late)}",
                             "a load of the address a tcgen05.alloc wrote to shared memory is not ordered after "
                             "the alloc by any synchronization (a data race on the alloc's weak store; thread "
                             "synchronization alone orders it, no tcgen05 fence is needed, §9.7.16.6.1)")

    def after_alloc(self, reader: int, cta: int, lo: int, hi: int, ins, what: str) -> None:
        """A tcgen05 operation of ``reader`` on columns ``[lo, hi)`` of ``cta``: another warp's
        tcgen05.alloc of them must be ordered before it by fence::before_thread_sync ->
        synchronization -> fence::after_thread_sync (§9.7.16.6.3: an asynchronous tcgen05 operation
        after the after-fence is ordered after all prior tcgen05 operations)."""
        a = self.a_thread[cta, lo:hi]
        m = self.m
        other = (a > 0) & (m.warp_of[np.maximum(a - 1, 0)] != m.warp_of[reader])
        if other.any():
            k_ = np.flatnonzero(other)
            self._issue_order(reader, a[k_] - 1, self.a_ep[cta, lo + k_], self.a_index[cta, lo + k_], ins, what,
                              "tcgen05.alloc of its columns")

    def dealloc(self, cta: int, col: int, ncols: int, ins, thread: int | None = None, pair: bool = False) -> None:
        """``tcgen05.dealloc`` of ``cta``'s columns; ``pair``: ``.cta_group::2``, which (conservative
        choice, docs/sim.md) may free the peer CTA's columns too, so the checks cover both CTAs."""
        peer = cta ^ 1
        for c, what, race in ((cta, "tcgen05.dealloc", ("tmem-race", SEC_SYNC)),
                              *(((peer, PEER_DEALLOC, ("peer-dealloc", SEC_ALLOC)),) if pair else ())):
            self._dealloc_checks(c, col, ncols, ins, thread, what, race)
        sl = slice(col, col + ncols)
        if pair and not (self.p_freed[peer, sl] > 0).all():
            # the peer's dealloc, still to come, checks this CTA's accesses: keep them until then
            self.p_freed[cta, sl] = (thread if thread is not None else 0) + 1
            self.p_freed_index[cta, sl] = _index(self.m, ins)
            self.any_pfreed = True
        else:
            for c in (cta, peer) if pair else (cta,):
                self.t_kind[c, :, sl] = 0
                self.t_rd[c, :, sl] = 0
                self.t_iss[c, :, sl] = 0
                self.r_reader[c, sl] = 0
                self.p_freed[c, sl] = 0
        self.a_thread[cta, sl] = 0
        for slot in [k for k, v in self.alloc_slots.items() if v[3] == cta and col in v[4]]:
            del self.alloc_slots[slot]

    def _dealloc_checks(self, cta: int, col: int, ncols: int, ins, thread, what: str, race) -> None:
        """Nothing pending on ``cta``'s columns and every access ordered before the dealloc."""
        m = self.m
        cc = np.full(ncols, cta)
        kk = np.arange(col, col + ncols)
        rule = "dealloc-pending" if race[0] == "tmem-race" else race[0]
        self._pending_ops(cc, kk, ins, what)
        if thread is not None:
            self._before_dealloc(thread, cta, col, col + ncols, ins, what, race)
        if self.t_st_pending[cta, :, col:col + ncols].any():
            q_, k_ = np.nonzero(self.t_st_pending[cta, :, col:col + ncols])
            self._report(rule, SEC_ALLOC, _instr(m, int(self.t_index[cta, q_[0], col + k_[0]])), ins,
                         f"CTA {cta}", f"{what} of columns a tcgen05.st has not completed writing "
                         "(no tcgen05.wait::st)")
        for q_ in range(4) if self.ld_records else ():          # (no pending tcgen05.ld: nothing to check)
            try:
                self._pending_lds(cc, np.full(ncols, q_), kk, ins, what)
            except HazardError as exc:
                self._report(rule, SEC_ALLOC, exc.first, ins, f"CTA {cta}",
                             f"{what} of columns a tcgen05.ld still reads (no tcgen05.wait::ld)")

    def _before_dealloc(self, thread: int, cta: int, lo: int, hi: int, ins, what: str = "tcgen05.dealloc",
                        race: tuple[str, str] = ("tmem-race", SEC_SYNC)) -> None:
        """Every other warp's tcgen05 operation on the columns is ordered before the dealloc by the
        fence pattern (§9.7.16.7.1, §9.7.16.6.3): its loads, its waited stores, completed async writes."""
        m = self.m
        warp = m.warp_of[thread]
        rd = self.t_rd[cta, :, lo:hi]
        has = (rd > 0) & (m.warp_of[np.maximum(rd - 1, 0)] != warp)
        if has.any():
            q_, k_ = np.nonzero(has)
            self._issue_order(thread, rd[q_, k_] - 1, self.t_rd_ep[cta, q_, lo + k_], self.t_rd_index[cta, q_, lo + k_],
                              ins, what, "tcgen05.ld of the columns", race)
        kind = self.t_kind[cta, :, lo:hi]
        wr = self.t_writer[cta, :, lo:hi] - 1
        st = (kind == 1) & (wr >= 0) & (m.warp_of[np.maximum(wr, 0)] != warp)
        if st.any():
            q_, k_ = np.nonzero(st)
            self._issue_order(thread, wr[q_, k_], self.t_stamp[cta, q_, lo + k_], self.t_index[cta, q_, lo + k_],
                              ins, what, "tcgen05.st to the columns", race)
        iss = self.t_iss[cta, :, lo:hi]
        other = (kind == 2) & (iss > 0) & (iss - 1 != thread)
        if other.any():
            q_, k_ = np.nonzero(other)
            self._completed_async(thread, cta, q_, lo + k_, ins, what, race)
