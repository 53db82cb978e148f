"""cvt forms Triton emits for sm_100a, on the simulator (PTX ISA §9.7.9.21 cvt, §9.7.9.22 cvt.pack
formats): f32 pairs to e4m3x2/e5m2x2/e2m1x2 (first source in the upper element), back to f16x2,
ue8m0x2 scales, f16x2/bf16x2 with .relu/.satfinite, and directed rounding modes.  Expected values:
ml_dtypes casts and bit patterns checked by hand from the formats' definitions."""

import ml_dtypes
import numpy as np
import pytest

from ptxsim import SimDevice
from tests.sim_ptx import assemble, run_kernel

pytestmark = pytest.mark.reference

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
N = 64
CASES = [  # (instruction text with %a %b = f32 sources, %x = f16x2 word, %e = a byte pair; dest %h or %r)
    "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;",
    "cvt.rn.satfinite.e5m2x2.f32 %h1, %f1, %f2;",
    "cvt.rn.satfinite.relu.e4m3x2.f32 %h1, %f1, %f2;",
    "cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r2;",
    "cvt.rn.f16x2.e4m3x2 %r9, %h2;",
    "cvt.rn.f16x2.e5m2x2 %r9, %h2;",
    "cvt.rn.satfinite.e2m1x2.f32 %b1, %f1, %f2;",
    "cvt.rn.bf16x2.f32 %r9, %f1, %f2;",
    "cvt.rn.relu.satfinite.f16x2.f32 %r9, %f1, %f2;",
    "cvt.rz.satfinite.ue8m0x2.f32 %h1, %f1, %f2;",
    "cvt.rp.satfinite.ue8m0x2.f32 %h1, %f1, %f2;",
    "cvt.rn.bf16x2.ue8m0x2 %r9, %h2;",
    "cvt.rz.f32.f64 %f9, %fd1;",
    "cvt.rp.f32.f64 %f9, %fd1;",
    "cvt.rm.f16.f32 %h1, %f1;",
    "cvt.rni.f32.f32 %f9, %f1;",
    "cvt.rn.f16x2.e2m1x2 %r9, %b2;",
]


def kernel() -> str:
    lines = []
    for i, c in enumerate(CASES):
        dest = c.split()[1].rstrip(",")
        if dest.startswith("%h"):
            store = f"cvt.u32.u16 %r10, {dest};"
        elif dest.startswith("%b"):
            store = f"cvt.u32.u8 %r10, {dest};"
        else:
            store = f"mov.b32 %r10, {dest};"
        lines.append(f"    {c}\n    {store}\n    st.global.u32 [%rd6+{4 * i}], %r10;")
    body = "\n".join(lines)
    return HEAD + f"""
.visible .entry cv(.param .u64 in_ptr, .param .u64 out_ptr)
{{
    .reg .b16 %h<4>;
    .reg .b8 %b<3>;
    .reg .b32 %r<12>;
    .reg .f32 %f<10>;
    .reg .f64 %fd<2>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 24;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+4];
    ld.global.b32 %r2, [%rd4+8];
    ld.global.b16 %h2, [%rd4+12];
    ld.global.b8 %b2, [%rd4+14];
    ld.global.f64 %fd1, [%rd4+16];
    mul.wide.u32 %rd5, %r1, {4 * len(CASES)};
    add.s64 %rd6, %rd2, %rd5;
{body}
    ret;
}}
"""


def make_inputs():
    rng = np.random.default_rng(9)
    rec = np.zeros((N, 24), dtype=np.uint8)
    f = (rng.standard_normal((N, 2)) * np.exp2(rng.integers(-12, 12, (N, 2)))).astype(np.float32)
    f[0] = [1.0, -2.0]
    f[1] = [500.0, -1e9]                       # beyond e4m3's 448: satfinite
    f[2] = [np.nan, 0.3]
    f[3] = [7.0, 0.25]                         # e2m1: 7 -> 6 (saturate), 0.25 -> 0 (tie to even)
    f[4] = [2.0 ** -130, 3.0 * 2 ** -128]      # ue8m0 from subnormals
    rec[:, 0:8] = f.view(np.uint8).reshape(N, 8)
    x = rng.standard_normal((N, 2)).astype(np.float16) * np.float16(100)
    x[1] = [np.float16(1000), np.float16(-448)]
    rec[:, 8:12] = x.view(np.uint8).reshape(N, 4)
    rec[:, 12:14] = rng.integers(0, 256, (N, 2), dtype=np.uint8)
    rec[:, 14] = rng.integers(0, 256, N, dtype=np.uint8)
    d = rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))
    d[0] = 1.0 + 2.0 ** -40
    d[1] = -(1.0 + 2.0 ** -40)
    rec[:, 16:24] = d.view(np.uint8).reshape(N, 8)
    return rec, f, x, d


