"""Scale-factor operands of warp-level block-scaled mma.sp (PTX ISA §9.7.14.3) against public facts.

Facts used, each re-stated here rather than computed by the module under test:

* PTX ISA §9.7.14.3 text and Table 37: thread-id-a 0 selects the lanes with lane % 4 in {0, 1},
  1 those with lane % 4 in {2, 3}; thread-id-b selects lane % 4 == thread-id-b; 1X reads one byte
  (byte-id 0..3), 2X a byte pair (byte-id 0: bytes 0-1, 2: bytes 2-3), 4X all four (byte-id 0);
  Tables 35/36: SF 1/2/4 and the kind / scale type combinations.
* CUTLASS SM120 block-scaled atoms (cute/atom/mma_traits_sm120.hpp, _sparse.hpp), transcribed:
  ``SFALayout = ((2,2,8),K):((8,0,1),16)`` over a column-major (16, K) tile and
  ``SFBLayout = ((4,8),K):((0,1),8)`` over (8, K); the atoms pass the K/VS factors of a thread as
  one uint8 (VS = K), uint16 or uint32 register with byte-id 0 (byte j = j-th block along K).
* A public sm_120 kernel's hardware probe of mma.sync m16n8k32 mxf8f6f4 1X:
  row m <- lane 4*(m%8) + 2*tid + m/8, column n <- lane 4*n + tid, byte byte-id.
"""

import numpy as np
import pytest

from reference import warp_block_scaling as WB
from reference.errors import SpecError
from tests.test_sparsity_warp import cute_offset

pytestmark = pytest.mark.reference

SEL = WB.ScaleSelectors


def _all_selectors(sf):
    return [SEL(ba, ta, bb, tb) for ba in WB.BYTE_IDS[sf] for ta in (0, 1) for bb in WB.BYTE_IDS[sf] for tb in range(4)]


def test_table_37_values():
    assert WB.BYTE_IDS == {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,)}
    assert WB.THREAD_IDS_A == (0, 1) and WB.THREAD_IDS_B == (0, 1, 2, 3)
    for sf, bad in ((1, SEL(4, 0, 0, 0)), (2, SEL(1, 0, 0, 0)), (2, SEL(0, 0, 3, 0)), (4, SEL(0, 0, 2, 0)),
                    (1, SEL(0, 2, 0, 0)), (1, SEL(0, 0, 0, 4))):
        with pytest.raises(SpecError, match="Table 37"):
            WB.check_selectors(sf, bad)


@pytest.mark.parametrize("kind,vec,stype,sf", [
    ("mxf8f6f4", None, "ue8m0", 1), ("mxf8f6f4", "scale_vec::1X", "ue8m0", 1), ("mxf4", None, "ue8m0", 2),
    ("mxf4", "scale_vec::2X", "ue8m0", 2), ("mxf4nvf4", "scale_vec::2X", "ue8m0", 2),
    ("mxf4nvf4", "scale_vec::4X", "ue8m0", 4), ("mxf4nvf4", "scale_vec::4X", "ue4m3", 4)])
def test_tables_35_36(kind, vec, stype, sf):
    assert WB.warp_scale_factor_count(kind, vec, stype) == sf


@pytest.mark.parametrize("kind,vec,stype", [("mxf4nvf4", None, "ue8m0"), ("mxf4", "scale_vec::4X", "ue8m0"),
                                            ("mxf4nvf4", "scale_vec::2X", "ue4m3"), ("f8f6f4", None, "ue8m0")])
def test_tables_35_36_refuse(kind, vec, stype):
    with pytest.raises(SpecError, match="Table 36"):
        WB.warp_scale_factor_count(kind, vec, stype)


@pytest.mark.parametrize("sf", [1, 2, 4])
def test_thread_and_byte_selection_follow_the_text(sf):
    for sel in _all_selectors(sf):
        a, b = WB.scale_a_sources(sf, sel), WB.scale_b_sources(sf, sel)
        lanes_a, lanes_b = WB.owner_lanes(a), WB.owner_lanes(b)
        assert len(lanes_a) == 16 and {x % 4 for x in lanes_a} == {2 * sel.thread_id_a, 2 * sel.thread_id_a + 1}
        assert len(lanes_b) == 8 and {x % 4 for x in lanes_b} == {sel.thread_id_b}
        want = {1: {sel.byte_id_a}, 2: {sel.byte_id_a, sel.byte_id_a + 1}, 4: {0, 1, 2, 3}}[sf]
        assert set(a[..., 1].ravel().tolist()) == want
        assert set(b[..., 1].ravel().tolist()) == ({1: {sel.byte_id_b}, 2: {sel.byte_id_b, sel.byte_id_b + 1},
                                                     4: {0, 1, 2, 3}}[sf])
        # one register byte per scale factor: nothing read twice
        assert len({tuple(x) for x in a.reshape(-1, 2).tolist()}) == 16 * sf
        assert len({tuple(x) for x in b.reshape(-1, 2).tolist()}) == 8 * sf


