"""Float arithmetic on the simulator: rounding modes and .ftz on f32 (PTX ISA §9.7.3 "Rounding
modifiers", add/sub/mul/fma/div/sqrt/rcp), packed half precision (§9.7.4: add/sub/mul/fma/min/max/
neg/abs on .f16x2/.bf16x2) and extended-precision integer carry (§9.7.1: add.cc, addc, sub.cc,
subc, mad.lo.cc, madc).  Expected values: exact rationals (``fractions``) rounded here by
comparing with the neighbours of a candidate, never through ``ptxsim.isa.float_round``."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from ptxsim import SimDevice
from tests.sim_ptx import assemble, run_kernel

pytestmark = pytest.mark.reference

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
N = 128
F32_OPS = [  # (instruction, operands) -> one result word each
    ("add.rn.f32", "a, b"), ("add.rz.f32", "a, b"), ("add.rm.f32", "a, b"), ("add.rp.f32", "a, b"),
    ("sub.rm.f32", "a, b"), ("mul.rz.f32", "a, b"), ("mul.rp.f32", "a, b"), ("fma.rn.f32", "a, b, c"),
    ("fma.rz.f32", "a, b, c"), ("fma.rm.f32", "a, b, c"), ("fma.rp.f32", "a, b, c"), ("div.rn.f32", "a, b"),
    ("div.rz.f32", "a, b"), ("div.rp.f32", "a, b"), ("add.rn.ftz.f32", "a, b"), ("mul.rn.ftz.f32", "a, b"),
    ("sqrt.rn.f32", "absa"), ("sqrt.rz.f32", "absa"), ("rcp.rn.f32", "a"), ("rcp.rm.f32", "a"),
]


def f32_kernel() -> str:
    lines = []
    for i, (op, args) in enumerate(F32_OPS):
        regs = ", ".join({"a": "%f1", "b": "%f2", "c": "%f3", "absa": "%f4"}[x.strip()] for x in args.split(","))
        lines.append(f"    {op} %f10, {regs};\n    st.global.f32 [%rd6+{4 * i}], %f10;")
    body = "\n".join(lines)
    return HEAD + f"""
