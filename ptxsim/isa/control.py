"""Control flow, barriers and warp-level instructions (PTX ISA §9.7.12, §9.7.13).

Barrier counting (bar/barrier, §9.7.13.1): threads arrive one by one; a barrier of a CTA
completes when the threads that arrived reach the expected count (the operand ``b``, or every
live thread of the CTA).  Exited threads count as arrived, as on hardware where exited warps
leave the barrier's expected set.  ``barrier.cluster`` (§9.7.13.2) likewise over a cluster.
"""

from __future__ import annotations

import numpy as np

from ptxsim.engine.lookup import member_of
from ptxsim.errors import SimError, Trap
from ptxsim.ptx.parser import Name, Pair
from ptxsim.ptx.registry import ORDERING, Block, Branch, Exit, IndirectBranch, Unsupported, opcode
from ptxsim.ptx.types import TYPES

U32 = TYPES["u32"]
NBARRIERS = 16


@opcode("bra")
def compile_bra(ins, q, k):
    q.flag("uni")
    (target,) = k.operands(ins, 1)
    if not isinstance(target, Name):
        raise Unsupported("bra expects a label")
    return Branch(target.text)


@opcode("brx.idx")
def compile_brx(ins, q, k):
    """``brx.idx{.uni} index, tlist;`` (PTX ISA §9.7.12): branch to the ``index``-th label of the
    ``.branchtargets`` list ``tlist``; an index past the list is undefined behaviour (an error here)."""
    q.flag("uni")
    index, table = k.operands(ins, 2)
    if not isinstance(table, Name):
        raise Unsupported("brx.idx expects a .branchtargets label as its second operand")
    return IndirectBranch(table.text, k.reader(index, U32))


@opcode("ret", "exit")
def compile_exit(ins, q, k):
    q.flag("uni")
    k.operands(ins, 0)
    return Exit()


@opcode("trap", "brkpt")
def compile_trap(ins, q, k):
    k.operands(ins, 0)
    op = ins.parts[0]

    def run(m, s):
        raise Trap(f"kernel executed {op} ({s.n} thread(s))")
    return run


@opcode("nanosleep")
def compile_nanosleep(ins, q, k):
    q.take_type(("u32",))
    k.operands(ins, 1)

    def run(m, s):        # a sleeping thread lets the others run
        m.yield_request = True
    return run


@opcode("membar", "fence")
def compile_fence(ins, q, k):
    q.ignore(*ORDERING, "gl", "proxy", "async", "alias", "tensormap", "mbarrier_init", "op_restrict",
             "shared::cta", "shared::cluster", "global", "sync_restrict::shared::cta", "sync_restrict::shared::cluster",
             "release", "acquire")
    k.operands(ins, 0)
    if not ins.opcode.startswith("fence.proxy.async"):
        return lambda m, s: None

    def run(m, s):             # fence.proxy.async: generic-proxy writes become visible to the async proxy
        if m.hz is not None:
            m.hz.fence("proxy.async", s, ins)
    return run


@opcode("setmaxnreg", "griddepcontrol")
def compile_noop_hint(ins, q, k):
    q.ignore("inc", "dec", "sync", "aligned", "u32", "launch_dependents", "wait")
    k.operands(ins, 0, 1)
    return lambda m, s: None


# -- CTA barriers -------------------------------------------------------------------------------

class BarrierState:
    """Arrivals at the 16 named barriers of every CTA of a machine."""

    def __init__(self, m) -> None:
        self.arrived = np.zeros((NBARRIERS, m.T), dtype=bool)
        self.waiting = np.zeros(m.T, dtype=np.int8)           # barrier id + 1 a thread waits at
        self.expected = np.zeros((NBARRIERS, m.ncta), dtype=np.int64)   # 0: every live thread
        m.exit_hooks.append(self.on_exit)

    def arrive(self, m, s, bid: np.ndarray, count, wait: bool) -> None:
        m.epoch += 1
        for b in np.unique(bid):
            b = int(b)
            if not 0 <= b < NBARRIERS:
                raise SimError(f"barrier id expects 0..{NBARRIERS - 1}, but got {b}")
            sub = s if bid.size == 1 else s.narrow(bid == b)
            if m.hz is not None:
                m.hz.bar_arrive(b, sub.idx)
            self.arrived[b, sub.ix] = True
            ctas = np.unique(m.cta_of[sub.ix])
            if count is not None:
                self.expected[b, ctas] = int(np.asarray(count).reshape(-1)[0])
            if wait:
                self.waiting[sub.ix] = b + 1
            self.check(m, b, ctas)

    def check(self, m, b: int, ctas: np.ndarray) -> None:
        have = np.bincount(m.cta_of[self.arrived[b]], minlength=m.ncta)[ctas]
        exp = self.expected[b, ctas]
        need = np.where(exp > 0, exp, m.live_per_cta[ctas])
        done = ctas[have >= need]
        if done.size:
            in_done = member_of(m.cta_of, done, m.ncta)
            if m.hz is not None:
                m.hz.bar_complete(b, done, np.flatnonzero(in_done & (self.waiting == b + 1)))
            self.arrived[b, in_done] = False
            self.waiting[in_done & (self.waiting == b + 1)] = 0
            self.expected[b, done] = 0

    def on_exit(self, m, s) -> None:
        ctas = np.unique(m.cta_of[s.ix])
        for b in range(NBARRIERS):
            if self.arrived[b].any():
                self.check(m, b, ctas)


