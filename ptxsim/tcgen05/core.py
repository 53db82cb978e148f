"""tcgen05 machinery: Tensor Memory, allocation, the asynchronous pipeline, commit/fence/wait.

Tensor Memory (§9.7.16.1) is ``TensorCore.tmem``: uint32 cells ``[cta, lane, column]``, 128 lanes
x 512 columns per CTA, filled with ``TMEM_FILL`` (hardware: stale data) so a read of a cell no
operation wrote shows up in the results.

Asynchronous operations (§9.7.16.6): ``tcgen05.mma``/``cp``/``shift`` handlers do not change
Tensor Memory when issued; they ``issue`` an *effect* (a closure that reads shared memory and
writes Tensor Memory) into the pipeline of their CTA (CTA pair for ``cta_group::2``).  Effects run
in issue order, so every pipelined pair of §9.7.16.6.2 is ordered, and only when completion is
observable: a ``tcgen05.commit`` runs every effect queued up to the committing thread's last
operation, then arrives on the mbarrier.  ``tcgen05.st`` effects run at the issuing thread's
``tcgen05.wait::st``.  A kernel that reads results without commit + wait (or wait::st) therefore
reads ``TMEM_FILL``, and one that overwrites shared operands before completion feeds the new
data to the MMA: both are caught, where real hardware might be lucky.

``tcgen05.fence::*`` are no-ops here: the pipeline above already orders every operation by issue
time across threads, which is what the fences guarantee together with thread synchronisation.

Allocation (§9.7.16.7.1) follows the rules of ``reference.tmem_alloc`` (R1-R8): power-of-2 column
counts in [32, 512], non-increasing between allocations, nothing after relinquish, one full
warp, whole allocations freed, everything freed before the CTA exits, and an allocation that
cannot be satisfied is an error (it would block for ever: no other CTA shares the simulated
Tensor Memory).  Placement: lowest free block aligned to its size (a simulator choice).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ptxsim.engine.lookup import member_of
from ptxsim.engine.machine import Sel, cluster_address
from ptxsim.errors import Deadlock, SimError
from ptxsim.isa.control import require_full_warps
from ptxsim.memory.access import state_address
from ptxsim.memory.mbarrier import signal, words
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES
from reference.errors import SpecError

LANES, COLUMNS = 128, 512
TMEM_FILL = 0x7FBADBAD
ALLOC_COLUMNS = (32, 64, 128, 256, 512)
SECTION_ALLOC = "9.7.16.7.1"
U32, B32, U64 = TYPES["u32"], TYPES["b32"], TYPES["u64"]

_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def split_taddr(taddr) -> tuple[np.ndarray, np.ndarray]:
    """Tensor Memory address -> (lane = bits 31-16, column = bits 15-0) (§9.7.16.1.1)."""
    a = np.asarray(taddr).astype(np.int64)
    return (a >> 16) & 0xFFFF, a & 0xFFFF


@dataclass
class Pending:
    seq: int
    thread: int
    kind: str
    effect: Callable[[], None]
    hz: object = None              # the hazard checker's record of the issue (ptxsim.hazards)


@dataclass
class PendingStores:
    """The Tensor Memory writes of one ``tcgen05.st`` execution, one row per selected thread:
    ``key`` is the thread that owns the row's store (its warp's first thread, the one whose
    ``wait::st`` applies it), ``cta``/``lanes``/``cols``/``vals`` the cells and values
    (``[row, entry]``), ``pending`` the rows not yet applied; ``cells``: the cells' index into
    ``TensorCore.tmem_flat`` when the issue knew it (else computed when applied)."""

    key: np.ndarray
    cta: np.ndarray
    lanes: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    pending: np.ndarray
    kept: int = 0                  # bits of each cell the store leaves as they were (.unpack::16b, Q-UNPACK-UPPER)
    cells: np.ndarray | None = None


class TensorCore:
    """Tensor Memory, allocations and pending asynchronous operations of a machine's CTAs."""

    def __init__(self, m) -> None:
        self.m = m
        self.tmem = np.full((m.ncta, LANES, COLUMNS), TMEM_FILL, dtype=np.uint32)
        #: ``tmem`` as one row (a view): a flat index per cell (:meth:`cell_index`) gathers and
        #: scatters several times faster than a (cta, lane, column) triple of index arrays
        self.tmem_flat = self.tmem.reshape(-1)
        self.allocs: list[dict[int, int]] = [dict() for _ in range(m.ncta)]   # start column -> ncols
        self.last_ncols: list[int | None] = [None] * m.ncta
        self.relinquished = np.zeros(m.ncta, dtype=bool)
        self.queues: dict[int, list[Pending]] = {}        # pipeline key -> pending effects
        self.stores: list[PendingStores] = []              # tcgen05.st batches, in issue order
        self.seq = 0
        self._mask: np.ndarray | None = None                # cached allocated-column mask
        self.collectors: dict = {}                         # (cta, buffer) -> operand kept by ::fill
        m.cta_exit_hooks.append(self.on_cta_exit)

    # -- allocation ----------------------------------------------------------------------------

    def allocated(self, cta: int) -> np.ndarray:
        cols = np.zeros(COLUMNS, dtype=bool)
        for start, n in self.allocs[cta].items():
            cols[start:start + n] = True
        return cols

    def alloc(self, cta: int, ncols: int) -> int:
        if ncols not in ALLOC_COLUMNS:
            raise SpecError(SECTION_ALLOC, "R1 nCols", f"nCols expects a power of 2 in [32, 512], but got {ncols}")
        if self.relinquished[cta]:
            raise SpecError(SECTION_ALLOC, "R3 relinquish", f"tcgen05.alloc in CTA {cta} after relinquish_alloc_permit")
        last = self.last_ncols[cta]
        if last is not None and ncols > last:
            raise SpecError(SECTION_ALLOC, "R2 non-increasing",
                            f"nCols expects at most the previous allocation's {last}, but got {ncols}")
        used = self.allocated(cta)
        for start in range(0, COLUMNS, ncols):
            if not used[start:start + ncols].any():
                self.allocs[cta][start] = ncols
                self.last_ncols[cta] = ncols
                self._mask = None
                return start
        raise Deadlock(f"tcgen05.alloc of {ncols} columns in CTA {cta} would block for ever: "
                       f"{int((~used).sum())} of 512 columns free, none in an aligned block (R8)")

    def dealloc(self, cta: int, taddr: int, ncols: int) -> None:
        lane, col = split_taddr(taddr)
        if int(lane) != 0 or self.allocs[cta].get(int(col)) != ncols:
            live = ", ".join(f"{n} at column {s}" for s, n in sorted(self.allocs[cta].items())) or "none"
            raise SpecError(SECTION_ALLOC, "R6 dealloc", f"tcgen05.dealloc expects a live allocation "
                            f"(taddr, nCols) of CTA {cta} (live: {live}), but got taddr 0x{int(taddr):x}, nCols {ncols}")
        del self.allocs[cta][int(col)]
        self._mask = None

    def column_mask(self) -> np.ndarray:
        """bool ``[cta, column]``: allocated columns of every CTA (cached until alloc/dealloc)."""
        if self._mask is None:
            self._mask = np.stack([self.allocated(c) for c in range(self.m.ncta)])
        return self._mask

    def require_cells(self, cta, lanes, cols, what: str, bounds: tuple[int, int, int, int] | None = None) -> None:
        """Raise unless every (cta, lane, column) is inside Tensor Memory and allocated; ``bounds``:
        the lowest and highest lane and column of the cells when the caller knows them already."""
        cta, lanes, cols = np.asarray(cta), np.asarray(lanes), np.asarray(cols)
        if np.broadcast(cta, lanes, cols).size == 0:
            return
        # every entry of each array takes part in the broadcast cells (none is empty): their
        # extremes, and the first CTA, are read from the arrays themselves (no broadcast copies)
        if bounds is not None:
            lane_lo, lane_hi, col_lo, col_hi = bounds
        else:
            col_lo, col_hi = int(_MIN(cols, axis=None)), int(_MAX(cols, axis=None))
            lane_lo, lane_hi = int(_MIN(lanes, axis=None)), int(_MAX(lanes, axis=None))
        if lane_lo < 0 or lane_hi >= LANES or col_lo < 0 or col_hi >= COLUMNS:
            raise SpecError("9.7.16.1", "Tensor Memory shape", f"{what}: cells expect lanes < {LANES} and columns < "
                            f"{COLUMNS}, but got lanes {lane_lo}..{lane_hi}, columns "
                            f"{col_lo}..{col_hi}")
        c0 = int(cta.flat[0])
        if int(_MIN(cta, axis=None)) == c0 == int(_MAX(cta, axis=None)):
            if self.column_mask()[c0, col_lo:col_hi + 1].all():
                return              # one CTA, and its whole column span is allocated
        elif self.column_mask()[:, col_lo:col_hi + 1].all(axis=1)[cta].all():
            return                  # every CTA named has the whole column span allocated
        cta, lanes, cols = np.broadcast_arrays(cta, lanes, cols)
        ok = self.column_mask()[cta, cols]
        if not ok.all():
            k = np.unravel_index(int(np.flatnonzero(~ok.ravel())[0]), ok.shape)
            c = int(cta[k])
            raise SimError(f"{what}: Tensor Memory column {int(cols[k])} of CTA {c} is not allocated")

    @staticmethod
    def cell_index(cta, lanes, cols) -> np.ndarray:
        """Index into :attr:`tmem_flat` of the cells (cta, lane, column), broadcast together; the
        cells must be inside Tensor Memory (:meth:`require_cells` first)."""
        return (np.asarray(cta) * LANES + lanes) * COLUMNS + cols

    def require_allocated(self, cta: int, col0: int, ncols: int, what: str) -> None:
        """Raise unless columns [col0, col0 + ncols) of ``cta`` are allocated."""
        cols = self.allocated(cta)
        if col0 < 0 or col0 + ncols > COLUMNS or not cols[col0:col0 + ncols].all():
            raise SimError(f"{what}: Tensor Memory columns {col0}..{col0 + ncols - 1} of CTA {cta} "
                           "are not (all) allocated")

    def on_cta_exit(self, m, ctas: np.ndarray) -> None:
        if m.hz is not None:
            m.hz.cta_exit(ctas)
        for cta in ctas.tolist():
            if self.allocs[cta]:
                n = sum(self.allocs[cta].values())
                raise SpecError(SECTION_ALLOC, "R7 dealloc before exit",
                                f"CTA {cta} exited with {n} Tensor Memory columns still allocated")

    # -- asynchronous pipeline ------------------------------------------------------------------

    def pipeline_key(self, cta: int, cta_group: int) -> int:
        return cta - cta % 2 if cta_group == 2 else cta

    def issue(self, thread: int, cta_group: int, kind: str, effect: Callable[[], None], *, ins=None,
              ctas=(), cols=(0, 0), reads=()) -> None:
        """Queue an asynchronous operation (mma, cp, shift) issued by ``thread`` (instruction
        ``ins``) that writes columns ``cols`` = [lo, hi) of every lane of ``ctas`` and reads the
        Tensor Memory ``reads`` = ``(cta, lo, hi)`` at completion (an MMA's A, metadata, scale factors)."""
        self.seq += 1
        self.m.epoch += 1
        key = self.pipeline_key(int(self.m.cta_of[thread]), cta_group)
        record = self.m.hz.issue(thread, ins, ctas, cols) if self.m.hz is not None and ins is not None else None
        if record is not None:
            record.tmem_reads = list(reads)
        self.queues.setdefault(key, []).append(Pending(self.seq, thread, kind, effect, record))

    def complete_through(self, thread: int, cta_group: int) -> None:
        """Run, in issue order, every queued effect up to ``thread``'s last operation (commit)."""
        key = self.pipeline_key(int(self.m.cta_of[thread]), cta_group)
        queue = self.queues.get(key, [])
        mine = [p.seq for p in queue if p.thread == thread]
        if not mine:
            return
        last = mine[-1]
        hz = self.m.hz
        while queue and queue[0].seq <= last:
            p = queue.pop(0)
            if hz is None:
                p.effect()
                continue
            hz.begin_effect(p.hz)
            p.effect()
            hz.end_effect(p.hz, thread)

    def issue_stores(self, key: np.ndarray, cta, lanes, cols, vals, kept: int = 0, cells=None) -> None:
        """Queue the cells of one ``tcgen05.st`` (rows owned by the threads ``key``, see
        :class:`PendingStores`); they are written at the owners' ``tcgen05.wait::st``. ``cells``:
        their :meth:`cell_index`, when the caller has it."""
        self.m.epoch += 1
        rows = np.broadcast_to(np.asarray(key), (np.shape(lanes)[0],))
        self.stores.append(PendingStores(rows, np.broadcast_to(cta, np.shape(lanes)), lanes, cols, vals,
                                         np.ones(rows.shape, dtype=bool), kept, cells))

    def _write(self, batch: PendingStores, where, vals, cells=None) -> None:
        kept = np.uint32(batch.kept)
        if cells is None:
            cells = self.cell_index(*where)            # checked at issue (require_cells)
        self.tmem_flat[cells] = (self.tmem_flat[cells] & kept) | vals if kept else vals

    def wait_stores(self, threads) -> None:
        """Apply, in issue order, the queued stores owned by ``threads`` (§9.7.16.8.4 wait::st).

        Each warp's stores land in its own issue order; stores of different warps to one cell
        without synchronisation race on hardware, and land here in issue order."""
        threads = np.asarray(threads)
        keep = []
        for batch in self.stores:
            mine = batch.pending & member_of(batch.key, threads, self.m.T)
            if mine.all():
                self._write(batch, (batch.cta, batch.lanes, batch.cols), batch.vals, batch.cells)
                continue
            if mine.any():
                self._write(batch, (batch.cta[mine], batch.lanes[mine], batch.cols[mine]), batch.vals[mine],
                            None if batch.cells is None else batch.cells[mine])
                batch.pending = batch.pending & ~mine
            keep.append(batch)
        self.stores = keep


