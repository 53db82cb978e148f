"""The hazard checker of one batch machine: :class:`Hazards`, the rule families combined, and the
hooks that span several of them (thread and CTA exit, the tcgen05 and proxy fences)."""

from __future__ import annotations

import numpy as np

from ptxsim.hazards.alloc import AllocRules
from ptxsim.hazards.async_ops import AsyncRules
from ptxsim.hazards.clocks import Clocks
from ptxsim.hazards.common import SEC_MBAR, SEC_PIPE, _instr, _threads, hazard
from ptxsim.hazards.pair import PairRules
from ptxsim.hazards.smem import SmemRules
from ptxsim.hazards.sync import SyncRules
from ptxsim.hazards.tmem import TmemRules
from reference.spec_questions import reading

#: The readings of the checker's spec questions that every known client follows (docs/sim.md "Hazard
#: checker", docs/spec-questions.md): Triton 3.9 and Gluon order tcgen05 work across threads by
#: acquire/release synchronization with no tcgen05.fence, and so does CUTLASS 4.2's CuTe
#: (Q-SYNC-FENCE); Gluon's two_ctas kernels and CUTLASS's SM100 kernels exit right after the CTA
#: pair's collective dealloc (Q-PAIR-DEALLOC); CUTLASS's SM100/SM103 block-scaled mainloops tcgen05.cp the
#: next scale factors over the ones the MMAs just issued read, with no wait (Q-MMA-CP-ORDER).  ``SimDevice()``
#: follows them unless it is strict (``SimDevice(strict=True)``: the questions' picks, the letter of the spec)
#: or its ``readings`` name the question.
CLIENT_READINGS = {"Q-SYNC-FENCE": "acquire-orders", "Q-PAIR-DEALLOC": "collective", "Q-MMA-CP-ORDER": "in-order"}


class Hazards(TmemRules, AsyncRules, AllocRules, SyncRules, SmemRules, PairRules):
    """Shadow state of one batch machine (see the package docstring)."""

    def __init__(self, m, waived: frozenset = frozenset()) -> None:
        self.m = m
        self.waived = waived
        self.clocks = Clocks(m)
        self._init_tmem(m)
        self._init_async(m, reading("Q-MMA-CP-ORDER") == "in-order")
        self._init_alloc(m)
        self._init_sync(m, reading("Q-SYNC-FENCE") == "acquire-orders")
        self._init_smem(m)
        self._init_pair(m, reading("Q-PAIR-DEALLOC") == "collective")
        m.exit_hooks.append(self.on_exit)
        m.cta_exit_hooks.append(self.bulk_loads_at_cta_exit)
        m.cta_exit_hooks.append(self.pair_exit)

    def _report(self, rule: str, *args) -> None:
        """Raise the :func:`hazard` unless ``rule`` is waived (``SimDevice(waive_hazards=...)``)."""
        if rule not in self.waived:
            raise hazard(rule, *args)

    def fence(self, kind: str, s, ins) -> None:
        """``tcgen05.fence::before_thread_sync`` (``kind`` "before"), ``::after_thread_sync``
        ("after") or ``fence.proxy.async`` ("proxy.async") by ``s``."""
        c = self.clocks
        if kind == "before":
            c.before_thread_sync(s.idx)
        elif kind == "after":
            c.after_thread_sync(s.idx)
        elif kind == "proxy.async":
            self.proxy_fence(s)

    # -- exit --------------------------------------------------------------------------------------

    def on_exit(self, m, s) -> None:
        if self.ld_any:
            stamps = self.ld_stamp[:, s.ix]
            pend = stamps > self.ld_waited[s.ix]
            if pend.any():
                r, j = np.unravel_index(int(np.flatnonzero(pend)[0]), pend.shape)
                ld = m.prog.instrs[self.ld_lines[int(stamps[r, j])]]
                self._report("exit-pending", SEC_PIPE, ld, m.prog.code[m.current_pc].instr,
                             _threads(m, s.idx[pend.any(axis=0)]),
                             "a thread exits with a tcgen05.ld not waited for by tcgen05.wait::ld")
        self.bulk_stores_at_exit(m, s)

    def cta_exit(self, ctas: np.ndarray) -> None:
        """CTAs whose last thread exited: nothing asynchronous of theirs may still be pending."""
        m = self.m
        for p in self._queued():
            if int(m.cta_of[p.thread]) in ctas.tolist():
                self._report("exit-pending", SEC_MBAR, _instr(m, p.hz.index), m.prog.code[m.current_pc].instr,
                             f"CTA {int(m.cta_of[p.thread])}", f"the CTA exits while a tcgen05.{p.kind} it "
                             "issued has not been tracked to completion by tcgen05.commit")
        pend = self.t_st_pending[ctas]
        if pend.any():
            c_i, q_i, k_i = np.nonzero(pend)
            self._report("exit-pending", SEC_PIPE, _instr(m, int(self.t_index[ctas[c_i[0]], q_i[0], k_i[0]])),
                         m.prog.code[m.current_pc].instr, f"CTA {int(ctas[c_i[0]])}",
                         "the CTA exits while a tcgen05.st has not been waited for by tcgen05.wait::st")
