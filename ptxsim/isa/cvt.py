"""Conversions: cvt between integer widths, integers and floats, float widths, and the packed
narrow float formats (PTX ISA §9.7.9.21).

Integer sources are extended by their own signedness, then the destination keeps its bits
(``.sat`` clamps instead); float-to-integer conversions clamp to the destination range (PTX:
saturation is implied for float-to-integer; infinities clamp too) and give 0 for a NaN, except
from .f64 to a 32- or 64-bit integer, where the H100 writes the sign bit alone (0x80000000 /
0x8000000000000000).  f64 NaNs converted to narrower floats keep their sign and top payload bits
and are quieted; NaNs widened to f64 are quieted (``cvt.ftz.f64.f32``: 0x7FFFFFFFE0000000;
docs/sim.md "Hardware behaviours adopted").  Float results are correctly rounded in
``.rn/.rz/.rm/.rp`` (``ptxsim.isa.float_round``).  Narrow formats use the ml_dtypes codecs: with
``.satfinite`` values beyond the largest finite clamp to it and NaN stays NaN (0x7F for
e4m3/e5m2); formats without NaN (e2m1, e2m3, e3m2) take +MAX_NORM for a NaN input (decision);
decoding to f16x2/bf16x2 gives the canonical NaN 0x7FFF (H100).  NaN results from f32/f16/bf16
sources are canonical (0x7FFF, 0x7FFFFFFF) as the H100 writes them, except bf16 -> f32 (bits kept).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ptxsim.isa.alu import _ops
from ptxsim.isa.float_round import flush, round_to
from ptxsim.isa.floats import canonicalize
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

#: packed narrow-float pairs (PTX ISA §5.2.5.x alternate floating point data formats):
#: name -> (ml_dtypes codec, bits per element, NaN code or None)
NARROW = {"e4m3x2": (ml_dtypes.float8_e4m3fn, 8, 0x7F), "e5m2x2": (ml_dtypes.float8_e5m2, 8, 0x7F),
          "e2m1x2": (ml_dtypes.float4_e2m1fn, 4, None), "e2m3x2": (ml_dtypes.float6_e2m3fn, 8, None),
          "e3m2x2": (ml_dtypes.float6_e3m2fn, 8, None), "ue8m0x2": (ml_dtypes.float8_e8m0fnu, 8, 0xFF)}
B16, B32 = TYPES["b16"], TYPES["b32"]

_INT_ROUND = ("rni", "rzi", "rmi", "rpi")
_ROUNDERS = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _type_words(q) -> tuple[str, str]:
    """(destination, source) type words in spelling order, narrow packed formats included."""
    found = [w for w in q.rest if w in TYPES or w in NARROW]
    if len(found) != 2:
        raise Unsupported("cvt expects a destination and a source type")
    for w in found:
        q.rest.remove(w)
    return found[0], found[1]


def _round_tf32(bits: np.ndarray, rnd: str, satfinite: bool, relu: bool) -> np.ndarray:
    """f32 bits -> tf32 in a 32-bit container (low 13 mantissa bits zero), PTX ISA §9.7.8.21 cvt:
    ``.rna`` ties away from zero, ``.rn`` ties to even, ``.rz`` truncates; a carry out of the
    mantissa overflows into the exponent (to infinity past the largest finite value).  A NaN is
    truncated (sign and the top 10 payload bits kept, no rounding), as the H100 does;
    ``.satfinite`` takes one tf32 step (0x2000) off every value with an all-ones exponent: an
    infinity becomes the largest finite tf32 0x7F7FE000 with its sign and a NaN's payload drops by
    one (H100, h100-alu battery, 169 of 169 NaN inputs: 0x7FC00000 -> 0x7FBFE000);
    ``.relu`` turns negative results into +0."""
    x = bits.astype(np.uint64)
    sign, mag = x & 0x80000000, x & 0x7FFFFFFF
    nan = mag > 0x7F800000
    inf = mag == 0x7F800000
    if rnd == "rna":
        mag = mag + 0x1000
    elif rnd == "rn":
        mag = mag + 0xFFF + ((mag >> 13) & 1)
    mag = np.where(inf, mag & 0x7FFFFFFF, mag) & 0x7FFFE000
    mag = np.minimum(mag, 0x7F800000)
    mag = np.where(nan, x & 0x7FFFE000, mag)
    if satfinite:
        mag = np.where(mag >= 0x7F800000, mag - 0x2000, mag)
    out = sign | mag
    if relu:
        out = np.where((sign != 0) & ~nan, 0, out)
    return out.astype(np.uint32)


def _cvt_tf32(ins, q, k, rnd: str | None):
    """``cvt{.rna,.rn,.rz}{.relu}{.satfinite}.tf32.f32 d, a`` (the tf32 result in a .b32 register)."""
    relu, satfinite = q.flag("relu"), q.flag("satfinite")
    if q.take("tf32") is None or q.take("f32") is None:
        raise Unsupported("cvt to .tf32 expects .tf32.f32")
    if rnd not in ("rna", "rn", "rz"):
        raise Unsupported(f"cvt.tf32.f32 expects .rna, .rn or .rz, but got {rnd and '.' + rnd}")
    if rnd == "rna" and relu:
        raise Unsupported("cvt.rna.tf32.f32 takes no .relu")
    ops = _ops(k, ins, 2)
    ra, w = k.reader(ops[1], TYPES["b32"]), k.writer(ops[0], TYPES["b32"])
    return lambda m, s: w(m, s, _round_tf32(np.asarray(ra(m, s), dtype=np.uint32), rnd, satfinite, relu))


@opcode("cvt")
def compile_cvt(ins, q, k):
    rnd = q.take("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")
    if "tf32" in ins.parts:
        return _cvt_tf32(ins, q, k, rnd)
    sat = q.flag("sat")
    satfinite = q.flag("satfinite")
    relu = q.flag("relu")
    ftz = q.flag("ftz")
    dname, sname = _type_words(q)
    if dname in NARROW or sname in NARROW:
        return _cvt_narrow(ins, k, dname, sname, rnd, satfinite, relu)
    dt, st = TYPES[dname], TYPES[sname]
    if dt.name in ("f16x2", "bf16x2"):
        return _cvt_pack(ins, k, dt, st, rnd, satfinite, relu)
    if relu or satfinite:
        if dt.kind not in ("f", "bf") or dt.bits != 16 or st.name != "f32":
            raise Unsupported(".relu/.satfinite expect cvt to .f16/.bf16 from .f32")
    if sat and dt.kind not in "us" and dt.kind not in ("f", "bf"):
        raise Unsupported(".sat expects an integer or float destination")
    if dt.kind in ("f", "bf") and (st.kind in ("f", "bf") or rnd in ("rz", "rm", "rp")):
        return _cvt_float(ins, k, dt, st, rnd, sat, satfinite, relu, ftz)
    if ftz and st.name != "f32":
        raise Unsupported(".ftz expects a .f32 source or destination")
    ops = _ops(k, ins, 2)
    ra, w = k.reader(ops[1], st), k.writer(ops[0], dt)
    if dt.kind in "bus" and st.kind in "bus":          # integer <-> integer
        if rnd:
            raise Unsupported(f"rounding .{rnd} on an integer conversion")
        if sat:
            return lambda m, s: w(m, s, _int_saturate(np.asarray(ra(m, s)), st, dt))
        return lambda m, s: w(m, s, _int_convert(np.asarray(ra(m, s)), st, dt))
    if dt.kind in "us":                                 # float -> integer: clamps, NaN -> 0
        if rnd not in _INT_ROUND:
            raise Unsupported("float-to-integer cvt expects .rni, .rzi, .rmi or .rpi")
        rounder = _ROUNDERS[rnd]
        nan_value = _F64_NAN_TO_INT(dt) if st.name == "f64" else 0

        def f2i(m, s):
            x = np.asarray(ra(m, s))
            x = rounder((flush(x, np.float32) if ftz else x).astype(np.float64))
            w(m, s, float_to_int(x, dt, nan_value))
        return f2i
    if dt.kind in ("f", "bf"):                          # -> float
        widening = st.kind in ("f", "bf") and dt.bits > st.bits
        if widening and rnd is not None:
            raise Unsupported("a widening float cvt takes no rounding qualifier")
        if not widening and rnd != "rn":
            raise Unsupported(f"cvt to .{dt.name} expects .rn (only round-to-nearest-even is modelled)")
        # numpy's casts round to nearest even (int64 -> float32 is one correctly rounded step)
        return lambda m, s: w(m, s, np.asarray(ra(m, s)).astype(dt.dtype))
    raise Unsupported(f"cvt.{dt.name}.{st.name}")


def _F64_NAN_TO_INT(dt) -> int:
    """The integer the H100 writes for cvt.rXi.{s,u}{32,64}.f64 of a NaN: the sign bit alone
    (0x80000000 / 0x8000000000000000), unsigned destinations included (docs/sim.md "Hardware
    behaviours adopted"); 8- and 16-bit destinations were not measured and keep the PTX ISA's 0."""
    return 1 << (dt.bits - 1) if dt.bits in (32, 64) else 0


def float_to_int(x, dt, nan_value: int = 0):
    """Integral float64 values ``x`` -> integer type ``dt``: clamped to its range (infinities
    included: PTX ISA §9.7.9.21, saturation is implied), NaN -> ``nan_value`` (its bits)."""
    lo, hi = _int_range(dt)
    x = np.asarray(x, np.float64)
    nan = np.isnan(x)
    nan_bits = np.array(nan_value, np.uint64).astype(dt.udtype).view(dt.dtype)
    if dt.bits < 64:
        return np.where(nan, nan_bits, np.clip(np.where(nan, 0.0, x), lo, hi).astype(dt.dtype)).astype(dt.dtype)
    x = np.clip(np.where(nan, 0.0, x), -2.0 ** 64, 2.0 ** 64)           # finite, beyond every range
    flat = [min(max(int(v), lo), hi) for v in x.reshape(-1)]            # exact ends: 2^63 - 1 is no double
    out = np.array(flat, dtype=np.int64 if dt.kind == "s" else np.uint64).reshape(x.shape)
    return np.where(nan, nan_bits, out.astype(dt.dtype)).astype(dt.dtype)


def _int_range(t):
    if t.kind == "s":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def _int_saturate(x, st, dt):
    """cvt.sat between integer types: clamp to the destination's range."""
    lo, hi = _int_range(dt)
    if st.kind == "s":
        x = np.clip(x.astype(np.int64), max(lo, -(1 << 63)), min(hi, (1 << 63) - 1))
    else:
        x = np.minimum(x.astype(np.uint64), np.uint64(hi))
    return x.astype(dt.udtype).view(dt.dtype)


def _int_convert(x, st, dt):
    """Integer conversion: extend by the source's signedness, then keep the destination's bits."""
    wide = x.astype(np.int64) if st.kind == "s" else x.astype(np.uint64)
    return wide.astype(dt.udtype).view(dt.dtype)


def _clamp_float(x, dt, satfinite: bool, relu: bool):
    """.satfinite (|x| to the largest finite, NaN kept) and .relu (negative and -0 -> +0 as the
    H100 writes them, NaN -> canonical NaN) on float64 values before rounding to ``dt``."""
    if satfinite:
        big = float(ml_dtypes.finfo(dt).max)
        x = np.where(np.isnan(x), x, np.clip(x, -big, big))
    if relu:
        x = np.where(np.isnan(x), np.nan, np.where(x <= 0, 0.0, x))
    return x


def _nan_canonical(r, dt):
    """NaNs of an f32/f16/bf16 result -> the canonical NaN the H100 writes (ops_float.canonicalize)."""
    return canonicalize(r, dt)


def _canonical_writer(w, dt, st):
    """``w`` with the result's NaNs made canonical, for conversions from f32/f16/bf16 and integers
    (H100: cvt.rn.f16.f32, cvt.f32.f16, cvt.rni.f32.f32 of a NaN write 0x7FFF / 0x7FFFFFFF).  From
    f64 the payload is narrowed instead (handled with the f64 conversions); bf16 -> f32 moves the
    bits into the upper half and keeps every NaN as it is, signalling ones included (H100: 128 of
    128 NaN inputs, 0xFF8C -> 0xFF8C0000)."""
    if st.name == "f64" or (st.name == "bf16" and np.dtype(dt) == np.float32):
        return w
    return lambda m, s, v: w(m, s, canonicalize(v, dt))


def _cvt_pack(ins, k, dt, st, rnd, satfinite=False, relu=False):
    if st.name != "f32" or rnd not in ("rn", "rz", "rm", "rp"):
        raise Unsupported(f"cvt.{dt.name} expects a rounding mode and a .f32 source")
    d, a, b = _ops(k, ins, 3)
    half = np.float16 if dt.name == "f16x2" else ml_dtypes.bfloat16
    ra, rb, w = k.reader(a, st), k.reader(b, st), k.writer(d, B32)

    def one(x):
        x = _clamp_float(np.asarray(x).astype(np.float64), half, satfinite, relu)
        r = round_to(x, 0.0, half, rnd)
        return _nan_canonical(r, half).view(np.uint16).astype(np.uint32)

    def run(m, s):      # d = {cvt(a) in the upper half, cvt(b) in the lower half}
        w(m, s, (one(ra(m, s)) << np.uint32(16)) | one(rb(m, s)))
    return run


def _cvt_float(ins, k, dt, st, rnd, sat, satfinite, relu, ftz):
    """Float destination from a float (or, with a directed mode, integer) source: exact in
    float64 (64-bit integers through Python ints), then one rounding with ``rnd``."""
    widening = st.kind in ("f", "bf") and dt.bits > st.bits
    same = st.name == dt.name
    if same and rnd not in _INT_ROUND and not ((sat or ftz) and rnd is None):
        raise Unsupported(f"cvt.{dt.name}.{st.name} expects .rni, .rzi, .rmi or .rpi")
    if widening and rnd is not None:
        raise Unsupported("a widening float cvt takes no rounding qualifier")
    if not widening and rnd is None and not same:
        raise Unsupported(f"cvt to .{dt.name} expects a rounding mode")
    ddt = dt.dtype
    ops = _ops(k, ins, 2)
    ra, w = k.reader(ops[1], st), _canonical_writer(k.writer(ops[0], dt), ddt, st)
    big_int = st.kind in "us" and st.bits == 64

    def run(m, s):
        x = np.asarray(ra(m, s))
        if ftz and st.name == "f32":
            x = flush(x, np.float32)
        if big_int:
            flat = np.atleast_1d(x)
            xf = flat.astype(np.float64)
            sgn = np.array([(int(v) > int(f)) - (int(v) < int(f)) for v, f in zip(flat, xf, strict=True)], dtype=np.float64)
            r = round_to(xf, sgn, ddt, rnd).reshape(np.shape(x))
        else:
            xf = x.astype(np.float64) if x.dtype != ml_dtypes.bfloat16 else x.astype(np.float32).astype(np.float64)
            if rnd in _INT_ROUND:
                r = _ROUNDERS[rnd](xf).astype(ddt)
            elif widening or same:
                r = np.asarray(x).astype(ddt)
            else:
                r = round_to(_clamp_float(xf, ddt, satfinite, relu), 0.0, ddt, rnd)
                if relu:
                    r = _nan_canonical(r, ddt)
        if st.name == "f64" and not same:
            r = _narrowed_nan_f64(x, r, ddt)
        if ddt == np.float64 and widening:
            r = _widened_nan_f64(x, r, ftz and st.name == "f32")
        if sat:          # [0, 1], NaN and -0 -> +0 (the H100's cvt.sat.f64.f64 writes +0 for -0)
            rf = np.asarray(r).astype(np.float64)
            r = (np.where(np.isnan(rf), 0.0, np.clip(rf, 0.0, 1.0)) + 0.0).astype(ddt)
        if ftz and dt.name == "f32":
            r = flush(r, np.float32)
        w(m, s, r)
    return run


_F64_MANT = 52
_MANT_BITS = {np.dtype(np.float32): 23, np.dtype(np.float16): 10, np.dtype(ml_dtypes.bfloat16): 7}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _narrowed_nan_f64(x, r, ddt):
    """A NaN converted from f64 to a narrower float, as the H100 writes it: the sign, the top
    mantissa bits of the payload that fit, the quiet bit set.

    f64  s | e(11) | q p(51)   ->   f16  s | 11111 | 1 p(9)  (the 9 payload bits after q)
    """
    x = np.asarray(x, np.float64)
    nan = np.isnan(x)
    if not nan.any():
        return r
    ddt = np.dtype(ddt)
    mant = _MANT_BITS[ddt]
    width = 8 * ddt.itemsize
    bits = x.view(np.uint64)
    sign = (bits >> np.uint64(63)) << np.uint64(width - 1)
    exp_ones = np.uint64(((1 << (width - 1 - mant)) - 1) << mant)
    payload = (bits >> np.uint64(_F64_MANT - mant)) & np.uint64((1 << mant) - 1)
    quiet = np.uint64(1 << (mant - 1))
    nan_bits = (sign | exp_ones | payload | quiet).astype(_UINT[ddt.itemsize]).view(ddt)
    return np.where(nan, nan_bits, r).astype(ddt)


def _widened_nan_f64(x, r, ftz_f32: bool):
    """A NaN widened to f64, as the H100 writes it: quieted (bit 51), sign and payload kept;
    with ``cvt.ftz.f64.f32`` every NaN becomes the canonical f32 NaN 0x7FFFFFFF widened,
    0x7FFFFFFFE0000000."""
    r = np.asarray(r, np.float64)
    nan = np.isnan(r)
    if not nan.any():
        return r
    bits = r.view(np.uint64) | np.uint64(1 << 51)
    if ftz_f32:
        bits = np.full_like(bits, 0x7FFFFFFFE0000000)
    return np.where(nan, bits, r.view(np.uint64)).view(np.float64)


def _to_narrow(x, name: str, rnd: str | None, satfinite: bool, relu: bool):
    """float64 values -> codes of a narrow format (uint8)."""
    codec, bits, nan_code = NARROW[name]
    if name == "ue8m0x2":
        return _to_ue8m0(x, rnd, satfinite)
    if rnd != "rn":
        raise Unsupported(f"cvt to .{name} expects .rn")
    nan = np.isnan(x)
    if relu:
        x = np.where(x <= 0, 0.0, x)
    big = float(ml_dtypes.finfo(codec).max)
    if satfinite or nan_code is None:          # formats without infinity saturate (the ISA requires .satfinite)
        x = np.clip(np.where(nan, 0.0, x), -big, big)
    codes = x.astype(np.float32).astype(codec).view(np.uint8)
    if nan_code is not None:
        codes = np.where(nan, nan_code, codes)
    else:                                      # no NaN encoding: NaN gives +MAX_NORM (decision)
        codes = np.where(nan, np.array(big, np.float32).astype(codec).view(np.uint8), codes)
    return codes.astype(np.uint8) & np.uint8((1 << bits) - 1)


def _to_ue8m0(x, rnd, satfinite):
    """ue8m0 (2^(e-127), e = 0..254, 255 = NaN): the exponent of |x| rounded with .rz/.rp."""
    if rnd not in ("rz", "rp"):
        raise Unsupported("cvt to .ue8m0x2 expects .rz or .rp")
    xf = np.abs(np.asarray(x, np.float64)).astype(np.float32)
    bits = xf.view(np.uint32)
    e = ((bits >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64)
    mant = bits & np.uint32(0x7FFFFF)
    nan = np.isnan(xf)
    if rnd == "rp":
        up = np.where(e == 0, mant > np.uint32(1 << 22), (mant != 0) & (e < 255))   # subnormal: above 2^-127?
        e = np.where(up, e + 1, e)
    e = np.where(nan, 255, np.where(e >= 255, 254 if satfinite else 255, e))
    return e.astype(np.uint8)


def _cvt_narrow(ins, k, dname, sname, rnd, satfinite, relu):
    """Packed narrow floats (PTX ISA §9.7.9.21 cvt: f8x2/f6x2/f4x2/ue8m0x2 forms): a pair from two
    .f32 sources (the first into the upper element) or from one packed .f16x2/.bf16x2; and back to
    .f16x2/.bf16x2 (the upper element into the upper half), exactly."""
    if dname in NARROW:
        if sname == "f32":
            d, a, b = _ops(k, ins, 3)
            ra, rb = k.reader(a, TYPES["f32"]), k.reader(b, TYPES["f32"])

            def pair(m, s):
                return np.asarray(ra(m, s)).astype(np.float64), np.asarray(rb(m, s)).astype(np.float64)
        elif sname in ("f16x2", "bf16x2"):
            d, a = _ops(k, ins, 2)
            half = np.float16 if sname == "f16x2" else ml_dtypes.bfloat16
            rr = k.reader(a, B32)

            def pair(m, s):
                raw = np.asarray(rr(m, s)).astype(np.uint32)
                hi = (raw >> np.uint32(16)).astype(np.uint16).view(half).astype(np.float64)
                lo = (raw & np.uint32(0xFFFF)).astype(np.uint16).view(half).astype(np.float64)
                return hi, lo
        else:
            raise Unsupported(f"cvt.{dname}.{sname}")
        _, bits, _ = NARROW[dname]
        w = k.writer(d, B16 if bits == 8 else TYPES["b8"])
        if dname == "ue8m0x2" and relu:
            raise Unsupported(".relu is not allowed with .ue8m0x2")
        if dname != "ue8m0x2" and not satfinite:
            raise Unsupported(f"cvt to .{dname} expects .satfinite")

        def run(m, s):
            hi, lo = pair(m, s)
            h = _to_narrow(hi, dname, rnd, satfinite, relu).astype(np.uint16)
            lw = _to_narrow(lo, dname, rnd, satfinite, relu).astype(np.uint16)
            w(m, s, (h << np.uint16(bits)) | lw)
        return run
    if dname not in ("f16x2", "bf16x2"):
        raise Unsupported(f"cvt.{dname}.{sname}")
    codec, bits, nan_code = NARROW[sname]
    if rnd != "rn" or (sname == "ue8m0x2") != (dname == "bf16x2"):
        raise Unsupported(f"cvt.{dname}.{sname} expects .rn (.ue8m0x2 converts to .bf16x2 only, the others to .f16x2)")
    d, a = _ops(k, ins, 2)
    half = np.float16 if dname == "f16x2" else ml_dtypes.bfloat16
    ra, w = k.reader(a, B16 if bits == 8 else TYPES["b8"]), k.writer(d, B32)
    mask = (1 << bits) - 1

    def decode(code):
        code = code.astype(np.uint8)
        if sname == "ue8m0x2":
            v = np.where(code == 255, np.nan, np.exp2(code.astype(np.float64) - 127))
        else:
            v = code.view(codec).astype(np.float64)
        r = v.astype(half)
        if relu:
            r = np.where(np.isnan(v), np.nan, np.where(v <= 0, 0.0, v)).astype(half)
        return _nan_canonical(r, half).view(np.uint16).astype(np.uint32)   # NaN codes: canonical (H100)

    def run(m, s):
        raw = np.asarray(ra(m, s)).astype(np.uint32)
        hi, lo = (raw >> np.uint32(bits)) & np.uint32(mask), raw & np.uint32(mask)
        w(m, s, (decode(hi) << np.uint32(16)) | decode(lo))
    return run
