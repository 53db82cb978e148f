"""Hand-written PTX kernels for the simulator's self-tests, and helpers to run them.

Every kernel here is real PTX: ``tests/test_sim_assemble.py`` assembles each with ptxas for its
``.target``.  Expected results in the tests are computed independently (Python integers), never
by the simulator's own code paths.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

HEAD90 = ".version 8.0\n.target sm_90\n.address_size 64\n"
HEAD100 = ".version 8.7\n.target sm_100a\n.address_size 64\n"

ALU = HEAD90 + r"""
// 32 result words per thread from integer/bit instructions on a = tid - 20
.visible .entry alu(.param .u64 out_ptr)
.reqntid 64, 1, 1
{
    .reg .pred %p<5>;
    .reg .b16 %h<3>;
    .reg .b32 %r<45>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 128;
    add.s64 %rd3, %rd1, %rd2;
    sub.s32 %r2, %r1, 20;
    mul.lo.s32 %r3, %r2, -7;
    st.global.u32 [%rd3], %r3;
    mul.hi.u32 %r4, %r2, 0x9E3779B9;
    st.global.u32 [%rd3+4], %r4;
    mul.hi.s32 %r5, %r2, 0x7FFFFFF1;
    st.global.u32 [%rd3+8], %r5;
    mad.lo.s32 %r6, %r2, %r2, 1000;
    st.global.u32 [%rd3+12], %r6;
    div.s32 %r7, %r2, 7;
    st.global.u32 [%rd3+16], %r7;
    rem.s32 %r8, %r2, 7;
    st.global.u32 [%rd3+20], %r8;
    div.u32 %r9, %r2, 7;
    st.global.u32 [%rd3+24], %r9;
    min.s32 %r10, %r2, 5;
    st.global.u32 [%rd3+28], %r10;
    max.u32 %r11, %r2, 5;
    st.global.u32 [%rd3+32], %r11;
    abs.s32 %r12, %r2;
    st.global.u32 [%rd3+36], %r12;
    neg.s32 %r13, %r2;
    st.global.u32 [%rd3+40], %r13;
    and.b32 %r14, %r3, 0xF0F0;
    st.global.u32 [%rd3+44], %r14;
    or.b32 %r15, %r3, 0x0F;
    st.global.u32 [%rd3+48], %r15;
    xor.b32 %r16, %r3, %r6;
    st.global.u32 [%rd3+52], %r16;
    not.b32 %r17, %r3;
    st.global.u32 [%rd3+56], %r17;
    shl.b32 %r18, 1, %r1;
    st.global.u32 [%rd3+60], %r18;
    shr.s32 %r19, %r2, %r1;
    st.global.u32 [%rd3+64], %r19;
    shr.u32 %r20, %r2, %r1;
    st.global.u32 [%rd3+68], %r20;
    setp.lt.s32 %p1, %r2, 0;
    selp.u32 %r21, 111, 222, %p1;
    st.global.u32 [%rd3+72], %r21;
    setp.hi.u32 %p2, %r2, 30;
    setp.eq.or.s32 %p3|%p4, %r1, 7, %p2;
    selp.u32 %r22, 1, 0, %p3;
    selp.u32 %r23, 2, 0, %p4;
    or.b32 %r24, %r22, %r23;
    st.global.u32 [%rd3+76], %r24;
    cvt.s64.s32 %rd4, %r2;
    shr.u64 %rd5, %rd4, 32;
    cvt.u32.u64 %r25, %rd5;
    st.global.u32 [%rd3+80], %r25;
    cvt.u16.u32 %h1, %r3;
    cvt.u32.u16 %r26, %h1;
    st.global.u32 [%rd3+84], %r26;
    cvt.s8.s32 %h2, %r3;
    cvt.s32.s8 %r27, %h2;
    st.global.u32 [%rd3+88], %r27;
    bfe.u32 %r28, %r3, 4, 8;
    st.global.u32 [%rd3+92], %r28;
    bfe.s32 %r29, %r3, 28, 8;
    st.global.u32 [%rd3+96], %r29;
    bfi.b32 %r30, %r1, 0xFFFFFFFF, 8, 4;
    st.global.u32 [%rd3+100], %r30;
    prmt.b32 %r31, %r3, %r6, 0x3715;
    st.global.u32 [%rd3+104], %r31;
    popc.b32 %r32, %r3;
    st.global.u32 [%rd3+108], %r32;
    clz.b32 %r33, %r1;
    st.global.u32 [%rd3+112], %r33;
    lop3.b32 %r34, %r3, %r6, %r1, 0x96;
    st.global.u32 [%rd3+116], %r34;
    mul.wide.s32 %rd6, %r2, 100000;
    mov.b64 {%r35, %r36}, %rd6;
    st.global.v2.u32 [%rd3+120], {%r35, %r36};
    ret;
}
"""

FLOAT = HEAD90 + r"""
.visible .entry falu(.param .u64 out_ptr)
{
    .reg .pred %p<3>;
    .reg .b16 %h<2>;
    .reg .b32 %r<20>;
    .reg .f32 %f<12>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 40;
    add.s64 %rd3, %rd1, %rd2;
    sub.s32 %r2, %r1, 16;
    cvt.rn.f32.s32 %f1, %r2;
    mul.f32 %f2, %f1, 0f3FC00000;
    add.f32 %f3, %f2, 0.25;
    fma.rn.f32 %f4, %f3, %f3, 0fBF800000;
    neg.f32 %f5, %f4;
    abs.f32 %f6, %f5;
    min.f32 %f7, %f3, 0f00000000;
    cvt.rzi.s32.f32 %r3, %f3;
    cvt.rni.s32.f32 %r4, %f3;
    setp.lt.f32 %p1, %f3, 0f00000000;
    selp.u32 %r5, 1, 0, %p1;
    cvt.rn.f16.f32 %h1, %f3;
    cvt.f32.f16 %f8, %h1;
    cvt.rn.bf16x2.f32 %r6, %f3, %f2;
    st.global.v2.f32 [%rd3], {%f3, %f4};
    st.global.v2.f32 [%rd3+8], {%f5, %f6};
    st.global.f32 [%rd3+16], %f7;
    st.global.u32 [%rd3+20], %r3;
    st.global.u32 [%rd3+24], %r4;
    st.global.u32 [%rd3+28], %r5;
    st.global.f32 [%rd3+32], %f8;
    st.global.u32 [%rd3+36], %r6;
    ret;
}
"""

BRANCHES = HEAD90 + r"""
// divergent if/else (lane parity), a nested if, and a loop of tid % 5 iterations
.visible .entry branches(.param .u64 out_ptr)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra EVEN;
    mov.u32 %r3, 100;
    setp.gt.u32 %p2, %r1, 40;
    @!%p2 bra JOIN;
    add.u32 %r3, %r3, 1000;
    bra.uni JOIN;
