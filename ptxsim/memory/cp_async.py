"""Non-bulk cp.async: per-thread asynchronous global -> shared copies of 4, 8 or 16 bytes, with
commit groups and mbarrier tracking (PTX ISA §9.7.9.25.3: cp.async, cp.async.commit_group,
cp.async.wait_group / wait_all, cp.async.mbarrier.arrive).

Timing model (as ``ops_bulk``): a copy reads its source when issued and writes its destination as
late as the thread's program allows it, so a kernel that reads the destination without waiting
sees stale shared memory:

* ``cp.async.commit_group`` closes the thread's open group (possibly empty);
  ``cp.async.wait_group N`` lands every copy of the thread except those of its ``N`` most recent
  committed groups (groups complete in order), ``cp.async.wait_all`` = commit + wait_group 0;
* when no thread can run (every live thread spins on a failed wait), the scheduler lands the
  oldest issued copy instruction (hook ``progress_hooks``);
* ``cp.async.mbarrier.arrive{.noinc}`` arrives on the mbarrier once every cp.async the thread
  issued before it has landed (immediately when none is pending); without ``.noinc`` the pending
  count is incremented by one at issue, so the asynchronous arrival nets zero (§9.7.9.25.3.4).

Copies not landed when their thread exits are dropped.  Rules checked: ``cp-size`` 4, 8 or 16
(``.cg``: 16), ``src-size`` <= ``cp-size`` (bytes from ``src-size`` on are zero-filled; with
``ignore-src`` true, all of them), both addresses aligned to ``cp-size``, the destination in the
CTA's shared memory.  Cache and prefetch qualifiers (``.ca``/``.cg``, ``.L2::*``) have no effect.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptxsim.errors import MemoryFault, SimError
from ptxsim.memory.access import state_address
from ptxsim.memory.mbarrier import FMASK, MAX_COUNT, decode, encode, signal, words
from ptxsim.ptx.parser import Imm, Name, Not
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

SECTION = "9.7.9.25.3"
U32, B64 = TYPES["u32"], TYPES["b64"]


@dataclass
class Copies:
    """One cp.async instruction executed by ``tids`` (issue order ``serial``)."""

    serial: int
    tids: np.ndarray         # thread numbers
    group: np.ndarray        # commit-group number of each thread's copy
    dst: np.ndarray          # flat byte index into m.smem
    data: np.ndarray         # uint8 (n, size), read at issue
    landed: np.ndarray = field(default=None)

    def __post_init__(self) -> None:
        self.landed = np.zeros(self.tids.size, dtype=bool)


@dataclass
class Arrival:
    tid: int
    word: int                # uint64 word index of the mbarrier
    serial: int              # copies issued before it: serial < this
    instr: object


class _Rows:
    """Writer threads, one per row (``idx``, ``n``), for the hazard checker."""

    def __init__(self, idx) -> None:
        self.idx, self.n = np.asarray(idx), int(np.size(idx))


class CpAsyncEngine:
    def __init__(self, m) -> None:
        self.records: list[Copies] = []
        self.serial = 0
        self.open_group = np.zeros(m.T, dtype=np.int64)      # commits so far, per thread
        self.arrivals: list[Arrival] = []
        m.progress_hooks.append(self.progress)
        m.exit_hooks.append(self.on_exit)

    def land(self, m, rec: Copies, mask: np.ndarray) -> None:
        mask = mask & ~rec.landed
        if not mask.any():
            return
        for j in np.flatnonzero(mask).tolist():
            m.smem[rec.dst[j]:rec.dst[j] + rec.data.shape[1]] = rec.data[j]
        if m.hz is not None:                 # a completed non-bulk cp.async writes in the generic proxy
            js = np.flatnonzero(mask)
            m.hz.generic_write(_Rows(rec.tids[js]), rec.dst[js], rec.data.shape[1])
        rec.landed |= mask
        m.epoch += 1

    def wait(self, m, tids: np.ndarray, keep: np.ndarray) -> None:
        """Land every copy of threads ``tids`` whose group is older than ``open - keep``."""
        limit = np.full(m.T, -1, dtype=np.int64)
        limit[tids] = self.open_group[tids] - keep
        for rec in self.records:
            self.land(m, rec, rec.group < limit[rec.tids])
        self.tidy(m)

    def outstanding(self, tid: int, serial: int) -> bool:
        return any(not rec.landed[rec.tids == tid].all() for rec in self.records if rec.serial < serial)

    def tidy(self, m) -> bool:
        """Drop landed records; fire the arrivals whose copies have all landed. True if any fired."""
        self.records = [r for r in self.records if not r.landed.all()]
        fired = False
        for arr in list(self.arrivals):
            if not self.outstanding(arr.tid, arr.serial):
                self.arrivals.remove(arr)
                signal(m, np.array([arr.word]), 1, 0, "arrive", arr.instr, threads=np.array([arr.tid]))
                m.epoch += 1
                fired = True
        return fired

    def progress(self, m) -> bool:
        if self.tidy(m):
            return True
        if not self.records:
            return False
        rec = self.records[0]
        self.land(m, rec, np.ones(rec.tids.size, dtype=bool))
        self.tidy(m)
        return True

    def on_exit(self, m, s) -> None:
        gone = m.exited
        for rec in self.records:
            rec.landed |= gone[rec.tids]
        self.arrivals = [a for a in self.arrivals if not gone[a.tid]]
        self.records = [r for r in self.records if not r.landed.all()]


def engine(m) -> CpAsyncEngine:
    return m.extension("cp.async", CpAsyncEngine)


def _is_pred(k, op) -> bool:
    return isinstance(op, Not) or (isinstance(op, Name) and op.text in k.preds)


@opcode("cp.async.ca", "cp.async.cg")
def compile_cp_async(ins, q, k):
    cg = ins.parts[2] == "cg"
    q.take("shared", "shared::cta", required=True)
    q.take("global", required=True)
    hint = q.flag("L2::cache_hint")
    q.take("L2::64B", "L2::128B", "L2::256B")
    ops = list(ins.operands)
    if len(ops) < 3:
        raise Unsupported("cp.async expects [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}")
    if hint:
        if len(ops) < 4:
            raise Unsupported(".L2::cache_hint expects a cache-policy operand")
        ops.pop()
    if len(ops) not in (3, 4):
        raise Unsupported("cp.async expects [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}")
    size_op = ops[2]
    if not isinstance(size_op, Imm) or size_op.form != "int" or size_op.value not in (4, 8, 16):
        raise Unsupported(f"cp.async cp-size expects the immediate 4, 8 or 16 (§{SECTION}), but got {size_op}")
    size = int(size_op.value)
    if cg and size != 16:
        raise Unsupported(f"cp.async.cg expects cp-size 16 (§{SECTION}), but got {size}")
    daddr = state_address(k, ops[0], "shared::cta")
    saddr = state_address(k, ops[1], "global")
    rsrc = rign = None
    if len(ops) == 4:
        if _is_pred(k, ops[3]):
            rign = k.pred_reader(ops[3])
        else:
            rsrc = k.reader(ops[3], U32)
    what = ins.opcode

    def run(m, s):
        da = np.broadcast_to(np.asarray(daddr(m, s), dtype=np.uint64), (s.n,))
        sa = np.broadcast_to(np.asarray(saddr(m, s), dtype=np.uint64), (s.n,))
        if rsrc is not None:
            nsrc = np.broadcast_to(np.asarray(rsrc(m, s)).astype(np.int64), (s.n,))
            if (nsrc > size).any():
                raise SimError(f"{what}: src-size {int(nsrc.max())} exceeds cp-size {size} (§{SECTION})")
        elif rign is not None:
            nsrc = np.where(np.broadcast_to(rign(m, s), (s.n,)), 0, size)
        else:
            nsrc = np.full(s.n, size, dtype=np.int64)
        flat = m.shared_index(s, da, size, what + " destination", cluster=False)
        if m.hz is not None:                 # the copy may write its destination from its issue on
            m.hz.cp_async_dest(s, flat.astype(np.int64), size, ins)
        if (sa % np.uint64(size)).any():
            bad = int(sa[np.flatnonzero(sa % np.uint64(size))[0]])
            raise MemoryFault(f"{what}: source address 0x{bad:x} is not aligned to cp-size {size} (§{SECTION})")
        data = np.zeros((s.n, size), dtype=np.uint8)
        for b in range(size):
            live = nsrc > b
            if live.any():
                data[live, b] = m.gmem.gather(sa[live] + np.uint64(b), 8, what + " source")
        eng = engine(m)
        eng.records.append(Copies(eng.serial, s.idx.copy(), eng.open_group[s.idx].copy(), flat.astype(np.int64), data))
        eng.serial += 1
    return run


@opcode("cp.async.commit_group")
def compile_commit(ins, q, k):
    k.operands(ins, 0)

    def run(m, s):
        engine(m).open_group[s.idx] += 1
    return run


@opcode("cp.async.wait_group", "cp.async.wait_all")
def compile_wait(ins, q, k):
    if ins.parts[2] == "wait_all":
        k.operands(ins, 0)
        n, commit = 0, True
    else:
        (op,) = k.operands(ins, 1)
        if not isinstance(op, Imm) or op.form != "int" or op.value < 0:
            raise Unsupported("cp.async.wait_group expects a non-negative integer constant")
        n, commit = int(op.value), False

    def run(m, s):
        eng = engine(m)
        if commit:
            eng.open_group[s.idx] += 1
        eng.wait(m, s.idx, n)
    return run


@opcode("cp.async.mbarrier.arrive")
def compile_arrive(ins, q, k):
    noinc = q.flag("noinc")
    space = q.take("shared", "shared::cta") or "generic"
    space = "shared::cta" if space == "shared" else space
    q.take_type(("b64",))
    (a,) = k.operands(ins, 1)
    addr = state_address(k, a, space)
    what = ins.opcode

    def run(m, s):
        view, index = words(m, s, space, addr(m, s), what)
        eng = engine(m)
        for t, w in zip(s.idx.tolist(), index.tolist(), strict=True):
            if not noinc:                    # pending count + 1 now: the later arrival nets zero
                pending, expected, tx, phase = decode(view[w])
                if pending + 1 > MAX_COUNT:
                    raise SimError(f"{what}: mbarrier pending count overflows {MAX_COUNT}")
                view[w] = np.uint64(encode((pending + 1) & FMASK, expected, tx, phase))
            eng.arrivals.append(Arrival(t, w, eng.serial, ins))
        eng.tidy(m)
    return run


__all__ = ["CpAsyncEngine", "engine"]