def _barriers(m) -> BarrierState:
    return m.extension("barrier", BarrierState)


@opcode("bar", "barrier")
def compile_bar(ins, q, k):
    q.ignore("cta", "aligned")
    mode = q.take("sync", "arrive", "red", default="sync")
    if mode == "red":
        raise Unsupported("bar.red is not modelled")
    ops = k.operands(ins, 1, 2)
    ra = k.reader(ops[0], U32)
    rb = k.reader(ops[1], U32) if len(ops) == 2 else None
    if mode == "arrive" and rb is None:
        raise Unsupported("bar.arrive expects a thread count")

    def arrive(m, s, wait: bool) -> None:
        bid = np.asarray(ra(m, s)).reshape(-1).astype(np.int64)
        _barriers(m).arrive(m, s, bid, None if rb is None else rb(m, s), wait)

    if mode == "arrive":
        return lambda m, s: arrive(m, s, False)
    return Block(lambda m, s: arrive(m, s, True), lambda m, s: _barriers(m).waiting[s.ix] == 0, "bar.sync")


@opcode("bar.warp.sync")
def compile_bar_warp(ins, q, k):
    k.operands(ins, 1)
    return lambda m, s: None


# -- cluster barrier ----------------------------------------------------------------------------

class ClusterBarrier:
    def __init__(self, m) -> None:
        nclusters = m.ncta // m.cluster_size
        self.arrived = np.zeros(m.T, dtype=bool)
        self.phase = np.zeros(nclusters, dtype=np.int64)
        self.my_phase = np.full(m.T, -1, dtype=np.int64)    # phase a thread's arrival belongs to
        m.exit_hooks.append(lambda m, s: self.check(m, np.unique(m.cluster_of[s.ix])))

    def arrive(self, m, s, release: bool = True) -> None:
        if self.arrived[s.ix].any():
            raise SimError("barrier.cluster.arrive twice without barrier.cluster.wait in between")
        m.epoch += 1
        if m.hz is not None:
            m.hz.bar_arrive(NBARRIERS, s.idx, by_cluster=True, release=release)
        self.arrived[s.ix] = True
        self.my_phase[s.ix] = self.phase[m.cluster_of[s.ix]]
        self.check(m, np.unique(m.cluster_of[s.ix]))

    def check(self, m, clusters: np.ndarray) -> None:
        nclusters = self.phase.size
        have = np.bincount(m.cluster_of[self.arrived], minlength=nclusters)[clusters]
        live = m.live_per_cta.reshape(nclusters, m.cluster_size).sum(axis=1)[clusters]
        done = clusters[(have >= live) & (have > 0)]
        if done.size:
            if m.hz is not None:
                m.hz.bar_complete(NBARRIERS, done, np.flatnonzero(self.arrived & member_of(m.cluster_of, done, nclusters)),
                                  by_cluster=True)
            self.arrived[member_of(m.cluster_of, done, nclusters)] = False
            self.phase[done] += 1

    def ready(self, m, s) -> np.ndarray:
        return self.phase[m.cluster_of[s.ix]] > self.my_phase[s.ix]


def _cluster_barrier(m) -> ClusterBarrier:
    return m.extension("barrier.cluster", ClusterBarrier)


@opcode("barrier.cluster.arrive")
def compile_cluster_arrive(ins, q, k):
    release = "relaxed" not in q.rest
    q.ignore("release", "relaxed", "aligned")
    k.operands(ins, 0)
    return lambda m, s: _cluster_barrier(m).arrive(m, s, release)


@opcode("barrier.cluster.wait")
def compile_cluster_wait(ins, q, k):
    q.ignore("acquire", "aligned")
    k.operands(ins, 0)
    return Block(lambda m, s: _cluster_barrier(m), lambda m, s: _cluster_barrier(m).ready(m, s), "barrier.cluster.wait")


# -- warp-level ---------------------------------------------------------------------------------

