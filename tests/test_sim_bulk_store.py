"""Bulk stores and reductions, shared -> global (``cp.async.bulk.global.shared::cta.bulk_group``,
``cp.reduce.async.bulk.global.shared::cta.bulk_group``; PTX ISA §9.7.9.25.4.1-2), and what the
simulator says about forms it refuses."""

import numpy as np
import pytest

from ptxsim import MemoryFault, SimDevice, UnimplementedError
from tests.sim_ptx import HEAD90

pytestmark = pytest.mark.reference


def kernel(body: str) -> str:
    """Thread 0 fills 4 KiB of shared memory from ``src``, fences for the async proxy, runs ``body``
    (%rd1 = dst, %r1 = the tile), then commits and waits for its bulk group."""
    return HEAD90 + f"""
.shared .align 128 .b8 tile[4096];
.visible .entry bstore(.param .u64 src, .param .u64 dst, .param .u32 size)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd5, [src];
    ld.param.u64 %rd1, [dst];
    ld.param.u32 %r10, [size];
    mov.u32 %r1, tile;
    mov.u32 %r3, 0;
FILL:
    cvt.u64.u32 %rd3, %r3;
    add.u64 %rd4, %rd5, %rd3;
    ld.global.v4.b32 {{%r5, %r6, %r7, %r8}}, [%rd4];
    add.u32 %r9, %r1, %r3;
    st.shared.v4.b32 [%r9], {{%r5, %r6, %r7, %r8}};
    add.u32 %r3, %r3, 16;
    setp.lt.u32 %p1, %r3, 4096;
    @%p1 bra FILL;
    fence.proxy.async.shared::cta;
{body}
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
    ret;
}}
"""


def run(body: str, size: int = 16, dst_init=None):
    src = np.random.default_rng(1).integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
    dst = np.zeros(1024, np.uint32) if dst_init is None else dst_init
    dev = SimDevice()
    s, d = dev.memory.alloc(4096), dev.memory.alloc(4096)
    dev.memory.write(s, src)
    dev.memory.write(d, dst)
    dev.run(dev.load(kernel(body)), "bstore", [s, d, np.uint32(size)], 1, 1)
    return src, dst, dev.memory.read_array(d, 4096).view(np.uint32)


def test_store_and_reduce_add_reach_global_memory():
    init = np.arange(1024, dtype=np.uint32) * 7
    body = """    cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 64;
    add.u64 %rd2, %rd1, 1024;
    add.u32 %r2, %r1, 512;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd2], [%r2], 256;"""
    src, _, got = run(body, dst_init=init)
    want = init.copy()
    want[:16] = src[:16]
    want[256:320] = init[256:320] + src[128:192]
    assert np.array_equal(got, want)


def test_size_register_must_be_a_multiple_of_16():
    with pytest.raises(MemoryFault) as info:
        run("    cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r10;", size=24)
    assert "size expects a positive multiple of 16" in str(info.value) and "but got 24" in str(info.value)


#: forms the PTX ISA rules out, and the rule each breaks
WRONG_FORMS = [
    ("cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [%rd1], [%r1], 16;",
     "a bulk store to .global completes through .bulk_group"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.s32 [%rd1], [%r1], 16;",
     "cp.reduce.async.bulk .inc expects one of the types .u32"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f32 [%rd1], [%r1], 16;",
     ".noftz expects .f16 or .bf16"),
]
#: other bulk forms, valid PTX the simulator does not model: named when refused
UNMODELLED_FORMS = [
    ("cp.async.bulk.prefetch.L2.global [%rd1], 16;", "cp.async.bulk.prefetch.L2 (a bulk prefetch into L2) is not modelled"),
    ("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r1], 16, [%r1];",
     "shared memory to a peer CTA's shared memory) is not modelled"),
]


@pytest.mark.parametrize(("line", "needle"), WRONG_FORMS + UNMODELLED_FORMS)
def test_a_refused_form_says_why(line, needle):
    with pytest.raises(UnimplementedError) as info:
        SimDevice().load(kernel("    " + line))
    assert needle in str(info.value), str(info.value)
