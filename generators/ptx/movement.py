"""Kernels of the data-movement and management families (§9.7.16.7-9, .11-12).

alloc / dealloc / relinquish_alloc_permit, ld (+ .red), st, wait, cp, shift, fence, commit.
Each builder returns a :class:`KernelSpec` whose ``instruction`` is the instruction under test
exactly as written in the kernel. Runtime data (addresses, descriptors) come from the record.
"""

from __future__ import annotations

from generators.ptx import record as R
from generators.ptx.hooks import TmemOp
from generators.ptx.kernel import KernelSpec, rec
from generators.ptx.steps import (
    Alloc,
    Dealloc,
    DumpRegs,
    Issue,
    LoadRegs,
    Preload,
    Raw,
    Readback,
    StageSmem,
    WaitMbarrier,
    Warps,
    bounded_wait,
)
from reference.tables import ldst_registers

_WARP_TADDR = (
    f"ld.global.u32 %r12, {rec('taddr')};",
    "add.u32 %ta, %tbase, %r12;",
    "and.b32 %r13, %wid, 3;",
    "shl.b32 %r13, %r13, 21;",            # lane base 32*(warp%4), §9.7.16.8.1
    "add.u32 %ta, %ta, %r13;",
)
_THREAD_TADDR = (f"ld.global.u32 %r12, {rec('taddr')};", "add.u32 %ta, %tbase, %r12;")
_TA = Raw((), regs=(("ta", ".b32"),))


def _vec(n: int, stem: str = "v") -> tuple[str, ...]:
    return tuple(f"%{stem}{i}" for i in range(n))


def _braced(regs) -> str:
    return "{" + ", ".join(regs) + "}"


def _kernel(family: str, instruction: str, steps, cta_group: int | None = 1, features=(), smem=False) -> KernelSpec:
    return KernelSpec(family=family, instruction=instruction, steps=tuple(steps), cta_group=cta_group,
                      cluster=2 if cta_group == 2 else 1, features=tuple(features),
                      dynamic_smem=R.DYNAMIC_SMEM_BYTES if smem else 0)


# -- tcgen05.ld / tcgen05.ld.red / tcgen05.st ----------------------------------------------------

def ld_instruction(shape: str, num: int, pack: bool = False, imm: int | None = None) -> str:
    regs = _vec(ldst_registers(shape, num, op="ld"))
    tail = f", {imm}" if shape == "16x32bx2" else ""
    return f"tcgen05.ld.sync.aligned.{shape}.x{num}{'.pack::16b' if pack else ''}.b32 {_braced(regs)}, [%ta]{tail};"


def ld_red_instruction(shape: str, num: int, redop: str, dtype: str, abs_: bool = False, nan: bool = False,
                       imm: int | None = None) -> str:
    regs = _vec(ldst_registers(shape, num, op="ld"))
    mods = f".{redop}" + (".abs" if abs_ else "") + (".NaN" if nan else "") + f".{dtype}"
    tail = f", {imm}" if shape == "16x32bx2" else ""
    return f"tcgen05.ld.red.sync.aligned.{shape}.x{num}{mods} {_braced(regs)}, %redval, [%ta]{tail};"


def st_instruction(shape: str, num: int, unpack: bool = False, imm: int | None = None) -> str:
    regs = _vec(ldst_registers(shape, num, op="st"))
    head = f", {imm}" if shape == "16x32bx2" else ""
    return f"tcgen05.st.sync.aligned.{shape}.x{num}{'.unpack::16b' if unpack else ''}.b32 [%ta]{head}, {_braced(regs)};"


def ld_kernel(instruction: str, nregs: int, red: bool = False) -> KernelSpec:
    """Preload TMEM, run the load under test in all 4 warps, wait::ld, dump the registers."""
    regs = _vec(nregs) + (("%redval",) if red else ())
    decl = Raw((), regs=tuple((r[1:], ".b32") for r in regs))
    steps = [_TA, decl, Alloc(512), Preload(),
             Warps(_WARP_TADDR + (instruction, "tcgen05.wait::ld.sync.aligned;"), ops=("ld", "wait::ld")),
             DumpRegs(regs), Dealloc(512)]
    family = "ld.red" if red else "ld"
    feats = ("tcgen05.ld.red",) if red else ("tcgen05.ld",)
    return _kernel(family, instruction, steps, features=feats)