def warp_segments(m, s):
    """(start offsets of each warp's run in ``s``, warp of each run, run lengths); ``s`` is sorted.
    Kept in ``s.memo`` (a machine's warp numbering never changes)."""
    got = s.memo.get("warp_segments")
    if got is None:
        got = s.memo["warp_segments"] = _warp_segments(m, s)
    return got


def _warp_segments(m, s):
    w = m.warp_of[s.ix]
    first = np.ones(s.n, dtype=bool)
    first[1:] = w[1:] != w[:-1]
    starts = np.flatnonzero(first)
    return starts, w[starts], np.diff(np.append(starts, s.n))


@opcode("elect.sync")
def compile_elect(ins, q, k):
    dest, mask = k.operands(ins, 2)
    wd = k.writer(dest.first if isinstance(dest, Pair) else dest, U32)
    wp = k.pred_writer(dest.second) if isinstance(dest, Pair) else None
    rm = k.reader(mask, U32)

    def run(m, s):
        lane = m.lane_of[s.ix]
        member = (np.asarray(rm(m, s)).astype(np.int64) >> lane) & 1
        starts, _, sizes = warp_segments(m, s)
        leader = np.minimum.reduceat(np.where(member == 1, lane, 99), starts)
        if (leader == 99).any():
            raise SimError("elect.sync: no active thread of the warp is in membermask")
        per_thread = np.repeat(leader, sizes)
        wd(m, s, per_thread.astype(np.uint32))
        if wp is not None:
            wp(m, s, lane == per_thread)
    return run


@opcode("shfl.sync")
def compile_shfl(ins, q, k):
    mode = q.take("up", "down", "bfly", "idx", required=True)
    t = q.take_type(("b32",))
    dest, a, b, c, _mask = k.operands(ins, 5)
    wd = k.writer(dest.first if isinstance(dest, Pair) else dest, t)
    wp = k.pred_writer(dest.second) if isinstance(dest, Pair) else None
    ra, rb, rc = k.reader(a, t), k.reader(b, U32), k.reader(c, U32)

    def run(m, s):       # PTX ISA §9.7.9.6 (shfl.sync) pseudo-code
        lane = m.lane_of[s.ix].astype(np.int64)
        bval = np.asarray(rb(m, s)).astype(np.int64) & 31
        cval = np.asarray(rc(m, s)).astype(np.int64)
        clamp, seg = cval & 31, (cval >> 8) & 31
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src = s.idx - lane + j
        values = ra(m, m.all)
        wd(m, s, values[src] if np.ndim(values) else np.broadcast_to(values, (s.n,)))
        if wp is not None:
            wp(m, s, np.broadcast_to(ok, (s.n,)))
    return run


@opcode("vote.sync")
def compile_vote(ins, q, k):
    mode = q.take("any", "all", "uni", "ballot", required=True)
    t = q.take_type(("pred", "b32"))
    d, a, _mask = k.operands(ins, 3)
    ra = k.pred_reader(a)
    w = k.writer(d, t) if mode == "ballot" else k.pred_writer(d)

    def run(m, s):
        p = np.broadcast_to(ra(m, s), (s.n,))
        starts, _, sizes = warp_segments(m, s)
        if mode == "ballot":
            bits = np.where(p, np.uint64(1) << m.lane_of[s.ix].astype(np.uint64), np.uint64(0))
            w(m, s, np.repeat(np.bitwise_or.reduceat(bits, starts), sizes).astype(np.uint32))
            return
        anyv = np.logical_or.reduceat(p, starts)
        allv = np.logical_and.reduceat(p, starts)
        value = {"any": anyv, "all": allv, "uni": allv | ~anyv}[mode]
        w(m, s, np.repeat(value, sizes))
    return run


@opcode("activemask")
def compile_activemask(ins, q, k):
    q.take_type(("b32",))
    (d,) = k.operands(ins, 1)
    w = k.writer(d, TYPES["b32"])

    def run(m, s):
        starts, _, sizes = warp_segments(m, s)
        bits = np.uint64(1) << m.lane_of[s.ix].astype(np.uint64)
        w(m, s, np.repeat(np.bitwise_or.reduceat(bits, starts), sizes).astype(np.uint32))
    return run