EVEN:
    mov.u32 %r3, 200;
JOIN:
    rem.u32 %r4, %r1, 5;
    mov.u32 %r5, 0;
    mov.u32 %r6, 0;
LOOP:
    setp.ge.u32 %p3, %r5, %r4;
    @%p3 bra DONE;
    add.u32 %r6, %r6, %r5;
    add.u32 %r6, %r6, 10;
    add.u32 %r5, %r5, 1;
    bra.uni LOOP;
DONE:
    st.global.v2.u32 [%rd3], {%r3, %r6};
    ret;
}
"""

SHARED = HEAD90 + r"""
// reverse 128 words through shared memory across warps; named barrier 1 for warps 0-1 only
.visible .entry shared_rev(.param .u64 in_ptr, .param .u64 out_ptr)
.reqntid 128, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 buf[512];
    .shared .align 4 .u32 counter;

    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    mov.u32 %r3, buf;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r2;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SKIP;
    st.shared.u32 [counter], 0;
SKIP:
    bar.sync 0;
    atom.shared.add.u32 %r6, [counter], 1;
    sub.u32 %r7, 127, %r1;
    shl.b32 %r8, %r7, 2;
    add.u32 %r9, %r3, %r8;
    ld.shared.u32 %r10, [%r9];
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r10;
    setp.ge.u32 %p2, %r1, 64;
    @%p2 bra END;
    bar.sync 1, 64;
    ld.shared.u32 %r11, [counter];
    st.global.u32 [%rd5+512], %r11;
