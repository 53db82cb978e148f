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
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
    ret;
}
"""

KERNELS = {"ldst": (LDST, "sm_100a")}


def without(ptx: str, tag: str) -> str:
    """``ptx`` without the lines tagged ``// @tag`` (the broken version)."""
    lines = ptx.splitlines()
    kept = [line for line in lines if not line.rstrip().endswith(f"// @{tag}")]
    assert len(kept) < len(lines), f"no line tagged @{tag}"
    return "\n".join(kept) + "\n"