def st_kernel(instruction: str, nregs: int) -> KernelSpec:
    """Load registers, (preload TMEM: the record's preload slots, empty but for the probe of spec
    question Q-UNPACK-UPPER), run the store under test in all 4 warps, wait::st, read TMEM back.

    Each warp stores to and reads back only its own lane quarter (§9.7.16.8.1), so its ``wait::st``
    orders its stores before its read-back (§9.7.16.6.4.2): no thread synchronization between."""
    regs = _vec(nregs)
    steps = [_TA, LoadRegs(regs), Alloc(512), Preload(),
             Warps(_WARP_TADDR + (instruction, "tcgen05.wait::st.sync.aligned;"), ops=("st", "wait::st"))]
    steps += [Readback(), Dealloc(512)]
    return _kernel("st", instruction, steps, features=("tcgen05.st",))


def wait_kernel(which: str) -> KernelSpec:
    """§9.7.16.6.4.2 example 1 around the wait under test: st -> wait::st -> ld -> wait::ld."""
    instruction = f"tcgen05.wait::{which}.sync.aligned;"
    st_wait = instruction if which == "st" else "tcgen05.wait::st.sync.aligned;"
    ld_wait = instruction if which == "ld" else "tcgen05.wait::ld.sync.aligned;"
    lines = _WARP_TADDR + ("tcgen05.st.sync.aligned.32x32b.x1.b32 [%ta], {%v0};", st_wait,
                           "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%w0}, [%ta];", ld_wait)
    steps = [_TA, Raw((), regs=(("w0", ".b32"),)), LoadRegs(("%v0",)), Alloc(512),
             Warps(lines, ops=("st", "wait::st", "ld", "wait::ld")), DumpRegs(("%w0",)), Dealloc(512)]
    return _kernel("wait", instruction, steps, features=("tcgen05.wait",))


# -- tcgen05.alloc / dealloc / relinquish_alloc_permit --------------------------------------------

def alloc_spellings(cta_group: int, ncols: int, shared_cta: bool) -> dict[str, str]:
    """The three management instructions of one kernel (keyed by op)."""
    dst = "[%slot32]" if shared_cta else "[%slot64]"
    space = ".shared::cta" if shared_cta else ""
    return {
        "alloc": f"tcgen05.alloc.cta_group::{cta_group}.sync.aligned{space}.b32 {dst}, {ncols};",
        "relinquish_alloc_permit": f"tcgen05.relinquish_alloc_permit.cta_group::{cta_group}.sync.aligned;",
        "dealloc": f"tcgen05.dealloc.cta_group::{cta_group}.sync.aligned.b32 %tbase, {ncols};",
    }