END:
    ret;
}
"""

MBARRIER = HEAD90 + r"""
// phases of an mbarrier: 128 arrivals complete phase 0; thread 0 then expects 64 tx bytes and
// arrives alone on a count-1 barrier; warp 1 completes the transaction bytes later in program order
.visible .entry mbar(.param .u64 out_ptr)
.reqntid 128, 1, 1
{
    .reg .pred %p<6>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b64 bar0;
    .shared .align 8 .b64 bar1;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    mbarrier.init.shared::cta.b64 [bar0], 128;
    mbarrier.init.shared::cta.b64 [bar1], 1;
INITED:
    bar.sync 0;
    mbarrier.arrive.shared::cta.b64 %rd2, [bar0];
    mbarrier.test_wait.shared::cta.b64 %p2, [bar0], %rd2;
    selp.u32 %r2, 1, 0, %p2;
    mov.u32 %r3, 0;
WAIT0:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar0], 0;
    @%p3 bra DONE0;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p4, %r3, 1000;
    @%p4 bra WAIT0;
DONE0:
    mbarrier.test_wait.parity.shared::cta.b64 %p5, [bar0], 1;
    selp.u32 %r4, 1, 0, %p5;
    // phase 0 of bar1: thread 0 expects 64 bytes and arrives; warp 1 lane 0 completes them
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra NOARRIVE;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [bar1], 64;
NOARRIVE:
    mov.u32 %r5, 0;
    setp.eq.u32 %p1, %r1, 32;
    @%p1 bra PRODUCER;
WAIT1:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar1], 0;
    @%p3 bra DONE1;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p4, %r5, 1000;
    @%p4 bra WAIT1;
    bra.uni DONE1;
PRODUCER:
    mbarrier.complete_tx.shared::cta.b64 [bar1], 32;
    mbarrier.complete_tx.shared::cta.b64 [bar1], 32;
DONE1:
    mul.wide.u32 %rd4, %r1, 16;
    add.s64 %rd5, %rd1, %rd4;
    st.global.v4.u32 [%rd5], {%r2, %r3, %r4, %r5};
    ret;
}
"""

CLUSTER = HEAD90 + r"""
// cluster special registers, and a distributed shared memory exchange with barrier.cluster
.visible .entry cluster(.param .u64 out_ptr)
.reqnctapercluster 2, 1, 1
.reqntid 64, 1, 1
{
    .reg .pred %p<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<6>;
    .shared .align 4 .b8 slot[256];

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %cluster_ctarank;
    mov.u32 %r4, %clusterid.x;
    mov.u32 %r5, %cluster_nctarank;
    mov.u32 %r6, %nclusterid.x;
    mov.u32 %r7, %cluster_ctaid.x;
    mov.u32 %r8, %laneid;
    mov.u32 %r9, %nctaid.x;
    // write my rank*1000+tid into the peer CTA's slot[tid]
    xor.b32 %r10, %r3, 1;
    mov.u32 %r11, slot;
    shl.b32 %r12, %r1, 2;
    add.u32 %r13, %r11, %r12;
    mapa.shared::cluster.u32 %r14, %r13, %r10;
    mad.lo.u32 %r15, %r3, 1000, %r1;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    st.shared::cluster.u32 [%r14], %r15;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    ld.shared.u32 %r16, [%r13];
    mad.lo.u32 %r17, %r2, 64, %r1;
    mul.wide.u32 %rd2, %r17, 48;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};
    st.global.v4.u32 [%rd3+16], {%r6, %r7, %r8, %r9};
    st.global.v2.u32 [%rd3+32], {%r16, %r13};
    ret;
}
"""

DEADLOCK = HEAD90 + r"""
.visible .entry deadlock()
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    bar.sync 1;
    ret;
}
"""

UNIMPLEMENTED = HEAD90 + r"""
.visible .entry unimpl(.param .u64 out_ptr)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    mov.u32 %r1, %tid.x;
    bmsk.clamp.b32 %r2, %r1, %r1;
    mad.hi.sat.s32 %r3, %r1, %r2, %r1;
    ld.param.u64 %rd1, [out_ptr];
    st.global.u32 [%rd1], %r3;
    ret;
}
"""

BAD_STORE = HEAD90 + r"""
.visible .entry bad_store(.param .u64 ptr, .param .u32 offset)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [ptr];
    ld.param.u32 %r1, [offset];
    cvt.u64.u32 %rd2, %r1;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r2, %tid.x;
    st.global.u32 [%rd3], %r2;
    ret;
}
"""


ABI_COPY = HEAD90 + r"""
// kernel ABI: copy out_words u32 words from in_ptr to out_ptr, then write the status words
.visible .entry abi_copy(.param .u64 case_table, .param .u32 ncases)
.reqntid 128, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [case_table];
    ld.param.u32 %r1, [ncases];
    mov.u32 %r2, %ctaid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra EXIT;
    mul.wide.u32 %rd2, %r2, 256;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u64 %rd4, [%rd3];
    ld.global.u64 %rd5, [%rd3+8];
    ld.global.u64 %rd6, [%rd3+16];
    ld.global.u32 %r3, [%rd3+24];
    mov.u32 %r4, %tid.x;
