"""Integer, bit and f32 instructions, against expected values written with Python integers."""

import struct

import numpy as np
import pytest

from ptxsim import SimDevice
from tests.sim_ptx import ALU, FLOAT, run_kernel

pytestmark = pytest.mark.reference

M32 = 0xFFFFFFFF


def u32(x: int) -> int:
    return x & M32


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def bfe(a: int, pos: int, ln: int, signed: bool, width: int = 32) -> int:
    """PTX ISA bfe pseudo-code, bit by bit."""
    msb = width - 1
    sbit = (a >> min(pos + ln - 1, msb)) & 1 if signed and ln > 0 else 0
    d = 0
    for i in range(width):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def prmt(a: int, b: int, c: int) -> int:
    src = (b << 32) | a
    out = 0
    for i in range(4):
        nib = (c >> (4 * i)) & 0xF
        byte = (src >> (8 * (nib & 7))) & 0xFF
        if nib & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def expected_alu(t: int) -> list[int]:
    a = t - 20
    w0 = u32(a * -7)
    w3 = u32(a * a + 1000)
    q = trunc_div(a, 7)
    p2 = u32(a) > 30
    cmp = t == 7
    wide = a * 100000
    low = w0 & 0xFF
    return [
        w0, (u32(a) * 0x9E3779B9) >> 32, u32((a * 0x7FFFFFF1) >> 32), w3, u32(q), u32(a - 7 * q), u32(a) // 7,
        u32(min(a, 5)), max(u32(a), 5), u32(abs(a)), u32(-a),
        w0 & 0xF0F0, w0 | 0xF, w0 ^ w3, ~w0 & M32,
        (1 << t) & M32 if t < 32 else 0, u32(a >> min(t, 31)), (u32(a) >> t) if t < 32 else 0,
        111 if a < 0 else 222, int(cmp or p2) | (int((not cmp) or p2) << 1),
        M32 if a < 0 else 0, w0 & 0xFFFF, u32(low - 256 if low & 0x80 else low),
        bfe(w0, 4, 8, False), bfe(w0, 28, 8, True), (M32 & ~(0xF << 8)) | ((t & 0xF) << 8),
        prmt(w0, w3, 0x3715), bin(w0).count("1"), 32 - t.bit_length(), w0 ^ w3 ^ t,
        wide & M32, (wide >> 32) & M32,
    ]


def test_integer_and_bit_instructions():
    out = run_kernel(SimDevice(), ALU, "alu", 64 * 32, block=(64, 1, 1)).reshape(64, 32)
    for t in range(64):
        assert out[t].tolist() == expected_alu(t), f"thread {t}"


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16_rne(x: float) -> int:
    b = bits(x)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def test_float_instructions():
    out = run_kernel(SimDevice(), FLOAT, "falu", 32 * 10, block=(32, 1, 1)).reshape(32, 10)
    for t in range(32):
        a = t - 16
        f2 = f32(a * 1.5)
        f3 = f32(f2 + 0.25)
        f4 = f32(f3 * f3 - 1.0)
        expect = [bits(f3), bits(f4), bits(-f4), bits(abs(f4)), bits(min(f3, 0.0)) if f3 < 0 else 0,
                  u32(int(f3)), u32(int(np.rint(f3))), int(f3 < 0), bits(f3), (bf16_rne(f3) << 16) | bf16_rne(f2)]
        assert out[t].tolist() == expect, f"thread {t}"
