"""reference/tmem_mma_operands.py and reference/warp_mma_fragments.py: round trips and spot facts."""

import numpy as np
import pytest

from reference import tmem_mma_operands as TO
from reference import warp_mma_fragments as WF
from reference.datapath_layouts import layout_for
from reference.errors import SpecError

pytestmark = pytest.mark.reference

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("kind,t,k,bits", [("f16", "f16", 16, 16), ("f16", "bf16", 32, 16), ("tf32", "tf32", 8, 32),
                                           ("i8", "s8", 32, 8), ("f8f6f4", "e2m1", 32, 4), ("f8f6f4", "e3m2", 32, 6),
                                           ("mxf8f6f4", "e2m3", 32, 6), ("mxf4", "e2m1", 64, 4)])
def test_a_round_trip(kind, t, k, bits):
    codes = RNG.integers(0, 1 << bits, size=(4, k)).astype(np.uint64)
    cells = TO.pack_a(kind, t, codes)
    assert cells.shape == (4, TO.a_columns(kind, t, k))
    assert (TO.read_a(kind, t, cells, k) == codes).all()


def test_a_packing_spot_facts():
    assert TO.pack_a("f16", "f16", np.array([[0x1111, 0x2222]]))[0, 0] == 0x22221111      # element 0 low
    assert TO.pack_a("f8f6f4", "e2m1", np.array([[1, 2, 3, 4]]))[0, 0] == 0x100C0804      # bits 5-2
    assert TO.pack_a("mxf4", "e2m1", np.array([[1, 2, 3, 4, 5, 6, 7, 8]]))[0, 0] == 0x87654321


def test_metadata_cells_and_selector():
    nib = RNG.integers(0, 16, size=(3, 8))
    cells = TO.pack_metadata("f16", nib, selector=2)
    assert cells.shape == (3, 3) and (cells[:, :2] == 0).all()
    assert cells[0, 2] == sum(int(x) << (4 * j) for j, x in enumerate(nib[0]))
    assert (TO.read_metadata("f16", cells, 8, 2) == nib).all()
    with pytest.raises(SpecError):
        TO.metadata_cells("f16", 4)


@pytest.mark.parametrize("kind", ["f16", "tf32"])
def test_metadata_rows_interleaved_at_128_rows(kind):
    """Q-META-TMEM cutlass-interleaved (CUTLASS tmem_e_frg; docs/clients.md K4): in each 16-row group,
    row 8h+r keeps chunks 0-3 in bits 16h.. of lane r and chunks 4-7 in those bits of lane r+8."""
    nib = np.zeros((256, 8), dtype=np.uint8)
    nib[8, 0] = 0x4            # row 8 (h=1, r=0), chunk 0      -> lane 0, bits 16-19
    nib[0, 5] = 0x9            # row 0 (h=0, r=0), chunk 5      -> lane 8, bits 4-7
    nib[16 + 15, 7] = 0xE      # row 31 (h=1, r=7) of group 1, chunk 7 -> lane 16+15, bits 28-31
    nib[128 + 3, 2] = 0xC      # second CTA (M = 256, cta_group::2): row 3 -> lane 128+3, bits 8-11
    cells = TO.pack_metadata(kind, nib, rows_per_cta=128, reading="cutlass-interleaved")[:, 0]
    want = np.zeros(256, dtype=np.uint32)
    want[0], want[8], want[31], want[131] = 0x4 << 16, 0x9 << 4, 0xE << 28, 0xC << 8
    assert (cells == want).all()
    full = RNG.integers(0, 16, size=(256, 8))
    for r in ("cutlass-interleaved", "row-per-lane"):
        packed = TO.pack_metadata(kind, full, rows_per_cta=128, reading=r)
        assert (TO.read_metadata(kind, packed, 8, rows_per_cta=128, reading=r) == full).all()
    plain = TO.pack_metadata(kind, full, rows_per_cta=128, reading="row-per-lane")
    assert (TO.pack_metadata(kind, full, rows_per_cta=64, reading="cutlass-interleaved") == plain).all()
    assert (TO.pack_metadata("i8", full, rows_per_cta=128, reading="cutlass-interleaved")
            == TO.pack_metadata("i8", full, rows_per_cta=128, reading="row-per-lane")).all()


def test_scale_factor_placement():
    codes = np.arange(40 * 2, dtype=np.uint8).reshape(40, 2)
    cells = TO.pack_scale_factors(codes, scale_id=2)
    assert cells.shape == (128, 2)
    x = 37                                         # lane 5 of each quarter, column 1, bytes 2-3
    for q in range(4):
        assert (int(cells[32 * q + 5, 1]) >> 16) & 0xFFFF == int(codes[x, 0]) | int(codes[x, 1]) << 8
    assert (TO.replicated(TO.read_scale_factors(cells, 40, 2, 2)) == codes).all()
    with pytest.raises(SpecError):
        TO.check_scale_id(2, 1)                    # 2X: id 0 or 2