def tensor_core(m) -> TensorCore:
    """The machine's :class:`TensorCore` (made on first use)."""
    return m.extension("tcgen05", TensorCore)


# -- compile helpers ----------------------------------------------------------------------------

def cta_group(q, k) -> int:
    """Take ``.cta_group::N`` and check every tcgen05 instruction of the kernel agrees (R5)."""
    value = q.take_prefix("cta_group::", required=True)
    if value not in ("1", "2"):
        raise Unsupported(f".cta_group::{value}")
    group = int(value)
    seen = k.state.setdefault("tcgen05.cta_group", group)
    if seen != group:
        raise SpecError(SECTION_ALLOC, "R5 same .cta_group",
                        f"every tcgen05 instruction of a kernel expects .cta_group::{seen}, but got .cta_group::{group}")
    return group


def sync_aligned(q) -> None:
    q.take("sync", required=True)
    q.take("aligned", required=True)


def single_thread(idx: int) -> Sel:
    one = np.array([idx], dtype=np.int64)
    return Sel(one, one)


def check_peer(m, cta: int, group: int, what: str, thread: int | None = None) -> None:
    """A ``.cta_group::2`` operation of ``cta`` needs its peer CTA; with the hazard checker on, the
    issuing ``thread`` must also be ordered after the peer's launch and before its exit (§9.7.16.5)."""
    if group != 2:
        return
    if m.cluster_size < 2:
        raise SimError(f"{what}: .cta_group::2 needs a cluster of at least 2 CTAs (peer CTA), but the launch has "
                       f"clusters of {m.cluster_size}")
    peer = cta ^ 1
    if m.hz is not None and thread is not None:
        m.hz.pair_op(thread, cta, what)
    if m.live_per_cta[peer] == 0:
        raise SimError(f"{what}: the peer CTA of CTA {cta} has exited")