def test_hand_checked_elements():
    # 1X, {byte-id-a, thread-id-a} = {2, 1}, {byte-id-b, thread-id-b} = {3, 2}
    assert WB.scale_a_source(1, 2, 1, 5, 0) == (22, 2)        # row 5: quad 5, upper pair, first lane
    assert WB.scale_a_source(1, 2, 1, 13, 0) == (23, 2)       # row 13 = 5 + 8: the pair's second lane
    assert WB.scale_b_source(1, 3, 2, 6, 0) == (26, 3)        # column 6: quad 6, lane % 4 == 2
    # 2X byte-id 2: chunk 1 in byte 3; 4X: chunk j in byte j
    assert WB.scale_a_source(2, 2, 0, 8, 1) == (1, 3)
    assert WB.scale_b_source(4, 0, 3, 0, 3) == (3, 3)


def test_matches_the_hardware_probe_1x():
    for tid in (0, 1):
        for m in range(16):
            assert WB.scale_a_source(1, 0, tid, m, 0)[0] == 4 * (m % 8) + 2 * tid + m // 8
    for tid in range(4):
        for n in range(8):
            assert WB.scale_b_source(1, 0, tid, n, 0)[0] == 4 * n + tid


# CuTe (T32, V_K) -> (MN, K) layouts of the SM120 block-scaled atoms: (thread shape, stride), value stride, MN
CUTE_SFA = (((2, 2, 8), (8, 0, 1)), 16, 16)
CUTE_SFB = (((4, 8), (0, 1)), 8, 8)


@pytest.mark.parametrize("k,sf", [(64, 1), (128, 2), (128, 4), (32, 1), (64, 2), (64, 4)])
@pytest.mark.parametrize("operand", ["a", "b"])
def test_matches_cute_sf_layouts(operand, k, sf):
    """Every lane CuTe gives a scale factor holds, for byte-id 0 and the thread-id of its own quad
    position, the same (row or column, K block) in the byte the atom's register packing puts it."""
    (thr, val_stride, mn) = CUTE_SFA if operand == "a" else CUTE_SFB
    vs = k // sf
    for lane in range(32):
        offs = [cute_offset(thr[0], thr[1], lane) + val_stride * v for v in range(k)]
        rows = {o % mn for o in offs}
        assert len(rows) == 1
        (row,) = rows
        assert [o // mn for o in offs] == list(range(k))           # values run along K in order
        # register packing: the K/VS distinct factors in K order, byte j = block j
        for j in range(sf):
            if operand == "a":
                tid = (lane % 4) // 2
                assert WB.scale_a_source(sf, 0, tid, row, j) == (lane, j)
            else:
                assert WB.scale_b_source(sf, 0, lane % 4, row, j) == (lane, j)
        assert offs[vs * (sf - 1)] // mn // vs == sf - 1


@pytest.mark.parametrize("sf", [1, 2, 4])
def test_registers_round_trip_and_keep_other_bytes(sf):
    rng = np.random.default_rng(5)
    for sel in _all_selectors(sf)[::7]:
        src_a = WB.scale_a_sources(sf, sel)
        codes = rng.integers(0, 256, size=(16, sf)).astype(np.uint8)
        noise = rng.integers(0, 1 << 32, size=32, dtype=np.uint64).astype(np.uint32)
        regs = WB.place_scales(noise, codes, src_a)
        np.testing.assert_array_equal(WB.scales_from_registers(regs, src_a), codes)
        others = [lane for lane in range(32) if lane not in WB.owner_lanes(src_a)]
        np.testing.assert_array_equal(regs[others], noise[others])
        if sf < 4:                                              # unread bytes of read lanes are kept
            lane = WB.owner_lanes(src_a)[0]
            read = set(src_a[src_a[..., 0] == lane][:, 1].tolist())
            for byte in set(range(4)) - read:
                assert (int(regs[lane]) >> (8 * byte)) & 0xFF == (int(noise[lane]) >> (8 * byte)) & 0xFF


def test_bad_shapes():
    sel = SEL(0, 0, 0, 0)
    with pytest.raises(SpecError, match="32 values"):
        WB.scales_from_registers(np.zeros(31), WB.scale_a_sources(1, sel))
    with pytest.raises(SpecError, match="scale codes"):
        WB.place_scales(np.zeros(32), np.zeros((16, 2)), WB.scale_a_sources(1, sel))
    with pytest.raises(SpecError, match="scale_A element"):
        WB.scale_a_source(1, 0, 0, 16, 0)
