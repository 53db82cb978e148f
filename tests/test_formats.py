"""Element formats (reference.formats) against definitions written here, independently.

Oracles: each format's closed form (-1)^s * 2^(e-bias) * (1 + m/2^M), subnormals
2^(1-bias) * m/2^M, with its special codes spelled out below (PTX ISA §5.2.1, §5.2.3; OCP MX v1.0
§5.3, §5.4.1; OCP OFP8 v1.0); a brute-force nearest-value search over those closed-form values for
rounding; numpy's own float64 -> float32 cast for f32; literal numbers for everything else.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.errors import SpecError
from reference.formats import (
    FORMATS,
    Format,
    all_values,
    bits_to_f32,
    decode,
    encode,
    f32_bits,
    get_format,
    is_nan_code,
    is_representable,
    max_finite,
    min_subnormal,
)

pytestmark = pytest.mark.reference

INF, NAN = math.inf, math.nan
H = float.fromhex  # exact binary literals: H("0x1.8p1") == 3.0

# name: (sign bit present, E, M, bias). The layouts of PTX ISA §5.2 / OCP MX v1.0, typed in here.
FIELDS = {
    "f32": (1, 8, 23, 127), "f16": (1, 5, 10, 15), "bf16": (1, 8, 7, 127),
    "e4m3": (1, 4, 3, 7), "e5m2": (1, 5, 2, 15), "e2m3": (1, 2, 3, 1), "e3m2": (1, 3, 2, 3),
    "e2m1": (1, 2, 1, 1),
}


def closed_form(codes, sign_bit: int, e_bits: int, m_bits: int, bias: int) -> np.ndarray:
    """Value of sign/exponent/mantissa codes, ignoring special codes (callers overwrite those)."""
    c = np.asarray(codes, dtype=np.int64)
    m = c & ((1 << m_bits) - 1)
    e = (c >> m_bits) & ((1 << e_bits) - 1)
    s = (c >> (m_bits + e_bits)) & 1 if sign_bit else np.zeros_like(c)
    normal = np.ldexp((m + (1 << m_bits)).astype(np.float64), (e - bias - m_bits).astype(np.int32))
    subnormal = np.ldexp(m.astype(np.float64), np.full(c.shape, 1 - bias - m_bits, dtype=np.int32))
    return np.where(s == 1, -1.0, 1.0) * np.where(e == 0, subnormal, normal)


def ieee_specials(codes, e_bits, m_bits, values):
    """IEEE 754 specials: top exponent with m == 0 is +-Inf, with m != 0 NaN (f32, f16, bf16, e5m2)."""
    c = np.asarray(codes, dtype=np.int64)
    top = ((c >> m_bits) & ((1 << e_bits) - 1)) == (1 << e_bits) - 1
    m = c & ((1 << m_bits) - 1)
    sign = np.where((c >> (e_bits + m_bits)) & 1, -1.0, 1.0)
    return np.where(top & (m == 0), sign * INF, np.where(top, NAN, values))


def expected_values(name: str, codes) -> np.ndarray:
    """The definition of each format, code -> value."""
    c = np.asarray(codes, dtype=np.int64)
    if name in ("f32", "f16", "bf16", "e5m2"):
        _, e, m, _ = FIELDS[name]
        return ieee_specials(c, e, m, closed_form(c, *FIELDS[name]))
    if name == "tf32":  # f32 layout, mantissa bits 12-0 not part of the value
        v = closed_form(c >> 13, 1, 8, 10, 127)
        return ieee_specials(c >> 13, 8, 10, v)
    if name == "e4m3":  # OCP E4M3: no Inf; NaN only S.1111.111 = 0x7F, 0xFF
        return np.where(np.isin(c, [0x7F, 0xFF]), NAN, closed_form(c, 1, 4, 3, 7))
    if name in ("e2m3", "e3m2", "e2m1"):  # every code is a finite number
        return closed_form(c, *FIELDS[name])
    if name == "ue8m0":  # 2^(c - 127), 0xFF NaN
        return np.where(c == 0xFF, NAN, np.ldexp(1.0, (c - 127).astype(np.int32)))
    if name == "ue4m3":  # bit 7 ignored: e4m3 of the code with the sign bit cleared
        return expected_values("e4m3", c & 0x7F)
    bits = {"s8": 8, "u8": 8, "s32": 32, "s4": 4, "u4": 4}[name]
    if name.startswith("s"):
        return np.where(c >= 1 << (bits - 1), c - (1 << bits), c)
    return c


def same(got, want) -> bool:
    """Equal values, NaN where NaN, and the same sign of zero."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.array_equal(np.isnan(got), np.isnan(want)):
        return False
    ok = ~np.isnan(want)
    return bool(np.array_equal(got[ok], want[ok]) and np.array_equal(np.signbit(got[ok]), np.signbit(want[ok])))


