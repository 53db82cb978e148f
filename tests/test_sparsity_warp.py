"""Warp-level mma.sp metadata distribution (§9.7.14.6.1) against the spec text and public layouts.

The expected register contents come from public code, re-expressed here: CuTe metadata layouts
(``ELayout``: (thread, value) -> (row, K column) of a column-major M x K tile) evaluated by a
small independent layout evaluator, and the LLVM MLIR test's description of m16n8k32 f16.
"""

import numpy as np
import pytest

from reference import warp_sparse as WS
from reference.errors import SpecError

pytestmark = pytest.mark.reference

# §9.7.14.6.1 text: (shape, A type) -> (threads of a quad that hold metadata, legal selectors)
TEXT = {
    ("m16n8k16", "f16"): (1, (0, 1, 2, 3)), ("m16n8k32", "bf16"): (2, (0, 1)),
    ("m16n8k8", "tf32"): (1, (0, 1, 2, 3)), ("m16n8k16", "tf32"): (2, (0, 1)),
    ("m16n8k32", "s8"): (2, (0, 1)), ("m16n8k64", "u8"): (4, (0,)),
    ("m16n8k64", "s4"): (2, (0, 1)), ("m16n8k128", "u4"): (4, (0,)),
    ("m16n8k64", "e3m2"): (4, (0,)), ("m16n8k128", "mxf4:e2m1"): (4, (0,)),
}


@pytest.mark.parametrize("key", sorted(TEXT))
def test_threads_and_selectors_follow_the_text(key):
    s = WS.warp_sparse_shape(*key)
    threads, selectors = TEXT[key]
    assert s.selectors == selectors
    assert s.steps * s.threads_per_step == threads          # the step rule reproduces the text
    for sel in selectors:
        owners = WS.metadata_owner_lanes(s, sel)
        assert len(owners) == 8 * threads
        assert {lane & 3 for lane in owners} == set(range(sel * threads, (sel + 1) * threads))
    with pytest.raises(SpecError):
        WS.metadata_owner_lanes(s, max(selectors) + 1)


def _flatten(shape, stride):
    if isinstance(shape, int):
        return [shape], [stride]
    out_sh, out_st = [], []
    for sh, sd in zip(shape, stride, strict=True):
        a, b = _flatten(sh, sd)
        out_sh += a
        out_st += b
    return out_sh, out_st


def cute_offset(shape, stride, index: int) -> int:
    """Colexicographic index -> offset of a (possibly nested) CuTe layout."""
    sh, sd = _flatten(shape, stride)
    off = 0
    for extent, step in zip(sh, sd, strict=True):
        off += (index % extent) * step
        index //= extent
    return off


# (shape, type, thread shape/stride, value shape/stride, tile rows M): CuTe ELayouts
#   sm120 m16n8k64 f8f6f4 / m16n8k128 e2m1: mma_traits_sm120_sparse.hpp
#   m64nNk32 f16, m64nNk16 tf32, m64nNk64 8-bit (warp 0 = an m16 slice): mma_traits_sm90_gmma_sparse.hpp
CUTE = [
    ("m16n8k64", "e4m3", ((2, 2, 8), (8, 512, 1)), (32, 16), 16),
    ("m16n8k128", "mxf4:e2m1", ((2, 2, 8), (8, 1024, 1)), ((64,), (16,)), 16),
    ("m16n8k32", "f16", ((2, 2, 8, 4), (1024, 0, 1, 16)), ((16, 2), (64, 8)), 64),
    ("m16n8k16", "tf32", ((2, 2, 8, 4), (512, 0, 1, 16)), ((8, 2), (64, 8)), 64),
    ("m16n8k64", "s8", ((2, 2, 8, 4), (8, 2048, 1, 16)), ((32,), (64,)), 64),
]


@pytest.mark.parametrize("shape,a_type,thr,val,tile_m", CUTE, ids=[c[0] + "-" + c[1] for c in CUTE])
def test_registers_match_cute_layouts(shape, a_type, thr, val, tile_m):
    s = WS.warp_sparse_shape(shape, a_type)
    chunk = s.pattern.chunk
    rng = np.random.default_rng(7)
    meta = rng.integers(0, 16, size=(16, s.k // chunk)).astype(np.uint8)
    n_values = int(np.prod(_flatten(*val)[0]))
    per_nibble = n_values * 4 // 32                 # logical K values covered by one nibble
    assert per_nibble == chunk
    for sel in s.selectors:
        regs = WS.warp_metadata_registers(s, meta, sel)
        for lane in WS.metadata_owner_lanes(s, sel):
            for slot in range(8):
                off = cute_offset(thr[0], thr[1], lane) + cute_offset(val[0], val[1], slot * chunk)
                row, col = off % tile_m, off // tile_m
                # all values of one nibble: same row, one chunk of consecutive columns
                for v in range(slot * chunk, (slot + 1) * chunk):
                    o2 = cute_offset(thr[0], thr[1], lane) + cute_offset(val[0], val[1], v)
                    assert (o2 % tile_m, o2 // tile_m) == (row, col + v - slot * chunk)
                got = (int(regs[lane]) >> (4 * slot)) & 15
                assert got == meta[row, col // chunk], (lane, slot, row, col)


def test_f16_k32_matches_the_mlir_description():
    # lanes 2i / 2i+1 of a quad: K columns 0-15 / 16-31; low 16 bits row q, high 16 bits row q+8
    s = WS.warp_sparse_shape("m16n8k32", "f16")
    rng = np.random.default_rng(3)
    meta = rng.integers(0, 16, size=(16, 8)).astype(np.uint8)
    regs = WS.warp_metadata_registers(s, meta, 0)
    for lane in range(32):
        q, pair = lane >> 2, lane & 1
        if lane & 2:
            assert regs[lane] == 0
            continue
        want = 0
        for j in range(4):
            want |= int(meta[q, 4 * pair + j]) << (4 * j)
            want |= int(meta[q + 8, 4 * pair + j]) << (16 + 4 * j)
        assert regs[lane] == want


@pytest.mark.parametrize("s", WS.WARP_SPARSE_SHAPES, ids=[f"{s.shape}-{s.types[0]}" for s in WS.WARP_SPARSE_SHAPES])
def test_registers_round_trip(s):
    rng = np.random.default_rng(11)
    meta = rng.integers(0, 16, size=(16, s.k // s.pattern.chunk)).astype(np.uint8)
    for sel in s.selectors:
        regs = WS.warp_metadata_registers(s, meta, sel)
        np.testing.assert_array_equal(WS.warp_metadata_from_registers(s, regs, sel), meta)


def test_bad_metadata_shape():
    s = WS.warp_sparse_shape("m16n8k16", "f16")
    with pytest.raises(SpecError, match="shape"):
        WS.warp_metadata_registers(s, np.zeros((16, 3), dtype=np.uint8), 0)
    with pytest.raises(SpecError, match="mma.sp shapes"):
        WS.warp_sparse_shape("m16n8k8", "f16")
