"""Data-path layouts A-G (§9.7.16.10.5): the text table, every D element placed exactly once inside
the allocated columns and only in lanes its reading warp may access, agreement with CUTLASS's
TMEM accumulator atoms (transcribed), and D packing (§9.7.16.10.4.1)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reference.datapath_layouts import (
    allocation_columns,
    columns_used,
    d_cells,
    d_flat_index,
    d_location,
    d_placement,
    layout_for,
    legal_n,
    pack_d_element,
    reading_warp,
    unpack_d_cell,
    warp_regions,
)
from reference.errors import SpecError
from reference.tmem import accessible_lanes
from tests.cute_layouts import evaluate2
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

COMBOS = [  # (M, cta_group, sparse, ws)
    (32, 1, False, True), (32, 1, True, True), (64, 1, False, True), (64, 1, True, True),
    (64, 1, False, False), (64, 1, True, False), (128, 1, False, False), (128, 1, True, False),
    (128, 1, False, True), (128, 1, True, True), (128, 2, False, False), (128, 2, True, False),
    (256, 2, False, False), (256, 2, True, False),
]


def _text_rows():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    pattern = r"^\| (\d+) \| ::(\d) \| (\w+) \| ([\w/]+) \| ([^|]+?) \| \[Layout (\w)\][^|]* \| ([\w ]+) \|$"
    rows = re.findall(pattern, text, re.M)
    assert len(rows) == 7
    return rows


def test_layout_table_matches_the_text():
    for m, group, sparsity, ws, organization, layout_id, align in _text_rows():
        for sparse in ((False, True) if sparsity == "Either" else (sparsity == "Sparse",)):
            for w in ((False, True) if ws == "Either" else (ws == "Yes",)):
                if ws == "N/A":
                    w = False
                layout = layout_for(int(m), int(group), sparse=sparse, ws=w)
                assert layout.layout_id == layout_id
                assert layout.lane_alignments == tuple(int(a) for a in align.split(" or "))
                text_org = organization.replace(" (1/2 datapath utilized)", "-half")
                # Erratum decision: Layout E is "2x3" in the text; 4 lane quarters make it 2x2.
                assert layout.organization == ("2x2" if text_org == "2x3" else text_org)


@pytest.mark.parametrize("m,group,ws", [(32, 1, False), (64, 2, False), (256, 1, False), (128, 2, True), (32, 2, True)])
def test_combinations_outside_the_table_are_rejected(m, group, ws):
    with pytest.raises(SpecError, match="9.7.16.10.5"):
        layout_for(m, group, ws=ws)


def _sample_n(ns):
    return sorted({ns[0], ns[1], ns[len(ns) // 2], ns[-1]})


@pytest.mark.parametrize("m,group,sparse,ws", COMBOS)
def test_each_element_once_in_columns_and_lanes_of_its_reader(m, group, sparse, ws):
    layout = layout_for(m, group, sparse=sparse, ws=ws)
    for n in _sample_n(legal_n(layout, sparse=sparse, ws=ws)):
        for offset in layout.lane_alignments:
            grid = d_placement(layout, n, offset)
            where = grid.reshape(-1, 3)
            assert len({tuple(c) for c in where.tolist()}) == m * n                 # exactly once
            assert where[:, 0].max() == group - 1 and (np.bincount(where[:, 0]) == m * n // group).all()
            assert where[:, 2].min() == 0 and where[:, 2].max() == columns_used(layout, n) - 1
            assert where[:, 2].max() < allocation_columns(layout, n) <= 512                  # fits the alloc
            assert where[:, 1].min() >= 0 and where[:, 1].max() < 128
            if layout.organization == "4x1-half":                                   # half datapath
                assert set((where[:, 1] % 32).tolist()) == set(range(offset, offset + 16))
            regions = warp_regions(layout, n, offset)
            for i in range(0, m, 7):
                for j in range(0, n, 5):
                    cta, lane, col = (int(x) for x in grid[i, j])
                    cta_r, quarter = reading_warp(layout, n, i, j, offset)
                    assert cta_r == cta and lane in accessible_lanes(quarter) and lane in accessible_lanes(quarter + 4)
                    (region,) = [r for r in regions if r.cta == cta and r.quarter == quarter]
                    assert i in region.rows and j in region.cols
                    assert region.lane <= lane < region.lane + region.lanes
                    assert region.lane // 32 == quarter


def test_regions_tile_d_exactly():
    for m, group, sparse, ws in COMBOS:
        layout = layout_for(m, group, sparse=sparse, ws=ws)
        n = legal_n(layout, sparse=sparse, ws=ws)[-1]
        covered = np.zeros((m, n), dtype=int)
        for region in warp_regions(layout, n):
            covered[region.rows.start:region.rows.stop, region.cols.start:region.cols.stop] += 1
        assert (covered == 1).all()


def test_n_and_alignment_are_checked():
    with pytest.raises(SpecError, match="Table 39"):
        d_cells(128, 12, 1)
    with pytest.raises(SpecError, match="Table 39"):
        d_cells(128, 8, 2)                       # cta_group::2: N in steps of 16
    with pytest.raises(SpecError, match="Table 39"):
        d_cells(64, 32, 1, ws=True)              # .ws: N in {64, 128, 256}
    with pytest.raises(SpecError, match="Lane Alignment"):
        d_cells(128, 64, 1, lane_offset=16)
    assert d_cells(64, 64, 1, lane_offset=16)[0] == (0, 0, 0, 16, 0)


def _placement_by_elements(layout, n, offset):
    """d_placement the straightforward way: d_location of each D[i][j], one element at a time."""
    return np.array([[d_location(layout, n, i, j, offset) for j in range(n)] for i in range(layout.m)])


def _placement_by_meshgrid(layout, n, offset):
    """d_placement as it was computed before broadcasting: full [M, N] index grids, stacked."""
    i, j = np.meshgrid(np.arange(layout.m), np.arange(n), indexing="ij")
    return np.stack(d_location(layout, n, i, j, offset), axis=-1)


@pytest.mark.parametrize("m,group,sparse,ws,layout_c",
                         [(*c, "text-4x1-half") for c in COMBOS] + [(128, 2, True, False, "cutlass-2x2")])
def test_broadcast_placement_and_flat_index_equal_the_plain_computations(m, group, sparse, ws, layout_c):
    """For every N and lane alignment the table allows (both Q-LAYOUT-C readings), d_placement equals
    the per-element and full-grid computations, and d_flat_index equals ravel_multi_index of it for
    regions as wide as D and as its allocation (the region shapes synthesis and the oracle use)."""
    layout = layout_for(m, group, sparse=sparse, ws=ws, reading=layout_c)
    for n in legal_n(layout, sparse=sparse, ws=ws):
        for offset in layout.lane_alignments:
            where = d_placement(layout, n, offset)
            grid = _placement_by_meshgrid(layout, n, offset)
            assert where.shape == grid.shape and where.dtype == grid.dtype and (where == grid).all()
            if n in (legal_n(layout, sparse=sparse, ws=ws)[0], 64, 256):
                assert (where == _placement_by_elements(layout, n, offset)).all()
            for ncols in {columns_used(layout, n), allocation_columns(layout, n)}:
                plain = np.ravel_multi_index((grid[..., 0], grid[..., 1], grid[..., 2]), (group, 128, ncols))
                flat = d_flat_index(layout, n, offset, ncols)
                assert flat.dtype == plain.dtype and (flat == plain).all() and not flat.flags.writeable


def test_flat_index_rejects_a_region_too_small_for_d():
    layout = layout_for(128, 1)
    with pytest.raises(SpecError, match="columns of D .* below 32"):
        d_flat_index(layout, 64, 0, 32)
    with pytest.raises(SpecError, match="lanes of D .* below 128"):
        d_flat_index(layout_for(64, 1), 64, 120, 64)


# ---- CUTLASS accumulator atoms (include/cute/atom/mma_traits_sm100_frag.hpp), transcribed -------
# "virtual tensor memory addressing": lane stride 1, column stride 128; (M_per_cta, N) -> address.

def _cutlass_atom(organization: str, m_cta: int, n: int):
    if organization == "4x1":
        return ((m_cta, n), (1, 128))
    if organization == "4x1-half":                 # tmem_frg M_MMA=64: ((16,4),N):((1,32),128)
        return (((16, 4), n), ((1, 32), 128))
    if organization == "2x2":                      # (64,(N/2,2)):(1,(128,64))
        return ((64, (n // 2, 2)), (1, (128, 64)))
    return ((32, (n // 4, 4)), (1, (128, 32)))     # 1x4: (32,(N/4,4)):(1,(128,32))


@pytest.mark.parametrize("m,group,sparse,ws", [c for c in COMBOS if not (c[1] == 2 and c[2] and c[0] == 128)])
def test_placement_matches_cutlass_accumulator_atoms(m, group, sparse, ws):
    """Layout C (2-SM sparse M=128) is left out: it follows the text, CUTLASS uses 2x2 there."""
    layout = layout_for(m, group, sparse=sparse, ws=ws)
    n = legal_n(layout, sparse=sparse, ws=ws)[-1]
    atom = _cutlass_atom(layout.organization, layout.m_per_cta, n)
    where = d_placement(layout, n)
    half = m // group                              # CLayout of *_2x1SM_*: CTA c holds rows c*M/2..
    for i in range(m):
        for j in range(0, n, 3):
            addr = evaluate2(atom, i % half, j)
            assert tuple(int(x) for x in where[i, j]) == (i // half, addr % 128, addr // 128)


def test_d_packing_low_bits():
    assert pack_d_element(0xABCD, 16) == 0xABCD
    assert pack_d_element(0x1234ABCD, 16) == 0xABCD
    assert unpack_d_cell(0xFFFF3C00, 16) == 0x3C00
    assert unpack_d_cell(0x3F800000, 32) == 0x3F800000
    with pytest.raises(SpecError, match="9.7.16.10.4.1"):
        pack_d_element(1, 8)
    text = spec_text("ptx-9.7.16-tcgen05.md")
    assert "would contain a single 16-bit element in its lower 16 bits" in text


def test_store_then_load_d_and_what_each_warp_reads():
    """D written where the layout says is read back whole, and each warp's tcgen05.ld.32x32b /
    .16x256b at its region address returns exactly its rows and columns."""
    from reference.datapath_layouts import load_d, store_d
    from reference.tmem import cta_pair, tmem_address
    from reference.tmem_fragments import fragment_map, ld

    rng = np.random.default_rng(11)
    for m, group, sparse, ws in COMBOS:
        layout = layout_for(m, group, sparse=sparse, ws=ws)
        n = legal_n(layout, sparse=sparse, ws=ws)[-1]
        for offset in layout.lane_alignments:
            d = rng.integers(0, 1 << 32, size=(m, n), dtype=np.uint64).astype(np.uint32)
            pair = cta_pair(fill=0xDEADBEEF)
            store_d(pair, tmem_address(0, 64), layout, d, lane_offset=offset)
            assert (load_d(pair, tmem_address(0, 64), layout, n, lane_offset=offset) == d).all()
            for region in warp_regions(layout, n, offset):
                shape = "32x32b" if region.lanes == 32 else "16x256b"
                for start in range(0, len(region.cols), 64):           # 64 columns per load
                    width = min(64, len(region.cols) - start)
                    num = width if shape == "32x32b" else width // 8
                    regs = ld(pair[region.cta], tmem_address(region.lane, 64 + region.column + start), shape, num,
                              warp_id=region.quarter + 4)
                    for t, r, lane, col, _ in fragment_map(shape, num).entries.tolist():
                        if lane < len(region.rows):
                            assert regs[t, r] == d[region.rows[lane], region.cols[start + col]]
    with pytest.raises(SpecError, match="16 or 32"):
        load_d(cta_pair(), 0, layout_for(128, 1), 64, bits=8)