def _by_lane(m, s, values, mask, what: str):
    """Per-warp tables of the threads ``s`` whose lane is in their ``mask``: (warp run of each
    thread, lane of each thread, values [runs, 32], member [runs, 32]).  An executing thread
    outside its own membermask is undefined behaviour in the PTX ISA: a SimError."""
    lane = m.lane_of[s.ix].astype(np.int64)
    member = ((np.broadcast_to(np.asarray(mask).astype(np.int64), (s.n,)) >> lane) & 1) == 1
    if not member.all():
        t = int(s.idx[np.flatnonzero(~member)[0]])
        raise SimError(f"{what}: thread {t} (lane {int(m.lane_of[t])}) executes it but is not in its membermask")
    starts, _, sizes = warp_segments(m, s)
    run = np.repeat(np.arange(starts.size), sizes)
    values = np.broadcast_to(np.asarray(values), (s.n,))
    table = np.zeros((starts.size, 32), dtype=values.dtype)
    present = np.zeros((starts.size, 32), dtype=bool)
    table[run, lane] = values
    present[run, lane] = True
    return run, lane, table, present


_LANE_BITS = np.uint64(1) << np.arange(32, dtype=np.uint64)


@opcode("match.any.sync", "match.all.sync")
def compile_match(ins, q, k):
    """``match.{any,all}.sync.b32/.b64 d{|p}, a, membermask`` (PTX ISA §9.7.13, match.sync): .any:
    d = the lanes of the participating threads whose ``a`` equals this thread's; .all: d = all the
    participating lanes if every ``a`` is equal (p true), else 0 (p false)."""
    is_all = ins.parts[1] == "all"
    t = q.take_type(("b32", "b64"))
    dest, a, mask = k.operands(ins, 3)
    if isinstance(dest, Pair) and not is_all:
        raise Unsupported("match.any.sync takes no predicate destination")
    wd = k.writer(dest.first if isinstance(dest, Pair) else dest, U32)
    wp = k.pred_writer(dest.second) if isinstance(dest, Pair) else None
    ra, rm = k.reader(a, t), k.reader(mask, U32)

    def run(m, s):
        runs, lane, table, present = _by_lane(m, s, np.asarray(ra(m, s)).astype(np.uint64), rm(m, s), ins.opcode)
        same = (table[:, :, None] == table[:, None, :]) & present[:, None, :]     # [run, lane, other lane]
        any_bits = (same * _LANE_BITS).sum(axis=2, dtype=np.uint64)[runs, lane]
        if not is_all:
            wd(m, s, any_bits.astype(np.uint32))
            return
        group = (present * _LANE_BITS).sum(axis=1, dtype=np.uint64)[runs]
        equal = any_bits == group
        wd(m, s, np.where(equal, group, np.uint64(0)).astype(np.uint32))
        if wp is not None:
            wp(m, s, equal)
    return run


_REDUX = {"add": (np.add, 0), "min": (np.minimum, None), "max": (np.maximum, None),
          "and": (np.bitwise_and, 0xFFFFFFFF), "or": (np.bitwise_or, 0), "xor": (np.bitwise_xor, 0)}


@opcode("redux.sync")
def compile_redux(ins, q, k):
    """``redux.sync.op.type d, a, membermask`` (PTX ISA §9.7.13, redux.sync): the reduction of
    ``a`` over the participating threads, in every one of them; .add wraps modulo 2^32."""
    op = q.take(*_REDUX, required=True)
    t = q.take_type(("u32", "s32", "b32") if op in ("and", "or", "xor") else ("u32", "s32"))
    if op in ("and", "or", "xor") and t.name != "b32":
        raise Unsupported(f"redux.sync.{op} expects .b32")
    d, a, mask = k.operands(ins, 3)
    ra, rm, w = k.reader(a, t), k.reader(mask, U32), k.writer(d, t)
    fn, identity = _REDUX[op]
    wide = np.int64 if t.kind == "s" else np.uint64

    def run(m, s):
        runs, _, table, present = _by_lane(m, s, np.asarray(ra(m, s)).astype(wide), rm(m, s), ins.opcode)
        if identity is None:     # min/max: absent lanes repeat a present one
            first = table[np.arange(table.shape[0]), present.argmax(axis=1)]
            table = np.where(present, table, first[:, None])
        else:
            table = np.where(present, table, wide(identity))
        w(m, s, t.from_u64(fn.reduce(table, axis=1).astype(np.uint64)[runs]))
    return run


def require_full_warps(m, s, what: str):
    """Warp runs of ``s`` for a ``.sync.aligned`` instruction; every live thread of each warp
    must be executing it (PTX: "all threads in the warp must execute the same instruction")."""
    starts, wids, sizes = warp_segments(m, s)
    live = m.live_per_warp[wids]
    if (sizes != live).any():
        k = int(np.flatnonzero(sizes != live)[0])
        cta, w = divmod(int(wids[k]), m.warps_per_cta)
        raise SimError(f"{what}: .sync.aligned instruction executed by {int(sizes[k])} of the {int(live[k])} "
                       f"live threads of warp {w} of CTA {cta} (the warp is diverged)")
    return starts, wids, sizes
