"""The canonical synchronization patterns of §9.7.16.6.4 as whole kernels.

Each pattern kernel uses one fixed MMA spelling (kind::f16, cta_group::1) and the usual
skeleton (stage, alloc, preload, ..., read back, dealloc); the pattern's own instructions
replace the issue block. Every wait loop is bounded (error 1 on timeout). The instruction
"under test" of a pattern is its whole tcgen05 sequence, in program order.
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.ptx import record as R
from generators.ptx.hooks import TmemOp
from generators.ptx.kernel import KernelSpec, rec
from generators.ptx.mma import Declare, MmaSpelling, mma_regs, mma_setup
from generators.ptx.steps import (
    Alloc,
    Dealloc,
    DumpRegs,
    Preload,
    Raw,
    Readback,
    StageSmem,
    WaitMbarrier,
    bounded_wait,
)

SMEM_MMA = MmaSpelling("f16")
TMEM_MMA = MmaSpelling("f16", a_tmem=True)
COMMIT = "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%mbar];"
CP_A = "tcgen05.cp.cta_group::1.128x256b [%tm_a], %sdesc;"   # 128 lanes x 256 bits = A of M=128, K=16 f16


ARRIVE = "mbarrier.arrive.relaxed.cluster.shared::cta.b64 _, [%mbar2];"
_SDESC = (f"ld.global.u64 %sdesc, {rec('s_desc')};", "shr.u32 %r12, %sbase, 4;", "cvt.u64.u32 %rd4, %r12;",
          "add.s64 %sdesc, %sdesc, %rd4;")


@dataclass(frozen=True)
class Pattern:
    name: str
    section: str
    description: str
    tcgen05: tuple[str, ...]        # the pattern's tcgen05 instructions in program order
    body: tuple[str, ...]
    ops: tuple[TmemOp, ...]
    dump: tuple[str, ...] = ()
    spelling: MmaSpelling = SMEM_MMA
    bulk_staging: bool = False      # operands reach shared memory by cp.async.bulk (StageSmem(bulk=True))

    @property
    def instruction(self) -> str:
        return " ".join(self.tcgen05)


def _thread(tid: int, label: str, lines) -> list[str]:
    return [f"setp.ne.u32 %p4, %tix, {tid};", f"@%p4 bra $L_{label}_skip;", *lines, f"$L_{label}_skip:"]


def _warp(w: int, label: str, lines) -> list[str]:
    return [f"setp.ne.u32 %p4, %wid, {w};", f"@%p4 bra $L_{label}_skip;", *lines, f"$L_{label}_skip:"]


_LANE_TADDR = (f"ld.global.u32 %r12, {rec('taddr')};", "add.u32 %ta, %tbase, %r12;", "and.b32 %r13, %wid, 3;",
               "shl.b32 %r13, %r13, 21;", "add.u32 %ta, %ta, %r13;")
LD = "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%v0}, [%ta];"
WAIT_LD = "tcgen05.wait::ld.sync.aligned;"
BEFORE, AFTER = "tcgen05.fence::before_thread_sync;", "tcgen05.fence::after_thread_sync;"


def _patterns() -> tuple[Pattern, ...]:
    mma = SMEM_MMA.instruction()
    mma_acc = mma.replace("%en_d;", "%en_t;")
    mma_t = TMEM_MMA.instruction()
    mma_reg = mma.replace("%idesc,", "%v0,")
    setup = mma_setup(SMEM_MMA)
    return (
        Pattern("pipelined_same_thread", "9.7.16.6.4.1",
                "mma then mma (same shape and accumulator) from one thread, no wait in between",
                (mma, mma_acc, COMMIT),
                tuple(_thread(0, "p1", [*setup, "setp.eq.u32 %en_t, 0, 0;", mma, mma_acc, COMMIT])),
                (TmemOp("mma", 1, None, "thread 0"), TmemOp("mma", 1, None, "thread 0"), TmemOp("commit", 1, None, "thread 0"))),
        Pattern("non_pipelined_same_thread.mma_commit_ld", "9.7.16.6.4.2",
                "mma, commit, try_wait.relaxed.cluster, fence::after_thread_sync, ld (example 2)",
                (mma, COMMIT, AFTER, LD, WAIT_LD),
                tuple(_thread(0, "p2", [*setup, mma, COMMIT])),
                (TmemOp("mma", 1, None, "thread 0"), TmemOp("commit", 1, None, "thread 0"))),
        Pattern("pipelined_different_thread", "9.7.16.6.4.3",
                "thread 0: cp, fence::before_thread_sync, mbarrier.arrive; thread 32: try_wait, "
                "fence::after_thread_sync, mma (A from the copied TMEM)",
                (CP_A, BEFORE, AFTER, mma_t, COMMIT),
                tuple(_thread(0, "p3a", [*mma_setup(TMEM_MMA), *_SDESC, CP_A, BEFORE, ARRIVE])
                      + _thread(32, "p3b", [*bounded_wait("p3w", "%mbar2"), AFTER, *mma_setup(TMEM_MMA), mma_t, COMMIT])),
                (TmemOp("cp", 1, None, "thread 0"), TmemOp("fence", None, None, "thread 0"),
                 TmemOp("mma", 1, None, "thread 32"), TmemOp("commit", 1, None, "thread 32")),
                spelling=TMEM_MMA),
        Pattern("non_pipelined_different_thread.ld_mma", "9.7.16.6.4.4",
                "warp 0: ld, wait::ld, fence::before_thread_sync, arrive; thread 32: try_wait, "
                "fence::after_thread_sync, mma over the loaded columns (example 1)",
                (LD, WAIT_LD, BEFORE, AFTER, mma, COMMIT),
                tuple(_warp(0, "p4a", [*_LANE_TADDR, LD, WAIT_LD, BEFORE, "setp.eq.u32 %p6, %lid, 0;",
                                       "@%p6 " + ARRIVE])
                      + _thread(32, "p4b", [*bounded_wait("p4w", "%mbar2"), AFTER, *setup, mma, COMMIT])),
                (TmemOp("ld", None, None, "warp 0"), TmemOp("wait::ld", None, None, "warp 0"),
                 TmemOp("mma", 1, None, "thread 32"), TmemOp("commit", 1, None, "thread 32")),
                dump=("%v0",)),
        Pattern("non_pipelined_different_thread.mma_ld", "9.7.16.6.4.4",
                "thread 0: mma, commit [mbar]; warp 1: try_wait [mbar], fence::after_thread_sync, ld "
                "(example 2)",
                (mma, COMMIT, AFTER, LD, WAIT_LD),
                tuple(_thread(0, "p5a", [*setup, mma, COMMIT])
                      + _warp(1, "p5b", [*bounded_wait("p5w", "%mbar"), AFTER, *_LANE_TADDR, LD, WAIT_LD])),
                (TmemOp("mma", 1, None, "thread 0"), TmemOp("commit", 1, None, "thread 0"),
                 TmemOp("ld", None, None, "warp 1"), TmemOp("wait::ld", None, None, "warp 1")),
                dump=("%v0",)),
        Pattern("non_pipelined_different_thread.composed", "9.7.16.6.4.4",
                "thread 0: mma, commit [bar1], try_wait [bar1], fence::after, fence::before, arrive [bar2]; "
                "warp 1: try_wait [bar2], fence::after_thread_sync, ld",
                (mma, COMMIT, AFTER, BEFORE, AFTER, LD, WAIT_LD),
                tuple(_thread(0, "p6a", [*setup, mma, COMMIT, *bounded_wait("p6w", "%mbar"), AFTER, BEFORE, ARRIVE])
                      + _warp(1, "p6b", [*bounded_wait("p6v", "%mbar2"), AFTER, *_LANE_TADDR, LD, WAIT_LD])),
                (TmemOp("mma", 1, None, "thread 0"), TmemOp("commit", 1, None, "thread 0"),
                 TmemOp("ld", None, None, "warp 1"), TmemOp("wait::ld", None, None, "warp 1")),
                dump=("%v0",)),
        Pattern("async_proxy_operands.bulk_copy_expect_tx", "9.7.16.6.5",
                "A and B written by cp.async.bulk (async proxy, mbarrier::complete_tx::bytes) after "
                "mbarrier.arrive.expect_tx; every thread waits for the transaction count, then mma, commit",
                (mma, COMMIT),
                tuple(_thread(0, "p8", [*setup, mma, COMMIT])),
                (TmemOp("mma", 1, None, "thread 0"), TmemOp("commit", 1, None, "thread 0")),
                bulk_staging=True),
        Pattern("register_dependency_same_thread", "9.7.16.6.4.5",
                "tcgen05.ld into %v0, then mma using %v0 as its instruction descriptor (no wait::ld)",
                (LD, mma_reg, COMMIT),
                tuple(_warp(0, "p7", [*_LANE_TADDR, LD, *_thread(0, "p7b", [*setup, mma_reg, COMMIT])])),
                (TmemOp("ld", None, None, "warp 0"), TmemOp("mma", 1, None, "thread 0"),
                 TmemOp("commit", 1, None, "thread 0"))),
    )


PATTERNS: tuple[Pattern, ...] = _patterns()


def pattern_kernel(p: Pattern) -> KernelSpec:
    regs = tuple(mma_regs(p.spelling)) + (("en_t", ".pred"), ("ta", ".b32"), ("v0", ".b32"), ("sdesc", ".b64"),
                                         ("mbar2", ".b32"))
    steps = [Declare(regs), StageSmem(bulk=p.bulk_staging), Alloc(512), Preload(),
             Raw(("mov.u32 %mbar2, tc_mbar2;", "mov.u32 %v0, 0;") + p.body + ("mov.u32 %stage, 5;",), ops=p.ops),
             WaitMbarrier(relaxed=True), Readback()]
    if p.dump:
        steps.append(DumpRegs(p.dump))
    steps.append(Dealloc(512))
    # cp.async.bulk (bulk staging) needs sm_90 / PTX 8.0, below every tcgen05 target: no extra feature
    return KernelSpec(family="sync", instruction=p.instruction, steps=tuple(steps), cta_group=1, cluster=1,
                      features=("tcgen05.mma", "tcgen05.fence", "tcgen05.commit"), dynamic_smem=R.DYNAMIC_SMEM_BYTES)