def container_codes(name: str) -> np.ndarray:
    """Every code of the format's code space (ue4m3: all 256 container codes)."""
    f = FORMATS[name]
    width = f.container_bits if name == "ue4m3" else f.bits
    return np.arange(1 << width, dtype=np.int64)


SMALL = [n for n, f in FORMATS.items() if f.bits <= 16]


# ---- capability table ------------------------------------------------------------------------

# name: bits, container, float, signed, E, M, bias, inf, nan, max finite, smallest positive
CAPS = {
    "f32": (32, 32, True, True, 8, 23, 127, True, True, H("0x1.fffffep127"), 2.0 ** -149),
    "tf32": (19, 32, True, True, 8, 10, 127, True, True, H("0x1.ffcp127"), 2.0 ** -136),
    "f16": (16, 16, True, True, 5, 10, 15, True, True, 65504.0, 2.0 ** -24),
    "bf16": (16, 16, True, True, 8, 7, 127, True, True, H("0x1.fep127"), 2.0 ** -133),
    "e4m3": (8, 8, True, True, 4, 3, 7, False, True, 448.0, 2.0 ** -9),
    "e5m2": (8, 8, True, True, 5, 2, 15, True, True, 57344.0, 2.0 ** -16),
    "e2m3": (6, 8, True, True, 2, 3, 1, False, False, 7.5, 0.125),
    "e3m2": (6, 8, True, True, 3, 2, 3, False, False, 28.0, 0.0625),
    "e2m1": (4, 8, True, True, 2, 1, 1, False, False, 6.0, 0.5),
    "ue8m0": (8, 8, True, False, 8, 0, 127, False, True, 2.0 ** 127, 2.0 ** -127),
    "ue4m3": (7, 8, True, False, 4, 3, 7, False, True, 448.0, 2.0 ** -9),
    "s8": (8, 8, False, True, 0, 0, 0, False, False, 127.0, None),
    "u8": (8, 8, False, False, 0, 0, 0, False, False, 255.0, None),
    "s32": (32, 32, False, True, 0, 0, 0, False, False, 2147483647.0, None),
    "s4": (4, 8, False, True, 0, 0, 0, False, False, 7.0, None),
    "u4": (4, 8, False, False, 0, 0, 0, False, False, 15.0, None),
}


def test_every_format_is_in_the_capability_table():
    assert set(FORMATS) == set(CAPS)


@pytest.mark.parametrize("name", list(CAPS))
def test_capabilities(name):
    bits, cont, is_float, signed, e, m, bias, inf, nan, top, tiny = CAPS[name]
    f = get_format(name)
    assert (f.name, f.bits, f.container_bits, f.is_float, f.signed) == (name, bits, cont, is_float, signed)
    assert (f.exponent_bits, f.mantissa_bits, f.bias, f.has_inf, f.has_nan) == (e, m, bias, inf, nan)
    assert f.code_dtype == np.dtype(f"u{cont // 8}")
    assert max_finite(name) == top
    if tiny is None:
        with pytest.raises(SpecError, match="floating-point format"):
            min_subnormal(name)
    else:
        assert min_subnormal(name) == tiny


def test_get_format_accepts_a_format_and_rejects_unknown_words():
    assert get_format(FORMATS["e4m3"]) is FORMATS["e4m3"]
    assert isinstance(get_format("ue4m3"), Format)
    with pytest.raises(SpecError, match=r"§5\.2 .*element format expects one of f32, tf32.*but got 'fp8'"):
        get_format("fp8")


