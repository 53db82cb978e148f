"""A PTX test harness for the simulator's tcgen05 data-movement and MMA handlers (sm_100a).

:func:`harness` writes one kernel (real PTX; ``tests/test_sim_assemble.py`` assembles every
kernel of :data:`KERNELS` with ptxas) around the instruction(s) under test:

1. stage ``smem_bytes`` of the case image from ``in + rank * smem_bytes`` into a 1024-aligned shared
   buffer (rank: the CTA's rank in a cta_group::2 pair, else 0);
2. warp 0 (of each CTA) allocates 512 Tensor Memory columns (a CTA pair first passes a cluster barrier);
3. preload: every thread stores ``preload`` words (``in + PRELOAD + 4 * preload * tid``) into its
   lane with ``tcgen05.st.32x32b.x<preload>`` from column 0 (text-defined map: thread t <-> lane
   32*warp + t, register i <-> column i), then ``wait::st``;
4. ``warp_body``: lines every thread runs (loads/stores under test); ``issue``: lines thread 0
   (of rank 0) runs, followed by a commit to an mbarrier every thread waits on (bounded);
5. readback: ``tcgen05.ld.32x32b.x<n>`` of columns ``c0 .. c0+n-1`` of each lane, stored at
   ``out + 4 * (cta * ntid * total + tid * total + k)`` (``total`` words per thread);
6. warp 0 deallocates.

Registers available to the bodies: ``%tbase`` (allocation), ``%ta`` (``%tbase`` + this warp's lane
quarter), ``%sbase`` (shared buffer), ``%in``/``%out`` (u64), ``%tix``, ``%lid``, ``%wid``,
``%crank``, ``%mbar``, scratch ``%r<40>``, ``%rd<16>``, ``%v<N>`` (inputs, ``vregs`` of them
loaded from ``in + REGS + 4 * vregs * tid``), ``%w<N>`` (outputs, dumped after the readback words).
"""

from __future__ import annotations

from tests.sim_ptx import HEAD100

PRELOAD = 0x10000           # byte offsets inside the input block
REGS = 0x30000
WAIT_BOUND = 4096


def braced(stem: str, n: int, first: int = 0) -> str:
    return "{" + ", ".join(f"%{stem}{i}" for i in range(first, first + n)) + "}"