# -- allocation instructions --------------------------------------------------------------------

@opcode("tcgen05.alloc")
def compile_alloc(ins, q, k):
    group = cta_group(q, k)
    sync_aligned(q)
    space = q.take("shared::cta") or "generic"
    q.take_type(("b32",))
    dst, ncols = k.operands(ins, 2)
    addr = state_address(k, dst, space)
    rn = k.reader(ncols, U32)

    def run(m, s):
        tc = tensor_core(m)
        starts, _, _ = require_full_warps(m, s, "tcgen05.alloc")
        n = np.broadcast_to(np.asarray(rn(m, s)).astype(np.int64), (s.n,))
        a = np.broadcast_to(np.asarray(addr(m, s)).astype(np.uint64), (s.n,))
        for j in starts.tolist():
            t = int(s.idx[j])
            cta = int(m.cta_of[t])
            check_peer(m, cta, group, "tcgen05.alloc", t)
            column = tc.alloc(cta, int(n[j]))
            m.store(space, single_thread(t), a[j:j + 1], np.array([column], dtype=np.uint32), 32, "tcgen05.alloc")
            if m.hz is not None:
                view, where = m.locate(space, single_thread(t), a[j:j + 1], 32, "tcgen05.alloc", write=False)
                slot = int(where[0]) * 4 if view.base is m.smem else None
                m.hz.alloc(t - int(m.lane_of[t]), cta, column & 0xFFFF, int(n[j]), ins, slot)
    return run


