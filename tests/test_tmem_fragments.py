"""tcgen05.ld / tcgen05.st fragments (§9.7.16.2.3.1, §9.7.16.8): Tables 47/48, bijections, st->ld,
pack/unpack, the warp-quarter rule and ld.red, checked against the spec text and against the
public CuTe/Triton layouts transcribed here (tests/cute_layouts.py evaluates them)."""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest

from reference.errors import SpecError
from reference.tables import LDST_NUMS, LDST_SHAPES
from reference.tmem import TensorMemory, tmem_address
from reference.tmem_fragments import CANONICAL_NAN, fragment_map, ld, ld_red, st
from tests.cute_layouts import evaluate, size
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

TCGEN05 = "ptx-9.7.16-tcgen05.md"
SHAPE_LANES = {"32x32b": 32, "16x64b": 16, "16x128b": 16, "16x256b": 16, "16x32bx2": 16}


def _text_table(number: int) -> dict[tuple[str, int], int | None]:
    """Table 47 or 48 parsed from the spec text: (shape, num) -> registers, None for NA."""
    text = spec_text(TCGEN05)
    start = text.index(f"Table {number} Various-combinations")
    block = text[start:text.index("\n\n\n", text.index("| `.x128`", start))]
    table: dict[tuple[str, int], int | None] = {}
    columns = (("16x32bx2", "16x64b", "32x32b"), ("16x128b",), ("16x256b",))
    for num, *cells in re.findall(r"\| `\.x(\d+)` \| (\w+) \| (\w+) \| (\w+) \|", block):
        for shapes, cell in zip(columns, cells, strict=True):
            for shape in shapes:
                table[(shape, int(num))] = None if cell == "NA" else int(cell)
    assert len(table) == 40
    return table


def _all_forms():
    for shape in LDST_SHAPES:
        for num in LDST_NUMS:
            for pack in (False, True):
                yield shape, num, pack


def _legal(shape, num):
    try:
        fragment_map(shape, num, half_split=num if shape == "16x32bx2" else None)
        return True
    except SpecError:
        return False


@pytest.mark.parametrize("number,op", [(47, "ld"), (48, "st")])
def test_register_counts_match_the_tables(number, op):
    for (shape, num), regs in _text_table(number).items():
        split = num if shape == "16x32bx2" else None
        if regs is None:
            with pytest.raises(SpecError, match=f"Table {number}"):
                fragment_map(shape, num, half_split=split, op=op)
        else:
            assert fragment_map(shape, num, half_split=split, op=op).registers == regs


def test_spec_examples_register_lists():
    """Every ld/st example of §9.7.16.8 lists as many registers as the fragment has."""
    text = spec_text(TCGEN05)
    pattern = r"tcgen05\.(ld|st)(?:\.red)?\.sync\.aligned\.(\w+)\.x(\d+)[^\n{]*?\{([^}]*)\}"
    found = re.findall(pattern, text)
    assert len(found) >= 6
    for op, shape, num, regs in found:
        split = 16 if shape == "16x32bx2" else None
        assert fragment_map(shape, int(num), half_split=split, op=op).registers == len(regs.split(","))


@pytest.mark.parametrize("shape,num,pack", [f for f in _all_forms() if _legal(f[0], f[1])])
def test_every_fragment_is_a_bijection_onto_its_region(shape, num, pack):
    split = num * (2 if pack else 1) if shape == "16x32bx2" else None
    fmap = fragment_map(shape, num, pack=pack, half_split=split)
    halves = 2 if pack else 1
    e = fmap.entries
    keys = {(int(t), int(r), int(h)) for t, r, _, _, h in e}
    assert keys == {(t, r, h) for t in range(32) for r in range(fmap.registers) for h in range(halves)}
    cells = [(int(lane), int(col)) for _, _, lane, col, _ in e]
    assert len(set(cells)) == len(cells)                      # injective onto cells
    lanes = SHAPE_LANES[shape]
    ncols = 32 * fmap.registers * halves // lanes             # the region is full: lanes x ncols
    assert set(cells) == {(la, c) for la in range(lanes) for c in range(ncols)}
    assert (fmap.lanes, fmap.columns) == (lanes, ncols)