def harness(name: str, *, warp_body=(), issue=(), preload: int = 0, readback=(), cta_group: int = 1,
            smem_bytes: int = 0, vregs: int = 0, wregs: int = 0, extra_regs: str = "",
            commit: bool = True) -> str:
    """PTX text of one test kernel ``name(.param .u64 in_ptr, .param .u64 out_ptr)`` (module doc).

    ``readback``: ``(column, count)`` pairs, each one ``tcgen05.ld.32x32b.x<count>``.
    """
    cg = cta_group
    total = sum(n for _, n in readback) + wregs
    nv = max(vregs, preload, 1)
    nw = max(max((n for _, n in readback), default=1), wregs, 1)
    lines = [HEAD100, f".visible .entry {name}(.param .u64 in_ptr, .param .u64 out_ptr)"]
    if cg == 2:
        lines.append(".reqnctapercluster 2, 1, 1")
    lines += [".reqntid 128, 1, 1", "{",
              "    .reg .pred %p<8>;", "    .reg .b16 %h<4>;", "    .reg .b32 %r<40>;",
              f"    .reg .b32 %v<{nv}>;", f"    .reg .b32 %w<{nw}>;", "    .reg .b64 %rd<16>;",
              "    .reg .b64 %in, %out;",
              "    .reg .b32 %tix, %lid, %wid, %crank, %tbase, %ta, %sbase, %mbar;",
              extra_regs,
              "    .shared .align 8 .b64 bar;", "    .shared .align 4 .b32 slot;"]
    if smem_bytes:
        lines.append(f"    .shared .align 1024 .b8 sbuf[{smem_bytes + 1024}];")
    body = [
        "ld.param.u64 %in, [in_ptr];", "ld.param.u64 %out, [out_ptr];",
        "mov.u32 %tix, %tid.x;", "mov.u32 %lid, %laneid;", "shr.u32 %wid, %tix, 5;",
        "mov.u32 %crank, %cluster_ctarank;" if cg == 2 else "mov.u32 %crank, 0;",
        "mov.u32 %mbar, bar;",
    ]
    if smem_bytes:
        body += [
            "mov.u32 %r0, sbuf;", "add.u32 %r0, %r0, 1023;", "and.b32 %sbase, %r0, -1024;",
            "shl.b32 %r1, %tix, 2;",
            "STAGE:", f"setp.ge.u32 %p1, %r1, {smem_bytes};", "@%p1 bra STAGED;",
            "cvt.u64.u32 %rd1, %r1;", "add.s64 %rd1, %in, %rd1;",
            *([f"mul.wide.u32 %rd4, %crank, {smem_bytes};", "add.s64 %rd1, %rd1, %rd4;"] if cg == 2 else []),
            "ld.global.u32 %r2, [%rd1];",
            "add.u32 %r3, %sbase, %r1;", "st.shared.u32 [%r3], %r2;", "add.u32 %r1, %r1, 512;",
            "bra.uni STAGE;", "STAGED:",
        ]
    else:
        body.append("mov.u32 %sbase, 0;")
    body += [
        "setp.ne.u32 %p2, %tix, 0;", "@%p2 bra INITED;", "mbarrier.init.shared::cta.b64 [bar], 1;", "INITED:",
        "fence.mbarrier_init.release.cluster;", "fence.proxy.async.shared::cta;",
        # a CTA pair: the peer is launched before the collective alloc (§9.7.16.7.1, checker rule peer-launched)
        *(["barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"] if cg == 2 else []),
        "setp.ne.u32 %p3, %wid, 0;", "@%p3 bra ALLOCATED;",
        f"tcgen05.alloc.cta_group::{cg}.sync.aligned.shared::cta.b32 [slot], 512;",
        f"tcgen05.relinquish_alloc_permit.cta_group::{cg}.sync.aligned;", "ALLOCATED:",
    ] + sync(cg) + [
        "ld.shared.u32 %tbase, [slot];", "and.b32 %r4, %wid, 3;", "shl.b32 %r4, %r4, 21;",
        "add.u32 %ta, %tbase, %r4;",
    ]
    if preload:
        body += [f"mul.wide.u32 %rd3, %tix, {4 * preload};", "add.s64 %rd3, %rd3, %in;"]
        if cg == 2:
            body += ["mul.wide.u32 %rd4, %crank, 0x10000;", "add.s64 %rd3, %rd3, %rd4;"]
        body += [f"ld.global.u32 %v{i}, [%rd3+{PRELOAD + 4 * i}];" for i in range(preload)]
        body += [f"tcgen05.st.sync.aligned.32x32b.x{preload}.b32 [%ta], {braced('v', preload)};",
                 "tcgen05.wait::st.sync.aligned;"] + sync(cg)
    if vregs:
        body += [f"mul.wide.u32 %rd2, %tix, {4 * vregs};", "add.s64 %rd2, %rd2, %in;"]
        body += [f"ld.global.u32 %v{i}, [%rd2+{REGS + 4 * i}];" for i in range(vregs)]
    body += list(warp_body)
    if issue:
        body += ["setp.ne.u32 %p4, %tix, 0;", "setp.ne.or.u32 %p4, %crank, 0, %p4;", "@%p4 bra ISSUED;"]
        body += list(issue)
        if commit:
            if cg == 2:
                body += ["mov.b16 %h0, 3;",
                         "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                         "[%mbar], %h0;"]
            else:
                body.append("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%mbar];")
        body += ["ISSUED:", "mov.u32 %r5, 0;", "WAIT:", "mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar], 0;",
                 "@%p5 bra WAITED;", "add.u32 %r5, %r5, 1;", f"setp.lt.u32 %p6, %r5, {WAIT_BOUND};",
                 "@%p6 bra WAIT;", "WAITED:", "tcgen05.fence::after_thread_sync;"]
    body += sync(cg)
    body += ["mov.u32 %r6, %ctaid.x;", "mad.lo.u32 %r6, %r6, 128, %tix;", f"mul.wide.u32 %rd5, %r6, {4 * total};",
             "add.s64 %rd5, %rd5, %out;"]
    k = 0
    for col, n in readback:
        body += [f"add.u32 %r7, %ta, {col};", f"tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {braced('w', n)}, [%r7];",
                 "tcgen05.wait::ld.sync.aligned;"]
        body += [f"st.global.u32 [%rd5+{4 * (k + i)}], %w{i};" for i in range(n)]
        k += n
    body += [f"st.global.u32 [%rd5+{4 * (k + i)}], %w{i};" for i in range(wregs)]
    body += sync(cg) + ["@%p3 bra FREED;", f"tcgen05.dealloc.cta_group::{cg}.sync.aligned.b32 %tbase, 512;",
                        "FREED:"] + (["barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"]
                                     if cg == 2 else []) + ["ret;"]
    lines += ["    " + b if not b.endswith(":") else b for b in body] + ["}", ""]
    return "\n".join(lines)


def sync(cg: int) -> list[str]:
    out = ["tcgen05.fence::before_thread_sync;", "bar.sync 0;"]
    if cg == 2:
        out += ["barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"]
    return out + ["tcgen05.fence::after_thread_sync;"]


def words_per_thread(readback, wregs: int = 0) -> int:
    return sum(n for _, n in readback) + wregs


#: representative kernels (assembled by tests/test_sim_assemble.py)
KERNELS: dict[str, tuple[str, str]] = {
    "ops_ld_16x256b": (harness("ld16x256", preload=16, warp_body=(
        "tcgen05.ld.sync.aligned.16x256b.x2.b32 " + braced("w", 8) + ", [%ta];", "tcgen05.wait::ld.sync.aligned;"),
        wregs=8), "sm_100a"),
    "ops_st_16x32bx2": (harness("st16x32bx2", vregs=4, warp_body=(
        "tcgen05.st.sync.aligned.16x32bx2.x2.unpack::16b.b32 [%ta], 8, " + braced("v", 2) + ";",
        "tcgen05.wait::st.sync.aligned;"), readback=((0, 16),)), "sm_100a"),
    "ops_cp_pair": (harness("cp_pair", cta_group=2, smem_bytes=4096, issue=(
        "ld.global.u64 %rd6, [%in+0x20000];", "tcgen05.cp.cta_group::2.128x256b [%tbase], %rd6;"),
        readback=((0, 8),)), "sm_100a"),
}