@opcode("tcgen05.dealloc")
def compile_dealloc(ins, q, k):
    group = cta_group(q, k)
    sync_aligned(q)
    q.take_type(("b32",))
    taddr, ncols = k.operands(ins, 2)
    rt, rn = k.reader(taddr, U32), k.reader(ncols, U32)

    def run(m, s):
        tc = tensor_core(m)
        starts, _, _ = require_full_warps(m, s, "tcgen05.dealloc")
        t_all = np.broadcast_to(np.asarray(rt(m, s)).astype(np.int64), (s.n,))
        n = np.broadcast_to(np.asarray(rn(m, s)).astype(np.int64), (s.n,))
        for j in starts.tolist():
            cta = int(m.cta_of[int(s.idx[j])])
            check_peer(m, cta, group, "tcgen05.dealloc", int(s.idx[j]))
            if m.hz is not None:
                m.hz.dealloc(cta, int(t_all[j]) & 0xFFFF, int(n[j]), ins, int(s.idx[j]), pair=group == 2)
            tc.dealloc(cta, int(t_all[j]), int(n[j]))
    return run


@opcode("tcgen05.relinquish_alloc_permit")
def compile_relinquish(ins, q, k):
    group = cta_group(q, k)
    sync_aligned(q)
    k.operands(ins, 0)

    def run(m, s):
        starts, _, _ = require_full_warps(m, s, "tcgen05.relinquish_alloc_permit")
        for j in starts.tolist():
            check_peer(m, int(m.cta_of[int(s.idx[j])]), group, "tcgen05.relinquish_alloc_permit", int(s.idx[j]))
        tensor_core(m).relinquished[np.unique(m.cta_of[s.ix])] = True
    return run