# ---- decode: exhaustive against the closed forms ---------------------------------------------

@pytest.mark.parametrize("name", [n for n in FORMATS if FORMATS[n].container_bits <= 16])
def test_decode_every_code_matches_the_closed_form(name):
    codes = container_codes(name)
    got = decode(name, codes)
    assert got.dtype == (np.float64 if FORMATS[name].is_float else np.int64)
    assert same(got, expected_values(name, codes))


# Literal values, a third opinion on the closed forms above.
LITERALS = {
    "e2m1": {c: v for c, v in enumerate([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])},
    "e2m3": {0x01: 0.125, 0x07: 0.875, 0x08: 1.0, 0x1F: 7.5, 0x3F: -7.5, 0x20: -0.0},
    "e3m2": {0x01: 0.0625, 0x04: 0.25, 0x0C: 1.0, 0x1F: 28.0, 0x3F: -28.0},
    "e4m3": {0x01: 2.0 ** -9, 0x07: 7 * 2.0 ** -9, 0x08: 2.0 ** -6, 0x38: 1.0, 0x7E: 448.0,
             0xFE: -448.0, 0x7F: NAN, 0xFF: NAN, 0x80: -0.0},
    "e5m2": {0x01: 2.0 ** -16, 0x04: 2.0 ** -14, 0x3C: 1.0, 0x7B: 57344.0, 0x7C: INF, 0xFC: -INF,
             0x7D: NAN, 0x7E: NAN, 0x7F: NAN, 0xFD: NAN},
    "ue8m0": {0x00: 2.0 ** -127, 0x7F: 1.0, 0x80: 2.0, 0xFE: 2.0 ** 127, 0xFF: NAN},
    "ue4m3": {0x38: 1.0, 0xB8: 1.0, 0x7E: 448.0, 0xFE: 448.0, 0x80: 0.0, 0x7F: NAN, 0xFF: NAN},
    "f16": {0x0001: 2.0 ** -24, 0x0400: 2.0 ** -14, 0x3C00: 1.0, 0x7BFF: 65504.0, 0x7C00: INF,
            0xFC00: -INF, 0x7C01: NAN, 0x7E00: NAN, 0x8000: -0.0},
    "bf16": {0x0001: 2.0 ** -133, 0x0080: 2.0 ** -126, 0x3F80: 1.0, 0x7F7F: H("0x1.fep127"), 0x7F80: INF,
             0xFF80: -INF, 0x7F81: NAN, 0x7FC0: NAN},
    "s4": {0x0: 0, 0x7: 7, 0x8: -8, 0xF: -1}, "u4": {0xF: 15},
    "s8": {0x7F: 127, 0x80: -128, 0xFF: -1}, "u8": {0xFF: 255},
}


@pytest.mark.parametrize("name", list(LITERALS))
def test_decode_literal_values(name):
    table = LITERALS[name]
    assert same(decode(name, list(table)), list(table.values()))


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "f16", "bf16", "ue8m0", "ue4m3", "e2m1", "s8"])
def test_is_nan_code_marks_exactly_the_nan_codes(name):
    codes = container_codes(name)
    assert np.array_equal(is_nan_code(name, codes), np.isnan(expected_values(name, codes).astype(np.float64)))


def test_nan_positions_spelled_out():
    for name, nan_codes in {"e4m3": [0x7F, 0xFF], "ue8m0": [0xFF], "ue4m3": [0x7F, 0xFF],
                            "e5m2": [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF], "e2m1": [], "e2m3": [],
                            "e3m2": []}.items():
        codes = container_codes(name)
        assert sorted(codes[is_nan_code(name, codes)].tolist()) == nan_codes, name


