"""Hazards the checker does not report yet (found by the hazard score, issue 14): each test runs a
minimal broken kernel and is a strict xfail, so a checker that learns the rule turns it into a
failure that asks for the xfail's removal.

- tcgen05.cp writes Tensor Memory cells that another warp read with tcgen05.ld (WAR) or wrote with
  tcgen05.st (WAW) with no fence::before_thread_sync -> sync -> fence::after_thread_sync between
  (§9.7.16.6.3: asynchronous tcgen05 operations of different threads are ordered only by that
  pattern). The generated ``fence`` kernels (§9.7.16.6.4.4 example 1: warp 0 loads column c, thread
  32 copies over it) depend on the WAR rule: their pattern's deletions survive the hazard score.
- tcgen05.st over cells of an earlier tcgen05.st of the same thread with no tcgen05.wait::st between
  (§9.7.16.6.1/§9.7.16.6.2: st -> st is no pipelined pair, so the two may complete in either order).
(The mbarrier-init gap is closed: tests/test_sim_hazard_mbarrier_init.py.)
"""

import pytest

from ptxsim import HazardError, SimDevice
from tests.sim_ptx import run_kernel
from tests.sim_ptx_hazards import LDST, PROXY, without

pytestmark = pytest.mark.reference

_SYNC = ("TOUCHED:\n"
         "    tcgen05.fence::before_thread_sync;                                   // @before0\n"
         "    bar.sync 0;                                                          // @sync0\n"
         "    tcgen05.fence::after_thread_sync;                                    // @after0\n")

_ACCESS = {
    "ld": "    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r11}, [%r10];\n"
          "    tcgen05.wait::ld.sync.aligned;                                       // @wait0\n",
    "st": "    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r10], {%r1};\n"
          "    tcgen05.wait::st.sync.aligned;\n",
}


def cp_after_other_warp(access: str) -> str:
    """PROXY with warp 2 accessing lane 64, column 0 (``access``: ld or st) and the fence pattern
    before thread 0's tcgen05.cp.128x256b, which overwrites columns 0-7 of all 128 lanes."""
    lines = ("    ld.shared.u32 %r2, [taddr];\n    setp.ne.u32 %p3, %r3, 2;\n    @%p3 bra TOUCHED;\n"
             "    add.u32 %r10, %r2, 0x400000;\n" + _ACCESS[access] + _SYNC)      # lane 64 (<< 16)
    return PROXY.replace("    ld.shared.u32 %r2, [taddr];\n", lines, 1)


@pytest.mark.parametrize("access", ["ld", "st"])
def test_cp_after_other_warp_with_the_pattern_is_clean(access):
    run_kernel(SimDevice(), cp_after_other_warp(access), "proxy", 128, block=(128, 1, 1))


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="checker gap: tcgen05.cp's Tensor Memory write is not "
                   "ordered against other threads' tcgen05.ld/st")
@pytest.mark.parametrize("access,tag", [("ld", "sync0"), ("ld", "before0"), ("ld", "after0"), ("ld", "wait0"),
                                        ("st", "sync0"), ("st", "before0"), ("st", "after0")])
def test_cp_after_other_warp_without_a_step(access, tag):
    try:
        run_kernel(SimDevice(), without(cp_after_other_warp(access), tag), "proxy", 128, block=(128, 1, 1))
    except HazardError:
        return
    raise AssertionError("no hazard reported")


def test_st_over_pending_st_clean():
    run_kernel(SimDevice(), LDST, "ldst", 32, block=(32, 1, 1))


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="checker gap: tcgen05.st over an earlier tcgen05.st of "
                   "the same thread before tcgen05.wait::st")
def test_st_over_pending_st():
    ptx = LDST.replace("    tcgen05.wait::st.sync.aligned;                                       // @wait_st\n",
                       "    add.u32 %r6, %r1, 100;\n    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r6};\n"
                       "    tcgen05.wait::st.sync.aligned;\n")
    assert ptx != LDST
    try:
        run_kernel(SimDevice(), ptx, "ldst", 32, block=(32, 1, 1))
    except HazardError:
        return
    raise AssertionError("no hazard reported")

