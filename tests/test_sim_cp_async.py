"""Non-bulk cp.async on the simulator (PTX ISA §9.7.9.25.3: cp.async, cp.async.commit_group,
cp.async.wait_group / wait_all, cp.async.mbarrier.arrive): data lands only when the program waits
for it, groups complete in order, src-size / ignore-src zero-fill, mbarrier tracking."""

import numpy as np
import pytest

from ptxsim import SimDevice, SimError
from tests.sim_ptx import assemble

pytestmark = pytest.mark.reference

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
DATA = (np.arange(256, dtype=np.uint32) * 0x01030507 + 0x10203040).astype(np.uint32)   # 1 KiB source
STALE = 0xA5A5A5A5


def kernel(body: str, nthreads: int = 32) -> str:
    """Thread t: %r2 = shared address of its 16 bytes (buf + 16 t), %rd4 = its 16 source bytes,
    %rd6 = its 64 output bytes (16 words), %rd7 = the source of the second copy (+512)."""
    return HEAD + f"""
.visible .entry cpa(.param .u64 in_ptr, .param .u64 out_ptr)
.reqntid {nthreads}, 1, 1
{{
    .reg .pred %p<4>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<10>;
    .shared .align 16 .b8 buf[1024];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd7, %rd4, 512;
    mul.wide.u32 %rd5, %r1, 64;
    add.s64 %rd6, %rd2, %rd5;
    mov.u32 %r3, buf;
    mad.lo.u32 %r2, %r1, 16, %r3;
    add.u32 %r4, %r2, 512;
{body}
    ret;
}}
"""


def dump(reg0: int, at: int, src: str = "%r2") -> str:
    regs = ", ".join(f"%r{reg0 + i}" for i in range(4))
    return f"    ld.shared.v4.u32 {{{regs}}}, [{src}];\n    st.global.v4.u32 [%rd6+{at}], {{{regs}}};\n"


def run(ptx: str, nthreads: int = 32) -> np.ndarray:
    dev = SimDevice()
    src = dev.memory.alloc(1024)
    dev.memory.write(src, DATA.tobytes())
    out = dev.memory.alloc(64 * nthreads)
    dev.memory.write(out, bytes(64 * nthreads))
    dev.run(dev.load(ptx), "cpa", [src, out], (1, 1, 1), (nthreads, 1, 1))
    return dev.memory.read_array(out, 64 * nthreads).view(np.uint32).reshape(nthreads, 16)


def mine(t: int, second: bool = False) -> list[int]:
    return DATA[4 * t + (128 if second else 0):][:4].tolist()


def test_copy_lands_at_wait_not_before():
    out = run(kernel("    cp.async.cg.shared.global [%r2], [%rd4], 16;\n" + dump(10, 0)
                     + "    cp.async.commit_group;\n    cp.async.wait_group 0;\n" + dump(14, 16)))
    assert (out[:, :4] == STALE).all()
    assert all(out[t, 4:8].tolist() == mine(t) for t in range(32))


def test_groups_complete_in_order():
    body = ("    cp.async.ca.shared.global [%r2], [%rd4], 16;\n    cp.async.commit_group;\n"
            "    cp.async.ca.shared.global [%r4], [%rd7], 16;\n    cp.async.commit_group;\n"
            "    cp.async.wait_group 1;\n" + dump(10, 0) + dump(14, 16, "%r4")
            + "    cp.async.wait_all;\n" + dump(18, 32, "%r4"))
    out = run(kernel(body))
    for t in range(32):
        assert out[t, 0:4].tolist() == mine(t)             # first group: complete
        assert out[t, 4:8].tolist() == [STALE] * 4          # second: still in flight
        assert out[t, 8:12].tolist() == mine(t, True)