# f32 and tf32: specials, subnormal boundaries, random codes.
F32_SPECIALS = {
    0x00000000: 0.0, 0x80000000: -0.0, 0x00000001: 2.0 ** -149, 0x807FFFFF: -(2.0 ** -126 - 2.0 ** -149),
    0x00800000: 2.0 ** -126, 0x3F800000: 1.0, 0x3F800001: 1 + 2.0 ** -23, 0x7F7FFFFF: H("0x1.fffffep127"),
    0x7F800000: INF, 0xFF800000: -INF, 0x7F800001: NAN, 0x7FC00000: NAN, 0xFFFFFFFF: NAN,
}
TF32_SPECIALS = {
    0x00000000: 0.0, 0x00001FFF: 0.0, 0x80001FFF: -0.0, 0x00002000: 2.0 ** -136,
    0x007FE000: 2.0 ** -126 - 2.0 ** -136, 0x00800000: 2.0 ** -126, 0x3F801FFF: 1.0,
    0x3F802000: 1 + 2.0 ** -10, 0x7F7FFFFF: H("0x1.ffcp127"), 0x7F800000: INF, 0x7F801FFF: INF,
    0xFF800001: -INF, 0x7F802000: NAN, 0xFFFFE000: NAN,
}


@pytest.mark.parametrize("name,table", [("f32", F32_SPECIALS), ("tf32", TF32_SPECIALS)])
def test_decode_32_bit_specials(name, table):
    codes, values = list(table), list(table.values())
    assert same(decode(name, np.array(codes, dtype=np.uint32)), values)
    assert same(expected_values(name, codes), values)  # the oracle agrees with the literals


@pytest.mark.parametrize("name", ["f32", "tf32"])
def test_decode_32_bit_random_codes(name):
    codes = np.random.default_rng(7).integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    assert same(decode(name, codes), expected_values(name, codes))


def test_tf32_ignores_the_low_13_bits():
    codes = np.random.default_rng(8).integers(0, 1 << 32, 50_000, dtype=np.uint64).astype(np.uint32)
    base = decode("tf32", codes & np.uint32(0xFFFFE000))
    assert same(decode("tf32", codes | np.uint32(0x1FFF)), base)
    assert same(decode("tf32", codes), base)


# ---- encode: round trips ---------------------------------------------------------------------

@pytest.mark.parametrize("rounding", ["rne", "rz"])
@pytest.mark.parametrize("name", SMALL)
def test_encode_decode_round_trip_every_code(name, rounding):
    codes = container_codes(name)
    values = expected_values(name, codes)
    keep = ~np.isnan(values.astype(np.float64))
    got = encode(name, values[keep], rounding=rounding)
    assert got.dtype == FORMATS[name].code_dtype
    want = codes[keep] & 0x7F if name == "ue4m3" else codes[keep]  # ue4m3 writes bit 7 as 0
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", ["f32", "tf32"])
def test_encode_decode_round_trip_32_bit(name):
    codes = np.random.default_rng(9).integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32)
    if name == "tf32":
        codes &= np.uint32(0xFFFFE000)
    values = expected_values(name, codes)
    keep = ~np.isnan(values)
    for rounding in ("rne", "rz"):
        assert np.array_equal(encode(name, values[keep], rounding=rounding), codes[keep])


def test_s32_round_trip_at_the_boundaries():
    values = [-(2 ** 31), -(2 ** 31) + 1, -1, 0, 1, 2 ** 31 - 1]
    codes = encode("s32", values)
    assert codes.dtype == np.uint32
    assert codes.tolist() == [0x80000000, 0x80000001, 0xFFFFFFFF, 0, 1, 0x7FFFFFFF]
    assert decode("s32", codes).tolist() == values


# ---- encode: rounding against a brute-force nearest-value search ------------------------------