def test_32x32b_is_the_text_definition():
    """§9.7.16.2.3.1.1: thread t owns lane t, register i is column i (32 * .num bits per lane)."""
    for num in LDST_NUMS:
        e = fragment_map("32x32b", num).entries
        assert all(lane == t and col == r for t, r, lane, col, _ in e.tolist())


def test_pack_puts_adjacent_columns_in_one_register():
    """§9.7.16.8.2: .pack::16b joins two 16-bit chunks of adjacent columns; low half = lower column."""
    for shape in LDST_SHAPES:
        fmap = fragment_map(shape, 2, pack=True, half_split=4 if shape == "16x32bx2" else None)
        e = fmap.entries.reshape(32, fmap.registers, 2, 5)
        assert (e[..., 0, 2] == e[..., 1, 2]).all()             # same lane
        assert (e[..., 1, 3] == e[..., 0, 3] + 1).all()         # adjacent columns, half 1 above
        assert (e[..., 0, 3] % 2 == 0).all()


# ---- CuTe atoms (NVIDIA/cutlass include/cute/atom/copy_traits_sm100.hpp), transcribed ----------
# name -> (shape, num, pack, immHalfSplitoff, ValID (shape, stride), DstLayout (shape, stride))
DP_B = 1 << 21
CUTE_ATOMS = {
    "32dp32b1x": ("32x32b", 1, False, None, ((32, 32), (1, DP_B)), ((32, 32), (32, 1))),
    "32dp32b2x": ("32x32b", 2, False, None, ((64, 32), (1, DP_B)), ((32, 64), (64, 1))),
    "32dp32b1x_16b": ("32x32b", 1, True, None, (((16, 2), 32), ((1, 32), DP_B)), ((32, 32), (32, 1))),
    "16dp64b1x": ("16x64b", 1, False, None, ((64, 16), (1, DP_B)), (((2, 2, 8), 32), ((512, 32, 64), 1))),
    "16dp64b2x": ("16x64b", 2, False, None, ((128, 16), (1, DP_B)), (((2, 2, 8), (32, 2)), ((1024, 32, 128), (1, 64)))),
    "16dp64b4x": ("16x64b", 4, False, None, ((256, 16), (1, DP_B)), (((2, 2, 8), (32, 4)), ((2048, 32, 256), (1, 64)))),
    "16dp64b2x_16b": ("16x64b", 2, True, None, (((16, 8), 16), ((1, 32), DP_B)), (((2, 2, 8), (32, 2)), ((1024, 32, 128), (1, 64)))),
    "16dp64b128x": ("16x64b", 128, False, None, ((8192, 16), (1, DP_B)), (((2, 2, 8), (32, 128)), ((65536, 32, 8192), (1, 64)))),
    "16dp128b1x": ("16x128b", 1, False, None, ((128, 16), (1, DP_B)), (((4, 8), (32, 2)), ((32, 128), (1, 1024)))),
    "16dp128b2x": ("16x128b", 2, False, None, ((256, 16), (1, DP_B)), (((4, 8), (32, 2, 2)), ((32, 256), (1, 2048, 128)))),
    "16dp128b1x_16b": ("16x128b", 1, True, None, (((16, 8), 16), ((1, 32), DP_B)), (((4, 8), (32, 2)), ((32, 128), (1, 1024)))),
    "16dp128b64x": ("16x128b", 64, False, None, ((8192, 16), (1, DP_B)), (((4, 8), (32, 2, 64)), ((32, 8192), (1, 65536, 128)))),
    "16dp256b1x": ("16x256b", 1, False, None, ((256, 16), (1, DP_B)), (((4, 8), (64, 2)), ((64, 256), (1, 2048)))),
    "16dp256b2x": ("16x256b", 2, False, None, ((512, 16), (1, DP_B)), (((4, 8), (64, 2, 2)), ((64, 512), (1, 4096, 256)))),
    "16dp256b2x_16b": ("16x256b", 2, True, None, (((16, 32), 16), ((1, 32), DP_B)), (((4, 8), (64, 2, 2)), ((64, 512), (1, 4096, 256)))),
    "16dp256b32x": ("16x256b", 32, False, None, ((8192, 16), (1, DP_B)), (((4, 8), (64, 2, 32)), ((64, 8192), (1, 65536, 256)))),
    "16dp32b1x": ("16x32bx2", 1, False, 1, ((64, 16), (1, DP_B)), (((16, 2), 32), ((64, 32), 1))),
    "16dp32b2x": ("16x32bx2", 2, False, 2, ((128, 16), (1, DP_B)), (((16, 2), 64), ((128, 64), 1))),
    "16dp32b1x_16b": ("16x32bx2", 1, True, 2, (((16, 4), 16), ((1, 32), DP_B)), (((16, 2), 32), ((64, 32), 1))),
    "16dp32b2x_16b": ("16x32bx2", 2, True, 4, (((16, 8), 16), ((1, 32), DP_B)), (((16, 2), 64), ((128, 64), 1))),
    "16dp32b128x": ("16x32bx2", 128, False, 128, ((8192, 16), (1, DP_B)), (((16, 2), 4096), ((8192, 4096), 1))),
}


