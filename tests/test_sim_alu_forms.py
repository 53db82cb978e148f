"""Integer, bit and comparison forms the h100-alu battery does not cover (other widths and modes of
brev, bfind, sad, copysign, testp, set, setp, fns, szext, shf, dp2a/dp4a, the vop4 family, 16x2
min/max, mul24), each against expected values written with Python integers from the PTX ISA's
definitions; and the trace's list of approximate instructions."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from ptxsim import SimDevice

pytestmark = pytest.mark.reference

M32, M64 = (1 << 32) - 1, (1 << 64) - 1

HEAD = ".version 8.7\n.target sm_90\n.address_size 64\n"


def kernel(body: str) -> str:
    """Thread i loads the 64-bit words a, b, c (also as their low 32 bits %a32 %b32 %c32 and the
    doubles %fa %fb), runs ``body`` (which sets %d), and stores %d."""
    return HEAD + """
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .b64 %a, %b, %c, %d, %off, %pi, %po; .reg .b32 %a32, %b32, %c32, %d32, %tid;
    .reg .f64 %fa, %fb; .reg .f32 %sa, %sb, %sd; .reg .pred %p, %q; .reg .b16 %h;
    mov.u32 %tid, %tid.x; mul.wide.u32 %off, %tid, 24;
    ld.param.u64 %pi, [pin]; add.u64 %pi, %pi, %off;
    ld.global.u64 %a, [%pi]; ld.global.u64 %b, [%pi+8]; ld.global.u64 %c, [%pi+16];
    cvt.u32.u64 %a32, %a; cvt.u32.u64 %b32, %b; cvt.u32.u64 %c32, %c;
    mov.b64 %fa, %a; mov.b64 %fb, %b; mov.b32 %sa, %a32; mov.b32 %sb, %b32;
    mov.u64 %d, 0; mov.u32 %d32, 0;
