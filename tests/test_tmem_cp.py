"""tcgen05.cp (§9.7.16.9.2): shapes and multicast against the text's warp pairs, placement of
bytes, cta_group::2, and decompression of every 4-bit and 6-bit code (§9.7.16.9.1) checked with
closed-form decoders written here and with reference.formats.decode."""

from __future__ import annotations

import numpy as np
import pytest

from reference import formats
from reference.errors import SpecError
from reference.tmem import TensorMemory, cta_pair, tmem_address
from reference.tmem_cp import CP_SHAPES, cp, cp_destinations, decompress_chunk, read_rows

pytestmark = pytest.mark.reference

FORMS = [("128x256b", None), ("4x256b", None), ("128x128b", None), ("64x128b", "warpx2::02_13"),
         ("64x128b", "warpx2::01_23"), ("32x128b", "warpx4")]
# The text's warp pairs (§9.7.16.9.2): which warps (lane quarters) share a row.
PAIRS = {"warpx2::02_13": ({0, 2}, {1, 3}), "warpx2::01_23": ({0, 1}, {2, 3})}


@pytest.mark.parametrize("shape,multicast", FORMS)
def test_destinations_follow_the_text(shape, multicast):
    rows = int(shape.split("x")[0])
    dest = cp_destinations(shape, multicast)
    lanes = [d for _, d in dest]
    assert len(set(lanes)) == len(lanes)                       # a lane gets one row
    by_row: dict[int, set[int]] = {}
    for r, d in dest:
        by_row.setdefault(r, set()).add(d)
    assert sorted(by_row) == list(range(rows))
    for r, ds in by_row.items():
        quarters = {d // 32 for d in ds}
        assert len(quarters) == len(ds)                        # copies go to different warps
        if multicast == "warpx4":
            assert quarters == {0, 1, 2, 3} and {d % 32 for d in ds} == {r}
        elif multicast in PAIRS:                               # each pair receives half the rows
            assert quarters == PAIRS[multicast][r // 32] and {d % 32 for d in ds} == {r % 32}
        elif shape == "4x256b":
            assert quarters == {r}
        else:
            assert ds == {r}


@pytest.mark.parametrize("shape,multicast", [("64x128b", None), ("32x128b", None), ("32x128b", "warpx2::02_13"),
                                             ("128x256b", "warpx4"), ("4x256b", "warpx2::01_23"), ("256x128b", None)])
def test_shape_multicast_rules(shape, multicast):
    with pytest.raises(SpecError, match="9.7.16.9.2"):
        cp_destinations(shape, multicast)


def _smem(rng, size=8192):
    return bytes(rng.integers(0, 256, size=size, dtype=np.uint8))


@pytest.mark.parametrize("shape,multicast", FORMS)
def test_bytes_land_little_endian_in_columns(shape, multicast):
    rng = np.random.default_rng(3)
    smem = _smem(rng)
    row_bytes = CP_SHAPES[shape][1]

    def address(row, chunk):                                    # a plain row-major source
        return 256 + row * row_bytes + 16 * chunk

    rows = read_rows([smem], address, shape)
    tmem = TensorMemory(fill=0x11111111)
    cp(tmem, tmem_address(0, 40), shape, rows, multicast=multicast)
    written = set()
    for r, d in cp_destinations(shape, multicast):
        src = smem[address(r, 0):address(r, 0) + row_bytes]
        for k in range(row_bytes // 4):
            assert tmem.read(d, 40 + k) == int.from_bytes(src[4 * k:4 * k + 4], "little")
            written.add((d, 40 + k))
    untouched = [(la, c) for la in range(128) for c in range(32, 56) if (la, c) not in written]
    assert all(tmem.read(la, c) == 0x11111111 for la, c in untouched)


def test_cta_group_2_writes_both_ctas_from_their_own_smem():
    rng = np.random.default_rng(5)
    smems = [_smem(rng, 4096), _smem(rng, 4096)]
    rows = read_rows(smems, lambda r, c: 32 * r + 16 * c, "128x256b")
    pair = cta_pair()
    cp(pair, 0, "128x256b", rows, cta_group=2)
    for cta in (0, 1):
        assert pair[cta].read(5, 7) == int.from_bytes(smems[cta][32 * 5 + 28:32 * 5 + 32], "little")
    single = cta_pair()
    cp(single, 0, "128x256b", rows[:1], cta_group=1)
    assert (single[1].cells == 0).all()
    with pytest.raises(SpecError, match="shape"):
        cp(cta_pair(), 0, "128x256b", rows[:1], cta_group=2)


def test_cp_bounds_and_alignment():
    rows = np.zeros((1, 4, 32), dtype=np.uint8)
    with pytest.raises(SpecError, match="9.7.16.1"):
        cp(TensorMemory(), tmem_address(40, 0), "4x256b", rows)      # lane 40 + 96 > 127
    with pytest.raises(SpecError, match="9.7.16.1"):
        cp(TensorMemory(), tmem_address(0, 508), "4x256b", rows)
    with pytest.raises(SpecError, match="16-byte"):
        read_rows([bytes(4096)], lambda r, c: 8 + 32 * r + 16 * c, "4x256b")


# ---- decompression ------------------------------------------------------------------------------

def _minifloat(code: int, e: int, m: int, bias: int) -> float:
    """Closed form of a sign/exponent/mantissa code without Inf/NaN (OCP MX FP4/FP6)."""
    sign = -1.0 if code >> (e + m) & 1 else 1.0
    exp, frac = code >> m & ((1 << e) - 1), code & ((1 << m) - 1)
    if exp == 0:
        return sign * frac / (1 << m) * 2.0 ** (1 - bias)
    return sign * (1 + frac / (1 << m)) * 2.0 ** (exp - bias)


E2M1 = (2, 1, 1)
E2M3 = (2, 3, 1)
E3M2 = (3, 2, 3)


def _pack_lsb_first(codes, bits, padding):
    """The source chunk written independently: element i at bits i*bits of a little-endian stream."""
    stream = 0
    for i, c in enumerate(codes):
        stream |= int(c) << (bits * i)
    data = stream.to_bytes(16 * bits // 8, "little")
    return np.frombuffer(data + bytes([padding]) * (16 - len(data)), dtype=np.uint8)


def test_every_4bit_code_decompresses_to_its_container():
    codes = np.random.default_rng(1).permutation(16)
    for padding in (0x00, 0xFF):
        out = decompress_chunk(_pack_lsb_first(codes, 4, padding), "b4x16_p64")
        assert (out & 0b11000011 == 0).all()                                   # only bits 5-2 used
        for code, byte in zip(codes, out, strict=True):
            assert _minifloat(int(byte) >> 2, *E2M1) == _minifloat(int(code), *E2M1)
            # an e2m1 container reads as the e2m3 code with two zero mantissa bits
            assert _minifloat(int(byte), *E2M3) == _minifloat(int(code), *E2M1)
    low = decompress_chunk(_pack_lsb_first(codes, 4, 0), "b4x16_p64", nibble_shift=0)
    assert list(low) == list(codes)                                              # ldmatrix reading


@pytest.mark.parametrize("fmt", [E3M2, E2M3], ids=["e3m2", "e2m3"])
def test_every_6bit_code_decompresses_to_its_container(fmt):
    codes = np.random.default_rng(2).permutation(64)
    for chunk in codes.reshape(4, 16):
        out = decompress_chunk(_pack_lsb_first(chunk, 6, 0xA5), "b6x16_p32")
        assert (out & 0b11000000 == 0).all()
        assert [_minifloat(int(b), *fmt) for b in out] == [_minifloat(int(c), *fmt) for c in chunk]


@pytest.mark.parametrize("name,bits", [("e2m1", 4), ("e3m2", 6), ("e2m3", 6)])
def test_decompression_agrees_with_the_formats_module(name, bits):
    codes = np.arange(1 << bits) % (1 << bits)
    shift = 2 if bits == 4 else 0
    src_fmt = "b4x16_p64" if bits == 4 else "b6x16_p32"
    for chunk in codes.reshape(-1, 16):
        out = decompress_chunk(_pack_lsb_first(chunk, bits, 0), src_fmt)
        got = np.asarray(formats.decode(name, (out >> shift).astype(np.uint8)), dtype=np.float64)
        want = np.asarray(formats.decode(name, chunk.astype(np.uint8)), dtype=np.float64)
        assert np.array_equal(got, want)


def test_cp_with_decompression_end_to_end():
    rng = np.random.default_rng(9)
    codes = rng.integers(0, 64, size=(128, 32))
    smem = b"".join(bytes(_pack_lsb_first(row[16 * c:16 * c + 16], 6, 0)) for row in codes for c in (0, 1))
    rows = read_rows([smem], lambda r, c: 32 * r + 16 * c, "128x256b")
    tmem = TensorMemory()
    cp(tmem, 0, "128x256b", rows, decompress="b6x16_p32")
    for r in (0, 17, 127):
        got = [(tmem.read(r, k // 4) >> (8 * (k % 4))) & 0xFF for k in range(32)]
        assert got == list(codes[r])
    with pytest.raises(SpecError, match="src_fmt"):
        cp(tmem, 0, "128x256b", rows, decompress="b2x16")
