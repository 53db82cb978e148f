"""The hazard checker: synchronization rules of §9.7.16.6 and of the async proxy, enforced.

The simulator itself is sequentially consistent, so a kernel that forgets a wait or a fence can
still compute the right answer in it.  With ``SimDevice(hazards=True)`` (the default) every batch
machine carries a :class:`Hazards` (``machine.hz``; ``None`` when off, and then nothing here runs)
that keeps shadow state next to the simulated memories and raises :class:`~ptxsim.errors.HazardError`
the moment a kernel relies on an ordering the PTX ISA does not give it.  Each error names both PTX
lines, the threads and the rule (id and section); docs/sim.md "Hazard checker" lists the rules and
the conservative choices made where the spec is silent.

Happens-before across threads is tracked with vector clocks over the threads of a cluster
(synchronization never leaves a cluster): ``vc[t, u]`` is the latest epoch of thread ``u`` (its
cluster-local index) that thread ``t`` has synchronized with.  A thread's own epoch advances at
each release it performs (an mbarrier arrival, a ``tcgen05.commit``, a ``bar``/``barrier.cluster``
arrival, ``tcgen05.fence::before_thread_sync``); an event of thread ``u`` stamped with epoch ``e``
is ordered before thread ``t``'s current instruction when ``vc[t, u] >= e``.  tcgen05 operations
need more than that (§9.7.16.6.3): a second clock ``vt`` only moves through the
``fence::before_thread_sync`` -> synchronization -> ``fence::after_thread_sync`` pattern (and
through ``tcgen05.commit``, which performs the before-fence implicitly, §9.7.16.6.4.2).
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import HazardError, where

SEC_PIPE = "9.7.16.6.2.1.2"          # tcgen05.ld/st -> tcgen05.wait
SEC_REG = "9.7.16.6.4.5"             # register dependencies, same thread
SEC_ASYNC = "9.7.16.6.1"
SEC_SYNC = "9.7.16.6.3"              # tcgen05.fence::before/after_thread_sync
SEC_MBAR = "9.7.16.6.2.1.1"          # mbarrier based completion
SEC_PROXY = "9.7.16.6.5"             # shared memory accesses in the async proxy
SEC_ALLOC = "9.7.16.7.1"


def _threads(m, idx) -> str:
    """A few thread numbers as ``thread T (CTA C, tid I)``."""
    idx = np.atleast_1d(np.asarray(idx)).tolist()
    head = ", ".join(f"{int(m.cta_of[t])}:{int(m.tid_of[t])}" for t in idx[:4])
    more = f" and {len(idx) - 4} more" if len(idx) > 4 else ""
    return f"thread(s) (CTA:tid) {head}{more}"


def hazard(rule: str, section: str, first, second, threads: str, what: str) -> HazardError:
    """A :class:`HazardError` whose message names the rule, both lines and the threads."""
    f, s = (where(first) if first is not None else "(kernel start)"), (where(second) if second is not None else "(kernel exit)")
    exc = HazardError(f"hazard {rule} (§{section}): {what}; first {f}, then {s}; {threads}",
                      rule=rule, section=section, first=f, second=s, threads=threads)
    exc.located = True              # the message already names both lines
    return exc


class Hazards:
    """Shadow state of one batch machine (see the module docstring)."""

    def __init__(self, m) -> None:
        self.m = m
        prog = m.prog
        # -- rule wait-ld: registers written by tcgen05.ld, per thread, until its wait::ld ------------
        n = len(prog.ld_rows)
        self.ld_pending = np.zeros((max(n, 1), m.T), dtype=bool)
        self.ld_from = np.zeros((max(n, 1), m.T), dtype=np.int32)     # instruction index of the ld
        self.ld_any = False
        m.exit_hooks.append(self.on_exit)

    # -- rule wait-ld --------------------------------------------------------------------------------

    def check_regs(self, s, rows: np.ndarray, ins) -> None:
        """``ins`` (executed by ``s``) reads or writes the ld-destination registers ``rows``."""
        pend = self.ld_pending[rows][:, s.ix]
        if not pend.any():
            return
        r, j = np.unravel_index(int(np.flatnonzero(pend)[0]), pend.shape)
        t = int(s.idx[j])
        row = int(rows[r])
        ld = self.m.prog.instrs[int(self.ld_from[row, t])]
        name = self.m.prog.ld_rows[row]
        raise hazard("wait-ld", SEC_PIPE, ld, ins, _threads(self.m, s.idx[pend.any(axis=0)]),
                     f"register {name} written by tcgen05.ld is used before the thread's tcgen05.wait::ld "
                     f"(conservative: §{SEC_REG} orders true register dependencies, but not the tcgen05.ld's "
                     "completion; see docs/sim.md)")

    def on_ld(self, s, rows: np.ndarray, index: int) -> None:
        """tcgen05.ld by ``s`` (instruction ``index``) writes the registers ``rows``."""
        if rows.size:
            self.ld_pending[np.ix_(rows, s.idx)] = True
            self.ld_from[np.ix_(rows, s.idx)] = index
            self.ld_any = True

    def on_wait_ld(self, s) -> None:
        if self.ld_any:
            self.ld_pending[:, s.ix] = False
            self.ld_any = bool(self.ld_pending.any())

    # -- exit --------------------------------------------------------------------------------------

    def on_exit(self, m, s) -> None:
        if self.ld_any:
            pend = self.ld_pending[:, s.ix]
            if pend.any():
                r, j = np.unravel_index(int(np.flatnonzero(pend)[0]), pend.shape)
                ld = m.prog.instrs[int(self.ld_from[r, int(s.idx[j])])]
                raise hazard("exit-pending", SEC_PIPE, ld, m.prog.code[m.current_pc].instr,
                             _threads(m, s.idx[pend.any(axis=0)]),
                             "a thread exits with a tcgen05.ld not waited for by tcgen05.wait::ld")