@pytest.mark.parametrize("atom", sorted(CUTE_ATOMS))
def test_fragment_matches_cutlass_atom(atom):
    shape, num, pack, split, (vshape, vstride), ((tshape, bshape), (tstride, bstride)) = CUTE_ATOMS[atom]
    fmap = fragment_map(shape, num, pack=pack, half_split=split)
    ours = {(t, r, h): (lane, col) for t, r, lane, col, h in fmap.entries.tolist()}
    seen = 0
    for t in range(size(tshape)):
        for bit in range(0, size(bshape), 16 if pack else 32):
            ref = evaluate(tshape, tstride, t) + evaluate(bshape, bstride, bit)
            addr = evaluate(vshape, vstride, ref)
            lane, colbit = divmod(addr, DP_B)
            assert colbit % 32 == 0                            # 32-bit cells; 16b: low half
            key = (t, bit // 32, (bit % 32) // 16)
            assert ours[key] == (lane, colbit // 32), (atom, key)
            seen += 1
    assert seen == len(ours)


# ---- Triton getTileLayout bases (triton-lang/triton lib/Dialect/TritonNvidiaGPU/IR/Dialect.cpp) ----
# (row, col) contributed by each bit of the lane id and of the register index, x1 forms.
TRITON_BASES = {
    "16x64b": {"lane": [(8, 0), (0, 1), (1, 0), (2, 0), (4, 0)], "reg": []},
    "16x128b": {"lane": [(0, 1), (0, 2), (1, 0), (2, 0), (4, 0)], "reg": [(8, 0)]},
    "16x256b": {"lane": [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)], "reg": [(0, 1), (8, 0)]},
}


@pytest.mark.parametrize("shape", sorted(TRITON_BASES))
def test_fragment_matches_triton_linear_layout(shape):
    bases = TRITON_BASES[shape]
    for t, r, lane, col, _ in fragment_map(shape, 1).entries.tolist():
        row = colm = 0
        for bit, (dr, dc) in enumerate(bases["lane"]):
            if t >> bit & 1:
                row ^= dr
                colm ^= dc
        for bit, (dr, dc) in enumerate(bases["reg"]):
            if r >> bit & 1:
                row ^= dr
                colm ^= dc
        assert (lane, col) == (row, colm)


# ---- behaviour on a memory ---------------------------------------------------------------------

def _random_regs(rng, registers):
    return rng.integers(0, 1 << 32, size=(32, registers), dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize("shape", LDST_SHAPES)
@pytest.mark.parametrize("num", [1, 4, 32])
@pytest.mark.parametrize("pack", [False, True])
def test_st_then_ld_returns_the_registers(shape, num, pack):
    split = 2 * num * (2 if pack else 1) if shape == "16x32bx2" else None
    if not _legal(shape, num):
        pytest.skip("NA in Table 47")
    rng = np.random.default_rng(hash((shape, num, pack)) % 2**32)
    tmem = TensorMemory(fill=0xA5A5A5A5)
    fmap = fragment_map(shape, num, pack=pack, half_split=split)
    taddr = tmem_address(64, 8 if fmap.entries[:, 3].max() < 504 else 0)
    regs = _random_regs(rng, fmap.registers)
    st(tmem, taddr, regs, shape, num, unpack=pack, half_split=split, warp_id=6)
    back = ld(tmem, taddr, shape, num, pack=pack, half_split=split, warp_id=2)
    assert (back == regs).all()


def test_unpack_writes_halves_in_low_bits_of_adjacent_cells():
    tmem = TensorMemory(fill=0xFFFFFFFF)
    regs = np.zeros((32, 1), dtype=np.uint32)
    regs[:, 0] = [(0xB000 + t) << 16 | (0xA000 + t) for t in range(32)]
    st(tmem, 0, regs, "32x32b", 1, unpack=True)
    for t in range(32):
        assert tmem.read(t, 0) == 0xA000 + t and tmem.read(t, 1) == 0xB000 + t
    plain = ld(tmem, 0, "32x32b", 2)                          # the cells as 32-bit words
    packed = ld(tmem, 0, "32x32b", 1, pack=True)
    assert (packed[:, 0] == (plain[:, 1] << 16 | plain[:, 0])).all()


def test_pack_ignores_upper_halves():
    tmem = TensorMemory()
    tmem.cells[:32, :2] = 0xDEAD0000 + np.arange(64, dtype=np.uint32).reshape(32, 2)
    regs = ld(tmem, 0, "32x32b", 1, pack=True)
    assert all(int(regs[t, 0]) == (2 * t + 1) << 16 | 2 * t for t in range(32))


def test_16x32bx2_halves_use_the_split_offset():
    tmem = TensorMemory()
    tmem.cells[32:48, :] = np.arange(512, dtype=np.uint32)[None, :] + 1000 * np.arange(16, dtype=np.uint32)[:, None]
    regs = ld(tmem, tmem_address(32, 10), "16x32bx2", 2, half_split=100)
    for t in range(32):
        lane, col = t % 16, 10 + (100 if t >= 16 else 0)
        assert list(regs[t]) == [1000 * lane + col, 1000 * lane + col + 1]


@pytest.mark.parametrize("warp", range(8))
def test_warp_reaches_only_its_quarter(warp):
    """§9.7.16.8.1 table: warp w of the warpgroup reaches lanes 32*w .. 32*w+31."""
    text = spec_text(TCGEN05)
    rows = dict(re.findall(r"^\| ([0-3]) \| (\d+-\d+) \|$", text, re.M))
    lo, hi = map(int, rows[str(warp % 4)].split("-"))
    tmem = TensorMemory()
    for lane in range(0, 128, 16):
        ok = lo <= lane and lane + 15 <= hi
        if ok:
            ld(tmem, tmem_address(lane, 0), "16x64b", 1, warp_id=warp)
        else:
            with pytest.raises(SpecError, match="9.7.16.8.1"):
                ld(tmem, tmem_address(lane, 0), "16x64b", 1, warp_id=warp)


def test_a_fragment_never_straddles_two_quarters():
    with pytest.raises(SpecError, match="Access restrictions"):
        ld(TensorMemory(), tmem_address(20, 0), "16x128b", 1)
    with pytest.raises(SpecError, match="Access restrictions"):
        st(TensorMemory(), tmem_address(1, 0), np.zeros((32, 1)), "32x32b", 1)


def test_bounds_and_split_rules():
    with pytest.raises(SpecError, match="column"):
        ld(TensorMemory(), tmem_address(0, 500), "32x32b", 16)
    with pytest.raises(SpecError, match="immHalfSplitoff"):
        fragment_map("16x32bx2", 2)
    with pytest.raises(SpecError, match="immHalfSplitoff"):
        fragment_map("16x64b", 2, half_split=2)
    with pytest.raises(SpecError, match="Table 48"):
        st(TensorMemory(), 0, np.zeros((32, 3)), "16x128b", 1)


# ---- tcgen05.ld.red ------------------------------------------------------------------------------

def _f32(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _from_f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def test_ld_red_spec_example():
    """``tcgen05.ld.red.sync.aligned.16x32bx2.x8.u32.max {r0..r7}, redVal, [taddr3], 16;``"""
    tmem = TensorMemory()
    rng = np.random.default_rng(7)
    tmem.cells[:16, :24] = rng.integers(0, 1 << 32, size=(16, 24), dtype=np.uint64).astype(np.uint32)
    regs, red = ld_red(tmem, 0, "16x32bx2", 8, "max", "u32", half_split=16)
    assert regs.shape == (32, 8)
    for t in range(32):
        col = 16 if t >= 16 else 0
        assert int(red[t]) == int(tmem.cells[t % 16, col:col + 8].max())


def test_ld_red_signed_and_float_semantics():
    tmem = TensorMemory()
    tmem.cells[0, :4] = [0xFFFFFFFF, 5, 0x80000000, 7]                       # s32: -1, 5, min, 7
    _, red = ld_red(tmem, 0, "32x32b", 4, "min", "s32")
    assert red[0] == 0x80000000
    _, red = ld_red(tmem, 0, "32x32b", 4, "max", "s32")
    assert red[0] == 7
    nan = 0x7FC00001
    tmem.cells[1, :4] = [_f32(-3.5), nan, _f32(2.0), _f32(-0.0)]
    tmem.cells[2, :4] = [_f32(0.0), _f32(-0.0), _f32(0.0), _f32(-0.0)]
    tmem.cells[3, :4] = [nan] * 4
    _, lo = ld_red(tmem, 0, "32x32b", 4, "min", "f32")
    _, hi = ld_red(tmem, 0, "32x32b", 4, "max", "f32")
    _, habs = ld_red(tmem, 0, "32x32b", 4, "max", "f32", abs_=True)
    _, lnan = ld_red(tmem, 0, "32x32b", 4, "min", "f32", nan=True)
    assert _from_f32(int(lo[1])) == -3.5 and _from_f32(int(hi[1])) == 2.0      # NaN ignored
    assert _from_f32(int(habs[1])) == 3.5
    assert lnan[1] == CANONICAL_NAN and lo[3] == CANONICAL_NAN                 # .NaN / all NaN
    assert math.copysign(1, _from_f32(int(lo[2]))) == -1 and math.copysign(1, _from_f32(int(hi[2]))) == 1


def test_ld_red_qualifier_rules():
    tmem = TensorMemory()
    with pytest.raises(SpecError, match="x2"):
        ld_red(tmem, 0, "32x32b", 1, "min", "u32")
    with pytest.raises(SpecError, match="shape"):
        ld_red(tmem, 0, "16x64b", 2, "min", "u32")
    with pytest.raises(SpecError, match=".abs"):
        ld_red(tmem, 0, "32x32b", 2, "min", "s32", abs_=True)
    with pytest.raises(SpecError, match="redOp"):
        ld_red(tmem, 0, "32x32b", 2, "add", "u32")