def positive_table(name):
    """Sorted finite values >= 0 of the format with their codes (from the closed forms)."""
    if name == "tf32":
        codes = np.arange(0, 1 << 18, dtype=np.int64) << 13
    else:
        codes = container_codes(name)[: (1 << FORMATS[name].bits) // 2]  # sign bit clear
    values = expected_values(name, codes).astype(np.float64)
    keep = np.isfinite(values)
    order = np.argsort(values[keep], kind="stable")
    return values[keep][order], codes[keep][order]


def oracle(name, x, rounding):
    """Nearest (ties: even code) or toward-zero code of |x| <= max, by search over the table."""
    vals, codes = positive_table(name)
    mag = np.abs(x)
    i = np.clip(np.searchsorted(vals, mag, side="right") - 1, 0, len(vals) - 2)
    lo, hi = vals[i], vals[i + 1]
    exact_top = mag == vals[-1]
    if rounding == "rz":
        pick = np.where(exact_top, i + 1, i)
    else:
        d_lo, d_hi = mag - lo, hi - mag
        lsb = (codes[i] >> 13 if name == "tf32" else codes[i]) & 1  # mantissa LSB of the lower value
        up = (d_hi < d_lo) | ((d_hi == d_lo) & (lsb == 1))
        pick = np.where(up | exact_top, i + 1, i)
    sign = np.where(np.signbit(x), 1 << (FORMATS[name].bits - 1), 0) if name != "tf32" else \
        np.where(np.signbit(x), 1 << 31, 0)
    return codes[pick] | sign


def probe_values(name, rng):
    vals, _ = positive_table(name)
    i = np.arange(len(vals) - 1)
    if len(i) > 4096:  # sample neighbour pairs, keeping both ends of the range
        i = np.unique(np.concatenate([i[:64], i[-64:], rng.choice(i, 4096, replace=False)]))
    mids = (vals[i] + vals[i + 1]) / 2
    near = np.concatenate([mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf), vals[i], vals[-1:]])
    rand = rng.uniform(0, vals[-1], 4000)
    mag = np.concatenate([near, rand])
    mag = mag[mag <= vals[-1]]
    return np.concatenate([mag, -mag])


@pytest.mark.parametrize("rounding", ["rne", "rz"])
@pytest.mark.parametrize("name", ["f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
def test_rounding_matches_brute_force_nearest(name, rounding):
    x = probe_values(name, np.random.default_rng(11))
    assert np.array_equal(encode(name, x, rounding=rounding), oracle(name, x, rounding))


def test_f32_rne_matches_numpy_cast():
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.standard_normal(20_000) * 2.0 ** rng.integers(-160, 128, 20_000),
                        rng.uniform(-1, 1, 20_000) * 2.0 ** -135])
    with np.errstate(over="ignore"):
        want = x.astype(np.float32).view(np.uint32)
    assert np.array_equal(encode("f32", x), want)


# Hand-computed cases: (format, value, rne code, rz code).
ROUNDING_CASES = [
    ("e2m1", 0.25, 0x0, 0x0),       # tie 0 / 0.5 -> even 0
    ("e2m1", 0.75, 0x2, 0x1),       # tie 0.5 / 1 -> 1 (m=0)
    ("e2m1", 1.25, 0x2, 0x2),       # tie 1 / 1.5 -> 1
    ("e2m1", 1.75, 0x4, 0x3),       # tie 1.5 / 2 -> 2
    ("e2m1", 3.5, 0x6, 0x5),        # tie 3 / 4 -> 4
    ("e2m1", 5.0, 0x6, 0x6),        # tie 4 / 6 -> 4
    ("e2m1", 5.5, 0x7, 0x6),
    ("e2m1", -0.75, 0xA, 0x9),
    ("e2m1", -0.2, 0x8, 0x8),       # underflow keeps the sign
    ("e4m3", 1 + 1 / 16, 0x38, 0x38),
    ("e4m3", 1 + 3 / 16, 0x3A, 0x39),
    ("e4m3", 1 + 1 / 16 + 2.0 ** -40, 0x39, 0x38),  # one rounding from float64, not via float32
    ("e4m3", 2.0 ** -10, 0x00, 0x00),               # half the smallest subnormal
    ("e4m3", 3 * 2.0 ** -10, 0x02, 0x01),
    ("e4m3", 464.0, 0x7E, 0x7E),                    # 448 + half ulp: ties to even 448
    ("e4m3", -464.0, 0xFE, 0xFE),
    ("bf16", 1 + 2.0 ** -8, 0x3F80, 0x3F80),
    ("bf16", 1 + 3 * 2.0 ** -8, 0x3F82, 0x3F81),
    ("bf16", 1 + 2.0 ** -8 + 2.0 ** -40, 0x3F81, 0x3F80),
    ("f16", 2.0 ** -25, 0x0000, 0x0000),
    ("f16", 2.0 ** -25 + 2.0 ** -40, 0x0001, 0x0000),
    ("f16", 65519.99, 0x7BFF, 0x7BFF),
    ("tf32", 1 + 2.0 ** -11, 0x3F800000, 0x3F800000),
    ("tf32", 1 + 3 * 2.0 ** -11, 0x3F804000, 0x3F802000),
    ("tf32", 2.0 ** -137, 0x00000000, 0x00000000),
    ("tf32", 3 * 2.0 ** -137, 0x00004000, 0x00002000),
    ("f32", 1 + 2.0 ** -24, 0x3F800000, 0x3F800000),
    ("f32", 1 + 2.0 ** -24 + 2.0 ** -50, 0x3F800001, 0x3F800000),
    ("f32", 3 * 2.0 ** -150, 0x00000002, 0x00000001),
    ("e2m3", 0.0625, 0x00, 0x00),
    ("e3m2", 1.125, 0x0C, 0x0C),    # tie 1 / 1.25 -> 1
    ("e5m2", 1.375, 0x3E, 0x3D),    # tie 1.25 / 1.5 -> 1.5
]