def alloc_kernel(op: str, cta_group: int, ncols: int, shared_cta: bool) -> KernelSpec:
    """Warp 0 of each CTA allocates ``ncols``, relinquishes, writes the TMEM address to out[0]
    (thread 0), deallocates. ``op`` names which of the three is the instruction under test.

    ``bar.sync`` after the allocation orders it before every thread's load of the address; no
    tcgen05 fence is needed for that (§9.7.16.6.1: the allocation instructions' shared-memory
    accesses keep same-address ordering with non-tcgen05 instructions; §9.7.16.7.1: the alloc's
    store is a weak store), and none before the deallocation: no tcgen05 operation touches the
    columns, and warp 0 itself deallocates. The prologue already synchronizes a pair's CTAs before
    the allocation."""
    sp = alloc_spellings(cta_group, ncols, shared_cta)
    body = Raw((
        "mov.u32 %slot32, tc_slot;",
        "cvt.u64.u32 %slot64, %slot32;",
        "cvta.shared.u64 %slot64, %slot64;",
        "setp.ne.u32 %p3, %wid, 0;",
        "@%p3 bra $L_alloc_skip;",
        sp["alloc"],
        sp["relinquish_alloc_permit"],
        "$L_alloc_skip:",
        "bar.sync 0;",
        "ld.shared.b32 %tbase, [%slot32];",
        "setp.eq.u32 %p3, %tix, 0;",
        "@%p3 st.global.u32 [%out], %tbase;",
        "mov.u32 %stage, 3;",
        "setp.ne.u32 %p3, %wid, 0;",
        "@%p3 bra $L_dealloc_skip;",
        sp["dealloc"],
        "$L_dealloc_skip:",
        "mov.u32 %stage, 8;",
    ), regs=(("slot32", ".b32"), ("slot64", ".b64")),
        ops=(TmemOp("alloc", cta_group, ncols, "warp 0"), TmemOp("relinquish_alloc_permit", cta_group, None, "warp 0"),
             TmemOp("dealloc", cta_group, ncols, "warp 0")))
    steps = [body] + ([Raw(("barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"))] if cta_group == 2 else [])
    return _kernel("alloc", sp[op], steps, cta_group=cta_group, features=("tcgen05.alloc",))


# -- tcgen05.cp / tcgen05.shift / tcgen05.commit / tcgen05.fence ---------------------------------

def cp_instruction(cta_group: int, shape: str, multicast: str | None, decompress: str | None) -> str:
    mods = (f".{multicast}" if multicast else "") + (f".b8x16.{decompress}" if decompress else "")
    return f"tcgen05.cp.cta_group::{cta_group}.{shape}{mods} [%ta], %sdesc;"


_SDESC_SETUP = (
    f"ld.global.u64 %sdesc, {rec('s_desc')};",
    "shr.u32 %r12, %sbase, 4;",
    "cvt.u64.u32 %rd4, %r12;",
    "add.s64 %sdesc, %sdesc, %rd4;",
    f"and.b32 %r13, %flags, {R.FLAG_S_LBO_ABSOLUTE};",
    "setp.ne.u32 %p7, %r13, 0;",
    "shl.b64 %rd5, %rd4, 16;",
    "@%p7 add.s64 %sdesc, %sdesc, %rd5;",
)


def async_kernel(family: str, instruction: str, cta_group: int, op: str, features, commit: str | None = "default",
                 preload: bool = False, issued: str | None = None, extra_setup=(), extra_regs=(),
                 issuer_only: bool = False) -> KernelSpec:
    """Stage smem, allocate, (preload), issue ``issued`` (default: the instruction under test)
    + commit from one thread, bounded wait, read back, deallocate: the skeleton of cp, shift and
    commit cases."""
    issued = issued or instruction
    setup = _THREAD_TADDR + (_SDESC_SETUP if "%sdesc" in issued else ()) + tuple(extra_setup)
    regs = Raw((), regs=(("ta", ".b32"), ("sdesc", ".b64"), ("sbase", ".b32")) + tuple(extra_regs))
    # the allocation's after-fence orders it before other threads' tcgen05 operations on the columns:
    # the preload's tcgen05.st by every warp, and in a CTA pair the issue over the peer CTA's columns
    # (which the peer's warp 0 allocated); otherwise the issuing thread is in the allocating warp and
    # the read-back follows WaitMbarrier's own after-fence
    steps = [regs, StageSmem(), Alloc(512, after_fence=preload or cta_group == 2)] + ([Preload()] if preload else [])
    steps += [Issue(setup, issued, op=op, commit=commit), WaitMbarrier(issuer_only), Readback(), Dealloc(512)]
    return _kernel(family, instruction, steps, cta_group=cta_group, features=features, smem=True)


def cp_kernel(instruction: str, cta_group: int) -> KernelSpec:
    return async_kernel("cp", instruction, cta_group, "cp", ("tcgen05.cp",))