def u8(v, codec) -> int:
    return int(np.array(v, np.float32).astype(codec).view(np.uint8))


def sat(v, codec) -> float:
    big = float(ml_dtypes.finfo(codec).max)
    return v if np.isnan(v) else min(max(v, -big), big)


def fp8(v, codec, relu=False) -> int:
    if np.isnan(v):
        return 0x7F
    if relu and v < 0:
        v = 0.0
    return u8(sat(v, codec), codec)


def e2m1(v) -> int:
    return u8(min(max(v, -6.0), 6.0), ml_dtypes.float4_e2m1fn) & 0xF


def ue8m0(v, up) -> int:
    v = abs(float(v))
    e = 0
    while e < 254 and 2.0 ** (e - 127) < v:      # smallest power >= v (rp) ...
        e += 1
    if not up and e > 0 and 2.0 ** (e - 127) > v:   # ... or largest power <= v (rz)
        e -= 1
    return e


def halfbits(v, dt=np.float16) -> int:
    return int(np.array(v).astype(dt).view(np.uint16))


def expected(t, rec, f, x, d) -> list[int]:
    a, b = float(f[t, 0]), float(f[t, 1])
    xh, xl = float(x[t, 1]), float(x[t, 0])
    e_hi, e_lo = int(rec[t, 13]), int(rec[t, 12])
    bf = ml_dtypes.bfloat16
    E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2

    def dec8(c, codec):      # a NaN code decodes to the canonical 0x7FFF (H100, h100-alu cvt.rn.f16x2.e5m2x2)
        v = np.array(c, np.uint8).view(codec).astype(np.float32)
        return 0x7FFF if np.isnan(v) else halfbits(v)

    def bf16_rn(v):      # NaN: the canonical 0x7FFF the H100 writes (h100-alu cvt.rn.bf16x2.f32)
        return 0x7FFF if np.isnan(v) else halfbits(np.float32(v).astype(bf), bf)

    def relu_f16(v):
        return 0x7FFF if np.isnan(v) else halfbits(0.0 if v < 0 else min(v, 65504.0))

    f16_rm = np.float16(a)
    if float(f16_rm) > a:
        f16_rm = np.nextafter(f16_rm, np.float16(-np.inf))
    r_z = np.float32(d[t])
    if abs(float(r_z)) > abs(d[t]):
        r_z = np.nextafter(r_z, np.float32(0))
    r_p = np.float32(d[t])
    if float(r_p) < d[t]:
        r_p = np.nextafter(r_p, np.float32(np.inf))
    b4 = int(rec[t, 14])
    e2 = [float(np.array(c, np.uint8).view(ml_dtypes.float4_e2m1fn)) for c in (b4 >> 4, b4 & 15)]
    return [
        fp8(a, E4) << 8 | fp8(b, E4),
        fp8(a, E5) << 8 | fp8(b, E5),
        fp8(a, E4, True) << 8 | fp8(b, E4, True),
        fp8(xh, E4) << 8 | fp8(xl, E4),
        dec8(e_hi, E4) << 16 | dec8(e_lo, E4),
        dec8(e_hi, E5) << 16 | dec8(e_lo, E5),
        (e2m1(a) << 4 | e2m1(b)) if not np.isnan(a) else (0x7 << 4 | e2m1(b)),
        bf16_rn(a) << 16 | bf16_rn(b),
        relu_f16(a) << 16 | relu_f16(b),
        (255 if np.isnan(a) else ue8m0(a, False)) << 8 | ue8m0(b, False),
        (255 if np.isnan(a) else ue8m0(a, True)) << 8 | ue8m0(b, True),
        (0x7FFF if e_hi == 255 else halfbits(2.0 ** (e_hi - 127), bf)) << 16
        | (0x7FFF if e_lo == 255 else halfbits(2.0 ** (e_lo - 127), bf)),
        int(r_z.view(np.uint32)),
        int(r_p.view(np.uint32)),
        0x7FFF if np.isnan(a) else int(f16_rm.view(np.uint16)),      # NaN: canonical (H100)
        int(np.float32(np.rint(a)).view(np.uint32)) if not np.isnan(a) else None,
        halfbits(e2[0]) << 16 | halfbits(e2[1]),
    ]