@pytest.mark.parametrize("name,value,rne,rz", ROUNDING_CASES)
def test_hand_computed_rounding(name, value, rne, rz):
    assert int(encode(name, value)) == rne
    assert int(encode(name, value, rounding="rz")) == rz


# ---- overflow policy -------------------------------------------------------------------------

# (format, value, rne code, rz code)
OVERFLOW_CASES = [
    # Inf formats: rne -> Inf, rz -> max; Inf stays Inf.
    ("e5m2", 61440.0, 0x7C, 0x7B), ("e5m2", 61439.0, 0x7B, 0x7B), ("e5m2", -1e6, 0xFC, 0xFB),
    ("e5m2", INF, 0x7C, 0x7C), ("e5m2", -INF, 0xFC, 0xFC),
    ("f16", 65520.0, 0x7C00, 0x7BFF), ("f16", -1e30, 0xFC00, 0xFBFF),
    ("bf16", 1e39, 0x7F80, 0x7F7F),
    ("tf32", H("0x1.ffep127"), 0x7F800000, 0x7F7FE000), ("tf32", H("0x1.ffdfffp127"), 0x7F7FE000, 0x7F7FE000),
    ("f32", 1e39, 0x7F800000, 0x7F7FFFFF), ("f32", -INF, 0xFF800000, 0xFF800000),
    # e4m3 / ue4m3: NaN beyond max after rounding (rz: 480 is the first such value), Inf -> NaN.
    ("e4m3", 465.0, 0x7F, 0x7E), ("e4m3", 479.0, 0x7F, 0x7E), ("e4m3", 480.0, 0x7F, 0x7F),
    ("e4m3", -1e9, 0x7F, 0x7F), ("e4m3", INF, 0x7F, 0x7F), ("e4m3", -INF, 0x7F, 0x7F),
    ("ue4m3", 464.0, 0x7E, 0x7E), ("ue4m3", 465.0, 0x7F, 0x7E), ("ue4m3", INF, 0x7F, 0x7F),
    # No Inf, no NaN: saturate.
    ("e2m1", 7.0, 0x7, 0x7), ("e2m1", 1e9, 0x7, 0x7), ("e2m1", -INF, 0xF, 0xF),
    ("e2m3", 7.75, 0x1F, 0x1F), ("e2m3", -100.0, 0x3F, 0x3F), ("e2m3", INF, 0x1F, 0x1F),
    ("e3m2", 30.0, 0x1F, 0x1F), ("e3m2", -1e9, 0x3F, 0x3F),
]


@pytest.mark.parametrize("name,value,rne,rz", OVERFLOW_CASES)
def test_overflow_policy(name, value, rne, rz):
    assert int(encode(name, value)) == rne
    assert int(encode(name, value, rounding="rz")) == rz


