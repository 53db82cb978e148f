"""Hazards found missing by the hazard score (issue 14), now reported: each test runs a minimal
broken kernel and checks the rule, both PTX lines and the section in the HazardError.

- tcgen05.cp writes Tensor Memory cells that another warp read with tcgen05.ld (WAR) or wrote with
  tcgen05.st (WAW) with no fence::before_thread_sync -> sync -> fence::after_thread_sync between
  (§9.7.16.6.3: asynchronous tcgen05 operations of different threads are ordered only by that
  pattern). The generated ``fence`` kernels (§9.7.16.6.4.4 example 1: warp 0 loads column c, thread
  32 copies over it) depend on the WAR rule: their pattern's deletions must not survive the hazard score.
- tcgen05.st over cells of an earlier tcgen05.st (WAW) or tcgen05.ld (WAR) of the same thread with no
  tcgen05.wait::st / wait::ld between (§9.7.16.6.1/§9.7.16.6.2: st -> st and ld -> st are no
  pipelined pairs, so the two may complete in either order).
- a non-bulk cp.async into shared memory an MMA/cp read, issued before the issuing thread observed
  that operation's completion (found on Triton's cp.async pipelines, issue 24: their wait for the
  previous MMA deleted): the copy may write from its issue on, not only when it lands.
(The mbarrier-init gap is closed: tests/test_sim_hazard_mbarrier_init.py.)
"""

import numpy as np
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
    run_kernel(SimDevice(strict=True), cp_after_other_warp(access), "proxy", 128, block=(128, 1, 1))


_RULE = {"sync0": "tmem-race", "before0": "tcgen05-fence", "after0": "tcgen05-fence", "wait0": "wait-ld"}


def expect_hazard(ptx, name, rule, first, second, threads, **kw):
    """Run ``ptx``; the HazardError names ``rule``, its section, both lines and the threads."""
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(strict=True), ptx, name, 128, **kw)
    exc = info.value
    assert exc.rule == rule, str(exc)
    assert first in exc.first and second in exc.second, str(exc)
    assert exc.first in str(exc) and exc.second in str(exc) and f"§{exc.section}" in str(exc)
    assert threads in exc.threads, str(exc)
    return exc


@pytest.mark.parametrize("access,tag", [("ld", "sync0"), ("ld", "before0"), ("ld", "after0"), ("ld", "wait0"),
                                        ("st", "sync0"), ("st", "before0"), ("st", "after0")])
def test_cp_after_other_warp_without_a_step(access, tag):
    expect_hazard(without(cp_after_other_warp(access), tag), "proxy", _RULE[tag], f"tcgen05.{access}", "tcgen05.cp",
                  "warp 2" if tag == "wait0" else "0:64 then thread(s) (CTA:tid) 0:0", block=(128, 1, 1))


def test_st_over_pending_st_clean():
    run_kernel(SimDevice(strict=True), LDST, "ldst", 32, block=(32, 1, 1))


def _second_st(col: int, wait: str = "st") -> str:
    """LDST with a second tcgen05.st of the same warp to column ``col`` before the ``wait`` that
    LDST has after its tcgen05.st (``st``) or its tcgen05.ld (``ld``)."""
    tag = f"    tcgen05.wait::{wait}.sync.aligned;                                       // @wait_{wait}\n"
    second = (f"    add.u32 %r6, %r2, {col};\n    add.u32 %r7, %r1, 100;\n"
              "    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r6], {%r7};\n"
              "    tcgen05.wait::st.sync.aligned;\n")
    ptx = LDST.replace(tag, second + tag if wait == "ld" else second)
    assert ptx != LDST
    return ptx


def test_st_over_pending_st():
    """st -> st of one thread over the same cells before wait::st: a write-after-write (§9.7.16.6.1)."""
    exc = expect_hazard(_second_st(0), "ldst", "wait-st", "tcgen05.st", "tcgen05.st", "warp 0", block=(32, 1, 1))
    assert exc.section == "9.7.16.6.1"


def test_st_beside_pending_st_is_clean():
    """Two tcgen05.st of one warp to different columns need no wait::st between them."""
    out = run_kernel(SimDevice(strict=True), _second_st(1), "ldst", 32, block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def test_st_over_pending_ld():
    """ld -> st of one thread over the cells the load reads, before wait::ld: a write-after-read
    (§9.7.16.6.4.5 anti-dependency; ld -> st is no pipelined pair of §9.7.16.6.2)."""
    expect_hazard(_second_st(0, "ld"), "ldst", "wait-ld", "tcgen05.ld", "tcgen05.st", "warp 0", block=(32, 1, 1))


def test_st_beside_pending_ld_is_clean():
    run_kernel(SimDevice(strict=True), _second_st(1, "ld"), "ldst", 32, block=(32, 1, 1))


def test_cp_over_another_threads_cp_not_ordered():
    """Thread 32 copies over the columns thread 0's tcgen05.cp writes, with no synchronization
    between the two issues: asynchronous operations of different threads are not ordered (§9.7.16.6.3)."""
    second = ("ISSUED:\n    setp.ne.u32 %p3, %r1, 32;\n    @%p3 bra WAIT;\n    cvt.u64.u32 %rd2, %r4;\n"
              "    shr.u64 %rd2, %rd2, 4;\n    and.b64 %rd2, %rd2, 0x3FFF;\n    or.b64 %rd3, %rd2, 0x401000080000;\n"
              "    tcgen05.cp.cta_group::1.128x256b [%r2], %rd3;\n")
    ptx = PROXY.replace("ISSUED:\n", second, 1)
    assert ptx != PROXY
    exc = expect_hazard(ptx, "proxy", "tmem-race", "tcgen05.cp", "tcgen05.cp", "CTA:tid", block=(128, 1, 1))
    assert "0:0" in exc.threads and "0:32" in exc.threads, str(exc)


_COMMIT = "    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];   // @commit\n"
_WAIT = "    @!%p3 bra WAIT;                                                      // @wait\n"
_CP_ASYNC = "    cp.async.ca.shared.global [%r6], [%rd1], 4;\n"


@pytest.mark.parametrize("strict", [False, True])
def test_cp_async_issued_over_operands_before_the_completion_was_observed(strict):
    """Thread 0 issues a cp.async into the buffer its tcgen05.cp reads right after the commit and waits
    for the copy (cp.async.wait_all) only after the mbarrier: the simulator lands it then, but the copy
    may write at once (smem-overwrite at the cp.async, both modes).  Issued after the wait it is clean."""
    early = PROXY.replace(_COMMIT, _COMMIT + _CP_ASYNC).replace(_WAIT, _WAIT + "    cp.async.wait_all;\n")
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(strict=strict), early, "proxy", 128, block=(128, 1, 1))
    exc = info.value
    assert exc.rule == "smem-overwrite" and exc.section == "9.7.16.6.5", str(exc)
    assert "tcgen05.cp" in exc.first and "cp.async.ca" in exc.second, str(exc)
    late = PROXY.replace(_WAIT, _WAIT + "    @%p2 bra LANDED;\n" + _CP_ASYNC + "LANDED:\n    cp.async.wait_all;\n")
    run_kernel(SimDevice(strict=strict), late, "proxy", 128, block=(128, 1, 1))