def test_triton_conversions():
    rec, f, x, d = make_inputs()
    dev = SimDevice()
    src = dev.memory.alloc(rec.nbytes)
    dev.memory.write(src, rec.tobytes())
    got = run_kernel(dev, kernel(), "cv", N * len(CASES), block=(N, 1, 1), in_ptr=src).reshape(N, len(CASES))
    for t in range(N):
        want = expected(t, rec, f, x, d)
        for i, wv in enumerate(want):
            if wv is None:
                continue
            assert int(got[t, i]) == wv, (t, CASES[i], hex(int(got[t, i])), hex(wv))


def test_hand_checked_bit_patterns():
    """e4m3: 1.0 = 0x38, -2.0 = 0xC0, 448 = 0x7E (largest finite); e5m2: 1.0 = 0x3C, -2.0 = 0xC0;
    e2m1: 7.0 -> 6.0 = 0x7, 0.25 -> 0 (tie to even); ue8m0: 2^-130 -> 2^-127 = 0x00 (rz and rp)."""
    rec, *_ = make_inputs()
    dev = SimDevice()
    src = dev.memory.alloc(rec.nbytes)
    dev.memory.write(src, rec.tobytes())
    got = run_kernel(dev, kernel(), "cv", N * len(CASES), block=(N, 1, 1), in_ptr=src).reshape(N, len(CASES))
    assert int(got[0, 0]) == 0x38C0 and int(got[0, 1]) == 0x3CC0
    assert int(got[1, 0]) == 0x7EFE                       # 500 -> 448, -1e9 -> -448
    assert int(got[2, 0]) >> 8 == 0x7F                    # NaN stays NaN
    assert int(got[3, 6]) == 0x70
    assert int(got[4, 9]) == 0x0000 and int(got[4, 10]) == 0x0001


@pytest.mark.assemble
def test_kernel_assembles():
    result = assemble(kernel(), "sm_100a")
    assert result.returncode == 0, result.stderr


TF32 = HEAD + """
.visible .entry tf32(.param .u64 in_ptr, .param .u64 out_ptr)
{
    .reg .b32 %x, %r<4>;
    .reg .b64 %a, %o, %t;
    .reg .u32 %tid;
    ld.param.u64 %a, [in_ptr];
    ld.param.u64 %o, [out_ptr];
    mov.u32 %tid, %tid.x;
    mul.wide.u32 %t, %tid, 4;
    add.u64 %a, %a, %t;
    ld.global.b32 %x, [%a];
    cvt.rna.tf32.f32 %r0, %x;
    cvt.rn.tf32.f32 %r1, %x;
    cvt.rz.tf32.f32 %r2, %x;
    cvt.rna.satfinite.tf32.f32 %r3, %x;
    mul.wide.u32 %t, %tid, 16;
    add.u64 %o, %o, %t;
    st.global.v4.b32 [%o], {%r0, %r1, %r2, %r3};
    ret;
}
"""


def test_cvt_to_tf32_rounding_modes():
    """PTX ISA cvt (§9.7.8.21): f32 -> tf32 keeps 10 mantissa bits in a 32-bit container; .rna ties
    away from zero, .rn ties to even, .rz truncates, .satfinite clamps to the largest finite tf32
    (Triton's tf32x3 splits an f32 with cvt.rna.tf32.f32).  Expected bits worked out by hand."""
    rows = [  # input bits: (rna, rn, rz, rna.satfinite)
        (0x3F801000, (0x3F802000, 0x3F800000, 0x3F800000, 0x3F802000)),   # exact tie, even below
        (0x3F803000, (0x3F804000, 0x3F804000, 0x3F802000, 0x3F804000)),   # exact tie, odd below
        (0xBF801001, (0xBF802000, 0xBF802000, 0xBF800000, 0xBF802000)),   # above the tie, negative
        (0x3F800FFF, (0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000)),   # below the tie
        (0x7F7FF000, (0x7F800000, 0x7F800000, 0x7F7FE000, 0x7F7FE000)),   # carry to infinity
        (0xFF800000, (0xFF800000, 0xFF800000, 0xFF800000, 0xFF7FE000)),   # -inf
        (0x7FC01001, (0x7FC00000, 0x7FC00000, 0x7FC00000, 0x7FBFE000)),   # NaN: truncated, no rounding (H100)
        (0x00001FFF, (0x00002000, 0x00002000, 0x00000000, 0x00002000)),   # subnormal
    ]
    dev = SimDevice()
    data = np.array([r[0] for r in rows], np.uint32)
    ptr = dev.memory.alloc(data.nbytes)
    dev.memory.write(ptr, data)
    out = run_kernel(dev, TF32, "tf32", 4 * len(rows), block=(len(rows), 1, 1), in_ptr=ptr).reshape(-1, 4)
    assert [tuple(int(v) for v in row) for row in out] == [r[1] for r in rows]
