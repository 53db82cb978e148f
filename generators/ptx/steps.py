"""Kernel steps (see ``kernel.py``): each renders PTX lines and lists its TMEM operations.

Register conventions: ``%tbase`` holds the TMEM allocation base, ``%sbase`` the 1024-aligned
shared address of the staging buffer, ``%mbar`` the shared address of the kernel's mbarrier,
``%outoff`` the running byte offset in the output block.
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.ptx import record as R
from generators.ptx.hooks import TmemOp
from generators.ptx.kernel import ERR_TIMEOUT, WAIT_BOUND, Ctx, rec

CHUNK = 16          # columns per preload/readback tcgen05.st/ld (.32x32b.x16)


def _stage(n: int) -> str:
    return f"mov.u32 %stage, {n};"


def cluster_sync(ctx: Ctx) -> list[str]:
    """Barrier across the CTA pair (cta_group::2 kernels) or nothing."""
    if ctx.spec.cluster > 1:
        return ["barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"]
    return []


def thread_sync(ctx: Ctx) -> list[str]:
    """fence::before_thread_sync / bar.sync / (cluster barrier) / fence::after_thread_sync
    (§9.7.16.6.3: orders tcgen05 operations across the threads of the CTA or pair)."""
    return (["tcgen05.fence::before_thread_sync;", "bar.sync 0;"] + cluster_sync(ctx)
            + ["tcgen05.fence::after_thread_sync;"])


def bounded_wait(label: str, mbar: str, relaxed: bool = True) -> list[str]:
    """Wait on phase 0 of ``mbar`` at most WAIT_BOUND times (§9.7.16.6.4 uses the relaxed, cluster
    scoped try_wait); error 1 on timeout."""
    sem = ".relaxed.cluster" if relaxed else ""
    return [
        f"$L_{label}:",
        f"mbarrier.try_wait.parity{sem}.shared::cta.b64 %p5, [{mbar}], 0;",
        f"@%p5 bra $L_{label}_done;",
        "add.u32 %spins, %spins, 1;",
        f"setp.lt.u32 %p6, %spins, {WAIT_BOUND};",
        f"@%p6 bra $L_{label};",
        f"mov.u32 %err, {ERR_TIMEOUT};",
        f"$L_{label}_done:",
    ]


@dataclass(frozen=True)
class StageSmem:
    """Copy ``smem_bytes`` of the case's shared-memory image to ``smem_dst`` bytes into the 1024-aligned
    staging buffer,
    initialise the mbarrier, make both visible to the async proxy (§9.7.16.6.5).

    ``bulk``: the copy is one ``cp.async.bulk`` by thread 0 in the async proxy itself (PTX ISA
    §9.7.9.25.4.1), completed through ``tc_mbar2``'s transaction count: thread 0 arms it with
    ``mbarrier.arrive.expect_tx`` of ``smem_bytes``, every thread waits (bounded) for phase 0.
    """

    bulk: bool = False

    def render(self, ctx: Ctx) -> list[str]:
        if self.bulk:
            return self._render_bulk(ctx)
        sbase, mbar, i = ctx.reg("sbase"), ctx.reg("mbar"), ctx.reg("copy_i")
        words = "{" + ", ".join(ctx.reg(f"copy_w{j}") for j in range(4)) + "}"
        loop, done = ctx.label("stage"), ctx.label("staged")
        step = 16 * ctx.spec.threads            # 16 bytes per thread and iteration (smem_bytes: a multiple of 16)
        return [
            "mov.u32 %r0, tc_smem;",
            "add.u32 %r0, %r0, 1023;",
            f"and.b32 {sbase}, %r0, -1024;",
            f"mov.u32 {mbar}, tc_mbar;",
            f"ld.global.u32 %r1, {rec('smem_bytes')};",
            f"ld.global.u32 %r2, {rec('smem_src')};",
            f"ld.global.u32 %r3, {rec('smem_dst')};",
            f"add.u32 %r3, {sbase}, %r3;",
            "cvt.u64.u32 %rd1, %r2;",
            "add.s64 %rd1, %in, %rd1;",
            f"shl.b32 {i}, %tix, 4;",
            f"{loop}:",
            f"setp.ge.u32 %p1, {i}, %r1;",
            f"@%p1 bra {done};",
            f"cvt.u64.u32 %rd2, {i};",
            "add.s64 %rd2, %rd1, %rd2;",
            f"ld.global.v4.u32 {words}, [%rd2];",
            f"add.u32 %r4, %r3, {i};",
            f"st.shared.v4.u32 [%r4], {words};",
            f"add.u32 {i}, {i}, {step};",
            f"bra.uni {loop};",
            f"{done}:",
            "setp.eq.u32 %p2, %tix, 0;",
            f"@%p2 mbarrier.init.shared::cta.b64 [{mbar}], 1;",
            "mov.u32 %r5, tc_mbar2;",
            "@%p2 mbarrier.init.shared::cta.b64 [%r5], 1;",
            "fence.mbarrier_init.release.cluster;",
            "fence.proxy.async.shared::cta;",
            "bar.sync 0;",
            _stage(2),
        ]

    def _render_bulk(self, ctx: Ctx) -> list[str]:
        sbase, mbar = ctx.reg("sbase"), ctx.reg("mbar")
        return [
            "mov.u32 %r0, tc_smem;",
            "add.u32 %r0, %r0, 1023;",
            f"and.b32 {sbase}, %r0, -1024;",
            f"mov.u32 {mbar}, tc_mbar;",
            "mov.u32 %r5, tc_mbar2;",
            "setp.eq.u32 %p2, %tix, 0;",
            f"@%p2 mbarrier.init.shared::cta.b64 [{mbar}], 1;",
            "@%p2 mbarrier.init.shared::cta.b64 [%r5], 1;",
            "fence.mbarrier_init.release.cluster;",
            "bar.sync 0;",
            f"ld.global.u32 %r1, {rec('smem_bytes')};",
            f"ld.global.u32 %r2, {rec('smem_src')};",
            f"ld.global.u32 %r3, {rec('smem_dst')};",
            f"add.u32 %r3, {sbase}, %r3;",
            "cvt.u64.u32 %rd1, %r2;",
            "add.s64 %rd1, %in, %rd1;",
            "@%p2 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], %r1;",
            "@%p2 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], %r1, [%r5];",
            *bounded_wait(ctx.label("bulk")[3:], "%r5", relaxed=False),
            _stage(2),
        ]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return ()


@dataclass(frozen=True)
class Alloc:
    """Warp 0 (of each CTA) allocates ``ncols`` TMEM columns and relinquishes the permit; the thread
    sync after it lets every thread load the address.  The load itself needs no tcgen05 fence
    (§9.7.16.6.1: the allocation instructions' shared-memory accesses keep same-address ordering with
    non-tcgen05 instructions; §9.7.16.7.1: the alloc's store is a weak store), so ``after_fence``
    (tcgen05.fence::after_thread_sync at its end) is wanted only when another thread's tcgen05
    operation on the columns follows before that thread's next after-fence."""

    ncols: int = 512
    after_fence: bool = True

    def render(self, ctx: Ctx) -> list[str]:
        cg = ctx.cg
        skip = ctx.label("alloc_done")
        return [
            "mov.u32 %r5, tc_slot;",
            "setp.ne.u32 %p3, %wid, 0;",
            f"@%p3 bra {skip};",
            f"tcgen05.alloc.cta_group::{cg}.sync.aligned.shared::cta.b32 [%r5], {self.ncols};",
            f"tcgen05.relinquish_alloc_permit.cta_group::{cg}.sync.aligned;",
            f"{skip}:",
        ] + thread_sync(ctx)[:None if self.after_fence else -1] + ["ld.shared.b32 %tbase, [%r5];", _stage(3)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return (TmemOp("alloc", ctx.cg, self.ncols, "warp 0"), TmemOp("relinquish_alloc_permit", ctx.cg, None, "warp 0"))


@dataclass(frozen=True)
class Dealloc:
    """Warp 0 (of each CTA) frees the allocation after every TMEM access is ordered before it."""

    ncols: int = 512

    def render(self, ctx: Ctx) -> list[str]:
        skip = ctx.label("dealloc_done")
        return thread_sync(ctx) + [
            "setp.ne.u32 %p3, %wid, 0;",
            f"@%p3 bra {skip};",
            f"tcgen05.dealloc.cta_group::{ctx.cg}.sync.aligned.b32 %tbase, {self.ncols};",
            f"{skip}:",
        ] + cluster_sync(ctx) + [_stage(8)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return (TmemOp("dealloc", ctx.cg, self.ncols, "warp 0"),)


def _warp_lane_offset() -> list[str]:
    # TMEM lane base of this warp: warp w of the warpgroup reaches lanes 32*(w%4).. (§9.7.16.8.1)
    return ["and.b32 %r6, %wid, 3;", "shl.b32 %r6, %r6, 21;"]    # (32*w) << 16


def _advance(ta: str, ptr: str, col: str, n: int) -> list[str]:
    return [f"add.u32 {ta}, {ta}, {n};", f"add.s64 {ptr}, {ptr}, {4 * n};", f"add.u32 {col}, {col}, {n};"]


def _preload_columns(ctx: Ctx, kind: str, vec: list[str], col: str, ta: str, ptr: str, next_slot: str) -> list[str]:
    """16 columns per tcgen05.st (.32x32b.x16) while 16 are left, then one per .x1 (the tail); the
    stores need no wait inside the loop (one ``wait::st`` follows the whole preload)."""
    chunk, tail = ctx.label(f"{kind}_chunk"), ctx.label(f"{kind}_col")
    regs = "{" + ", ".join(vec) + "}"
    lines = [f"{chunk}:", f"add.u32 %r12, {col}, {CHUNK};", "setp.gt.u32 %p1, %r12, %r8;", f"@%p1 bra {tail};"]
    lines += [f"ld.global.u32 {v}, [{ptr}+{4 * i}];" for i, v in enumerate(vec)]
    lines += [f"tcgen05.st.sync.aligned.32x32b.x{CHUNK}.b32 [{ta}], {regs};", *_advance(ta, ptr, col, CHUNK),
              f"bra.uni {chunk};"]
    lines += [f"{tail}:", f"setp.ge.u32 %p1, {col}, %r8;", f"@%p1 bra {next_slot};", f"ld.global.u32 %r11, [{ptr}];",
              f"tcgen05.st.sync.aligned.32x32b.x1.b32 [{ta}], {{%r11}};", *_advance(ta, ptr, col, 1),
              f"bra.uni {tail};"]
    return lines


def _readback_columns(ctx: Ctx, kind: str, vec: list[str], col: str, ta: str, ptr: str, next_slot: str) -> list[str]:
    """One loop over the columns: a ``.32x32b.x16`` load while 16 columns are left, else a ``.x1``
    load (the tail), then ONE ``tcgen05.wait::ld`` shared by both loads, then the stores of the
    load taken. Every read-back thus executes the same wait site, whatever the region widths (the
    hazard score deletes it once and every case runs the deletion). %p2: the x16 path; the branch
    conditions depend only on the record, so the warp stays converged for the ``.sync.aligned``
    loads and the wait (§9.7.16.8.3)."""
    loop, tail, loaded, stores1 = (ctx.label(f"{kind}_chunk"), ctx.label(f"{kind}_x1"), ctx.label(f"{kind}_loaded"),
                                   ctx.label(f"{kind}_st1"))
    regs = "{" + ", ".join(vec) + "}"
    lines = [f"{loop}:", f"setp.ge.u32 %p1, {col}, %r8;", f"@%p1 bra {next_slot};",
             f"add.u32 %r12, {col}, {CHUNK};", "setp.le.u32 %p2, %r12, %r8;", f"@!%p2 bra {tail};",
             f"tcgen05.ld.sync.aligned.32x32b.x{CHUNK}.b32 {regs}, [{ta}];", f"bra.uni {loaded};",
             f"{tail}:", f"tcgen05.ld.sync.aligned.32x32b.x1.b32 {{{vec[0]}}}, [{ta}];",
             f"{loaded}:", "tcgen05.wait::ld.sync.aligned;", f"@!%p2 bra {stores1};"]
    lines += [f"st.global.u32 [{ptr}+{4 * i}], {v};" for i, v in enumerate(vec)]
    lines += [*_advance(ta, ptr, col, CHUNK), f"bra.uni {loop};"]
    lines += [f"{stores1}:", f"st.global.u32 [{ptr}], {vec[0]};", *_advance(ta, ptr, col, 1), f"bra.uni {loop};"]
    return lines


def _region_loop(ctx: Ctx, kind: str) -> list[str]:
    """Loop over the record's TMEM regions (preload: st from in; readback: ld to out).

    One runtime loop over the slots and one over the columns of each slot, so the kernel stays
    small whatever the number of regions: 16 columns per ``.32x32b.x16`` access while 16 are left,
    then one per ``.x1`` (same TMEM cells and words as 16 ``.x1`` accesses, §9.7.16.8.3: thread t of
    warp w reads lane 32w + t, register i = column base + i). Region i of slot list ``preload``: {tmem_rel, ncols,
    in_offset} (stride 12 bytes); of ``readback``: {tmem_rel, ncols} (stride 8 bytes).
    """
    preload = kind == "preload"
    col, ta, slot = ctx.reg(f"{kind}_col"), ctx.reg(f"{kind}_ta"), ctx.reg(f"{kind}_slot")
    ctx.reg(f"{kind}_ptr", ".b64")
    ptr = f"%{kind}_ptr"
    stride, count = (12, R.PRELOAD_SLOTS) if preload else (8, R.READBACK_SLOTS)
    slots, next_slot, done = ctx.label(kind), ctx.label(f"{kind}_next"), ctx.label(f"{kind}_done")
    lines = _warp_lane_offset() + [
        f"mov.u32 {slot}, 0;",
        f"{slots}:",
        f"setp.ge.u32 %p1, {slot}, {count};",
        f"@%p1 bra {done};",
        f"mul.wide.u32 %rd1, {slot}, {stride};",
        "add.s64 %rd1, %rec, %rd1;",
        f"ld.global.u32 %r7, [%rd1+{R.offset(kind)}];",
        f"ld.global.u32 %r8, [%rd1+{R.offset(kind) + 4}];",
        f"add.u32 {ta}, %tbase, %r7;",
        f"add.u32 {ta}, {ta}, %r6;",
        "mul.lo.u32 %r10, %tix, %r8;",
        f"mul.wide.u32 {ptr}, %r10, 4;",
    ]
    if preload:
        lines += [f"ld.global.u32 %r9, [%rd1+{R.offset(kind) + 8}];", "cvt.u64.u32 %rd2, %r9;",
                  f"add.s64 {ptr}, {ptr}, %rd2;", f"add.s64 {ptr}, %in, {ptr};"]
    else:
        lines += [f"add.s64 {ptr}, {ptr}, %outoff;", f"add.s64 {ptr}, %out, {ptr};"]
    vec = [ctx.reg(f"{kind}_v{i}") for i in range(CHUNK)]
    lines += [f"mov.u32 {col}, 0;"]
    lines += (_preload_columns if preload else _readback_columns)(ctx, kind, vec, col, ta, ptr, next_slot)
    lines += [f"{next_slot}:"]
    if not preload:
        lines += [f"mul.wide.u32 %rd2, %r8, {4 * 128};", "add.s64 %outoff, %outoff, %rd2;"]
    return lines + [f"add.u32 {slot}, {slot}, 1;", f"bra.uni {slots};", f"{done}:"]


#: tcgen05 operations that one thread issues over the lanes of every warp (and, for a pair, of both
#: CTAs): they read or overwrite cells that other warps' ``tcgen05.st`` wrote
ALL_LANE_OPS = frozenset({"mma", "cp", "shift"})


def later_all_lane_op(ctx: Ctx, step) -> bool:
    """Whether a step after ``step`` in the kernel issues one of ALL_LANE_OPS."""
    steps = ctx.spec.steps
    later = steps[next(i for i, s in enumerate(steps) if s is step) + 1:]
    return any(op.op in ALL_LANE_OPS for s in later for op in s.tmem_ops(ctx))


@dataclass(frozen=True)
class Preload:
    """Fill up to PRELOAD_SLOTS TMEM regions from the in block with tcgen05.st.32x32b.x16 / .x1 (all 4 warps),
    then ``tcgen05.wait::st``.

    Each warp stores only its own lane quarter (§9.7.16.8.1), and its own later ``tcgen05.ld`` /
    ``.st`` of those lanes are ordered after the stores by its ``wait::st`` (§9.7.16.6.4.2). The
    thread synchronization (fence::before_thread_sync, bar.sync / cluster barrier,
    fence::after_thread_sync, §9.7.16.6.4.4) follows only when a later step issues an MMA, ``cp`` or
    ``shift`` (one thread over every warp's lanes). The deallocation step has its own.
    """

    def render(self, ctx: Ctx) -> list[str]:
        sync = thread_sync(ctx) if later_all_lane_op(ctx, self) else []
        return _region_loop(ctx, "preload") + ["tcgen05.wait::st.sync.aligned;"] + sync + [_stage(4)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return (TmemOp("st", None, None, "all warps"), TmemOp("wait::st", None, None, "all warps"))


@dataclass(frozen=True)
class Readback:
    """Copy up to READBACK_SLOTS TMEM regions to the out block with tcgen05.ld.32x32b.x16 / .x1 (all 4 warps)."""

    def render(self, ctx: Ctx) -> list[str]:
        return _region_loop(ctx, "readback") + [_stage(7)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return (TmemOp("ld", None, None, "all warps"), TmemOp("wait::ld", None, None, "all warps"))


@dataclass(frozen=True)
class Issue:
    """One thread (thread 0 of CTA rank 0) runs ``setup`` and the instruction under test, then
    commits to the kernel's mbarrier (multicast to both CTAs of a pair for cta_group::2)."""

    setup: tuple[str, ...]
    instruction: str
    op: str = "mma"
    commit: str | None = "default"

    def commit_text(self, ctx: Ctx) -> str | None:
        if self.commit != "default":
            return self.commit
        if ctx.cg == 2:
            return ("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                    "[%mbar], %h0;")
        return f"tcgen05.commit.cta_group::{ctx.cg}.mbarrier::arrive::one.shared::cluster.b64 [%mbar];"

    def render(self, ctx: Ctx) -> list[str]:
        skip = ctx.label("issued")
        lines = ["setp.ne.u32 %p4, %tix, 0;", "setp.ne.or.u32 %p4, %crank, 0, %p4;", f"@%p4 bra {skip};",
                 "mov.b16 %h0, 3;"]
        lines += list(self.setup) + [self.instruction]
        commit = self.commit_text(ctx)
        if commit:
            lines.append(commit)
        return lines + [f"{skip}:", _stage(5)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        ops = [TmemOp(self.op, ctx.cg, None, "thread 0")]
        if self.commit_text(ctx):
            ops.append(TmemOp("commit", ctx.cg, None, "thread 0"))
        return tuple(ops)


@dataclass(frozen=True)
class WaitMbarrier:
    """Every thread waits for phase 0 of the kernel's mbarrier, at most WAIT_BOUND tries; on
    timeout it records error 1 and goes on (the kernel still reads back and deallocates).

    ``issuer_only``: only the issuing CTA of a pair waits (its commit signals only its own
    mbarrier); the pair then meets at a cluster barrier between tcgen05 fences (§9.7.16.6.3).
    Otherwise every thread of each CTA waits on its own CTA's mbarrier (a pair's commit is
    multicast to both), and the wait followed by ``tcgen05.fence::after_thread_sync`` is the whole
    pattern before its ``tcgen05.ld`` (§9.7.16.6.4.4 example 2). CUTLASS's 2-SM pipeline does the
    same: ``PipelineUmmaAsync::producer_commit`` (include/cutlass/pipeline/sm100_pipeline.hpp)
    signals the full barrier of both CTAs with ``umma_arrive_multicast_2x1SM``, and each CTA's
    epilogue waits on its own.
    """

    issuer_only: bool = False
    relaxed: bool = False

    def render(self, ctx: Ctx) -> list[str]:
        loop, done = ctx.label("wait"), ctx.label("waited")
        sem = ".relaxed.cluster" if self.relaxed else ""
        lines = []
        if self.issuer_only:
            lines += ["setp.ne.u32 %p6, %crank, 0;", f"@%p6 bra {done};"]
        lines += [
            f"{loop}:",
            f"mbarrier.try_wait.parity{sem}.shared::cta.b64 %p5, [%mbar], 0;",
            f"@%p5 bra {done};",
            "add.u32 %spins, %spins, 1;",
            f"setp.lt.u32 %p6, %spins, {WAIT_BOUND};",
            f"@%p6 bra {loop};",
            f"mov.u32 %err, {ERR_TIMEOUT};",
            f"{done}:",
            "tcgen05.fence::after_thread_sync;",
        ]
        if self.issuer_only and ctx.spec.cluster > 1:
            lines += thread_sync(ctx)
        return lines + [_stage(6)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return ()


@dataclass(frozen=True)
class Warps:
    """Every thread runs ``lines`` (warp-collective instructions such as tcgen05.ld/st)."""

    lines: tuple[str, ...]
    ops: tuple[str, ...] = ()
    stage: int = 5

    def render(self, ctx: Ctx) -> list[str]:
        return list(self.lines) + [_stage(self.stage)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return tuple(TmemOp(op, None, None, "all warps") for op in self.ops)


@dataclass(frozen=True)
class LoadRegs:
    """Each thread loads ``regs`` (u32) from in + regs_src + tid * len(regs) * 4."""

    regs: tuple[str, ...]

    def render(self, ctx: Ctx) -> list[str]:
        for r in self.regs:
            ctx.reg(r.lstrip("%"))
        lines = [f"ld.global.u32 %r7, {rec('regs_src')};", "cvt.u64.u32 %rd1, %r7;", "add.s64 %rd1, %in, %rd1;",
                 f"mul.wide.u32 %rd2, %tix, {4 * len(self.regs)};", "add.s64 %rd1, %rd1, %rd2;"]
        return lines + [f"ld.global.b32 {r}, [%rd1+{4 * i}];" for i, r in enumerate(self.regs)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return ()


@dataclass(frozen=True)
class DumpRegs:
    """Each thread stores ``regs`` to out + outoff + tid * len(regs) * 4."""

    regs: tuple[str, ...]

    def render(self, ctx: Ctx) -> list[str]:
        lines = [f"mul.wide.u32 %rd1, %tix, {4 * len(self.regs)};", "add.s64 %rd1, %rd1, %outoff;",
                 "add.s64 %rd1, %out, %rd1;"]
        lines += [f"st.global.b32 [%rd1+{4 * i}], {r};" for i, r in enumerate(self.regs)]
        return lines + [f"add.s64 %outoff, %outoff, {4 * len(self.regs) * ctx.spec.threads};", _stage(7)]

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return ()


@dataclass(frozen=True)
class Raw:
    """Literal lines with declared registers and TMEM operations (synchronisation patterns)."""

    lines: tuple[str, ...]
    regs: tuple[tuple[str, str], ...] = ()
    ops: tuple[TmemOp, ...] = ()

    def render(self, ctx: Ctx) -> list[str]:
        for name, typ in self.regs:
            ctx.reg(name, typ)
        return list(self.lines)

    def tmem_ops(self, ctx: Ctx) -> tuple:
        return self.ops