LOOP:
    setp.ge.u32 %p2, %r4, %r3;
    @%p2 bra COPIED;
    mul.wide.u32 %rd7, %r4, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.global.u32 %r5, [%rd8];
    add.s64 %rd9, %rd5, %rd7;
    st.global.u32 [%rd9], %r5;
    add.u32 %r4, %r4, 128;
    bra.uni LOOP;
COPIED:
    bar.sync 0;
    mov.u32 %r6, %tid.x;
    setp.ne.u32 %p2, %r6, 0;
    @%p2 bra EXIT;
    st.global.v4.u32 [%rd6], {0x600D0002, 0, 0, 0};
EXIT:
    ret;
}
"""

WARP = HEAD90 + r"""
// shfl.sync in all modes, vote, elect, activemask in a divergent branch (10 words per thread)
.visible .entry warp(.param .u64 out_ptr)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %laneid;
    shfl.sync.up.b32 %r3|%p1, %r1, 1, 0, -1;
    shfl.sync.down.b32 %r4|%p2, %r1, 2, 31, -1;
    shfl.sync.bfly.b32 %r5, %r1, 5, 31, -1;
    shfl.sync.idx.b32 %r6, %r1, 7, 31, -1;
    shfl.sync.idx.b32 %r7, %r1, 7, 0x181f, -1;
    vote.sync.ballot.b32 %r8, %p1, -1;
    setp.lt.u32 %p3, %r2, 10;
    vote.sync.any.pred %p4, %p3, -1;
    vote.sync.all.pred %p5, %p3, -1;
    selp.u32 %r9, 1, 0, %p4;
    selp.u32 %r10, 2, 0, %p5;
    or.b32 %r9, %r9, %r10;
    elect.sync %r11|%p6, -1;
    selp.u32 %r12, 0x100, 0, %p6;
    or.b32 %r11, %r11, %r12;
    mov.u32 %r13, 0;
    and.b32 %r14, %r2, 1;
    setp.eq.u32 %p7, %r14, 0;
    @%p7 bra EVEN;
    activemask.b32 %r13;
EVEN:
    mul.wide.u32 %rd2, %r1, 40;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {%r3, %r4};
    st.global.v2.u32 [%rd3+8], {%r5, %r6};
    st.global.v2.u32 [%rd3+16], {%r7, %r8};
    st.global.v2.u32 [%rd3+24], {%r9, %r11};
    st.global.v2.u32 [%rd3+32], {%r13, %r2};
    ret;
}
"""

MEMORY = HEAD90 + r"""
// generic/shared/local addressing and global atomics; counters live at out_ptr[0..3]
.visible .entry memory(.param .u64 out_ptr)
.reqntid 64, 1, 1
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<10>;
    .shared .align 8 .b8 sbuf[256];
    .local .align 4 .b8 scratch[16];

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, sbuf;
    cvta.shared.u64 %rd3, %rd2;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    add.u32 %r2, %r1, 5000;
    st.u32 [%rd5], %r2;
    cvta.to.shared.u64 %rd6, %rd5;
    cvt.u32.u64 %r3, %rd6;
    ld.shared.u32 %r4, [%r3];
    st.local.u32 [scratch+4], %r4;
    ld.local.u32 %r5, [scratch+4];
    atom.global.add.u32 %r6, [%rd1], 1;
    red.global.add.u32 [%rd1+4], %r1;
    atom.global.max.s32 %r7, [%rd1+8], %r1;
    atom.global.inc.u32 %r8, [%rd1+12], 9;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SKIP;
    atom.global.cas.b32 %r9, [%rd1+16], 0, 77;
    atom.global.cas.b32 %r10, [%rd1+20], 1, 88;
    atom.global.exch.b32 %r11, [%rd1+24], 99;
    st.global.v4.u32 [%rd1+32], {%r9, %r10, %r11, %r3};
