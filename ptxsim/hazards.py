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
from reference.spec_questions import reading

SEC_PIPE = "9.7.16.6.2.1.2"          # tcgen05.ld/st -> tcgen05.wait
SEC_ASYNC = "9.7.16.6.1"             # asynchronous tcgen05 operations: unordered unless pipelined
SEC_REG = "9.7.16.6.4.5"             # register dependencies, same thread
SEC_SYNC = "9.7.16.6.3"              # tcgen05.fence::before/after_thread_sync
SEC_MBAR = "9.7.16.6.2.1.1"          # mbarrier based completion
SEC_PROXY = "9.7.16.6.5"             # shared memory accesses in the async proxy
SEC_ALLOC = "9.7.16.7.1"
SEC_BULK = "9.7.9.25.4.1"            # cp.async.bulk: completion through the mbarrier's complete-tx
SEC_TENSOR = "9.7.9.27"              # cp.async.bulk.tensor / cp.async.bulk.wait_group (bulk async-groups)
SEC_ISSUE = "9.7.16.5"               # issue granularity: .cta_group::2 needs the peer CTA (Table 46)
SEC_MBAR_INIT = "9.7.13.15.9"        # mbarrier.init: an object must be initialized before any other mbarrier op
#: the asynchronous tcgen05 operations the shadow tells apart (Tensor Memory cell -> its last writer's kind)
ASYNC_KINDS = {"mma": 1, "cp": 2, "cp.4x256b": 3, "shift": 4}
ASYNC_KIND_NAMES = {code: kind for kind, code in ASYNC_KINDS.items()}
#: pairs (earlier, later) of one thread that execute in issue order (§9.7.16.6.2; mma -> mma for any
#: accumulator, the reading docs/sim.md "Choices" explains)
PIPELINED = {("mma", "mma"), ("cp", "mma"), ("cp.4x256b", "mma"), ("shift", "mma"), ("shift", "cp.4x256b"),
             ("mma", "shift")}
PEER_DEALLOC = "tcgen05.dealloc.cta_group::2 (conservatively: it frees the peer CTA's columns too)"
ALLOC_OPS = ("tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit")


def _threads(m, idx) -> str:
    """A few threads as ``thread(s) (CTA:tid) C:I, ...``."""
    idx = np.atleast_1d(np.asarray(idx)).tolist()
    head = ", ".join(f"{int(m.cta_of[t])}:{int(m.tid_of[t])}" for t in idx[:4])
    more = f" and {len(idx) - 4} more" if len(idx) > 4 else ""
    return f"thread(s) (CTA:tid) {head}{more}"


def hazard(rule: str, section: str, first, second, threads: str, what: str) -> HazardError:
    """A :class:`HazardError` whose message names the rule, both lines and the threads."""
    f = first if isinstance(first, str) else where(first) if first is not None else "(kernel start)"
    s = where(second) if second is not None else "(kernel exit)"
    exc = HazardError(f"hazard {rule} (§{section}): {what}; first {f}, then {s}; {threads}",
                      rule=rule, section=section, first=f, second=s, threads=threads)
    exc.located = True              # the message already names both lines
    return exc