def shift_instruction(cta_group: int, example_order: bool = False) -> str:
    if example_order:   # the order of the §9.7.16.9.3 examples (NOTES.md item 6: ptxas accepts both)
        return f"tcgen05.shift.down.cta_group::{cta_group} [%ta];"
    return f"tcgen05.shift.cta_group::{cta_group}.down [%ta];"


def shift_kernel(instruction: str, cta_group: int) -> KernelSpec:
    return async_kernel("shift", instruction, cta_group, "shift", ("tcgen05.shift",), preload=True)


def commit_instruction(cta_group: int, shared_cluster: bool, multicast: bool) -> str:
    space = ".shared::cluster" if shared_cluster else ""
    mc = ".multicast::cluster" if multicast else ""
    addr = "[%mbar]" if shared_cluster else "[%mbar64]"
    mask = ", %h1" if multicast else ""
    return f"tcgen05.commit.cta_group::{cta_group}.mbarrier::arrive::one{space}{mc}.b64 {addr}{mask};"


def commit_kernel(instruction: str, cta_group: int) -> KernelSpec:
    """A tcgen05.cp.128x256b whose completion the commit under test signals (ctaMask: aux[0])."""
    setup = (f"ld.global.u32 %r14, {rec('aux', 0)};", "cvt.u16.u32 %h1, %r14;", "cvt.u64.u32 %mbar64, %mbar;", "cvta.shared.u64 %mbar64, %mbar64;")
    return async_kernel("commit", instruction, cta_group, "cp", ("tcgen05.commit",), commit=instruction,
                        issued=cp_instruction(cta_group, "128x256b", None, None), extra_setup=setup,
                        extra_regs=(("mbar64", ".b64"),), issuer_only=cta_group == 2 and "multicast" not in instruction)


def fence_kernel(which: str) -> KernelSpec:
    """§9.7.16.6.4.4 example 1 around the fence under test. Warp 0: tcgen05.ld of column c (lanes
    0-31), wait::ld, fence::before_thread_sync, mbarrier arrive. Thread 32: wait, fence::after_
    thread_sync, tcgen05.cp.128x256b over column c, commit. Warp 0's registers (dumped) must hold
    the preloaded values, the read-back region the copied ones."""
    instruction = f"tcgen05.fence::{which};"
    before = instruction if which == "before_thread_sync" else "tcgen05.fence::before_thread_sync;"
    after = instruction if which == "after_thread_sync" else "tcgen05.fence::after_thread_sync;"
    lines = (
        "mov.u32 %mbar2, tc_mbar2;",
        "setp.ne.u32 %p3, %wid, 0;",
        "@%p3 bra $L_fence_consumer;",
        *_WARP_TADDR,
        "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%v0}, [%ta];",
        "tcgen05.wait::ld.sync.aligned;",
        before,
        "setp.eq.u32 %p6, %lid, 0;",
        "@%p6 mbarrier.arrive.relaxed.cluster.shared::cta.b64 _, [%mbar2];",
        "bra.uni $L_fence_done;",
        "$L_fence_consumer:",
        "setp.ne.u32 %p3, %tix, 32;",
        "@%p3 bra $L_fence_done;",
        *bounded_wait("fence_wait", "%mbar2"),
        after,
        *_THREAD_TADDR,
        *_SDESC_SETUP,
        "tcgen05.cp.cta_group::1.128x256b [%ta], %sdesc;",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%mbar];",
        "$L_fence_done:",
    )
    steps = [Raw((), regs=(("ta", ".b32"), ("v0", ".b32"), ("mbar2", ".b32"), ("sdesc", ".b64"), ("sbase", ".b32"))),
             StageSmem(), Alloc(512), Preload(),
             Raw(lines, ops=(TmemOp("ld", None, None, "warp 0"), TmemOp("wait::ld", None, None, "warp 0"),
                             TmemOp("fence", None, None, "warp 0"), TmemOp("cp", 1, None, "thread 32"),
                             TmemOp("commit", 1, None, "thread 32"))),
             WaitMbarrier(), DumpRegs(("%v0",)), Readback(), Dealloc(512)]
    return _kernel("fence", instruction, steps, features=("tcgen05.fence",), smem=True)