SKIP:
    mad.wide.u32 %rd7, %r1, 8, %rd1;
    st.global.v2.u32 [%rd7+64], {%r5, %r6};
    ret;
}
"""


NARROW = HEAD90 + r"""
// 8/16-bit loads (zero/sign extension into 32-bit registers), byte stores, barrier.sync,
// bar.warp.sync, membar, %warpid, %ntid, exit
.visible .entry narrow(.param .u64 in_ptr, .param .u64 out_ptr)
.reqntid 64, 1, 1
{
    .reg .b16 %h<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd3, %r1;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u8 %r2, [%rd4];
    ld.global.s8 %r3, [%rd4];
    shl.b32 %r4, %r1, 1;
    cvt.u64.u32 %rd5, %r4;
    add.s64 %rd5, %rd1, %rd5;
    ld.global.u16 %h1, [%rd5];
    cvt.u32.u16 %r5, %h1;
    ld.global.s16 %r6, [%rd5];
    membar.gl;
    barrier.sync 0;
    bar.warp.sync -1;
    mov.u32 %r7, %warpid;
    mov.u32 %r8, %ntid.x;
    mul.wide.u32 %rd6, %r1, 32;
    add.s64 %rd7, %rd2, %rd6;
    st.global.v4.u32 [%rd7], {%r2, %r3, %r5, %r6};
    st.global.v2.u32 [%rd7+16], {%r7, %r8};
    mul.lo.u32 %r9, %r1, 3;
    add.s64 %rd8, %rd2, %rd3;
    st.global.u8 [%rd8+2048], %r9;
    exit;
}
"""

#: every kernel of this module, with the architecture it is assembled for
BULK = HEAD90 + r"""
// cp.async.bulk of 64 bytes from in_ptr into shared memory, completed through an mbarrier's
// transaction count; per thread t (64 threads): word t%16 of the buffer before waiting, after the
// (bounded) wait, and the spin count.  extra parameter: bytes to copy.
.visible .entry bulk(.param .u64 in_ptr, .param .u64 out_ptr, .param .u32 nbytes)
.reqntid 64, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b8 buf[64];

    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    ld.param.u32 %r9, [nbytes];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    fence.mbarrier_init.release.cluster;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r9;
    @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], %r9, [%r2];
    and.b32 %r4, %r1, 15;
    shl.b32 %r4, %r4, 2;
    add.u32 %r5, %r3, %r4;
    ld.shared.u32 %r6, [%r5];
    mov.u32 %r8, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @%p2 bra DONE;
    add.u32 %r8, %r8, 1;
    setp.lt.u32 %p3, %r8, 1000;
    @%p3 bra WAIT;
DONE:
    ld.shared.u32 %r7, [%r5];
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd2, %rd3;
    st.global.v4.u32 [%rd4], {%r6, %r7, %r8, %r1};
    ret;
}
"""

KERNELS: dict[str, tuple[str, str]] = {
    "alu": (ALU, "sm_90"), "falu": (FLOAT, "sm_90"), "branches": (BRANCHES, "sm_90"),
    "shared_rev": (SHARED, "sm_90"), "mbar": (MBARRIER, "sm_90"), "cluster": (CLUSTER, "sm_90"),
    "deadlock": (DEADLOCK, "sm_90"), "bad_store": (BAD_STORE, "sm_90"), "abi_copy": (ABI_COPY, "sm_90"),
    "warp": (WARP, "sm_90"), "memory": (MEMORY, "sm_90"), "narrow": (NARROW, "sm_90"),
    "bulk": (BULK, "sm_90"),
}


def ptxas_or_skip() -> str:
    exe = shutil.which("ptxas")
    if exe is None:
        pytest.skip("ptxas not found on PATH")
    return exe


def assemble(ptx: str, arch: str) -> subprocess.CompletedProcess:
    """Run ptxas on ``ptx`` (skips the test without ptxas)."""
    exe = ptxas_or_skip()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        return subprocess.run([exe, f"-arch={arch}", "-o", str(Path(tmp) / "k.cubin"), str(src)],
                              capture_output=True, text=True, timeout=120)


def run_kernel(dev, ptx: str, name: str, out_words: int, grid=(1, 1, 1), block=(128, 1, 1), extra=(),
               cluster=None, in_ptr=None) -> np.ndarray:
    """Launch ``name([in_ptr,] out_ptr, *extra)`` with a zeroed output buffer of ``out_words`` u32."""
    module = dev.load(ptx)
    out = dev.memory.alloc(4 * out_words)
    params = ([] if in_ptr is None else [in_ptr]) + [out, *extra]
    dev.run(module, name, params, grid, block, cluster)
    return dev.memory.read_array(out, 4 * out_words).view(np.uint32)
