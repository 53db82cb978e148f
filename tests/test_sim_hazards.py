"""The hazard checker (``ptxsim.hazards``, docs/sim.md "Hazard checker"): for each rule a correct
hand-written kernel runs clean and its broken version (one synchronization step removed) raises
``HazardError`` with that rule, naming both PTX lines.  The rules are tested at the letter of the
spec (``SimDevice(strict=True)``, as the suite's execution tier runs); the default device's client
readings are tested at the end."""

import numpy as np
import pytest

from ptxsim import HazardError, SimDevice, SimError
from tests.sim_ptx import run_kernel
from tests.sim_ptx_hazards import CROSS, LDST, PAIR, PROXY, without

pytestmark = pytest.mark.reference


def expect_hazard(ptx, name, rule, first, second, **kw):
    """Run and return the HazardError of ``rule`` whose two lines contain ``first``/``second``."""
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(strict=True), ptx, name, 256, **kw)
    exc = info.value
    assert isinstance(exc, SimError)
    assert exc.rule == rule, str(exc)
    assert first in exc.first and second in exc.second, str(exc)
    assert exc.first in str(exc) and exc.second in str(exc) and exc.section in str(exc)
    return exc


def test_ldst_clean():
    out = run_kernel(SimDevice(strict=True), LDST, "ldst", 32, block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def _unused():
    expect_hazard(without(LDST, "wait_ld"), "ldst", "wait-ld", "tcgen05.ld", "st.global", block=(32, 1, 1))


def test_hazards_off_runs_the_broken_kernel():
    out = run_kernel(SimDevice(hazards=False), without(LDST, "wait_ld"), "ldst", 32, block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def test_tcgen05_ld_not_waited_before_dealloc():
    expect_hazard(without(LDST, "wait_ld"), "ldst", "dealloc-pending", "tcgen05.ld", "tcgen05.dealloc",
                  block=(32, 1, 1))


def test_register_of_tcgen05_ld_overwritten_before_wait_ld():
    ptx = LDST.replace("    tcgen05.wait::ld.sync.aligned;                                       // @wait_ld\n",
                       "    mov.u32 %r5, 7;\n    tcgen05.wait::ld.sync.aligned;\n")
    expect_hazard(ptx, "ldst", "wait-ld", "tcgen05.ld", "mov.u32", block=(32, 1, 1))


def test_tcgen05_st_not_waited_before_tcgen05_ld():
    expect_hazard(without(LDST, "wait_st"), "ldst", "wait-st", "tcgen05.st", "tcgen05.ld", block=(32, 1, 1))


def test_cross_warp_pattern_clean():
    out = run_kernel(SimDevice(strict=True), CROSS, "cross", 32, block=(160, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


@pytest.mark.parametrize("tag,rule,second", [("after", "tcgen05-fence", "tcgen05.ld"),
                                             ("before", "tcgen05-fence", "tcgen05.ld"),
                                             ("sync", "tmem-race", "tcgen05.ld")])
def test_cross_warp_pattern_broken(tag, rule, second):
    expect_hazard(without(CROSS, tag), "cross", rule, "tcgen05.st", second, block=(160, 1, 1))


def test_proxy_pattern_clean():
    run_kernel(SimDevice(strict=True), PROXY, "proxy", 128, block=(128, 1, 1))


@pytest.mark.parametrize("tag,rule,first,second", [
    ("proxy", "proxy-fence", "st.shared", "tcgen05.cp"),
    # without the bar.sync the other warps' load of the allocated address is the first unordered use
    # (a data race on the alloc's weak store, §9.7.16.7.1)
    ("sync", "alloc-address", "tcgen05.alloc", "ld.shared"),
    ("after", "tcgen05-fence", "tcgen05.cp", "tcgen05.ld"),
    ("wait", "async-read", "tcgen05.cp", "tcgen05.ld")])
def test_proxy_pattern_broken(tag, rule, first, second):
    expect_hazard(without(PROXY, tag), "proxy", rule, first, second, block=(128, 1, 1))


def test_waived_rule_is_not_reported():
    dev = SimDevice(strict=True, waive_hazards=("tcgen05-fence",))
    out = run_kernel(dev, without(CROSS, "after"), "cross", 32, block=(160, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def test_shared_operand_overwritten_before_the_commit_was_observed():
    commit = "    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];   // @commit\n"
    early = PROXY.replace(commit, commit + "    st.shared.u32 [%r6], %r1;\n")
    expect_hazard(early, "proxy", "smem-overwrite", "tcgen05.cp", "st.shared", block=(128, 1, 1))
    wait = "    @!%p3 bra WAIT;                                                      // @wait\n"
    late = PROXY.replace(wait, wait + "    st.shared.u32 [%r6], %r1;\n")
    run_kernel(SimDevice(strict=True), late, "proxy", 128, block=(128, 1, 1))


def test_thread_exits_with_a_tcgen05_ld_not_waited_for():
    ptx = without(without(LDST, "wait_ld"), "dealloc")
    expect_hazard(ptx, "ldst", "exit-pending", "tcgen05.ld", "ret", block=(32, 1, 1))


def test_tcgen05_ld_of_columns_an_uncommitted_cp_writes():
    ptx = without(without(PROXY, "commit"), "wait")
    expect_hazard(ptx, "proxy", "async-write", "tcgen05.cp", "tcgen05.ld", block=(128, 1, 1))


# -- spec question Q-SYNC-FENCE (docs/spec-questions.md): acquire/release synchronization as the fences --

ACQUIRE = {"Q-SYNC-FENCE": "acquire-orders"}
RELAXED_WAIT = ("mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64")


def test_commit_acquire_wait_ld_without_fence_follows_the_reading():
    """commit -> try_wait (default .acquire) -> tcgen05.ld with no fence::after_thread_sync (§9.7.16.6.4.2)."""
    broken = without(PROXY, "after")
    expect_hazard(broken, "proxy", "tcgen05-fence", "tcgen05.cp", "tcgen05.ld", block=(128, 1, 1))
    run_kernel(SimDevice(strict=True, readings=ACQUIRE), broken, "proxy", 128, block=(128, 1, 1))


def test_relaxed_wait_needs_the_fence_under_both_readings():
    broken = without(PROXY, "after").replace(*RELAXED_WAIT)
    for readings in ({}, ACQUIRE):
        with pytest.raises(HazardError) as info:
            run_kernel(SimDevice(strict=True, readings=readings), broken, "proxy", 128, block=(128, 1, 1))
        assert info.value.rule == "tcgen05-fence", str(info.value)
    run_kernel(SimDevice(strict=True, readings=ACQUIRE), PROXY.replace(*RELAXED_WAIT), "proxy", 128, block=(128, 1, 1))


@pytest.mark.parametrize("tag", ["before", "after"])
def test_bar_sync_orders_tcgen05_under_acquire_orders(tag):
    out = run_kernel(SimDevice(strict=True, readings=ACQUIRE), without(CROSS, tag), "cross", 32, block=(160, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))
    expect_hazard(without(CROSS, "sync"), "cross", "tmem-race", "tcgen05.st", "tcgen05.ld", block=(160, 1, 1))


# -- allocation (§9.7.16.7.1): tcgen05.alloc / dealloc ordered by the §9.7.16.6.3 pattern -------------

ALLOC_BEFORE = ("ALLOCATED:\n    tcgen05.fence::before_thread_sync;\n", "ALLOCATED:\n")
ALLOC_AFTER = ("    bar.sync 0;\n    tcgen05.fence::after_thread_sync;\n    ld.shared.u32 %r2, [taddr];",
               "    bar.sync 0;\n    ld.shared.u32 %r2, [taddr];")
DEALLOC_BEFORE = ("LOADED:\n    tcgen05.fence::before_thread_sync;\n", "LOADED:\n")


# warp 4 (not the allocating warp 0) stores and loads: its first tcgen05 operation follows the alloc pattern
CROSS_W4 = CROSS.replace("    @%p1 bra STORED;", "    @%p2 bra STORED;")


def test_other_warp_uses_allocated_columns_after_the_pattern():
    out = run_kernel(SimDevice(strict=True), CROSS_W4, "cross", 32, block=(160, 1, 1))
    np.testing.assert_array_equal(out, np.arange(128, 160))


@pytest.mark.parametrize("edit", [ALLOC_BEFORE, ALLOC_AFTER], ids=["before", "after"])
def test_other_warp_uses_allocated_columns_without_the_fence_pattern(edit):
    ptx = CROSS_W4.replace(*edit)
    assert ptx != CROSS_W4
    # warp 4's load of the address needs no tcgen05 fence (§9.7.16.6.1); its tcgen05.st on the columns does
    expect_hazard(ptx, "cross", "tcgen05-fence", "tcgen05.alloc", "tcgen05.st", block=(160, 1, 1))
    run_kernel(SimDevice(strict=True, readings=ACQUIRE), ptx, "cross", 32, block=(160, 1, 1))


def test_dealloc_not_ordered_after_another_warps_ld():
    ptx = CROSS.replace(*DEALLOC_BEFORE)
    assert ptx != CROSS
    expect_hazard(ptx, "cross", "tcgen05-fence", "tcgen05.ld", "tcgen05.dealloc", block=(160, 1, 1))
    run_kernel(SimDevice(strict=True, readings=ACQUIRE), ptx, "cross", 32, block=(160, 1, 1))


# -- CTA pair: the peer CTA's tcgen05.ld of cells a cta_group::2 operation wrote (§9.7.16.6.2.1.1) ----

def _pair_kernel(mask: int) -> str:
    from tests.sim_ptx_tcgen05_ops import harness
    from tests.test_sim_tcgen05_cp import issue_cp

    ptx = harness("cppair", cta_group=2, smem_bytes=0x8000, issue=issue_cp("tcgen05.cp.cta_group::2.128x256b"),
                  readback=((0, 8),)).replace("mov.b16 %h0, 3;", f"mov.b16 %h0, {mask};")
    cluster_sync = ("    bar.sync 0;\n    barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;\n"
                    "    tcgen05.fence::after_thread_sync;\n    mov.u32 %r6, %ctaid.x;")
    assert cluster_sync in ptx
    # each CTA relies on its own wait for the multicast commit: no cluster barrier before the read-back
    return ptx.replace(cluster_sync, "    bar.sync 0;\n    tcgen05.fence::after_thread_sync;\n    mov.u32 %r6, %ctaid.x;")


def test_peer_cta_observes_the_pair_operation_through_its_own_mbarrier():
    from tests.test_sim_tcgen05_cp import desc_bits, image_k_major, inputs, run, source_bytes

    data = inputs(image_k_major(source_bytes(128, 32, seed=3)), desc_bits(0, 128, 256))
    run(_pair_kernel(3), data, 8, ctas=2)                        # multicast to both CTAs: clean
    with pytest.raises(HazardError) as info:                      # only rank 0's mbarrier: rank 1 never observes it
        run(_pair_kernel(1), data, 8, ctas=2)
    assert info.value.rule in ("async-read", "async-write"), str(info.value)
    assert "tcgen05.cp" in info.value.first and "tcgen05.ld" in info.value.second


def test_shift_reads_rows_other_warps_stored():
    """tcgen05.shift reads the rows it moves: another warp's tcgen05.st needs the pattern (§9.7.16.6.4.4)."""
    from tests.sim_ptx_hazards import SHIFT

    run_kernel(SimDevice(strict=True), SHIFT, "shift", 1, block=(160, 1, 1))
    for tag, rule in (("before", "tcgen05-fence"), ("after", "tcgen05-fence"), ("sync", "tmem-race")):
        expect_hazard(without(SHIFT, tag), "shift", rule, "tcgen05.st", "tcgen05.shift", block=(160, 1, 1))


# -- scale factors in Tensor Memory: read by the block-scaled MMA when it executes (§9.7.16.10.7) ------

SF_MMA = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;"
SF_ISSUE = "    setp.ne.u32 %p4, %tix, 0;\n"                 # all threads, before thread 0's issue block
SF_COMMIT = "    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%mbar];\n"
SF_ISSUED = "ISSUED:\n"
SF_WAITED = "WAITED:\n    tcgen05.fence::after_thread_sync;\n"
PATTERN = ("    tcgen05.fence::before_thread_sync;                // @before\n"
           "    bar.sync 0;                                       // @sync\n"
           "    tcgen05.fence::after_thread_sync;                 // @after\n")
# SFA (M = 128, one ue8m0 factor per row: columns 100..103) at column 100, SFB (N = 32: column 110) at 110
SF_COLUMNS = {"sfa": (100, 4), "sfb": (110, 1)}


def sf_store(col: int, n: int) -> str:
    """Every warp stores its quarter of columns ``col..col+n-1`` again, with the values the harness preloaded."""
    regs = ", ".join(f"%v{col + i}" for i in range(n))
    return (f"    add.u32 %r37, %ta, {col};\n    tcgen05.st.sync.aligned.32x32b.x{n}.b32 [%r37], {{{regs}}};\n"
            "    tcgen05.wait::st.sync.aligned;\n")


# thread 0: tcgen05.cp.32x128b.warpx4 of 32 rows x 16 bytes (zeros, staged at 0x6000; K-major, SBO 128) to SFA
SF_CP = ("    add.u32 %r37, %sbase, 0x6000;\n    shr.u32 %r37, %r37, 4;\n    and.b32 %r37, %r37, 0x3FFF;\n"
         "    cvt.u64.u32 %rd10, %r37;\n    or.b64 %rd10, %rd10, 0x400800080000;\n    add.u32 %r38, %tbase, 100;\n"
         "    tcgen05.cp.cta_group::1.32x128b.warpx4 [%r38], %rd10;\n")


def run_sf(*edits):
    """The block-scaled MMA kernel (A = B = 0, scale factors preloaded by every warp) with the
    ``(old, new)`` text edits applied; returns D (all zero)."""
    from tests.sim_mma_cases import MmaKernel, idesc_scaled, smem_desc

    kern = MmaKernel(SF_MMA, readback=((0, 32),))
    for old, new in edits:
        assert kern.ptx.count(old) == 1, old
        kern.ptx = kern.ptx.replace(old, new)
    tmem = np.zeros((1, 128, 128), dtype=np.uint32)
    tmem[0, :, 100:120] = 0x7F7F7F7F                              # ue8m0 127 (2^0) in every byte, every lane
    return kern.run(smem=[np.zeros(0x8000, dtype=np.uint8)], tmem=tmem, a_desc=smem_desc(0, 2048, 128),
                    b_desc=smem_desc(0x4000, 512, 128), sfa=100, sfb=110, enable=False,
                    idesc_value=idesc_scaled(m=128, n=32, a_type="e4m3", b_type="e4m3"), strict=True)[0]


def expect_sf_hazard(edits, rule, first, second):
    with pytest.raises(HazardError) as info:
        run_sf(*edits)
    exc = info.value
    assert exc.rule == rule, str(exc)
    assert first in exc.first and second in exc.second, str(exc)
    return exc


@pytest.mark.parametrize("operand", ["sfa", "sfb"])
def test_scale_factors_stored_by_other_warps_need_the_pattern(operand):
    """Other warps' tcgen05.st of the scale factors -> fence::before -> bar.sync -> fence::after -> MMA
    (§9.7.16.6.4.4); each step removed is reported at the MMA."""
    store = sf_store(*SF_COLUMNS[operand]) + PATTERN
    assert (run_sf((SF_ISSUE, store + SF_ISSUE)) == 0).all()
    for tag, rule in (("before", "tcgen05-fence"), ("after", "tcgen05-fence"), ("sync", "tmem-race")):
        broken = without(store, tag)
        expect_sf_hazard([(SF_ISSUE, broken + SF_ISSUE)], rule, "tcgen05.st", "tcgen05.mma")


def test_scale_factors_stored_without_wait_st():
    store = sf_store(100, 4).replace("    tcgen05.wait::st.sync.aligned;\n", "")
    expect_sf_hazard([(SF_ISSUE, store + PATTERN + SF_ISSUE)], "wait-st", "tcgen05.st", "tcgen05.mma")


def test_scale_factors_overwritten_after_the_observed_completion():
    """The MMA reads its scale factors when it executes: a later tcgen05.st of them must follow
    commit -> mbarrier wait -> fence::after_thread_sync."""
    assert (run_sf((SF_WAITED, SF_WAITED + sf_store(100, 4))) == 0).all()
    exc = expect_sf_hazard([(SF_WAITED, "WAITED:\n" + sf_store(100, 4) + "    tcgen05.fence::after_thread_sync;\n")],
                           "tcgen05-fence", "tcgen05.mma", "tcgen05.st")
    assert "overwrites" in str(exc)
    expect_sf_hazard([(SF_ISSUED, SF_ISSUED + sf_store(110, 1))], "tmem-overwrite", "tcgen05.mma", "tcgen05.st")


def test_scale_factors_overwritten_before_the_mma_completed():
    """tcgen05.st of scale factors an issued, uncommitted MMA still reads."""
    commit_later = (SF_ISSUED, SF_ISSUED + sf_store(100, 4) + "    @!%p4 " + SF_COMMIT.lstrip())
    exc = expect_sf_hazard([(SF_COMMIT, ""), commit_later], "tmem-overwrite", "tcgen05.mma", "tcgen05.st")
    assert "before its completion" in str(exc)


def test_scale_factors_copied_by_the_issuing_thread():
    """tcgen05.cp -> tcgen05.mma of one thread is pipelined (§9.7.16.6.2): no wait needed; mma -> cp is
    not a pipelined pair, so a cp overwriting the scale factors of an uncompleted MMA is reported."""
    mma = "    " + SF_MMA + "\n"
    assert (run_sf((mma, SF_CP + mma)) == 0).all()
    expect_sf_hazard([(mma, mma + SF_CP)], "tmem-overwrite", "tcgen05.mma", "tcgen05.cp")


def test_scale_factors_copied_by_another_thread_need_the_pattern():
    """Thread 32's tcgen05.cp of the scale factors -> fence::before -> bar.sync -> fence::after -> thread
    0's MMA: pipelined across threads (§9.7.16.6.4.3), each step removed is reported at the MMA."""
    cp = ("    setp.ne.u32 %p0, %tix, 32;\n    @%p0 bra CPD;\n" + SF_CP
          + "    tcgen05.fence::before_thread_sync;                // @before\nCPD:\n"
          + "    bar.sync 0;                                       // @sync\n"
          + "    tcgen05.fence::after_thread_sync;                 // @after\n")
    assert (run_sf((SF_ISSUE, cp + SF_ISSUE)) == 0).all()
    for tag, rule in (("before", "tcgen05-fence"), ("after", "tcgen05-fence"), ("sync", "tmem-race")):
        expect_sf_hazard([(SF_ISSUE, without(cp, tag) + SF_ISSUE)], rule, "tcgen05.cp", "tcgen05.mma")


# -- bulk asynchronous copies in flight at exit (PTX ISA cp.async.bulk, cp.async.bulk.wait_group) -------

def test_cta_exits_with_a_bulk_copy_into_its_shared_memory_in_flight():
    from tests.sim_ptx import BULK

    wait = ("    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n    @%p2 bra DONE;\n"
            "    add.u32 %r8, %r8, 1;\n    setp.lt.u32 %p3, %r8, 1000;\n    @%p3 bra WAIT;\n")
    assert wait in BULK
    dev = SimDevice(strict=True)
    src, out = dev.memory.alloc(64), dev.memory.alloc(64 * 16)
    dev.memory.write(src, np.arange(64, dtype=np.uint8).tobytes())
    dev.run(dev.load(BULK), "bulk", [src, out, np.uint32(64)], (1, 1, 1), (64, 1, 1))      # intact: clean
    with pytest.raises(HazardError) as info:
        dev.run(dev.load(BULK.replace(wait, "")), "bulk", [src, out, np.uint32(64)], (1, 1, 1), (64, 1, 1))
    exc = info.value
    assert exc.rule == "exit-pending" and "cp.async.bulk" in exc.first and "ret" in exc.second, str(exc)


@pytest.mark.parametrize("removed", [("wait_group.read 0",), ("commit_group", "wait_group.read 0")])
def test_thread_exits_with_a_bulk_store_not_waited_for(removed):
    from tests.test_sim_tensor import _array, run_store

    initial = _array((8, 32), np.int32, seed=10)
    image = np.arange(4096, dtype=np.uint8)
    run_store(initial, image, [8, 2], [16, 4], dtype="int32")                                # intact: clean

    def edit(ptx):
        for what in removed:
            line = f"    @%p1 cp.async.bulk.{what};\n"
            assert line in ptx
            ptx = ptx.replace(line, "")
        return ptx
    with pytest.raises(HazardError) as info:
        run_store(initial, image, [8, 2], [16, 4], dtype="int32", edit=edit)
    exc = info.value
    assert exc.rule == "exit-pending" and "cp.async.bulk.tensor" in exc.first and "ret" in exc.second, str(exc)


# -- CTA pair: the peer CTA launched and active around .cta_group::2 operations (§9.7.16.5, §9.7.16.7.1) --

def test_cta_pair_clean():
    out = run_kernel(SimDevice(strict=True), PAIR, "pair", 64, grid=(2, 1, 1), block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.tile(np.arange(32), 2))


@pytest.mark.parametrize("tag,rule,lines", [
    ("launched", "peer-launched", ("(kernel start)", "tcgen05.alloc.cta_group::2")),
    ("freed", "peer-dealloc", ("tcgen05.", "tcgen05.")),            # the peer's ld vs the dealloc, either order
    ("active", "peer-active", ("", ""))])                          # dealloc then exit, or exit then dealloc
def test_cta_pair_without_its_cluster_barrier(tag, rule, lines):
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(strict=True), without(PAIR, tag), "pair", 64, grid=(2, 1, 1), block=(32, 1, 1))
    exc = info.value
    assert exc.rule == rule and lines[0] in exc.first and lines[1] in exc.second, str(exc)
    assert exc.section in ("9.7.16.5", "9.7.16.7.1") and "CTA" in exc.threads, str(exc)
    if tag == "active":
        assert {"tcgen05.dealloc", "ret;"} <= {w for w in ("tcgen05.dealloc", "ret;") if w in exc.first + exc.second}


def test_cta_pair_relaxed_cluster_barrier_shows_the_peer_launched():
    """peer-launched asks for execution order only: a .relaxed arrival (no memory release) still counts."""
    ptx = PAIR.replace("barrier.cluster.arrive.release.aligned;                              // @launched",
                       "barrier.cluster.arrive.relaxed.aligned;")
    assert ptx != PAIR
    out = run_kernel(SimDevice(strict=True), ptx, "pair", 64, grid=(2, 1, 1), block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.tile(np.arange(32), 2))


def test_cta_pair_exit_after_the_collective_dealloc_under_reading_collective():
    """Spec question Q-PAIR-DEALLOC: under `collective` a CTA that performed its part of the pair's
    dealloc may exit without seeing the peer's (the clients' pattern); the pick `exit-ordered` reports it."""
    ptx = without(PAIR, "active")
    out = run_kernel(SimDevice(strict=True, readings={"Q-PAIR-DEALLOC": "collective"}), ptx, "pair", 64, grid=(2, 1, 1),
                     block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.tile(np.arange(32), 2))
    with pytest.raises(HazardError, match="peer-active"):
        run_kernel(SimDevice(strict=True), ptx, "pair", 64, grid=(2, 1, 1), block=(32, 1, 1))


def test_cta_pair_columns_touched_after_the_peers_dealloc():
    """Rank 1 loads its own columns after rank 0's tcgen05.dealloc.cta_group::2 (ordered after it by a
    cluster barrier): that dealloc may have freed them (rule peer-dealloc, conservative, §9.7.16.7.1)."""
    dealloc = "    tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 32;\n"
    late = ("    .reg .pred %q<2>;\n    mov.u32 %r6, %cluster_ctarank;\n    setp.ne.u32 %q0, %r6, 0;\n"
            "    @!%q0 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 32;\n"
            "    tcgen05.fence::before_thread_sync;\n    barrier.cluster.arrive.release.aligned;\n"
            "    barrier.cluster.wait.acquire.aligned;\n    tcgen05.fence::after_thread_sync;\n"
            "    @%q0 tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r7}, [%r2];\n    tcgen05.wait::ld.sync.aligned;\n"
            "    @%q0 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 32;\n")
    assert dealloc in PAIR
    exc = expect_hazard(PAIR.replace(dealloc, late), "pair", "peer-dealloc", "tcgen05.dealloc", "tcgen05.ld",
                        grid=(2, 1, 1), block=(32, 1, 1))
    assert "CTA 1" in exc.threads, str(exc)


# rule async-order (§9.7.16.6.2, §9.7.16.6.4.2): cp -> cp of one thread is no pipelined pair
_CP = "    tcgen05.cp.cta_group::1.128x256b [%r2], %rd3;\n"


def test_cp_over_the_same_threads_pending_cp():
    assert PROXY.count(_CP) == 1
    exc = expect_hazard(PROXY.replace(_CP, _CP + _CP), "proxy", "async-order", "tcgen05.cp", "tcgen05.cp",
                        block=(128, 1, 1))
    assert exc.first != exc.second and "no pipelined pair" in str(exc)


def test_cp_to_other_columns_of_the_same_thread_is_clean():
    other = "    add.u32 %r13, %r2, 8;\n    tcgen05.cp.cta_group::1.128x256b [%r13], %rd3;\n"
    run_kernel(SimDevice(strict=True), PROXY.replace(_CP, _CP + other), "proxy", 128, block=(128, 1, 1))


def test_cp_after_the_same_threads_committed_cp_not_yet_observed():
    commit = "    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];   // @commit\n"
    exc = expect_hazard(PROXY.replace(commit, commit + _CP), "proxy", "async-order", "tcgen05.cp", "tcgen05.cp",
                        block=(128, 1, 1))
    assert "has not observed that completion" in str(exc)


def test_pipelined_pairs_order_transitively():
    """mma -> shift and shift -> cp.4x256b are pairs (§9.7.16.6.2), so mma; shift; cp.4x256b over the
    same columns executes in order although mma -> cp is no pair; without the shift it is reported."""
    mma = "    " + SF_MMA + "\n"
    shift = "    tcgen05.shift.cta_group::1.down [%r32];\n"
    cp4 = SF_CP.replace("tcgen05.cp.cta_group::1.32x128b.warpx4 [%r38]", "tcgen05.cp.cta_group::1.4x256b [%r32]")
    assert cp4 != SF_CP
    run_sf((mma, mma + shift + cp4))
    with pytest.raises(HazardError) as info:
        run_sf((mma, mma + cp4))
    assert info.value.rule == "async-order" and "tcgen05.mma" in info.value.first, str(info.value)


def test_a_16x64b_load_reads_the_warps_whole_column_span():
    """wait-ld over the columns a pending tcgen05.ld reads: a 16x64b load reads two columns per lane
    pair (§9.7.16.8.1), so a tcgen05.st to the second one before wait::ld is reported."""
    ld = "    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r5}, [%r2];\n"
    assert LDST.count(ld) == 1
    load16 = ("    tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r5}, [%r2];\n    add.u32 %r6, %r2, 1;\n"
              "    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r6], {%r1};\n")
    exc = expect_hazard(LDST.replace(ld, load16), "ldst", "wait-ld", "tcgen05.ld", "tcgen05.st", block=(32, 1, 1))
    assert "16x64b" in exc.first


_AFTER = "    tcgen05.fence::after_thread_sync;                                    // @after\n"
_SECOND_CP = ("    @!%p2 tcgen05.cp.cta_group::1.128x256b [%r2], %rd3;\n"
              "    @!%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];\n"
              "WAIT2:\n"
              "    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 1;\n"
              "    @!%p3 bra WAIT2;\n")


def test_cp_after_the_same_threads_observed_cp_needs_the_after_fence():
    """§9.7.16.6.4.2 example 2: commit -> mbarrier wait -> fence::after_thread_sync, then the next op."""
    run_kernel(SimDevice(strict=True), PROXY.replace(_AFTER, _AFTER + _SECOND_CP + _AFTER), "proxy", 128, block=(128, 1, 1))
    no_fence = PROXY.replace(_AFTER, _SECOND_CP + _AFTER)
    exc = expect_hazard(no_fence, "proxy", "tcgen05-fence", "tcgen05.cp", "tcgen05.cp", block=(128, 1, 1))
    assert "after_thread_sync is missing" in str(exc)
    run_kernel(SimDevice(strict=True, waive_hazards=("tcgen05-fence",)), no_fence, "proxy", 128, block=(128, 1, 1))


# -- tcgen05.alloc's address store (§9.7.16.6.1, §9.7.16.7.1) ----------------------------------------

def test_load_of_the_allocated_address_needs_no_tcgen05_fence():
    """tcgen05.alloc is a synchronous instruction whose shared-memory access keeps same-address
    ordering with non-tcgen05 instructions (§9.7.16.6.1), a weak store (§9.7.16.7.1): another warp
    loads the address after bar.sync alone, and uses the columns only after the full pattern."""
    ptx = CROSS.replace("ALLOCATED:\n    tcgen05.fence::before_thread_sync;\n    bar.sync 0;\n"
                        "    tcgen05.fence::after_thread_sync;\n", "ALLOCATED:\n    bar.sync 0;\n")
    assert ptx != CROSS
    out = run_kernel(SimDevice(strict=True), ptx, "cross", 32, block=(160, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def test_load_of_the_allocated_address_without_synchronization():
    """Warp 4 loads the address warp 0's alloc wrote with no synchronization after the alloc at all: a
    data race on the alloc's weak store (rule alloc-address, under either mode)."""
    ptx = CROSS.replace("ALLOCATED:\n    tcgen05.fence::before_thread_sync;\n    bar.sync 0;\n"
                        "    tcgen05.fence::after_thread_sync;\n", "ALLOCATED:\n")
    for dev in (SimDevice(), SimDevice(strict=True)):
        with pytest.raises(HazardError) as info:
            run_kernel(dev, ptx, "cross", 32, block=(160, 1, 1))
        exc = info.value
        assert exc.rule == "alloc-address" and exc.section == "9.7.16.7.1", str(exc)
        assert "tcgen05.alloc" in exc.first and "ld.shared" in exc.second, str(exc)


# -- the default device: the readings every known client follows (ptxsim.hazards.CLIENT_READINGS) ---

def test_default_device_follows_the_clients_readings():
    from ptxsim.hazards import CLIENT_READINGS

    assert SimDevice().readings_in_force == CLIENT_READINGS
    assert SimDevice(strict=True).readings_in_force == {}
    named = {"Q-SYNC-FENCE": "fence-required"}
    assert SimDevice(readings=named).readings_in_force == {**CLIENT_READINGS, **named}
    assert SimDevice().strict is False and SimDevice(strict=True).strict is True


@pytest.mark.parametrize("kernel,name,tag,rule,kw", [
    # Triton/Gluon/CuTe: commit -> mbarrier.try_wait (.acquire) -> tcgen05.ld, no after-fence
    (PROXY, "proxy", "after", "tcgen05-fence", {"block": (128, 1, 1)}),
    # tcgen05.st -> wait::st -> bar.sync -> another warp's tcgen05.ld, no tcgen05 fences
    (CROSS, "cross", "before", "tcgen05-fence", {"block": (160, 1, 1)}),
    (CROSS, "cross", "after", "tcgen05-fence", {"block": (160, 1, 1)}),
    # Gluon two_ctas / CUTLASS SM100: exit right after the pair's collective dealloc
    (PAIR, "pair", "active", "peer-active", {"grid": (2, 1, 1), "block": (32, 1, 1)}),
])
def test_client_patterns_run_on_the_default_device_and_strict_reports_them(kernel, name, tag, rule, kw):
    ptx = without(kernel, tag)
    run_kernel(SimDevice(), ptx, name, 64 if name == "pair" else 128, **kw)
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(strict=True), ptx, name, 64 if name == "pair" else 128, **kw)
    assert info.value.rule == rule, str(info.value)
    with pytest.raises(HazardError):            # a reading named explicitly wins over the default
        run_kernel(SimDevice(readings={"Q-SYNC-FENCE": "fence-required", "Q-PAIR-DEALLOC": "exit-ordered"}),
                   ptx, name, 64 if name == "pair" else 128, **kw)


@pytest.mark.parametrize("kernel,name,tag,rule,block", [
    (CROSS, "cross", "sync", "tmem-race", 160),           # no synchronization between st and ld at all
    (PROXY, "proxy", "wait", "async-read", 128),          # the commit's mbarrier never waited for
    (PROXY, "proxy", "proxy", "proxy-fence", 128),        # no fence.proxy.async after the operand stores
    (LDST, "ldst", "wait_st", "wait-st", 32),
])
def test_default_device_still_reports_real_races(kernel, name, tag, rule, block):
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(), without(kernel, tag), name, 128, block=(block, 1, 1))
    assert info.value.rule == rule, str(info.value)


def test_relaxed_wait_needs_the_fence_on_the_default_device():
    """A .relaxed wait acquires nothing: the clients' reading does not stand in for the after-fence."""
    broken = without(PROXY, "after").replace(*RELAXED_WAIT)
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(), broken, "proxy", 128, block=(128, 1, 1))
    assert info.value.rule == "tcgen05-fence", str(info.value)


def test_the_suites_execution_tier_is_strict(monkeypatch):
    """The harness's simulated device (--device sim: execution tier, hazard score, fault catalogue)
    holds the suite's own kernels to the picks; a reading named with --sim-reading still wins."""
    from conformance.harness.device_sim import ENV_READINGS, SimBackend, open_sim_device

    assert SimBackend().sim.strict is True and SimBackend().readings_in_force == {}
    assert SimBackend(strict=False).sim.strict is False
    monkeypatch.delenv(ENV_READINGS, raising=False)
    assert open_sim_device(())[0].sim.strict is True
    monkeypatch.setenv(ENV_READINGS, "Q-SYNC-FENCE=acquire-orders")
    assert open_sim_device(())[0].readings_in_force == {"Q-SYNC-FENCE": "acquire-orders"}