@pytest.mark.parametrize("name,code", [("f32", 0x7FC00000), ("tf32", 0x7FC00000), ("f16", 0x7E00),
                                       ("bf16", 0x7FC0), ("e4m3", 0x7F), ("e5m2", 0x7E),
                                       ("ue8m0", 0xFF), ("ue4m3", 0x7F)])
def test_nan_encodes_to_the_canonical_nan(name, code):
    assert encode(name, [NAN, -NAN]).tolist() == [code, code]


def test_negative_zero_is_kept():
    assert int(encode("e4m3", -0.0)) == 0x80
    assert int(encode("e2m1", -0.0)) == 0x8
    assert int(encode("f32", -0.0)) == 0x80000000
    assert int(encode("tf32", -1e-60)) == 0x80000000
    assert int(encode("ue4m3", -0.0)) == 0x00


def test_ue8m0_encodes_exact_powers_of_two():
    assert encode("ue8m0", [2.0 ** -127, 0.5, 1.0, 2.0, 2.0 ** 127]).tolist() == [0, 126, 127, 128, 254]


def test_int_encode_is_twos_complement_in_the_container():
    assert encode("s4", [-8, -1, 0, 7]).tolist() == [0x8, 0xF, 0x0, 0x7]
    assert encode("u4", [0, 15]).tolist() == [0, 15]
    assert encode("s8", [-128, -1, 127]).tolist() == [0x80, 0xFF, 0x7F]
    assert encode("u8", np.array([0.0, 255.0])).tolist() == [0, 255]
    assert encode("s4", -1).dtype == np.uint8


# ---- is_representable, all_values, f32 helpers ----------------------------------------------

@pytest.mark.parametrize("name", SMALL)
def test_every_finite_value_is_representable(name):
    _, values = all_values(name)
    finite = values[np.isfinite(values.astype(np.float64))]
    assert is_representable(name, finite).all()


def test_is_representable_rejects_inexact_out_of_range_and_specials():
    assert is_representable("e2m1", [0.5, 6.0, -6.0, -0.0]).all()
    assert not is_representable("e2m1", [0.25, 7.0, 8.0, NAN, INF]).any()
    assert not is_representable("e4m3", [480.0, 1 + 1 / 16, NAN]).any()
    assert not is_representable("ue4m3", [-1.0]).any()
    assert is_representable("ue8m0", [2.0 ** -127, 2.0 ** 127]).all()
    assert not is_representable("ue8m0", [0.0, 3.0, 2.0 ** 128, -2.0]).any()
    assert is_representable("tf32", [1 + 2.0 ** -10]).all() and not is_representable("tf32", [1 + 2.0 ** -11]).any()
    assert is_representable("s4", [-8, 7]).all() and not is_representable("s4", [8, -9, 1.5]).any()


def test_all_values_lists_every_code():
    codes, values = all_values("e2m1")
    assert codes.tolist() == list(range(16)) and codes.dtype == np.uint8
    assert values.tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]
    assert len(all_values("ue4m3")[0]) == 128 and len(all_values("bf16")[0]) == 65536
    with pytest.raises(SpecError, match="at most 16 bits"):
        all_values("tf32")


def test_f32_helpers():
    assert f32_bits([1.0, -2.0, 0.0]).tolist() == [0x3F800000, 0xC0000000, 0]
    assert f32_bits(np.array([NAN], dtype=np.float32)).dtype == np.uint32
    assert bits_to_f32([0x3F800000, 0x00000001]).tolist() == [1.0, 2.0 ** -149]
    assert bits_to_f32([0x7FC00001]).view(np.uint32).tolist() == [0x7FC00001]  # payload kept
    with pytest.raises(SpecError, match="exact in f32"):
        f32_bits([0.1])


