"""Hand-written kernels for the hazard checker (``tests/test_sim_hazards.py``).

Each kernel is correct as written.  Lines ending in ``// @TAG`` are the synchronization steps a
test removes (``without(ptx, TAG)``) to make the broken version the checker must report.
"""

from __future__ import annotations

from tests.sim_ptx import HEAD100

# One warp: alloc 32 columns, tcgen05.st its tid to column 0 of its lane, wait::st,
# tcgen05.ld it back, wait::ld, store it to out[tid], dealloc.  Rule wait-ld, exit-pending.
LDST = HEAD100 + r"""
.visible .entry ldst(.param .u64 out_ptr)
.reqntid 32, 1, 1
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 taddr;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r2, [taddr];
    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r1};
    tcgen05.wait::st.sync.aligned;                                       // @wait_st
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r5}, [%r2];
    tcgen05.wait::ld.sync.aligned;                                       // @wait_ld
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;              // @dealloc
    ret;
}
"""

# Five warps: warp 0 tcgen05.st's its lanes, warp 4 (same lane quarter, §9.7.16.8.1) loads them
# after the fence::before_thread_sync -> bar.sync -> fence::after_thread_sync pattern (§9.7.16.6.4.4).
CROSS = HEAD100 + r"""
.visible .entry cross(.param .u64 out_ptr)
.reqntid 160, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 taddr;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    shr.u32 %r3, %r1, 5;
    setp.ne.u32 %p1, %r3, 0;
    setp.ne.u32 %p2, %r3, 4;
    @%p1 bra ALLOCATED;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r2, [taddr];
    @%p1 bra STORED;
    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r1};
    tcgen05.wait::st.sync.aligned;
STORED:
    tcgen05.fence::before_thread_sync;                                   // @before
    bar.sync 0;                                                          // @sync
    tcgen05.fence::after_thread_sync;                                    // @after
    @%p2 bra LOADED;
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r5}, [%r2];
    tcgen05.wait::ld.sync.aligned;
    and.b32 %r4, %r1, 31;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
LOADED:
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    @%p1 bra FREED;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
FREED:
    ret;
}
"""

# Four warps: every thread writes 32 bytes of a 4 KiB shared buffer (generic proxy), fences it
# for the async proxy, bar.sync; thread 0 copies it with tcgen05.cp.128x256b and commits to an
# mbarrier all wait on; then fence::after_thread_sync and every warp loads its lanes' 8 columns.
PROXY = HEAD100 + r"""
.visible .entry proxy(.param .u64 out_ptr)
.reqntid 128, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 taddr;
    .shared .align 128 .b8 buf[4096];

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    shr.u32 %r3, %r1, 5;
    setp.ne.u32 %p1, %r3, 0;
    setp.ne.u32 %p2, %r1, 0;
    @%p1 bra ALLOCATED;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
    @%p2 bra INITED;
    mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
    mov.u32 %r4, buf;
    shl.b32 %r5, %r1, 5;
    add.u32 %r6, %r4, %r5;
    st.shared.v4.u32 [%r6], {%r1, %r1, %r1, %r1};
    st.shared.v4.u32 [%r6+16], {%r1, %r1, %r1, %r1};
    fence.proxy.async.shared::cta;                                       // @proxy
    tcgen05.fence::before_thread_sync;
    bar.sync 0;                                                          // @sync
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r2, [taddr];
    @%p2 bra ISSUED;
    cvt.u64.u32 %rd2, %r4;
    shr.u64 %rd2, %rd2, 4;
    and.b64 %rd2, %rd2, 0x3FFF;
    or.b64 %rd3, %rd2, 0x401000080000;
    tcgen05.cp.cta_group::1.128x256b [%r2], %rd3;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];   // @commit
ISSUED:
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;              // @wait
    @!%p3 bra WAIT;                                                      // @wait
    tcgen05.fence::after_thread_sync;                                    // @after
    shl.b32 %r7, %r3, 21;
    add.u32 %r8, %r2, %r7;
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r9}, [%r8];
    tcgen05.wait::ld.sync.aligned;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r9;
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    @%p1 bra FREED;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
FREED:
    ret;
}
"""

# A CTA pair (cluster of 2), one warp each: a cluster barrier before the collective
# tcgen05.alloc.cta_group::2 (the peer is launched, §9.7.16.7.1), each CTA stores and loads its own
# lanes, the fence pattern around a cluster barrier before the pair's dealloc (which may free both
# CTAs' columns: rule peer-dealloc), and a cluster barrier after it (each CTA stays active until its
# peer has deallocated, §9.7.16.5).  Rules peer-launched, peer-dealloc, peer-active.
PAIR = HEAD100 + r"""
.visible .entry pair(.param .u64 out_ptr)
.reqnctapercluster 2, 1, 1
.reqntid 32, 1, 1
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 taddr;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    barrier.cluster.arrive.release.aligned;                              // @launched
    barrier.cluster.wait.acquire.aligned;                                // @launched
    tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [taddr], 32;
    tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r2, [taddr];
    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r1};
    tcgen05.wait::st.sync.aligned;
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r5}, [%r2];
    tcgen05.wait::ld.sync.aligned;
    mov.u32 %r3, %ctaid.x;
    mad.lo.u32 %r4, %r3, 32, %r1;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    tcgen05.fence::before_thread_sync;
    barrier.cluster.arrive.release.aligned;                              // @freed
    barrier.cluster.wait.acquire.aligned;                                // @freed
    tcgen05.fence::after_thread_sync;
    tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 32;
    barrier.cluster.arrive.release.aligned;                              // @active
    barrier.cluster.wait.acquire.aligned;                                // @active
    ret;
}
"""

KERNELS = {"ldst": (LDST, "sm_100a"), "cross": (CROSS, "sm_100a"), "proxy": (PROXY, "sm_100a"),
           "pair": (PAIR, "sm_100a")}


def without(ptx: str, tag: str) -> str:
    """``ptx`` without the lines tagged ``// @tag`` (the broken version)."""
    lines = ptx.splitlines()
    kept = [line for line in lines if not line.rstrip().endswith(f"// @{tag}")]
    assert len(kept) < len(lines), f"no line tagged @{tag}"
    return "\n".join(kept) + "\n"

# Five warps: warp 4 tcgen05.st's lanes 0-31 of column 0; after the pattern thread 0 issues
# tcgen05.shift.down over those columns (it reads the rows it moves), commits, and all wait.
SHIFT = HEAD100 + r"""
.visible .entry shift(.param .u64 out_ptr)
.reqntid 160, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 taddr;

    mov.u32 %r1, %tid.x;
    shr.u32 %r3, %r1, 5;
    setp.ne.u32 %p1, %r3, 0;
    setp.ne.u32 %p2, %r3, 4;
    @%p1 bra ALLOCATED;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
    setp.ne.u32 %p3, %r1, 0;
    @%p3 bra INITED;
    mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r2, [taddr];
    @%p2 bra STORED;
    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r1};
    tcgen05.wait::st.sync.aligned;
STORED:
    tcgen05.fence::before_thread_sync;                                   // @before
    bar.sync 0;                                                          // @sync
    tcgen05.fence::after_thread_sync;                                    // @after
    @%p3 bra ISSUED;
    tcgen05.shift.cta_group::1.down [%r2];
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
ISSUED:
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p0, [bar], 0;
    @!%p0 bra WAIT;
    tcgen05.fence::after_thread_sync;
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    @%p1 bra FREED;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
FREED:
    ret;
}
"""