def test_copy_lands_when_nothing_else_can_run():
    """Without any wait, the copy lands when every thread spins (here: on an mbarrier that no
    thread ever completes... until the copy-tracking arrive does)."""
    body = ("    setp.ne.u32 %p1, %r1, 0;\n    @%p1 bra INITED;\n    mbarrier.init.shared.b64 [bar], 32;\n"
            "INITED:\n    bar.sync 0;\n"
            "    cp.async.ca.shared.global [%r2], [%rd4], 8;\n"
            "    cp.async.ca.shared.global [%r2+8], [%rd4+8], 4;\n"
            "    cp.async.ca.shared.global [%r2+12], [%rd4+12], 4;\n"
            "    cp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n" + dump(10, 0)
            + "WAIT:\n    mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;\n    @!%p2 bra WAIT;\n" + dump(14, 16))
    out = run(kernel(body))
    assert (out[:, :4] == STALE).all()
    assert all(out[t, 4:8].tolist() == mine(t) for t in range(32))


def test_mbarrier_arrive_without_noinc_nets_zero():
    """Pending count +1 at issue, -1 when the copies land: the 32 ordinary arrivals alone cannot
    complete the phase before the data is there."""
    body = ("    setp.ne.u32 %p1, %r1, 0;\n    @%p1 bra INITED;\n    mbarrier.init.shared.b64 [bar], 32;\n"
            "INITED:\n    bar.sync 0;\n"
            "    cp.async.cg.shared.global [%r2], [%rd4], 16;\n"
            "    cp.async.mbarrier.arrive.shared.b64 [bar];\n"
            "    mbarrier.arrive.shared.b64 %rd8, [bar];\n"
            "WAIT:\n    mbarrier.try_wait.shared.b64 %p2, [bar], %rd8;\n    @!%p2 bra WAIT;\n" + dump(14, 16))
    out = run(kernel(body))
    assert all(out[t, 4:8].tolist() == mine(t) for t in range(32))


def test_src_size_and_ignore_src_zero_fill():
    """Thread t copies src-size = t % 17 bytes (rest zero); with ignore-src true, all zero."""
    body = ("    rem.u32 %r5, %r1, 17;\n"
            "    cp.async.cg.shared.global [%r2], [%rd4], 16, %r5;\n"
            "    setp.lt.u32 %p1, %r1, 16;\n"
            "    cp.async.ca.shared.global [%r4], [%rd7], 16, %p1;\n"
            "    cp.async.wait_all;\n" + dump(10, 0) + dump(14, 16, "%r4"))
    out = run(kernel(body))
    raw = DATA.view(np.uint8)
    for t in range(32):
        n = t % 17
        want = np.zeros(16, dtype=np.uint8)
        want[:n] = raw[16 * t:16 * t + n]
        assert out[t, 0:4].tolist() == want.view(np.uint32).tolist(), t
        second = [0] * 4 if t < 16 else mine(t, True)
        assert out[t, 4:8].tolist() == second, t


def test_src_size_beyond_cp_size_is_an_error():
    with pytest.raises(SimError, match="src-size 20 exceeds cp-size 16"):
        run(kernel("    cp.async.cg.shared.global [%r2], [%rd4], 16, 20;\n    cp.async.wait_all;\n"))


def test_misaligned_source_is_a_fault():
    with pytest.raises(SimError, match="not aligned to cp-size 16"):
        run(kernel("    cp.async.cg.shared.global [%r2], [%rd4+4], 16;\n    cp.async.wait_all;\n"))


def test_cg_requires_16_bytes():
    from ptxsim import UnimplementedError
    with pytest.raises(UnimplementedError, match="cp-size 16"):
        SimDevice().load(kernel("    cp.async.cg.shared.global [%r2], [%rd4], 8;\n"))


@pytest.mark.assemble
def test_kernels_assemble():
    body = ("    rem.u32 %r5, %r1, 17;\n"
            "    cp.async.cg.shared.global.L2::128B [%r2], [%rd4], 16, %r5;\n"
            "    setp.lt.u32 %p1, %r1, 16;\n"
            "    cp.async.ca.shared.global [%r4], [%rd7], 16, %p1;\n"
            "    cp.async.commit_group;\n    cp.async.wait_group 0;\n"
            "    cp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n    cp.async.wait_all;\n" + dump(10, 0))
    result = assemble(kernel(body), "sm_90")
    assert result.returncode == 0, result.stderr