# ---- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,codes,match", [
    ("e2m1", [16], r"e2m1 code expects an integer in \[0, 0xf\], but got 16"),
    ("e3m2", [64], r"e3m2 code expects an integer in \[0, 0x3f\]"),
    ("s4", [0x10], r"§5\.2\.1 \(Fundamental Types\): s4 code"),
    ("e4m3", [-1], r"§5\.2\.3 .*e4m3 code expects .*but got -1"),
    ("f16", [1 << 16], "f16 code"),
    ("e4m3", [1.0], "e4m3 code expects integers"),
])
def test_decode_rejects_bad_codes(name, codes, match):
    with pytest.raises(SpecError, match=match):
        decode(name, codes)


@pytest.mark.parametrize("name,values,match", [
    ("e2m1", [NAN], "e2m1 encode expects a number"),
    ("e3m2", [1.0, NAN], "has no NaN"),
    ("ue8m0", [3.0], r"ue8m0 encode expects a power of two in \[2\^-127, 2\^127\] or NaN, but got 3\.0"),
    ("ue8m0", [0.0], "power of two"), ("ue8m0", [2.0 ** 128], "power of two"),
    ("ue8m0", [-1.0], "power of two"), ("ue8m0", [INF], "power of two"),
    ("ue4m3", [1.0, -0.5], r"ue4m3 encode expects values >= 0 .*but got -0\.5"),
    ("s8", [128], r"s8 encode expects integers in \[-128, 127\], but got 128"),
    ("u8", [-1], r"\[0, 255\]"), ("s4", [-9], r"\[-8, 7\]"), ("u4", [16], r"\[0, 15\]"),
    ("s32", [2 ** 31], "2147483648"),
    ("s8", [1.5], "s8 encode expects integral values, but got 1.5"),
    ("s8", [NAN], "integral values"),
    ("e4m3", ["x"], "e4m3 encode expects real numbers"),
])
def test_encode_rejects_values_outside_the_format(name, values, match):
    with pytest.raises(SpecError, match=match):
        encode(name, values)


def test_encode_rejects_an_unknown_rounding_mode():
    with pytest.raises(SpecError, match="rounding expects 'rne' or 'rz', but got 'rn'"):
        encode("f16", 1.0, rounding="rn")


def test_decode_table_is_the_cast():
    """``decode`` of formats up to 16 bits looks values up in a table of its own cast: every code
    of every such format decodes to the same float64 bits as the element-by-element cast."""
    from reference.formats import _STORAGE_TYPE, FORMATS, _value_table

    for name, f in FORMATS.items():
        if not f.is_float or f.container_bits > 16:
            continue
        codes = np.arange(1 << f.bits).astype(f.code_dtype)
        with np.errstate(invalid="ignore"):
            direct = codes.view(_STORAGE_TYPE[name]).astype(np.float64)
        assert np.array_equal(_value_table(name)[codes].view(np.int64), direct.view(np.int64)), name


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 40), specials=st.integers(0, 6), huge=st.booleans())
def test_product_sums_where_nonfinite_is_the_ieee_sum(seed, k, specials, huge):
    """``product_sums_where_nonfinite`` finds every NaN/Inf of the full IEEE sum of products and
    C (numpy's), with the same value there, on operands with NaN, +-Inf and large values (as large
    as MMA operands get: no finite partial sum overflows float64, where the order of the sum would
    decide between NaN and Inf)."""
    from reference.formats import product_sums_where_nonfinite

    rng = np.random.default_rng(seed)
    aa, bb, c = rng.standard_normal((5, k)), rng.standard_normal((k, 7)), rng.standard_normal((5, 7))
    for arr in (aa, bb, c):
        flat = arr.reshape(-1)
        flat[rng.integers(0, flat.size, specials)] = rng.choice([np.nan, np.inf, -np.inf, 0.0], specials)
    if huge:
        aa[rng.integers(0, 5)] *= 2.0 ** 500
        bb[:, rng.integers(0, 7)] *= 2.0 ** 400
    with np.errstate(invalid="ignore", over="ignore"):
        full = (aa[:, None, :] * bb.T[None, :, :]).sum(axis=-1) + c
    got = product_sums_where_nonfinite(aa, bb, c)
    assert np.array_equal(np.isnan(got), np.isnan(full))
    assert np.array_equal(np.isinf(got), np.isinf(full))
    inf = np.isinf(full)
    assert np.array_equal(got[inf], full[inf])
