"""The Tensor Memory model (§9.7.16.1), tcgen05.shift (§9.7.16.9.3) and A packing in Tensor
Memory (§9.7.16.10.4.3, §9.7.16.10.4.5)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reference.errors import SpecError
from reference.tmem import (
    COLUMNS,
    LANES,
    TensorMemory,
    TmemAddress,
    accessible_lanes,
    cta_pair,
    memories_for,
    split_address,
    tmem_address,
)
from reference.tmem_packing import a_row_columns, container_byte, container_code, pack_a_row, unpack_a_row
from reference.tmem_shift import shift_down
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference


# ---- model ------------------------------------------------------------------------------------

def test_size_is_the_text():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    m = re.search(r"structure of (\d+) columns and (\d+) rows per CTA, with each cell being (\d+)-bits", text)
    assert (COLUMNS, LANES, 32) == tuple(int(x) for x in m.groups())
    assert TensorMemory().cells.shape == (LANES, COLUMNS)


@pytest.mark.parametrize("lane,column", [(0, 0), (1, 0), (0, 1), (127, 511), (64, 256)])
def test_address_fields(lane, column):
    addr = tmem_address(lane, column)
    assert addr == lane * 65536 + column                      # bits 31-16 lane, 15-0 column
    assert split_address(addr) == TmemAddress(lane, column)
    assert TmemAddress(lane, column).value == addr


@pytest.mark.parametrize("lane,column", [(128, 0), (0, 512), (-1, 0)])
def test_addresses_outside_the_memory(lane, column):
    with pytest.raises(SpecError, match="9.7.16.1"):
        tmem_address(lane, column)
    with pytest.raises(SpecError):
        split_address(1 << 32)


def test_accessible_lanes_per_warp():
    assert [accessible_lanes(w) for w in range(8)] == [range(32 * (w % 4), 32 * (w % 4) + 32) for w in range(8)]


def test_pairs():
    pair = cta_pair()
    assert memories_for(pair, 1) == pair[:1] and memories_for(pair, 2) == pair
    with pytest.raises(SpecError, match="CTA Pair"):
        memories_for(TensorMemory(), 2)


# ---- shift ------------------------------------------------------------------------------------

def _labelled() -> TensorMemory:
    tmem = TensorMemory()
    tmem.cells[:] = (np.arange(LANES, dtype=np.uint32)[:, None] << 16) | np.arange(COLUMNS, dtype=np.uint32)[None, :]
    return tmem


@pytest.mark.parametrize("lane", [0, 32, 64, 96])
def test_shift_moves_rows_down_by_one(lane):
    tmem = _labelled()
    before = tmem.cells.copy()
    shift_down(tmem, tmem_address(lane, 24))
    block = slice(24, 32)
    assert (tmem.cells[lane + 1:lane + 32, block] == before[lane:lane + 31, block]).all()   # rows 0..30 -> 1..31
    assert (tmem.cells[lane, block] == before[lane, block]).all()                          # row 0: model keeps it
    changed = np.argwhere(tmem.cells != before)
    assert set(map(int, changed[:, 0])) == set(range(lane + 1, lane + 32))
    assert set(map(int, changed[:, 1])) == set(range(24, 32))                              # 32-byte elements


def test_shift_rules():
    with pytest.raises(SpecError, match="multiple of 32"):
        shift_down(TensorMemory(), tmem_address(16, 0))
    with pytest.raises(SpecError, match="9.7.16.1"):
        shift_down(TensorMemory(), tmem_address(0, 508))
    pair = (_labelled(), _labelled())
    shift_down(pair, 0, cta_group=2)
    assert pair[0].read(5, 0) == 4 << 16 and pair[1].read(5, 0) == 4 << 16
    pair = (_labelled(), _labelled())
    shift_down(pair, 0, cta_group=1)
    assert pair[1].read(5, 0) == 5 << 16


# ---- A packing ---------------------------------------------------------------------------------

def test_mxf8f6f4_containers():
    codes4 = np.arange(16)
    assert list(container_byte("e2m1", codes4)) == [c << 2 for c in range(16)]       # 0 0 S E E M 0 0
    assert list(container_byte("e3m2", np.arange(64))) == list(range(64))              # 0 0 S E E E M M
    assert list(container_code("e2m1", container_byte("e2m1", codes4))) == list(codes4)
    with pytest.raises(SpecError, match="9.7.16.10.4.3"):
        container_byte("e2m1", [16])


def test_mxf8f6f4_rows_pack_four_containers_per_word():
    rng = np.random.default_rng(4)
    for fmt, bits in (("e2m1", 4), ("e2m3", 6), ("e3m2", 6), ("e4m3", 8)):
        codes = rng.integers(0, 1 << bits, size=64)
        words = pack_a_row("mxf8f6f4", fmt, codes)
        assert len(words) == a_row_columns("mxf8f6f4", 64) == 16
        shift = 2 if bits == 4 else 0
        for k, code in enumerate(codes):                        # element k: byte k%4 of column k//4
            assert (int(words[k // 4]) >> (8 * (k % 4))) & 0xFF == int(code) << shift
        assert list(unpack_a_row("mxf8f6f4", fmt, words, 64)) == list(codes)


def test_mxf4_rows_pack_two_per_byte():
    codes = np.random.default_rng(8).integers(0, 16, size=64)
    for kind in ("mxf4", "mxf4nvf4"):
        words = pack_a_row(kind, "e2m1", codes)
        assert len(words) == a_row_columns(kind, 64) == 8
        for k, code in enumerate(codes):                        # element k: nibble k%8 of column k//8
            assert (int(words[k // 8]) >> (4 * (k % 8))) & 0xF == code
        assert list(unpack_a_row(kind, "e2m1", words, 64)) == list(codes)
    with pytest.raises(SpecError, match="9.7.16.10.4.5"):
        pack_a_row("mxf4", "e3m2", codes)
    with pytest.raises(SpecError, match="9.7.16.10.4.2"):
        pack_a_row("f16", "e2m1", codes)