""" + body + """
    mul.wide.u32 %off, %tid, 8; ld.param.u64 %po, [pout]; add.u64 %po, %po, %off;
    st.global.u64 [%po], %d;
    ret;
}
"""


def run(body: str, rows, dev=None) -> list[int]:
    """``rows`` of (a, b, c) integers -> the 64-bit %d of each thread."""
    dev = dev or SimDevice()
    data = np.array([[x & M64 for x in r] for r in rows], dtype=np.uint64)
    src = dev.memory.alloc(data.nbytes)
    dev.memory.write(src, data.tobytes())
    out = dev.memory.alloc(8 * len(rows))
    dev.run(dev.load(kernel(body)), "k", [src, out], (1, 1, 1), (len(rows), 1, 1))
    return [int(v) for v in dev.memory.read_array(out, 8 * len(rows)).view(np.uint64)]


def s(x: int, bits: int) -> int:
    """The signed value of a ``bits``-wide pattern."""
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


R64 = [0, 1, 0x8000000000000000, 0x0123456789ABCDEF, M64, 0x00F0000000000000, 0x7FFFFFFFFFFFFFFF, 0xFFFF0000FFFF0000]


def test_brev_b64_and_bfind_64():
    got = run("brev.b64 %d, %a;", [(x, 0, 0) for x in R64])
    assert got == [int(f"{x:064b}"[::-1], 2) for x in R64]

    def bfind(x, signed, shiftamt):
        if signed and s(x, 64) < 0:
            x = ~x & M64
        if x == 0:
            return M32
        pos = x.bit_length() - 1
        return 63 - pos if shiftamt else pos
    for t, signed in (("u64", False), ("s64", True)):
        for sa in (False, True):
            q = ".shiftamt" if sa else ""
            got = run(f"bfind{q}.{t} %d32, %a; cvt.u64.u32 %d, %d32;", [(x, 0, 0) for x in R64])
            assert got == [bfind(x, signed, sa) for x in R64], (t, sa)


def test_sad_every_width():
    rows = [(5, 9, 100), (9, 5, 100), (-3, 7, 1), (0x7FFF, -0x8000, 0), (-1, 1, -1)]
    for t, bits in (("s16", 16), ("u16", 16), ("s64", 64), ("u64", 64), ("s32", 32)):
        signed = t[0] == "s"
        if bits == 16:
            body = (f"cvt.u16.u64 %h, %a; .reg .b16 %h2, %h3, %h4; cvt.u16.u64 %h2, %b; cvt.u16.u64 %h3, %c;"
                    f" sad.{t} %h4, %h, %h2, %h3; cvt.u64.u16 %d, %h4;")
        elif bits == 32:
            body = f"sad.{t} %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;"
        else:
            body = f"sad.{t} %d, %a, %b, %c;"
        want = []
        for a, b, c in rows:
            x, y = (s(a, bits), s(b, bits)) if signed else (a & ((1 << bits) - 1), b & ((1 << bits) - 1))
            want.append((c + abs(x - y)) & ((1 << bits) - 1))
        assert run(body, rows) == want, t


def test_copysign_and_testp_f64():
    vals = [0.0, -0.0, 1.5, -2.0, float("inf"), -float("inf"), 5e-324, -2.2250738585072014e-308, float("nan")]
    rows = [(f64(a), f64(b), 0) for a in vals for b in (1.0, -3.0)]
    got = run("copysign.f64 %fb, %fa, %fb; mov.b64 %d, %fb;", rows)
    assert got == [(a & (1 << 63)) | (b & ~(1 << 63) & M64) for a, b, _ in rows]
    def classes(tiny, zero_is_normal=False):
        return {"finite": lambda v: v == v and abs(v) != float("inf"),
                "infinite": lambda v: abs(v) == float("inf"),
                "number": lambda v: v == v, "notanumber": lambda v: v != v,
                "normal": lambda v: v == v and abs(v) != float("inf") and (abs(v) >= tiny or (zero_is_normal and v == 0)),
                "subnormal": lambda v: v != 0 and abs(v) < tiny}
    as_f32 = [struct.unpack("<f", struct.pack("<I", f32(v)))[0] for v in vals]
    as_f32[6] = struct.unpack("<f", struct.pack("<I", 1))[0]          # a subnormal f32 in place of 5e-324
    # testp.normal.f64 of +-0 is true on the H100 (h100-battery f64 block testp.normal.f64, docs/sim.md)
    for name, pred in classes(2.0 ** -1022, zero_is_normal=True).items():
        got = run(f"testp.{name}.f64 %p, %fa; selp.u64 %d, 1, 0, %p;", [(f64(v), 0, 0) for v in vals])
        assert got == [int(pred(v)) for v in vals], name
    for name, pred in classes(2.0 ** -126).items():
        got = run(f"testp.{name}.f32 %p, %sa; selp.u64 %d, 1, 0, %p;", [(f32(v), 0, 0) for v in as_f32])
        assert got == [int(pred(v)) for v in as_f32], (name, "f32")


def test_set_and_setp_forms():
    rows = [(f64(1.0), f64(2.0), 1), (f64(2.0), f64(1.0), 0), (f64(float("nan")), f64(1.0), 1)]
    # set.lt.and.s32.f64 with !%p: d = (a < b) and not p
    got = run("setp.ne.u64 %p, %c, 0; set.lt.and.s32.f64 %d32, %fa, %fb, !%p; cvt.u64.u32 %d, %d32;", rows)
    assert got == [0, 0, 0]
    got = run("set.ltu.f32.f64 %sd, %fa, %fb; mov.b32 %d32, %sd; cvt.u64.u32 %d, %d32;", rows)
    assert got == [0x3F800000, 0, 0x3F800000]
    # half precision: each half independently (low half first)
    h = [(0x3C00_4000, 0x4000_3C00, 0), (0x7E00_0000, 0x0000_8000, 0)]      # (1, 2) vs (2, 1); (NaN, 0) vs (0, -0)
    got = run("set.lt.u32.f16x2 %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", h)
    assert got == [0xFFFF0000, 0]              # a.lo = 2.0 < b.lo = 1.0 false; a.hi = 1 < 2 true
    got = run("set.equ.f16x2.f16x2 %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", h)
    assert got == [0, 0x3C003C00]              # NaN == 0 unordered: true; 0 == -0: true
    got = run("setp.lt.bf16x2 %p|%q, %a32, %b32; selp.u64 %d, 1, 0, %p; selp.u64 %c, 2, 0, %q; or.b64 %d, %d, %c;",
              [(0x3F80_4000, 0x4000_3F80, 0)])
    assert got == [2]                          # p from the low halves (2 < 1 false), q from the high (1 < 2)
    got = run("setp.gt.ftz.f32 %p, %sa, %sb; selp.u64 %d, 1, 0, %p;", [(1, 0, 0), (0x80000001, 0x80000002, 0)])
    assert got == [0, 0]                       # subnormals flushed: 0 > 0 and -0 > -0 are false


def test_fns_szext_shf():
    mask = 0xAAAAAAAA                         # the PTX ISA's fns examples
    got = run("fns.b32 %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;",
              [(mask, 3, 1), (mask, 3, -1), (mask, 2, 1), (mask, 2, -1), (mask, 2, 0), (mask, 3, 0),
               (mask, 1, 16), (mask, 1, 17), (mask, 31, -16), (mask, 31, -17), (0, 0, 1)])
    assert got == [3, 3, 3, 1, M32, 3, 31, M32, 1, M32, M32]

    def szext(a, n, clamp, signed):
        if n >= 32 and clamp:
            return a & M32
        n &= 31
        if n == 0:
            return 0
        v = a & ((1 << n) - 1)
        return (v | (M32 ^ ((1 << n) - 1))) if signed and v >> (n - 1) & 1 else v
    rows = [(0x80, 8, 0), (0x7F, 8, 0), (0xFFFF_FFF0, 0, 0), (0x1234_5678, 33, 0), (0x1234_5678, 40, 0), (0xF, 4, 0)]
    for mode in ("clamp", "wrap"):
        for t in ("u32", "s32"):
            got = run(f"szext.{mode}.{t} %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", rows)
            assert got == [szext(a, b, mode == "clamp", t == "s32") for a, b, _ in rows], (mode, t)

    def shf(a, b, c, left, clamp):
        n = min(c, 32) if clamp else c & 31
        wide = (b << 32) | a
        return ((wide << n) >> 32) & M32 if left else (wide >> n) & M32
    rows = [(0x89ABCDEF, 0x01234567, c) for c in (0, 1, 4, 31, 32, 33, 100)]
    for d in ("l", "r"):
        for mode in ("clamp", "wrap"):
            got = run(f"shf.{d}.{mode}.b32 %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;", rows)
            assert got == [shf(a, b, c, d == "l", mode == "clamp") for a, b, c in rows], (d, mode)


def _bytes(x, signed, n=4, w=8):
    return [s(x >> (w * i), w) if signed else (x >> (w * i)) & ((1 << w) - 1) for i in range(n)]


def test_dot_products_and_byte_simd():
    rows = [(0x80FF7F01, 0x7F80FF02, 1000), (0x01020304, 0xFFFEFDFC, -5), (0x8000_7FFF, 0x80_7F_01_FF, 0)]
    for at in ("u32", "s32"):
        for bt in ("u32", "s32"):
            acc_signed = "s32" in (at, bt)
            got = run(f"dp4a.{at}.{bt} %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;", rows)
            want = [(c + sum(x * y for x, y in zip(_bytes(a, at == "s32"), _bytes(b, bt == "s32"), strict=True))) & M32
                    for a, b, c in rows]
            assert got == want, ("dp4a", at, bt)
            for mode, first in (("lo", 0), ("hi", 2)):
                got = run(f"dp2a.{mode}.{at}.{bt} %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;", rows)
                want = [(c + sum(x * y for x, y in zip(_bytes(a, at == "s32", 2, 16),
                                                       _bytes(b, bt == "s32")[first:first + 2], strict=True))) & M32
                        for a, b, c in rows]
                assert got == want, ("dp2a", mode, at, bt)
            assert acc_signed in (True, False)
    ops = {"vadd4": lambda x, y: x + y, "vsub4": lambda x, y: x - y, "vabsdiff4": lambda x, y: abs(x - y),
           "vmin4": min, "vmax4": max}
    for name, fn in ops.items():
        for t in ("u32", "s32"):
            signed = t == "s32"
            got = run(f"{name}.{t}.{t}.{t}.add %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;", rows)
            want = [(c + sum(fn(x, y) for x, y in zip(_bytes(a, signed), _bytes(b, signed), strict=True))) & M32
                    for a, b, c in rows]
            assert got == want, (name, t, "add")
            lo, hi = (-128, 127) if signed else (0, 255)
            for sat in ("", ".sat"):
                got = run(f"{name}.{t}.{t}.{t}{sat} %d32, %a32, %b32, %c32; cvt.u64.u32 %d, %d32;", rows)
                want = []
                for a, b, _ in rows:
                    r = [fn(x, y) for x, y in zip(_bytes(a, signed), _bytes(b, signed), strict=True)]
                    r = [min(max(v, lo), hi) if sat else v for v in r]
                    want.append(sum((v & 0xFF) << (8 * i) for i, v in enumerate(r)))
                assert got == want, (name, t, sat)


def test_packed_16x2_min_max_relu_and_mul24():
    rows = [(0x8000_7FFF, 0x0001_FFFF, 0), (0xFFFE_0003, 0x0002_FFFD, 0)]
    for op, fn in (("min", min), ("max", max)):
        for t, signed in (("u16x2", False), ("s16x2", True)):
            got = run(f"{op}.{t} %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", rows)
            want = [sum((fn(x, y) & 0xFFFF) << (16 * i) for i, (x, y) in
                        enumerate(zip(_bytes(a, signed, 2, 16), _bytes(b, signed, 2, 16), strict=True))) for a, b, _ in rows]
            assert got == want, (op, t)
        got = run(f"{op}.relu.s16x2 %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", rows)
        want = [sum((max(fn(x, y), 0) & 0xFFFF) << (16 * i) for i, (x, y) in
                    enumerate(zip(_bytes(a, True, 2, 16), _bytes(b, True, 2, 16), strict=True))) for a, b, _ in rows]
        assert got == want, (op, "relu")
        got = run(f"{op}.relu.s32 %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", [(-5, 3, 0), (-5, -3, 0), (7, 9, 0)])
        assert got == [max(fn(x, y), 0) for x, y in ((-5, 3), (-5, -3), (7, 9))], (op, "relu.s32")
    rows = [(0x00FFFFFF, 0x00FFFFFF, 0), (0x00800000, 0x00000002, 0), (0x12345678, 0x9ABCDEF0, 0)]
    for t in ("u32", "s32"):
        for mode in ("lo", "hi"):
            got = run(f"mul24.{mode}.{t} %d32, %a32, %b32; cvt.u64.u32 %d, %d32;", rows)
            want = []
            for a, b, _ in rows:
                x, y = (s(a, 24), s(b, 24)) if t == "s32" else (a & 0xFFFFFF, b & 0xFFFFFF)
                p = x * y
                want.append((p >> 16 if mode == "hi" else p) & M32)
            assert got == want, (t, mode)


def test_trace_lists_approximate_instructions():
    dev = SimDevice(trace=True)
    run("ex2.approx.f16x2 %d32, %a32; rcp.rn.f32 %sa, %sa; ex2.approx.ftz.f32 %sb, %sb; cvt.u64.u32 %d, %d32;",
        [(0x3C00_0000, 0, 0)], dev)
    approx = dev.trace.summary()["approximate"]
    assert approx == {"ex2.approx.f16x2": 1, "ex2.approx.ftz.f32": 1}


def _ulp32(x: float) -> float:
    return float(np.spacing(np.float32(abs(x)))) if x != 0 else 2.0 ** -149


def test_approximate_f32_forms_are_within_one_ulp_and_follow_the_special_values():
    """The approximate f32 functions (modelled as the float64 function rounded to nearest, which is
    inside every error bound the PTX ISA states for them) against Python's math library, within one
    f32 ulp; and the special values of the ISA's tables for each."""
    import math
    rng = np.random.default_rng(7)
    xs = [float(v) for v in rng.uniform(-20, 20, 24)] + [float(v) for v in rng.uniform(0.01, 100, 24)]
    funcs = {"ex2": lambda v: 2.0 ** v, "lg2": lambda v: math.log2(v) if v > 0 else None,
             "rcp": lambda v: 1.0 / v, "sqrt": lambda v: math.sqrt(v) if v >= 0 else None,
             "rsqrt": lambda v: 1.0 / math.sqrt(v) if v > 0 else None, "sin": math.sin, "cos": math.cos,
             "tanh": math.tanh}
    rows = [(f32(v), 0, 0) for v in xs]
    inputs = [struct.unpack("<f", struct.pack("<I", f32(v)))[0] for v in xs]
    for name, fn in funcs.items():
        got = run(f"{name}.approx.f32 %sd, %sa; mov.b32 %d32, %sd; cvt.u64.u32 %d, %d32;", rows)
        for x, g in zip(inputs, got, strict=True):
            want = fn(x)
            value = struct.unpack("<f", struct.pack("<I", g))[0]
            if want is None:
                assert g == 0x7FFFFFFF, (name, x, hex(g))          # invalid input: the canonical NaN
            else:
                assert abs(value - want) <= _ulp32(want), (name, x, value, want)
    inf, nan = float("inf"), 0x7FC00000
    specials = {                              # input bits -> result bits, per the ISA's tables
        "ex2": [(f32(-inf), 0), (f32(-0.0), f32(1.0)), (f32(inf), f32(inf)), (nan, 0x7FFFFFFF)],
        "lg2": [(f32(-1.0), 0x7FFFFFFF), (f32(0.0), f32(-inf)), (f32(inf), f32(inf))],
        "rcp": [(f32(-0.0), f32(-inf)), (f32(inf), 0), (f32(-inf), 0x80000000)],
        "rsqrt": [(f32(0.0), f32(inf)), (f32(-0.0), f32(-inf)), (f32(inf), 0), (f32(-2.0), 0x7FFFFFFF)],
        "sqrt": [(f32(-0.0), 0x80000000), (f32(inf), f32(inf)), (f32(-1.0), 0x7FFFFFFF)],
        "sin": [(f32(-0.0), 0x80000000), (f32(inf), 0x7FFFFFFF)],
        "cos": [(f32(-0.0), f32(1.0)), (f32(-inf), 0x7FFFFFFF)],
        "tanh": [(f32(-inf), f32(-1.0)), (f32(-0.0), 0x80000000), (f32(inf), f32(1.0))],
    }
    for name, pairs in specials.items():
        got = run(f"{name}.approx.f32 %sd, %sa; mov.b32 %d32, %sd; cvt.u64.u32 %d, %d32;", [(x, 0, 0) for x, _ in pairs])
        assert got == [want for _, want in pairs], name
