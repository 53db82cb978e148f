"""Divergence, reconvergence, loops, warp-level instructions, deadlock and runaway detection."""

import pytest

from ptxsim import Deadlock, PtxSyntaxError, SimDevice, SimError, StepLimit
from tests.sim_ptx import BRANCHES, DEADLOCK, HEAD90, WARP, run_kernel

pytestmark = pytest.mark.reference


def test_divergent_if_else_and_per_thread_loop_counts():
    out = run_kernel(SimDevice(), BRANCHES, "branches", 64 * 2, block=(64, 1, 1)).reshape(64, 2)
    for t in range(64):
        first = 200 if t % 2 == 0 else (1100 if t > 40 else 100)
        assert out[t].tolist() == [first, sum(i + 10 for i in range(t % 5))], f"thread {t}"


def test_batches_of_clusters_give_the_same_results():
    """Many CTAs per machine (lock step across CTAs) == one CTA per machine."""
    ptx = BRANCHES
    a = run_kernel(SimDevice(batch_clusters=1), ptx, "branches", 64 * 2, grid=(3, 1, 1), block=(64, 1, 1))
    b = run_kernel(SimDevice(batch_clusters=8), ptx, "branches", 64 * 2, grid=(3, 1, 1), block=(64, 1, 1))
    assert a.tolist() == b.tolist()


def test_shfl_vote_elect_activemask():
    out = run_kernel(SimDevice(), WARP, "warp", 64 * 10, block=(64, 1, 1)).reshape(64, 10)
    for t in range(64):
        lane, base = t % 32, t - t % 32
        expect = [
            t - 1 if lane >= 1 else t,                  # shfl.up 1
            t + 2 if lane + 2 <= 31 else t,             # shfl.down 2
            base + (lane ^ 5),                          # shfl.bfly 5
            base + 7,                                   # shfl.idx 7
            (t & ~7) + 7,                               # shfl.idx 7 in segments of 8 lanes
            0xFFFFFFFE,                                 # ballot of the shfl.up predicate
            1,                                          # any(lane < 10) | all(lane < 10) << 1
            0x100 if lane == 0 else 0,                  # elect.sync: lane 0, predicate on it
            0xAAAAAAAA if lane % 2 else 0,              # activemask inside the odd-lane branch
            lane,
        ]
        assert out[t].tolist() == expect, f"thread {t}"


def test_barrier_that_cannot_complete_is_a_deadlock():
    dev = SimDevice()
    with pytest.raises(Deadlock, match=r"bar\.sync 0.*bar\.sync 1"):
        dev.run(dev.load(DEADLOCK), "deadlock", [], (1, 1, 1), (128, 1, 1))


def test_branch_to_a_label_after_the_last_instruction():
    ptx = HEAD90 + ".visible .entry k()\n{\n    bra.uni END;\n    trap;\n    ret;\nEND:\n}\n"
    dev = SimDevice()
    dev.run(dev.load(ptx), "k", [], (1, 1, 1), (32, 1, 1))


def test_unbounded_loop_hits_the_step_limit():
    ptx = HEAD90 + ".visible .entry spin()\n{\nL:\n    bra.uni L;\n}\n"
    dev = SimDevice(max_steps=1000)
    with pytest.raises(StepLimit, match=r"line 7: `bra.uni L;`: more than 1000"):
        dev.run(dev.load(ptx), "spin", [], (1, 1, 1), (32, 1, 1))


BRX = HEAD90 + r"""
.visible .entry brx(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
JT:
    .branchtargets
        T0,
        T1,
        T2;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    rem.u32 %r2, %r1, 3;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r3, 7;
    setp.ge.u32 %p1, %r1, 40;
    @%p1 brx.idx %r2, JT;
    bra.uni DONE;
T1:
    mov.u32 %r3, 101;
    bra.uni DONE;
T0:
    mov.u32 %r3, 100;
    bra.uni DONE;
T2:
    add.u32 %r3, %r1, 1000;
DONE:
    st.global.u32 [%rd3], %r3;
    ret;
}
"""


def test_brx_idx_branches_each_thread_to_its_branchtargets_label():
    """Triton's warp specialisation dispatches partitions with ``brx.idx`` over a ``.branchtargets``
    jump table; unguarded threads fall through, threads split by index and reconverge."""
    out = run_kernel(SimDevice(), BRX, "brx", 64, block=(64, 1, 1))
    for t in range(64):
        want = 7 if t < 40 else (100, 101, 1000 + t)[t % 3]
        assert int(out[t]) == want, f"thread {t}"


def test_brx_idx_uniform_index_and_an_index_past_the_list():
    uniform = BRX.replace("rem.u32 %r2, %r1, 3;", "mov.u32 %r2, 1;")
    out = run_kernel(SimDevice(), uniform, "brx", 64, block=(64, 1, 1))
    assert out.tolist() == [7] * 40 + [101] * 24
    past = BRX.replace("rem.u32 %r2, %r1, 3;", "rem.u32 %r2, %r1, 4;")
    with pytest.raises(SimError, match=r"brx.idx index 3 is outside the 3-label list JT"):
        run_kernel(SimDevice(), past, "brx", 64, block=(64, 1, 1))
    with pytest.raises(PtxSyntaxError, match=r"label\(s\) T9 not defined"):
        SimDevice().load(BRX.replace("T2;", "T9;"))
