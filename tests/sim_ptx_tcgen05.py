"""Hand-written tcgen05 kernels (sm_100a) for the simulator's self-tests; see ``sim_ptx.py``."""

from tests.sim_ptx import HEAD100

TCGEN05_ALLOC = HEAD100 + r"""
// warp 0 allocates 64 then 32 columns, relinquishes; thread 0 commits (nothing pending) to an
// mbarrier everyone waits on; warp 0 deallocates both; thread t writes both addresses
.visible .entry tmem_alloc(.param .u64 out_ptr, .param .u32 ncols)
.reqntid 128, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 taddr[2];

    ld.param.u64 %rd1, [out_ptr];
    ld.param.u32 %r9, [ncols];
    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra ALLOCATED;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], %r9;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr+4], 32;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra INITED;
    mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r3, [taddr];
    ld.shared.u32 %r4, [taddr+4];
    @%p2 bra COMMITTED;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
COMMITTED:
    mov.u32 %r5, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
    @%p3 bra DONE;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p0, %r5, 100;
    @%p0 bra WAIT;
DONE:
    bar.sync 0;
    @%p1 bra FREED;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, %r9;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, 32;
FREED:
    mul.wide.u32 %rd2, %r1, 12;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    st.global.u32 [%rd3+4], %r4;
    st.global.u32 [%rd3+8], %r5;
    ret;
}
"""

TCGEN05_LEAK = HEAD100 + r"""
// allocates and exits without tcgen05.dealloc
.visible .entry tmem_leak()
{
    .shared .align 4 .b32 taddr;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    ret;
}
"""

TCGEN05_DIVERGED = HEAD100 + r"""
// only half of warp 0 executes tcgen05.alloc (.aligned violated)
.visible .entry tmem_diverged()
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .shared .align 4 .b32 taddr;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 16;
    @%p1 bra OUT;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    ld.shared.u32 %r2, [taddr];
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
OUT:
    ret;
}
"""

TCGEN05_PAIR = HEAD100 + r"""
// cta_group::2: warp 0 of each CTA of the pair allocates; thread 0 of rank 0 commits with
// multicast to both CTAs' mbarriers; every thread waits (bounded) and records its spins
.visible .entry tmem_pair(.param .u64 out_ptr)
.reqnctapercluster 2, 1, 1
.reqntid 64, 1, 1
{
    .reg .pred %p<4>;
    .reg .b16 %h<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 taddr;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
    barrier.cluster.arrive.release.aligned;      // the peer is launched before the collective alloc
    barrier.cluster.wait.acquire.aligned;
    setp.ge.u32 %p2, %r1, 32;
    @%p2 bra ALLOCATED;
    tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [taddr], 32;
ALLOCATED:
    fence.mbarrier_init.release.cluster;
    tcgen05.fence::before_thread_sync;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    tcgen05.fence::after_thread_sync;
    ld.shared.u32 %r3, [taddr];
    setp.ne.or.u32 %p3, %r2, 0, %p1;
    @%p3 bra COMMITTED;
    mov.b16 %h1, 3;
    mov.u32 %r6, bar;
    tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r6], %h1;
COMMITTED:
    mov.u32 %r4, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p0, [bar], 0;
    @%p0 bra DONE;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p0, %r4, 100;
    @%p0 bra WAIT;
DONE:
    tcgen05.fence::before_thread_sync;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    @%p2 bra FREED;
    tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r3, 32;
FREED:
    barrier.cluster.arrive.release.aligned;      // each CTA stays active until its peer has deallocated
    barrier.cluster.wait.acquire.aligned;
    mov.u32 %r5, %ctaid.x;
    mad.lo.u32 %r5, %r5, 64, %r1;
    mul.wide.u32 %rd2, %r5, 8;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {%r3, %r4};
    ret;
}
"""


KERNELS: dict[str, tuple[str, str]] = {
    "tmem_alloc": (TCGEN05_ALLOC, "sm_100a"), "tmem_leak": (TCGEN05_LEAK, "sm_100a"),
    "tmem_diverged": (TCGEN05_DIVERGED, "sm_100a"), "tmem_pair": (TCGEN05_PAIR, "sm_100a"),
}