# -- ordering and completion --------------------------------------------------------------------

@opcode("tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync")
def compile_fence(ins, q, k):
    k.operands(ins, 0)
    kind = "before" if "before" in ins.parts[1] else "after"

    def run(m, s):      # the pipeline already orders by issue; the hazard checker tracks the pattern
        if m.hz is not None:
            m.hz.fence(kind, s, ins)
    return run


@opcode("tcgen05.wait::ld", "tcgen05.wait::st")
def compile_wait(ins, q, k):
    sync_aligned(q)
    k.operands(ins, 0)
    stores = ins.parts[1] == "wait::st"

    def run(m, s):
        require_full_warps(m, s, ins.opcode)
        if stores:       # loads complete at issue (their registers are written then)
            tensor_core(m).wait_stores(s.idx)
        elif m.hz is not None:
            m.hz.on_wait_ld(s)
        if m.hz is not None:
            m.hz.wait(s, stores)
    return run


@opcode("tcgen05.commit")
def compile_commit(ins, q, k):
    group = cta_group(q, k)
    q.take("mbarrier::arrive::one", required=True)
    space = q.take("shared::cluster") or "generic"
    multicast = q.flag("multicast::cluster")
    q.take_type(("b64",))
    ops = k.operands(ins, 2 if multicast else 1)
    addr = state_address(k, ops[0], space)
    rmask = k.reader(ops[1], TYPES["u16"]) if multicast else None

    def run(m, s):
        tc = tensor_core(m)
        a = np.broadcast_to(np.asarray(addr(m, s)).astype(np.uint64), (s.n,))
        masks = np.broadcast_to(np.asarray(rmask(m, s)).astype(np.int64), (s.n,)) if multicast else None
        for j, t in enumerate(s.idx.tolist()):
            one = single_thread(t)
            check_peer(m, int(m.cta_of[t]), group, "tcgen05.commit", t)
            target = a[j:j + 1]
            if multicast:
                ranks = [r for r in range(m.cluster_size) if masks[j] >> r & 1]
                local = m.from_generic("shared", target) if space == "generic" else target
                target = cluster_address(np.array(ranks, dtype=np.uint64), local & np.uint64(0xFFFFFF))
                space_t = "shared::cluster"
                one = Sel(np.full(len(ranks), t), np.full(len(ranks), t))
            else:
                space_t = space
            if one.n == 0:
                continue
            _, index = words(m, one, space_t, target, "tcgen05.commit")
            if m.hz is not None:
                m.hz.commit(t)
            signal(m, index, 1, 0, "commit", ins, threads=np.full(index.size, t),
                   complete_pending=lambda ev, t=t: tc.complete_through(t, group))
    return run