class Hazards:
    """Shadow state of one batch machine (see the module docstring)."""

    def __init__(self, m, waived: frozenset = frozenset()) -> None:
        self.m = m
        self.waived = waived
        #: spec question Q-SYNC-FENCE (docs/spec-questions.md): under ``acquire-orders`` a release
        #: arrival acts as tcgen05.fence::before_thread_sync and an acquire wait as ::after_thread_sync
        self.acquire_orders = reading("Q-SYNC-FENCE") == "acquire-orders"
        #: spec question Q-PAIR-DEALLOC: under ``collective`` a CTA that performed its own collective
        #: alloc/dealloc/relinquish .cta_group::2 stays active for its peer's matching one (rule peer-active)
        self.pair_collective = reading("Q-PAIR-DEALLOC") == "collective"
        self.collectives: dict[tuple[int, str], int] = {}   # (cta, opcode) -> collective ops issued
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
        m.exit_hooks.append(self.on_exit)
        self.clocks = Clocks(m)
        self.mbar: dict[int, list] = {}     # mbarrier word -> [acc vc, acc vt, done vc, done vt]
        self.mbar_inits: dict[int, tuple] = {}  # mbarrier word -> (initing threads, their epochs, line index)
        self.bars: dict[tuple[int, bool], list] = {}  # (barrier id, by cluster) -> per CTA (cluster) [vc, vt, any]
        # Tensor Memory shadow per (cta, lane quarter, column): see tmem_* methods
        shape = (m.ncta, 4, 512)
        self.t_writer = np.zeros(shape, dtype=np.int64)    # thread + 1 of the last completed write
        self.t_stamp = np.zeros(shape, dtype=np.int32)     # its epoch (st) or commit count (async)
        self.t_kind = np.zeros(shape, dtype=np.int8)       # 0 none, 1 tcgen05.st, 2 mma/cp/shift
        self.t_index = np.zeros(shape, dtype=np.int32)     # instruction index of the write
        self.t_st_pending = np.zeros(shape, dtype=np.int64)  # warp + 1 of a tcgen05.st not yet waited for
        self.t_iss = np.zeros(shape, dtype=np.int64)       # issuer + 1 of the last completed mma/cp/shift write
        self.t_iss_ep = np.zeros(shape, dtype=np.int32)    # the issuer's epoch at the issue
        self.t_akind = np.zeros(shape, dtype=np.int8)      # which one wrote it: ASYNC_KINDS code (1 mma, 2 cp, ...)
        self.t_aseq = np.zeros(shape, dtype=np.int32)      # and its serial (op_hist)
        self.op_serial = 0                                 # mma/cp/shift issues so far
        self.op_hist: dict[int, list[tuple[int, str]]] = {}   # thread -> its issues: (serial, kind)
        self.t_rd = np.zeros(shape, dtype=np.int64)        # warp's first thread + 1 of the last tcgen05.ld
        self.t_rd_ep = np.zeros(shape, dtype=np.int32)     # its epoch at the ld
        self.t_rd_index = np.zeros(shape, dtype=np.int32)
        self.any_rd = False
        # per (cta, column): the warp (first thread + 1) whose tcgen05.alloc returned it, its epoch, the line
        self.a_thread = np.zeros((m.ncta, 512), dtype=np.int64)
        self.a_ep = np.zeros((m.ncta, 512), dtype=np.int32)
        self.a_index = np.zeros((m.ncta, 512), dtype=np.int32)
        self.any_alloc = False
        #: flat shared byte of a tcgen05.alloc's address -> (warp's first thread, epoch, line, cta, columns)
        self.alloc_slots: dict[int, tuple[int, int, int, int, range]] = {}
        self.ld_records: list[tuple] = []                  # (warps, cta, quarter, col lo, col hi, index)
        #: tcgen05.st not yet waited for: its cells, its line and which of its warps have not waited
        self.st_records: list[tuple[_WarpCells, int, np.ndarray]] = []
        self.any_st_pending = False                        # t_st_pending has a nonzero entry
        self._cells_memo: _WarpCells | None = None
        # shared memory shadow per 16-byte granule
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
        self.effect = None                                 # the asynchronous effect running now
        self.g_pend = np.zeros(g, dtype=np.int32)          # instruction index + 1 of a bulk copy not yet landed
        self.g_pend_thread = np.zeros(g, dtype=np.int64)
        self.any_pend = False
        # bulk stores (shared -> global, .bulk_group) whose source reads the issuing thread has not
        # waited for (cp.async.bulk.wait_group{.read}): per granule, how many, and the last one's line + 1
        self.g_bsrc: np.ndarray | None = None
        self.g_bsrc_line: np.ndarray | None = None
        # Tensor Memory an mma read at completion (A, metadata, scale factors), per (cta, column), all lanes
        self.r_reader = np.zeros((m.ncta, 512), dtype=np.int64)   # committer + 1
        self.r_count = np.zeros((m.ncta, 512), dtype=np.int32)    # its commit count
        self.r_index = np.zeros((m.ncta, 512), dtype=np.int32)    # the reading instruction
        self.r_iss = np.zeros((m.ncta, 512), dtype=np.int64)      # issuer + 1
        self.r_iss_ep = np.zeros((m.ncta, 512), dtype=np.int32)   # the issuer's epoch at the issue
        self.any_tmem_reads = False
        m.cta_exit_hooks.append(self.bulk_loads_at_cta_exit)
        # the CTA pair (rules peer-launched, peer-active, peer-dealloc; docs/sim.md)
        self.pair_last: dict[int, tuple[int, int, int]] = {}   # thread -> (epoch, line, commits) of its last pair op
        self.pair_coll: dict[int, list] = {}    # thread -> [(opcode, n-th of its CTA, line)] (Q-PAIR-DEALLOC collective)
        self.exited_at: dict[int, int] = {}                     # cta -> instruction index of its last exit
        self.p_freed = np.zeros((m.ncta, 512), dtype=np.int64)  # thread + 1 of the CTA's own cta_group::2 dealloc,
        self.p_freed_index = np.zeros((m.ncta, 512), dtype=np.int32)  # kept until the peer's dealloc checked it
        self.any_pfreed = False
        m.cta_exit_hooks.append(self.pair_exit)

    def _report(self, rule: str, *args) -> None:
        """Raise the :func:`hazard` unless ``rule`` is waived (``SimDevice(waive_hazards=...)``)."""
        if rule not in self.waived:
            raise hazard(rule, *args)

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

    def _queued(self) -> list:
        """The issued, uncompleted mma/cp/shift the checker recorded (``Pending`` with ``hz``), in queue order."""
        tc = self.m.ext.get("tcgen05")
        if tc is None or not tc.queues:
            return []
        return [p for queue in tc.queues.values() for p in queue if p.hz is not None]

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
        from ptxsim.ops_mbarrier import decode
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


    # -- synchronization ---------------------------------------------------------------------------

    def mbar_init(self, words: np.ndarray) -> None:
        for w in np.atleast_1d(words).tolist():
            self.mbar.pop(int(w), None)

    # -- rule mbarrier-init ------------------------------------------------------------------------

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
        idx = waiting[st[2][of[waiting]] & np.isin(of[waiting], ctas)]
        if idx.size:             # bar.sync and barrier.cluster.wait always acquire
            self.clocks.acquire_groups(idx, of[idx], st[0], st[1], self.acquire_orders)
        st[0][ctas] = 0
        st[1][ctas] = 0
        st[2][ctas] = False

    def fence(self, kind: str, s, ins) -> None:
        c = self.clocks
        if kind == "before":
            c.before_thread_sync(s.idx)
        elif kind == "after":
            c.after_thread_sync(s.idx)
        elif kind == "proxy.async":
            # a fence covers the thread's generic writes since its previous fence: one record per
            # fence that follows a write (see :meth:`_proxy_fence_epochs`)
            t = s.idx[self.pf_wrote[s.idx]]
            if t.size:
                if int(self.pf_count[t].max()) >= self.pf_epoch.shape[1]:
                    self._make_fence_room(int(self.pf_count[t].max()))
                k = self.pf_count[t]
                self.pf_epoch[t, k] = c.own[t]
                self.pf_count[t] = k + 1
                self.pf_wrote[t] = False

    # -- ordering checks ---------------------------------------------------------------------------

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

    def _warp_cells(self, s, cta, lanes, cols) -> _WarpCells:
        """The per-warp geometry of a tcgen05.ld/st by the full warps of ``s`` (cached for the
        instruction's after_ld/after_st, which get the same ``cols``)."""
        got = self._cells_memo
        if got is not None and got.cols is cols:
            return got
        got = self._cells_memo = _WarpCells(self.m, s, cta, lanes, cols)
        return got

    def tmem_access(self, s, cta, lanes, cols, ins, what: str, write: bool) -> None:
        """A tcgen05.ld (``write`` False) or tcgen05.st by the warps of ``s``: ``cta`` per row,
        ``lanes``/``cols`` ``[row, entry]``."""
        m = self.m
        wc = self._warp_cells(s, cta, lanes, cols)
        cc, qq, kk, rd = wc.cc, wc.qq, wc.kk, wc.rd
        # pending tcgen05.st (not waited for)
        same = False        # the warp's own pending tcgen05.st on these columns (a st -> st write-after-write?)
        if self.any_st_pending:
            pend = self.t_st_pending[cc, qq, kk]
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
            a = self.a_thread[cc, kk]
            other = (a > 0) & (m.warp_of[np.maximum(a - 1, 0)] != m.warp_of[rd])
            if other.any():
                self._issue_order(rd[other], a[other] - 1, self.a_ep[cc, kk][other], self.a_index[cc, kk][other], ins,
                                  what, "tcgen05.alloc of its columns")
        if write:
            if same and self.st_records:
                self._st_over_pending_st(wc, ins)
            if self.ld_records:
                self._pending_lds(cc, qq, kk, ins, what)
            self.overwrites_async_reads(rd, cc, kk, ins, what, None)
        kinds = self.t_kind[cc, qq, kk]
        done = kinds > 0
        if done.any():
            reader = rd[done]
            wr = self.t_writer[cc, qq, kk][done] - 1
            same_warp = (m.warp_of[wr] == m.warp_of[reader]) & (kinds[done] == 1)
            keep = ~same_warp
            if keep.any():
                self._order(reader[keep], wr[keep], self.t_stamp[cc, qq, kk][done][keep], kinds[done][keep], "tmem-race",
                            self.t_index[cc, qq, kk][done][keep], ins, what)

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
        self.t_rd[wc.cc, wc.qq, wc.kk] = wc.rd + 1
        self.t_rd_ep[wc.cc, wc.qq, wc.kk] = self.clocks.own[wc.rd]
        self.t_rd_index[wc.cc, wc.qq, wc.kk] = index
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
                cc = np.full(hi - lo, cta)
                if self.ld_records:
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
        other = (self.t_kind[cta, :, lo:hi] == 2) & (iss > 0) & (iss - 1 != thread)
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
        kinds = self.t_kind[cta, :, lo:hi]
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

    # -- allocation (§9.7.16.7.1): alloc and dealloc are tcgen05 operations ordered by §9.7.16.6.3 --

    def alloc(self, thread: int, cta: int, col: int, ncols: int, ins, slot: int | None = None) -> None:
        """The warp of ``thread`` (its first thread) allocated columns ``[col, col + ncols)`` of ``cta``
        and wrote their address to the flat shared byte ``slot``."""
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
        """Generic loads by ``s`` of flat shared bytes ``flat``: another warp reading a
        tcgen05.alloc's address uses the alloc's result, so the fence pattern must order it
        (§9.7.16.7.1, §9.7.16.6.3)."""
        flat = np.asarray(flat, dtype=np.int64).reshape(-1)
        for slot, (thread, ep, index, _cta, _cols) in self.alloc_slots.items():
            hit = (flat <= slot + 3) & (flat + nbytes > slot)
            if not hit.any():
                continue
            readers = np.asarray(s.idx)[hit[:s.n] if hit.size == s.n else np.ones(s.n, dtype=bool)]
            readers = readers[self.m.warp_of[readers] != self.m.warp_of[thread]]
            for r in np.unique(readers[self.clocks.vt[readers, self.clocks.lt[thread]] < ep]).tolist()[:1]:
                self._issue_order(int(r), np.array([thread]), np.array([ep]), index,
                                  self.m.prog.code[self.m.current_pc].instr, "a load of the allocated address",
                                  "tcgen05.alloc that wrote it")

    def after_alloc(self, reader: int, cta: int, lo: int, hi: int, ins, what: str) -> None:
        """A tcgen05 operation of ``reader`` on columns ``[lo, hi)`` of ``cta``: another warp's
        tcgen05.alloc of them (and its address in shared memory) must be ordered before it by
        fence::before_thread_sync -> synchronization -> fence::after_thread_sync."""
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
        for q_ in range(4):
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

    # -- asynchronous operations (mma, cp, shift) --------------------------------------------------

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
        chain = _Chain(self.op_hist.get(thread, ()), later)
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
        from ptxsim.memory import SHARED_BASE
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

    # -- Tensor Memory an mma reads at completion (A, metadata, scale factors): write-after-read --

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
        (same thread, or the fence pattern, §9.7.16.6.4.3); mma -> cp and mma -> st are not."""
        pipelined = kind in ("mma", "shift")
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

    # -- shared memory -------------------------------------------------------------------------

    def generic_write(self, s, flat, nbytes: int, ins=None) -> None:
        """Generic-proxy stores by ``s`` to flat shared-memory bytes ``flat`` (one start per thread)."""
        m = self.m
        flat = np.asarray(flat, dtype=np.int64).reshape(s.n, -1)
        first = flat >> 4
        last = (flat + nbytes - 1) >> 4
        t = np.broadcast_to(s.idx.reshape(-1, 1), first.shape).ravel()
        g = first.ravel()
        if (last != first).any():           # a store straddling two 16-byte granules
            g = np.concatenate([g, last.ravel()])
            t = np.concatenate([t, t])
        ins = ins if ins is not None else m.prog.code[m.current_pc].instr
        if self.any_reads:
            self._after_reads(g, t, ins)
        if self.g_bsrc is not None:
            self._bulk_sources_overwritten(g, t, ins)
        self.g_writer[g] = t + 1
        self.g_pfc[g] = self.pf_count[t]
        self.pf_wrote[s.idx] = True
        self.g_time[g] = m.steps
        self.g_index[g] = _index(m, ins)

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

    # -- bulk stores: the source is read until the issuing thread's wait_group{.read} (§9.7.9.27) --

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


# ================================================================================================
# Vector clocks, TMEM and shared-memory shadow state
# ================================================================================================

def _distinct(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of integers ``a``, through a bitmap when their range is small."""
    if not a.size:
        return a
    lo, hi = int(a.min()), int(a.max())
    if hi - lo > 8 * a.size + 65536:
        return np.unique(a)
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[a - lo] = True
    return np.flatnonzero(seen) + lo