.visible .entry flt(.param .u64 in_ptr, .param .u64 out_ptr)
{{
    .reg .b32 %r<4>;
    .reg .f32 %f<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+4];
    ld.global.f32 %f3, [%rd4+8];
    abs.f32 %f4, %f1;
    mul.wide.u32 %rd5, %r1, {4 * len(F32_OPS)};
    add.s64 %rd6, %rd2, %rd5;
{body}
    ret;
}}
"""


def bits_step(x, dt, up: bool):
    """Neighbour of a finite float towards +inf / -inf, by its bit pattern (test's own)."""
    size = np.dtype(dt).itemsize
    ut = {2: np.uint16, 4: np.uint32}[size]
    b = int(np.array(x, dt).view(ut))
    top = 1 << (8 * size - 1)
    neg, mag = bool(b & top), b & (top - 1)
    if mag == 0:
        b = 1 if up else top | 1
    elif neg != up:
        b += 1
    else:
        b -= 1
    return np.array(b, dtype=ut).view(dt)[()]


def round_exact(x: Fraction, dt, mode: str):
    """The float of ``dt`` that ``x`` rounds to (IEEE 754 overflow rules past the largest finite)."""
    big = float(ml_dtypes.finfo(dt).max)
    if abs(x) > Fraction(big):
        half_ulp = (Fraction(big) - Fraction(float(bits_step(np.array(big, dt)[()], dt, False)))) / 2
        up = x > 0
        to_inf = {"rn": abs(x) >= Fraction(big) + half_ulp, "rz": False, "rm": not up, "rp": up}[mode]
        return np.array((np.inf if to_inf else big) * (1 if up else -1), dtype=dt)[()]
    c = np.array(float(x), dtype=np.float64).astype(dt)[()]
    if not np.isfinite(c):
        c = np.array(ml_dtypes.finfo(dt).max * (1 if x > 0 else -1), dtype=dt)[()]
    while Fraction(float(c)) > x:
        c = bits_step(c, dt, False)
    lo = c
    hi = lo if Fraction(float(lo)) == x else bits_step(lo, dt, True)
    if lo == hi:
        return lo
    if mode == "rz":
        return lo if x > 0 else hi
    if mode == "rm":
        return lo
    if mode == "rp":
        return hi
    dl, dh = x - Fraction(float(lo)), Fraction(float(hi)) - x
    if dl != dh:
        return lo if dl < dh else hi
    size = np.dtype(dt).itemsize
    ut = {2: np.uint16, 4: np.uint32}[size]
    return lo if int(np.array(lo, dt).view(ut)) % 2 == 0 else hi


def ftz(x: float) -> float:
    return 0.0 * np.sign(x) if 0 < abs(x) < 2.0 ** -126 else x


def expected_f32(a: float, b: float, c: float) -> list[float]:
    A, B, C = Fraction(a), Fraction(b), Fraction(c)
    out = []
    for op, _ in F32_OPS:
        parts = op.split(".")
        mode = next(p for p in parts if p in ("rn", "rz", "rm", "rp"))
        name = parts[0]
        if name == "add":
            if "ftz" in parts:
                x = Fraction(ftz(a)) + Fraction(ftz(b))
                r = round_exact(x, np.float32, mode)
                out.append(ftz(float(r)))
                continue
            x = A + B
        elif name == "sub":
            x = A - B
        elif name == "mul":
            if "ftz" in parts:
                out.append(ftz(float(round_exact(Fraction(ftz(a)) * Fraction(ftz(b)), np.float32, mode))))
                continue
            x = A * B
        elif name == "fma":
            x = A * B + C
        elif name == "div":
            x = A / B
        elif name == "rcp":
            x = 1 / A
        else:                                   # sqrt: bracket the root with exact squares
            y = abs(a)
            r = round_exact(Fraction(float(np.sqrt(np.float64(y)))), np.float32, "rz")
            while Fraction(float(r)) ** 2 > Fraction(y):
                r = bits_step(r, np.float32, False)
            while Fraction(float(bits_step(r, np.float32, True))) ** 2 <= Fraction(y):
                r = bits_step(r, np.float32, True)
            lo, hi = r, bits_step(r, np.float32, True)
            exact_lo = Fraction(float(lo)) ** 2 == Fraction(y)
            if mode == "rz" or exact_lo:
                out.append(float(lo))
            else:           # nearest: compare y with the square of the midpoint
                mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
                out.append(float(hi if Fraction(y) > mid ** 2 else lo))
            continue
        out.append(float(round_exact(x, np.float32, mode)) if x != 0 else (-0.0 if mode == "rm" else 0.0))
    return out


def inputs() -> np.ndarray:
    rng = np.random.default_rng(11)
    exps = rng.integers(-60, 40, size=(N, 3)).astype(np.float64)
    vals = rng.uniform(1, 2, size=(N, 3)) * np.exp2(exps) * rng.choice([-1, 1], size=(N, 3))
    vals = vals.astype(np.float32)
    vals[:8, 0] = np.float32(1.0)                       # 1 + tiny: the directed modes differ
    vals[:8, 1] = np.float32(2.0 ** -30) * np.float32([1, -1, 3, -3, 1.5, -1.5, 1, -1])
    vals[8:16, 0] = np.float32(2.0 ** -130)               # subnormals for .ftz
    vals[8:16, 1] = np.float32(2.0 ** -140)
    vals[16:20, 1] = -vals[16:20, 0]                       # exact zero sums
    return vals


def test_f32_rounding_modes_and_ftz():
    vals = inputs()
    dev = SimDevice()
    src = dev.memory.alloc(vals.nbytes)
    dev.memory.write(src, vals.tobytes())
    out = run_kernel(dev, f32_kernel(), "flt", N * len(F32_OPS), block=(N, 1, 1), in_ptr=src)
    got = out.view(np.float32).reshape(N, len(F32_OPS))
    for t in range(N):
        want = np.array(expected_f32(*[float(v) for v in vals[t]]), dtype=np.float32)
        bad = np.flatnonzero(want.view(np.uint32) != got[t].view(np.uint32))
        assert not bad.size, (t, [(F32_OPS[i][0], float(got[t, i]), float(want[i])) for i in bad])


def test_directed_rounding_by_hand():
    """Hand-checked: 1 + 2^-30 is 1 (rn, rz, rm) or 1 + 2^-23 (rp); 1 - 2^-30 rounds down to 1 - 2^-24."""
    vals = inputs()
    dev = SimDevice()
    src = dev.memory.alloc(vals.nbytes)
    dev.memory.write(src, vals.tobytes())
    got = run_kernel(dev, f32_kernel(), "flt", N * len(F32_OPS), block=(N, 1, 1), in_ptr=src)
    got = got.view(np.float32).reshape(N, len(F32_OPS))
    assert got[0, :4].tolist() == [1.0, 1.0, 1.0, 1.0 + 2.0 ** -23]
    assert got[1, :4].tolist() == [1.0, 1.0 - 2.0 ** -24, 1.0 - 2.0 ** -24, 1.0]
    assert got[8, 14] == 0.0 and got[8, 0] == np.float32(2.0 ** -130 + 2.0 ** -140)


HALF_OPS = ["add.rn", "sub.rn", "mul.rn", "fma.rn", "min", "max", "min.NaN", "neg", "abs", "fma.rn.relu"]
F16_ONLY = ["add.rn.sat", "mul.rn.ftz", "fma.rn.sat"]


def half_kernel(ty: str) -> str:
    ops = HALF_OPS + (F16_ONLY if ty == "f16x2" else [])
    lines = []
    for i, op in enumerate(ops):
        args = "%r2, %r3, %r4" if op.startswith("fma") else "%r2" if op in ("neg", "abs") else "%r2, %r3"
        lines.append(f"    {op}.{ty} %r10, {args};\n    st.global.b32 [%rd6+{4 * i}], %r10;")
    body = "\n".join(lines)
    return HEAD + f"""
.visible .entry half(.param .u64 in_ptr, .param .u64 out_ptr)
{{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.b32 %r2, [%rd4];
    ld.global.b32 %r3, [%rd4+4];
    ld.global.b32 %r4, [%rd4+8];
    mul.wide.u32 %rd5, %r1, {4 * len(ops)};
    add.s64 %rd6, %rd2, %rd5;
{body}
    ret;
}}
"""


def half_expected(op: str, xs, dt) -> int:
    """One 16-bit result (bits) of ``op`` on the 16-bit values ``xs``."""
    ut = np.uint16
    vals = [float(x) for x in xs]
    nan = any(np.isnan(v) for v in vals[:3 if op.startswith("fma") else 2])
    qnan = 0x7FFF
    parts = op.split(".")
    name = parts[0]
    if name in ("neg", "abs"):       # a NaN gives the canonical NaN (the H100, h100-alu neg.f16x2)
        b = int(np.array(xs[0], dt).view(ut))
        return qnan if np.isnan(vals[0]) else b ^ 0x8000 if name == "neg" else b & 0x7FFF
    if name in ("min", "max"):
        a, b = vals[0], vals[1]
        if "NaN" in parts and nan:
            return qnan
        if np.isnan(a) and np.isnan(b):
            return qnan
        if np.isnan(a) or np.isnan(b):
            return int(np.array(b if np.isnan(a) else a, dt).view(ut))
        if a == b == 0:
            neg = (np.signbit(a) or np.signbit(b)) if name == "min" else (np.signbit(a) and np.signbit(b))
            return 0x8000 if neg else 0
        r = min(a, b) if name == "min" else max(a, b)
        return int(np.array(r, dt).view(ut))
    vals = vals[:3 if name == "fma" else 2]
    if "ftz" in parts:
        vals = [0.0 * np.sign(v) if 0 < abs(v) < 2.0 ** -14 else v for v in vals]
    if nan or any(np.isinf(v) for v in vals):
        with np.errstate(all="ignore"):
            r = {"add": lambda: vals[0] + vals[1], "sub": lambda: vals[0] - vals[1], "mul": lambda: vals[0] * vals[1],
                 "fma": lambda: vals[0] * vals[1] + vals[2]}[name]()
        if np.isnan(r):
            return 0 if "sat" in parts else qnan          # the canonical NaN (H100)
        exact = None
        rv = r
    else:
        A = [Fraction(v) for v in vals]
        exact = {"add": lambda: A[0] + A[1], "sub": lambda: A[0] - A[1], "mul": lambda: A[0] * A[1],
                 "fma": lambda: A[0] * A[1] + A[2]}[name]()
        big = Fraction(float(ml_dtypes.finfo(dt).max))
        ulp = Fraction(2) ** (15 - 10 if dt == np.float16 else 127 - 7)
        if abs(exact) >= big + ulp / 2:
            rv = float("inf") * (1 if exact > 0 else -1)
        elif exact == 0:
            rv = 0.0 if not (name == "mul" and (np.signbit(vals[0]) != np.signbit(vals[1]))) else -0.0
            if name in ("add", "sub"):
                b2 = vals[1] if name == "add" else -vals[1]
                rv = -0.0 if (np.signbit(vals[0]) and np.signbit(b2)) else 0.0
            if name == "fma":
                rv = -0.0 if (np.signbit(vals[0] * vals[1]) and np.signbit(vals[2]) and vals[0] * vals[1] == 0) else 0.0
        else:
            rv = float(round_exact(exact, dt, "rn"))
    if "sat" in parts:
        rv = 0.0 if np.isnan(rv) or rv <= 0 else min(rv, 1.0)      # -0 -> +0 (H100)
    if "relu" in parts and rv <= 0:
        rv = 0.0
    if "ftz" in parts and 0 < abs(rv) < 2.0 ** -14:
        rv = 0.0 * np.sign(rv)
    return int(np.array(rv, dtype=dt).view(ut))


@pytest.mark.parametrize("ty", ["f16x2", "bf16x2"])
def test_packed_half_arithmetic(ty):
    dt = np.float16 if ty == "f16x2" else ml_dtypes.bfloat16
    rng = np.random.default_rng(5)
    halves = rng.integers(0, 1 << 16, size=(N, 3, 2), dtype=np.uint32)
    halves[:4] = np.array([0x0000, 0x8000, 0x7E00, 0x3C00], dtype=np.uint32)[:, None, None] if ty == "f16x2" else \
        np.array([0x0000, 0x8000, 0x7FC0, 0x3F80], dtype=np.uint32)[:, None, None]
    halves[4, 1] = halves[4, 0] ^ 0x8000            # x + (-x)
    words = (halves[..., 0] | (halves[..., 1] << 16)).astype(np.uint32)
    dev = SimDevice()
    src = dev.memory.alloc(words.nbytes)
    dev.memory.write(src, words.tobytes())
    ops = HALF_OPS + (F16_ONLY if ty == "f16x2" else [])
    got = run_kernel(dev, half_kernel(ty), "half", N * len(ops), block=(N, 1, 1), in_ptr=src).reshape(N, len(ops))
    for t in range(N):
        for i, op in enumerate(ops):
            for h in range(2):
                xs = [np.array(halves[t, j, h], dtype=np.uint16).view(dt)[()] for j in range(3)]
                want = half_expected(op, xs, dt)
                g = (int(got[t, i]) >> (16 * h)) & 0xFFFF
                if want is None:
                    assert np.isnan(float(np.array(g, np.uint16).view(dt))), (t, op, h)
                else:
                    assert g == want, (t, op, h, [float(x) for x in xs], hex(g), hex(want))


CARRY = HEAD + r"""
.visible .entry carry(.param .u64 in_ptr, .param .u64 out_ptr)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];      // a = r3:r2, b = r5:r4
    add.cc.u32 %r6, %r2, %r4;
    addc.u32 %r7, %r3, %r5;                              // 64-bit a + b
    sub.cc.u32 %r8, %r2, %r4;
    subc.cc.u32 %r9, %r3, %r5;                           // 64-bit a - b
    subc.u32 %r10, 0, 0;                                 // borrow out of a - b: 0 or -1
    mul.lo.u32 %r11, %r2, %r4;
    mul.hi.u32 %r12, %r2, %r4;
    mad.lo.cc.u32 %r12, %r3, %r4, %r12;
    madc.hi.u32 %r13, %r3, %r4, 0;                       // (a * b_lo) bits 32-95, partially
    add.cc.u64 %rd5, %rd1, -1;
    addc.u32 %r14, 0, 0;                                 // carry out of the 64-bit add
    mul.wide.u32 %rd3, %r1, 48;
    add.s64 %rd6, %rd2, %rd3;
    st.global.v4.u32 [%rd6], {%r6, %r7, %r8, %r9};
    st.global.u32 [%rd6+16], %r10;
    st.global.u32 [%rd6+20], %r11;
    st.global.u32 [%rd6+24], %r12;
    st.global.u32 [%rd6+28], %r13;
    st.global.u32 [%rd6+32], %r14;
    ret;
}
"""


def test_integer_carry_chains():
    rng = np.random.default_rng(3)
    words = rng.integers(0, 1 << 32, size=(64, 4), dtype=np.uint64).astype(np.uint32)
    words[0] = [0xFFFFFFFF, 0xFFFFFFFF, 1, 0]
    dev = SimDevice()
    src = dev.memory.alloc(words.nbytes)
    dev.memory.write(src, words.tobytes())
    got = run_kernel(dev, CARRY, "carry", 64 * 12, block=(64, 1, 1), in_ptr=src).reshape(64, 12)
    M = 0xFFFFFFFF
    for t in range(64):
        lo_a, hi_a, lo_b, hi_b = (int(x) for x in words[t])
        a, b = lo_a | hi_a << 32, lo_b | hi_b << 32
        s, d = (a + b) % 2 ** 64, (a - b) % 2 ** 64
        p = lo_a * lo_b
        mid = (p >> 32) + ((hi_a * lo_b) & M)
        want = [s & M, s >> 32, d & M, d >> 32, M if a < b else 0, p & M, mid & M,
                ((hi_a * lo_b) >> 32) + (mid >> 32)]
        assert got[t, :8].tolist() == want, t
        assert int(got[t, 8]) == 1          # in_ptr + (2^64 - 1) carries out


@pytest.mark.assemble
@pytest.mark.parametrize("name", ["f32", "f16x2", "bf16x2", "carry"])
def test_kernels_assemble(name):
    ptx = {"f32": f32_kernel(), "f16x2": half_kernel("f16x2"), "bf16x2": half_kernel("bf16x2"), "carry": CARRY}[name]
    result = assemble(ptx, "sm_100a")
    assert result.returncode == 0, result.stderr