def _sf_buffer(codes: np.ndarray, group: int) -> np.ndarray:
    """CUTLASS sm103's packed SF buffer, written out here: SF index t of row x at lane x % 32 (all
    quarters), column group * (t // 4) + x // 32, byte t % 4."""
    mn, n_sf = codes.shape
    cells = np.zeros((128, group * (n_sf // 4)), dtype=np.uint32)
    for x in range(mn):
        for t in range(n_sf):
            for q in range(4):
                cells[32 * q + x % 32, group * (t // 4) + x // 32] |= int(codes[x, t]) << (8 * (t % 4))
    return cells


@pytest.mark.parametrize("mn,group", [(128, 4), (96, 4), (256, 8), (144, 8)])
@pytest.mark.parametrize("sf", [3, 6])
def test_k96_scale_factors_walk_a_packed_buffer(mn, group, sf):
    """§9.7.16.10.7.2.4-5 / .3.4-5 (figures missing): consecutive K = 96 MMAs over one buffer of 12
    factors per row use (column, id) = (group * (sf*j // 4), sf*j % 4), e.g. (0,0) (0,3) (4,2) (8,1)
    for block32 A, the sequence CUTLASS's sm103 mainloop issues."""
    codes = RNG.integers(0, 256, size=(mn, 12)).astype(np.uint8)
    buf = _sf_buffer(codes, group)
    for j in range(12 // sf):
        col, sid = group * (sf * j // 4), sf * j % 4
        span = TO.scale_factor_span(mn, sf, sid)
        got = TO.replicated(TO.read_scale_factors(buf[:, col:col + span], mn, sf, sid))
        assert (got == codes[:, sf * j:sf * (j + 1)]).all(), (j, col, sid)
        packed = TO.pack_scale_factors(codes[:, sf * j:sf * (j + 1)], sid)
        mask = TO.pack_scale_factors(np.full((mn, sf), 0xFF), sid)
        assert ((packed ^ buf[:, col:col + span]) & mask == 0).all()


def test_k96_scale_factor_spot_facts():
    codes = np.arange(128 * 3, dtype=np.uint8).reshape(128, 3)
    cells = TO.pack_scale_factors(codes, scale_id=2)       # block32, id 2: bytes 2, 3, then byte 0 four columns on
    assert cells.shape == (128, 8)
    x = 33                                                 # lane 1 of each quarter, column 1
    assert (int(cells[1, 1]) >> 16) == int(codes[x, 0]) | int(codes[x, 1]) << 8
    assert int(cells[97, 5]) & 0xFF == int(codes[x, 2])
    assert TO.scale_factor_span(256, 6, 2) == 8 + 8
    for sf, bad in ((3, 4), (6, 1), (6, 4), (5, 0)):
        with pytest.raises(SpecError):
            TO.check_scale_id(sf, bad)


def test_row_lanes_follow_d():
    assert (TO.row_lanes(layout_for(128, 1))[:, 1] == np.arange(128)).all()
    lanes = TO.row_lanes(layout_for(64, 1), 16)[:, 1]
    assert lanes[0] == 16 and lanes[16] == 48 and lanes[63] == 127


def test_ws_a_row_lanes_per_reading():
    """Q-WS-A-LANES, written out: own-quarter -- Layout E's column blocks read lanes i and 64 + i, Layout G's
    32b + i; first-quarter -- lane i for every block; other layouts one block either way."""
    e, g = layout_for(64, 1, ws=True), layout_for(32, 1, ws=True)
    own_e = TO.a_row_lanes(e, reading="own-quarter")[..., 1]
    assert own_e.shape == (2, 64) and (own_e[0] == np.arange(64)).all() and (own_e[1] == 64 + np.arange(64)).all()
    own_g = TO.a_row_lanes(g, reading="own-quarter")[..., 1]
    assert [row[5] for row in own_g] == [5, 37, 69, 101]
    assert (TO.a_row_lanes(g, reading="first-quarter")[..., 1] == np.arange(32)).all()
    assert TO.a_row_lanes(layout_for(64, 1), 16, reading="own-quarter").shape == (1, 64, 2)
    assert TO.column_blocks(e, 256)[[0, 127, 128, 255]].tolist() == [0, 0, 1, 1]


def test_warp_fragments_spot_facts_and_round_trip():
    a = WF.a_fragment(8, 32)                       # tf32 m16n8k8: a0 (gid, tig), a1 (gid+8, tig), a2 (gid, tig+4)
    assert (a.row[9, :, 0].tolist(), a.col[9, :, 0].tolist()) == ([2, 10, 2, 10], [1, 1, 5, 5])
    b = WF.b_fragment(32, 8)                       # s8 k32: b0 rows 4*tig.., b1 rows 16+4*tig..
    assert b.row[6, 1].tolist() == [24, 25, 26, 27] and b.col[6, 1, 0] == 1
    for frag in (WF.a_fragment(16, 16), WF.b_fragment(16, 16), WF.cd_fragment(32), WF.cd_fragment(16),
                 WF.a_fragment(32, 4)):
        m = RNG.integers(0, 1 << frag.bits, size=(frag.rows, frag.cols))
        assert (WF.gather(frag, WF.scatter(frag, m)) == m).all()