def _uniform(starts: np.ndarray, n: int) -> int:
    """The common size of the groups starting at ``starts`` (of ``n`` rows), 0 when they differ."""
    size = n // starts.size if starts.size else 0
    return size if size and n == size * starts.size and (starts == np.arange(starts.size) * size).all() else 0


def _rows(idx: np.ndarray):
    """``idx`` as a slice when it is one contiguous ascending run (a view instead of a copy)."""
    if idx.size and int(idx[-1]) - int(idx[0]) + 1 == idx.size and (idx.size < 3 or bool((np.diff(idx) == 1).all())):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


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
        self.vt = np.zeros_like(self.vc)          # what tcgen05.fence::after_thread_sync made visible
        self.vt_pending = np.zeros_like(self.vc)  # acquired, waiting for an after_thread_sync
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


def _async_kind(ins) -> str:
    """The :data:`ASYNC_KINDS` key of an ``mma``/``cp``/``shift`` instruction."""
    kind = ins.opcode.split(".")[1]
    return "cp.4x256b" if kind == "cp" and ".4x256b" in ins.opcode else kind


def _index(m, ins) -> int:
    return m.prog.index_of.get(id(ins), 0)


def _instr(m, index: int):
    return m.prog.instrs[index]


class _WarpCells:
    """Where a tcgen05.ld/st by full warps goes, per warp (§9.7.16.8.1): CTA ``cta_w``, lane
    quarter ``q_w`` and column span ``lo..hi``, expanded to one entry per (warp, column of its
    span): ``cc``, ``qq``, ``kk``, ``rd`` (the warp's first thread) and ``rep`` (the warp's position)."""

    def __init__(self, m, s, cta, lanes, cols) -> None:
        self.lanes, self.cols = lanes, cols
        nw = s.n // 32                                   # tcgen05.ld/st: whole warps (checked at issue)
        self.cta = np.asarray(cta).reshape(-1)
        starts = np.arange(nw) * 32
        self.warps = m.warp_of[s.idx[starts]]
        self.cta_w = self.cta[starts]
        self.q_w = lanes[starts, 0] // 32
        c3 = cols.reshape(nw, -1)
        self.lo, self.hi = c3.min(axis=1), c3.max(axis=1)
        width = self.hi - self.lo + 1
        self.rep = rep = np.repeat(np.arange(nw), width)
        self.kk = np.arange(rep.size) - np.repeat(np.cumsum(width) - width, width) + self.lo[rep]
        self.cc = self.cta_w[rep]
        self.qq = self.q_w[rep]
        self.rd = (s.idx[starts] - m.lane_of[s.idx[starts]])[rep]

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
    ``later``, through pipelined pairs (:data:`PIPELINED`) alone: ``A`` does when ``A -> X`` is a
    pair for some operation ``X`` issued after it that does (the next one itself included)."""

    def __init__(self, hist, later: str) -> None:
        self.hist = hist
        self.before: dict[int, frozenset] = {}    # serial -> kinds of the ordered operations after it
        self.pos = len(hist)
        self.kinds = {later}

    def ordered(self, serial: int, kind: str) -> bool:
        while self.pos > 0 and self.hist[self.pos - 1][0] > serial:     # walk back to ``serial``, once
            self.pos -= 1
            sq, kd = self.hist[self.pos]
            self.before[sq] = frozenset(self.kinds)
            if any((kd, k) in PIPELINED for k in self.kinds):
                self.kinds.add(kd)
        return any((kind, k) in PIPELINED for k in self.before.get(serial, self.kinds))


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




