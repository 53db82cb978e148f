"""Element formats: raw bit codes <-> values, bit-exact.

The types that ``tcgen05.mma`` consumes and produces (PTX ISA §9.7.16.10, the list of kinds; the
type codes of Tables 42-44), plus ``s4``/``u4`` for warp-level ``mma.sp`` (§9.7.14.6.1).

Where the formats are defined:

* PTX ISA §5.2.1 "Fundamental Types": ``f32``, ``f16`` (IEEE 754 binary32/binary16), ``s8``,
  ``u8``, ``s32`` (and the 4-bit integers of the integer ``mma`` shapes).
* PTX ISA §5.2.3 "Alternate Floating-Point Data Formats": ``bf16``, ``tf32``, ``e4m3``, ``e5m2``,
  ``e2m3``, ``e3m2``, ``e2m1``, ``ue8m0``, ``ue4m3``.
* OCP Microscaling Formats (MX) Specification v1.0: §5.3 element types (FP8 = OCP OFP8 v1.0 E4M3 /
  E5M2, FP6 E2M3 / E3M2, FP4 E2M1), §5.4.1 the E8M0 scale.

Code layouts (bit 0 = LSB of the code; ``S`` sign, ``E`` exponent, ``M`` mantissa, ``x`` ignored)::

    f32    S EEEEEEEE MMMMMMMMMMMMMMMMMMMMMMM             bias 127, Inf, NaN
    tf32   S EEEEEEEE MMMMMMMMMM xxxxxxxxxxxxx            32-bit container, bits 12-0 ignored
    f16    S EEEEE MMMMMMMMMM                             bias 15,  Inf, NaN
    bf16   S EEEEEEEE MMMMMMM                             bias 127, Inf, NaN
    e4m3   S EEEE MMM        bias 7,  no Inf, NaN = S.1111.111 only, max 448 (OCP E4M3 "FN")
    e5m2   S EEEEE MM        bias 15, Inf = S.11111.00, NaN = S.11111.{01,10,11}
    e2m3   - - S EE MMM      bias 1,  no Inf/NaN, in the low 6 bits of a byte
    e3m2   - - S EEE MM      bias 3,  no Inf/NaN, in the low 6 bits of a byte
    e2m1   - - - - S EE M    bias 1,  no Inf/NaN, in the low 4 bits of a byte
    ue8m0  EEEEEEEE          value 2^(code-127); 0xFF is NaN; no zero, no sign
    ue4m3  x EEEE MMM        e4m3 with the sign bit ignored on decode (see below)
    s8/u8/s32, s4/u4         two's complement / unsigned; s4/u4 in the low 4 bits of a byte

**ue4m3** (the ``.kind::mxf4nvf4`` scale, Table 55): an unsigned E4M3 in an 8-bit container. Decode
ignores bit 7: the value is that of ``e4m3`` with the sign bit cleared (a published hardware fact
used by the numerics model, supplied with the issue-2 brief). So 0x7F and 0xFF are NaN, max 448.
``Format.bits`` is 7 for it (like tf32's 19 of 32); encode writes bit 7 as 0.

**tf32** decode ignores the low 13 container bits (shared/spec/NOTES.md item 10: hardware
truncates them); encode rounds to 10 mantissa bits and writes those 13 bits as 0.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve

FUNDAMENTAL = ("5.2.1", "Fundamental Types")
ALTERNATE = ("5.2.3", "Alternate Floating-Point Data Formats")
ROUNDINGS = ("rne", "rz")


@dataclass(frozen=True)
class Format:
    """One element format (PTX ISA §5.2.1 / §5.2.3); the members of :data:`FORMATS`.

    ``bits`` counts significant bits (tf32 19, ue4m3 7); ``container_bits`` is the width of the code
    before packing (8 for the 4/6-bit types). ``exponent_bits``/``mantissa_bits``/``bias`` are 0 for
    integers. ``code_dtype`` is the unsigned numpy dtype holding codes.
    """

    name: str
    bits: int
    container_bits: int
    is_float: bool
    signed: bool
    exponent_bits: int
    mantissa_bits: int
    bias: int
    has_inf: bool
    has_nan: bool
    code_dtype: np.dtype


def _float(name, bits, container, e, m, bias, inf, nan, signed=True):
    dtype = np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32}[container])
    return Format(name, bits, container, True, signed, e, m, bias, inf, nan, dtype)


def _int(name, bits, signed):
    dtype = np.dtype({4: np.uint8, 8: np.uint8, 32: np.uint32}[bits])
    return Format(name, bits, dtype.itemsize * 8, False, signed, 0, 0, 0, False, False, dtype)


FORMATS: dict[str, Format] = {f.name: f for f in (
    _float("f32", 32, 32, 8, 23, 127, True, True),
    _float("tf32", 19, 32, 8, 10, 127, True, True),
    _float("f16", 16, 16, 5, 10, 15, True, True),
    _float("bf16", 16, 16, 8, 7, 127, True, True),
    _float("e4m3", 8, 8, 4, 3, 7, False, True),
    _float("e5m2", 8, 8, 5, 2, 15, True, True),
    _float("e2m3", 6, 8, 2, 3, 1, False, False),
    _float("e3m2", 6, 8, 3, 2, 3, False, False),
    _float("e2m1", 4, 8, 2, 1, 1, False, False),
    _float("ue8m0", 8, 8, 8, 0, 127, False, True, signed=False),
    _float("ue4m3", 7, 8, 4, 3, 7, False, True, signed=False),
    _int("s8", 8, True),
    _int("u8", 8, False),
    _int("s32", 32, True),
    _int("s4", 4, True),
    _int("u4", 4, False),
)}

# Container bits that decode ignores (module docstring: tf32 low 13 bits, ue4m3 sign bit).
_IGNORED_BITS = {"tf32": 0x1FFF, "ue4m3": 0x80}

# Where each format is defined, for error messages.
_DEFINED_IN = {name: FUNDAMENTAL for name in ("f32", "f16", "s8", "u8", "s32", "s4", "u4")}

# NaN that encode writes (sign 0, quiet): IEEE-like formats set the top mantissa bit; OCP E4M3 has
# the single NaN magnitude S.1111.111 (OFP8 v1.0); E8M0 NaN is 0xFF (OCP MX v1.0 §5.4.1).
_CANONICAL_NAN = {"f32": 0x7FC00000, "tf32": 0x7FC00000, "f16": 0x7E00, "bf16": 0x7FC0,
                  "e4m3": 0x7F, "e5m2": 0x7E, "ue8m0": 0xFF, "ue4m3": 0x7F}

# numpy / ml_dtypes type whose storage equals the code (ue4m3 and tf32 go through e4m3 / f32).
_STORAGE_TYPE = {
    "f32": np.float32, "tf32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
    "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn, "ue8m0": ml_dtypes.float8_e8m0fnu,
    "ue4m3": ml_dtypes.float8_e4m3fn,
}


def _section(f: Format) -> tuple[str, str]:
    return _DEFINED_IN.get(f.name, ALTERNATE)


def _fail(f: Format, detail: str) -> SpecError:
    return SpecError(*_section(f), detail)


def get_format(name: str | Format) -> Format:
    """The :class:`Format` named by a spec type word (§5.2: ``"e4m3"``, ``"tf32"``, ...)."""
    if isinstance(name, Format):
        return name
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        raise SpecError("5.2", "Types", expects_but_got(
            "element format", "one of " + ", ".join(FORMATS), name)) from None


def _first(arr: np.ndarray, bad: np.ndarray):
    """The first offending element, as a plain Python scalar (for error messages)."""
    first = arr[bad].flat[0]
    return first.item() if isinstance(first, np.generic) else first


def _check_rounding(rounding: str) -> None:
    if rounding not in ROUNDINGS:
        raise SpecError("5.2", "rounding", expects_but_got("rounding", "'rne' or 'rz'", rounding))


def _is_integer_array(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "iu" or (arr.dtype.kind == "O" and all(
        isinstance(v, (int, np.integer)) for v in arr.flat))


def _wide(arr: np.ndarray) -> np.ndarray:
    """Integers compared without wrap-around (Python ints where int64 could overflow)."""
    return arr.astype(object) if arr.dtype.kind == "O" or arr.dtype == np.uint64 else arr.astype(np.int64)


def _codes(f: Format, codes) -> np.ndarray:
    """Validated codes as a ``code_dtype`` array of the input's shape.

    A code may only set the format's ``bits`` low bits; tf32 and ue4m3, whose ignored bits sit
    inside the code, may set any bit of their container.
    """
    arr = _valid_codes(f, codes)
    return arr.astype(f.code_dtype)


def _in_range(arr: np.ndarray, allowed: int) -> bool:
    """Whether every element of a fixed-width integer array lies in [0, allowed] (the bounds its
    dtype already guarantees are not checked)."""
    if arr.size == 0:
        return True
    unsigned = arr.dtype.kind == "u"
    return (unsigned or arr.min() >= 0) and ((unsigned and arr.dtype.itemsize * 8 <= allowed.bit_length())
                                             or arr.max() <= allowed)


def _valid_codes(f: Format, codes) -> np.ndarray:
    """Validated codes (see :func:`_codes`): fixed-width integers in range as given (any integer
    dtype), others as a ``code_dtype`` array."""
    arr = np.asarray(codes)
    if not _is_integer_array(arr):
        raise _fail(f, expects_but_got(f"{f.name} code", "integers", arr.dtype.name))
    allowed = (1 << (f.container_bits if f.name in _IGNORED_BITS else f.bits)) - 1
    if arr.dtype.kind in "iu" and _in_range(arr, allowed):
        return arr                                 # fixed-width integers in range: no widening pass
    wide = _wide(arr)
    bad = (wide < 0) | (wide > allowed)
    if np.any(bad):
        raise _fail(f, expects_but_got(f"{f.name} code", f"an integer in [0, {allowed:#x}]",
                                       _first(arr, np.asarray(bad, dtype=bool))))
    return wide.astype(f.code_dtype)


def tf32_rounded(codes) -> np.ndarray:
    """tf32 container codes rounded to nearest-even at bit 13 (Inf/NaN kept): the ``round-nearest``
    reading of spec question ``Q-TF32-TRUNC`` (the low 13 bits are then cleared by :func:`decode`)."""
    c = np.asarray(codes).astype(np.uint64)
    special = (c >> np.uint64(23)) & np.uint64(0xFF) == np.uint64(0xFF)
    up = c + np.uint64(0x0FFF) + ((c >> np.uint64(13)) & np.uint64(1))
    return np.where(special, c, up & np.uint64(0xFFFFFFFF)).astype(np.asarray(codes).dtype)


def decode(fmt: str | Format, codes, reading: str | None = None) -> np.ndarray:
    """Values of raw codes: float64 for floats (NaN codes give NaN), int64 for integers.

    Follows the code layouts in the module docstring (§5.2.1, §5.2.3; OCP MX v1.0 §5.3, §5.4.1).
    Codes setting bits outside the format raise :class:`SpecError`; tf32 ignores its low 13 bits
    (``reading`` of spec question ``Q-TF32-TRUNC``: ``truncate``, the pick; ``round-nearest``
    rounds first) and ue4m3 its bit 7.
    """
    f = get_format(fmt)
    c = _valid_codes(f, codes)
    if not f.is_float:
        v = c.astype(np.int64)
        if f.signed:  # two's complement: codes >= 2^(bits-1) are negative
            v = np.where(v >= 1 << (f.bits - 1), v - (1 << f.bits), v)
        return np.asarray(v)
    if f.container_bits <= 16:           # the same cast, once per code: a table lookup
        return np.take(_value_table(f.name), c.astype(np.intp, copy=False))
    c = c.astype(f.code_dtype)
    if f.name == "tf32" and resolve("Q-TF32-TRUNC", reading) == "round-nearest":
        c = tf32_rounded(c)
    if f.name in _IGNORED_BITS:
        c = np.asarray(c & ~np.array(_IGNORED_BITS[f.name], dtype=f.code_dtype))
    with np.errstate(invalid="ignore"):  # NaN codes cast to NaN
        return c.view(_STORAGE_TYPE[f.name]).astype(np.float64)


@functools.lru_cache(maxsize=None)
def _value_table(name: str) -> np.ndarray:
    """float64 value of every code of a format of at most 16 bits, its ignored bits (ue4m3's bit 7)
    cleared first (:func:`decode`'s cast, once per code)."""
    f = FORMATS[name]
    codes = np.arange(1 << f.container_bits).astype(f.code_dtype) & ~np.array(_IGNORED_BITS.get(name, 0), dtype=f.code_dtype)
    with np.errstate(invalid="ignore"):
        table = codes.view(_STORAGE_TYPE[f.name]).astype(np.float64)
    table.setflags(write=False)
    return table


def is_nan_code(fmt: str | Format, codes) -> np.ndarray:
    """True where a code is a NaN of its format (always False for formats without NaN)."""
    return np.isnan(np.asarray(decode(fmt, codes), dtype=np.float64))


def max_finite(fmt: str | Format) -> float:
    """The largest finite value (integers: the largest integer).

    IEEE-like formats reserve the top exponent for Inf/NaN; OCP E4M3 (and ue4m3) reserve only the
    all-ones mantissa at the top exponent; e2m3/e3m2/e2m1 reserve nothing (OCP MX v1.0 §5.3).
    """
    f = get_format(fmt)
    if not f.is_float:
        return float((1 << (f.bits - 1)) - 1 if f.signed else (1 << f.bits) - 1)
    top = (1 << f.exponent_bits) - 1
    if f.mantissa_bits == 0:  # ue8m0: 0xFF is NaN, 0xFE is 2^127
        return 2.0 ** (top - 1 - f.bias)
    if f.has_inf:
        return 2.0 ** (top - 1 - f.bias) * (2 - 2.0 ** -f.mantissa_bits)
    if f.has_nan:
        return 2.0 ** (top - f.bias) * (2 - 2.0 ** (1 - f.mantissa_bits))
    return 2.0 ** (top - f.bias) * (2 - 2.0 ** -f.mantissa_bits)


def min_subnormal(fmt: str | Format) -> float:
    """The smallest positive value: 2^(1-bias-M); for ue8m0 (no subnormals, no zero) 2^-127."""
    f = get_format(fmt)
    if not f.is_float:
        raise _fail(f, expects_but_got("min_subnormal", "a floating-point format", f.name))
    if f.mantissa_bits == 0:
        return 2.0 ** -f.bias
    return 2.0 ** (1 - f.bias - f.mantissa_bits)


def _round_to_precision(x: np.ndarray, mantissa_bits: int, emin: int, rounding: str) -> np.ndarray:
    """Round finite float64 ``x`` to ``mantissa_bits`` fraction bits, exponent >= ``emin``.

    The exponent range is unbounded above (overflow is the caller's policy). One rounding from
    float64: ``rne`` ties to even (np.rint), ``rz`` toward zero (np.trunc); the sign (and -0) is kept.
    """
    mag = np.abs(x)
    _, e = np.frexp(mag)                    # mag = f * 2^e, f in [0.5, 1): floor(log2 mag) = e - 1
    quantum = np.ldexp(1.0, np.maximum(e - 1, emin) - mantissa_bits)
    scaled = mag / quantum                  # exact: division by a power of two
    n = np.rint(scaled) if rounding == "rne" else np.trunc(scaled)
    with np.errstate(over="ignore"):
        return np.copysign(n * quantum, x)  # exact, or inf past float64's range


def _exact_codes(f: Format, values: np.ndarray) -> np.ndarray:
    """Codes of values that are exactly representable (the cast below never rounds)."""
    storage = values.astype(_STORAGE_TYPE[f.name])
    return storage.view(np.dtype(f"u{storage.dtype.itemsize}")).astype(f.code_dtype)


def _as_float64(f: Format, values) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(f, expects_but_got(f"{f.name} encode", "real numbers", values)) from None


_EXACT_STORAGE = frozenset({"f32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"})   # storage type == format


def _encode_float(f: Format, x: np.ndarray, rounding: str) -> np.ndarray:
    if f.name in _EXACT_STORAGE:       # shortcut: every value representable (no rounding, no overflow, no NaN)
        with np.errstate(all="ignore"):
            storage = x.astype(_STORAGE_TYPE[f.name])
            if (storage.astype(np.float64) == x).all():
                return storage.view(np.dtype(f"u{storage.dtype.itemsize}")).astype(f.code_dtype)
    nan, inf = np.isnan(x), np.isinf(x)
    if np.any(nan) and not f.has_nan:
        raise _fail(f, expects_but_got(f"{f.name} encode", "a number (the format has no NaN)", float("nan")))
    finite = ~(nan | inf)
    r = np.where(finite, _round_to_precision(np.where(finite, x, 0.0), f.mantissa_bits, 1 - f.bias,
                                             rounding), x)
    top = max_finite(f)
    over = finite & (np.abs(r) > top)
    if f.has_inf:      # IEEE 754 §7.4: rne overflows to Inf, rz to the largest finite
        if rounding == "rz":
            r = np.where(over, np.copysign(top, x), r)
        else:
            r = np.where(over, np.copysign(np.inf, x), r)
    elif f.has_nan:    # OCP OFP8 E4M3, non-saturating: beyond max after rounding (and Inf) is NaN
        nan = nan | over | inf
    else:              # OCP MX v1.0 FP6/FP4 have no Inf/NaN: saturate to the largest finite
        r = np.where(over | inf, np.copysign(top, x), r)
    codes = _exact_codes(f, np.where(nan, 0.0, r))
    return np.where(nan, np.array(_CANONICAL_NAN.get(f.name, 0), dtype=f.code_dtype), codes)


def _encode_ue8m0(f: Format, x: np.ndarray) -> np.ndarray:
    nan = np.isnan(x)
    with np.errstate(invalid="ignore"):
        mant, e = np.frexp(np.where(nan, 1.0, x))
    ok = nan | ((mant == 0.5) & (e - 1 >= -f.bias) & (e - 1 <= f.bias))
    if not np.all(ok):
        raise _fail(f, expects_but_got("ue8m0 encode", "a power of two in [2^-127, 2^127] or NaN",
                                       _first(x, ~ok)))
    return np.where(nan, np.array(0xFF, dtype=np.uint8), (e - 1 + f.bias).astype(np.uint8))


def _encode_int(f: Format, values) -> np.ndarray:
    arr = np.asarray(values)
    lo = -(1 << (f.bits - 1)) if f.signed else 0
    hi = int(max_finite(f))
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if np.any(bad):
            raise _fail(f, expects_but_got(f"{f.name} encode", "integral values", _first(arr, bad)))
    elif not _is_integer_array(arr):
        raise _fail(f, expects_but_got(f"{f.name} encode", "integers", arr.dtype.name))
    wide = arr if arr.dtype.kind == "f" else _wide(arr)
    bad = np.asarray((wide < lo) | (wide > hi), dtype=bool)
    if np.any(bad):
        raise _fail(f, expects_but_got(f"{f.name} encode", f"integers in [{lo}, {hi}]", _first(arr, bad)))
    return (arr.astype(np.int64) & ((1 << f.bits) - 1)).astype(f.code_dtype)


def encode(fmt: str | Format, values, *, rounding: str = "rne") -> np.ndarray:
    """Codes (``code_dtype``) of values, rounded once from float64 with ``rounding`` (rne | rz).

    Overflow policy, applied after rounding with an unbounded exponent range:

    * Inf formats (f32, tf32, f16, bf16, e5m2): rne gives +-Inf, rz +-max finite (IEEE 754 §7.4);
      +-Inf stays +-Inf.
    * NaN but no Inf (e4m3, ue4m3): beyond max after rounding, and +-Inf, give NaN (OCP OFP8 v1.0
      E4M3 non-saturating conversion), in both modes. 464 = 448 + half an ulp rounds to 448 (even).
    * Neither (e2m3, e3m2, e2m1): saturate to +-max finite, Inf included (OCP MX v1.0 §5.3).
    * NaN input encodes as the canonical NaN (sign 0, quiet); formats without NaN raise SpecError.
    * ue8m0: only exact powers of two in [2^-127, 2^127] and NaN; anything else raises SpecError.
    * ue4m3: negative values raise SpecError (-0 encodes as +0); bit 7 is written 0.
    * Integers (s8, u8, s32, s4, u4): integral values in range, else SpecError; codes are two's
      complement in the unsigned container (s4/u4 in the low 4 bits of a byte).

    Underflow keeps the sign (-0). tf32: 10 mantissa bits, the low 13 container bits are 0.
    """
    f = get_format(fmt)
    _check_rounding(rounding)
    if not f.is_float:
        return _encode_int(f, values)
    x = _as_float64(f, values)
    if f.name == "ue8m0":
        return _encode_ue8m0(f, x)
    if f.name == "ue4m3":
        neg = x < 0
        if np.any(neg):
            raise _fail(f, expects_but_got("ue4m3 encode", "values >= 0 (unsigned format)", _first(x, neg)))
        return _encode_float(FORMATS["e4m3"], np.abs(x), rounding) & np.uint8(0x7F)
    return _encode_float(f, x, rounding)


def product_sums_where_nonfinite(aa: np.ndarray, bb: np.ndarray, c) -> np.ndarray:
    """M x N: the IEEE float64 sum ``(aa[m, :] * bb[:, n]).sum() + c[m, n]`` (numpy's products and
    sum, as ``(aa[:, None, :] * bb.T[None, :, :]).sum(axis=-1) + c`` computes it) wherever it can
    be NaN or Inf, and 0.0 elsewhere: for finding non-finite results only (``isnan``/``isinf``).

    It can be non-finite only where a factor or C is, or where the sum of |terms| reaches the top
    of float64 (a product or a partial sum overflowing); elsewhere every product and partial sum
    is finite. The bound comes from a matmul of the finite magnitudes (within a factor 1 + K 2^-52
    of the exact one), against 2^1000: far enough below 2^1024. Where a finite partial sum does
    overflow float64 the result is an IEEE sum in numpy's order for a 2-D array, which may differ
    from the 3-D expression's (NaN against Inf); values of the MMA formats never get there
    (|term| <= 2^(2*128 + 2*127), K <= 2^10)."""
    aa, bb = np.asarray(aa, dtype=np.float64), np.asarray(bb, dtype=np.float64)
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), (aa.shape[0], bb.shape[1]))
    fin_a, fin_b, fin_c = np.isfinite(aa), np.isfinite(bb), np.isfinite(c)
    with np.errstate(invalid="ignore", over="ignore"):
        bound = np.where(fin_a, np.abs(aa), 0.0) @ np.where(fin_b, np.abs(bb), 0.0) + np.where(fin_c, np.abs(c), 0.0)
        maybe = ~fin_a.all(axis=1)[:, None] | ~fin_b.all(axis=0)[None, :] | ~fin_c | ~(bound < 2.0 ** 1000)
        rows, cols = np.nonzero(maybe)
        out = np.zeros(c.shape)
        out[rows, cols] = (aa[rows] * bb.T[cols]).sum(axis=-1) + c[rows, cols]
    return out


def exact_codes(fmt: str | Format, values) -> np.ndarray | None:
    """Codes of ``values`` when every one is exactly a finite value of the format (what
    :func:`encode` gives them, in one pass instead of :func:`is_representable` then :func:`encode`),
    else None. Formats whose storage type is not the format take those two steps."""
    f = get_format(fmt)
    if f.name not in _EXACT_STORAGE:
        x = np.asarray(values)
        return encode(f, x) if is_representable(f, x).all() else None
    x = _as_float64(f, values)
    with np.errstate(all="ignore"):
        storage = x.astype(_STORAGE_TYPE[f.name])
        if not (np.isfinite(x).all() and (storage.astype(np.float64) == x).all()):
            return None
    return storage.view(np.dtype(f"u{storage.dtype.itemsize}")).astype(f.code_dtype)


def is_representable(fmt: str | Format, values) -> np.ndarray:
    """True where a value is finite and exactly a value of the format (encode would not round)."""
    f = get_format(fmt)
    if not f.is_float:
        arr = np.asarray(values)
        lo, hi = (-(1 << (f.bits - 1)) if f.signed else 0), max_finite(f)
        with np.errstate(invalid="ignore"):
            if arr.dtype.kind == "f":
                return np.isfinite(arr) & (arr == np.round(arr)) & (arr >= lo) & (arr <= hi)
            if not _is_integer_array(arr):
                return np.zeros(arr.shape, dtype=bool)
            wide = _wide(arr)
            return np.asarray((wide >= lo) & (wide <= hi), dtype=bool)
    x = _as_float64(f, values)
    if f.name in _EXACT_STORAGE:       # the storage type is the format: exact iff the cast round-trips
        with np.errstate(all="ignore"):
            return np.isfinite(x) & (x.astype(_STORAGE_TYPE[f.name]).astype(np.float64) == x)
    finite = np.isfinite(x)
    safe = np.where(finite, x, 0.0)
    if f.mantissa_bits == 0:  # ue8m0
        mant, e = np.frexp(safe)
        return finite & (mant == 0.5) & (np.abs(e - 1) <= f.bias)
    exact = _round_to_precision(safe, f.mantissa_bits, 1 - f.bias, "rz") == safe
    ok = finite & exact & (np.abs(safe) <= max_finite(f))
    return ok & (safe >= 0) if not f.signed else ok


def magnitude_sum_bound(abs_a: np.ndarray, abs_b: np.ndarray, abs_c_max: float) -> float:
    """An upper bound of every element of S = |A| @ |B| + |C|, in a few passes over A and B (no
    M x K x N work): sum over k of max_m |A[m, k]| * max_n |B[k, n]|, plus max |C|.

    Computed in float64 it is still >= every S as the numerics models' exactness tests use it: the
    terms are multiples of 2^g, so the sum is exact while below 2^(g + 53), and once a partial sum
    reaches a power of two at or above that, rounding (monotone) keeps it there."""
    if abs_a.size == 0 or abs_b.size == 0:
        return abs_c_max
    return float(abs_a.max(axis=0) @ abs_b.max(axis=1)) + abs_c_max


def multiples_of_pow2(x, g: int) -> bool:
    """Whether every element of the finite float64 array ``x`` is an integer multiple of 2^g (zeros
    are), i.e. its last set bit is at 2^g or above: x * 2^-g is whole. The scaling is exact unless
    it underflows or overflows. Underflow (g > 0 only): only a nonzero element below 2^g, no
    multiple, which the count of nonzeros catches. Overflow (Inf passes the whole-number test): only |x| >=
    2^(1024 + g) with g < 0, whose last set bit is at least 2^(972 + g) > 2^g: a multiple."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        y = np.ldexp(x, max(-2200, min(2200, -int(g)))) if abs(int(g)) > 1000 else np.multiply(x, 2.0 ** -int(g))
    if not (np.floor(y) == y).all():
        return False
    return g <= 0 or np.count_nonzero(y) == np.count_nonzero(x)     # g <= 0: the scaling cannot underflow


def lowest_bit_by_or(x: np.ndarray, none: int, top: float | None = None) -> int | None:
    """The smallest last-set-bit exponent over the nonzero elements of the float64 array ``x``
    (``none`` when all are zero) in a few whole-array passes, or None where this way cannot tell
    (a non-finite element, |x| >= 2^63 or < 2^-937: the caller then finds it element by element).

    Every element is scaled by 2^-g0, g0 = e - 63 for max |x| < 2^e, into (-2^63, 2^63): exact
    (a power of two >= 1, no overflow). When each scaled value is whole (its int64 cast is itself),
    the scaled elements are integers whose lowest set bits are the elements' last set bits minus
    g0, and the lowest set bit of their bitwise OR is the smallest of them (negation keeps the
    lowest set bit in two's complement)::

        x = [-6, 20] -> ...11111010 | 00010100 = ...11111110 -> lowest set bit 2^1 (of -6)

    ``top``: max |x| where the caller has it (else one pass here finds it).
    """
    if top is None:
        top = float(np.abs(x).max(initial=0.0))
    if top == 0.0:
        return none
    if not math.isfinite(top):
        return None
    g0 = math.frexp(top)[1] - 63
    if not -1000 <= g0 <= 0:
        return None
    scaled = x * math.ldexp(1.0, -g0)
    whole = scaled.astype(np.int64)
    if not (whole == scaled).all():
        return None                                       # some element has bits below 2^g0
    bits = int(np.bitwise_or.reduce(whole, axis=None))
    return (bits & -bits).bit_length() - 1 + g0


LOWEST_BIT_SAMPLE = 256


def lowest_bit(x: np.ndarray, per_element, none: int, top: float | None = None) -> int:
    """``per_element(x)`` -- the smallest last-set-bit exponent over the finite nonzero elements of
    ``x``, ``none`` when there is none -- by :func:`lowest_bit_by_or` where that tells, else by
    :func:`lowest_bit_by_sample`. (A non-finite element: :func:`lowest_bit_by_or` does not tell.)
    ``top``: max |x| where the caller has it."""
    g = lowest_bit_by_or(x, none, top)
    return lowest_bit_by_sample(x, per_element, none) if g is None else g


def lowest_bit_by_sample(x: np.ndarray, lowest_bit, none: int, sample: int = LOWEST_BIT_SAMPLE) -> int:
    """``lowest_bit(x)`` -- the smallest last-set-bit exponent over the finite nonzero elements of
    ``x``, ``none`` when there is none -- found on the first ``sample`` elements first: when every
    element of ``x`` is a multiple of 2^g for the sample's g (:func:`multiples_of_pow2`, a few
    cheap passes instead of the per-element bit work), no element's last set bit is below 2^g and
    a sample element's is at 2^g, so g is the answer. Otherwise (or for small ``x``) the whole
    array's. (Non-finite elements: Inf passes the multiples test and NaN fails it; neither
    counts in ``lowest_bit``.)"""
    if x.size > 2 * sample:
        g = lowest_bit(x.flat[:sample])
        if g != none and multiples_of_pow2(x, g):
            return g
    return lowest_bit(x)


def all_values(fmt: str | Format) -> tuple[np.ndarray, np.ndarray]:
    """(codes, values) for every code 0 .. 2^bits - 1 of a format of at most 16 bits.

    ue4m3 lists its 128 codes with bit 7 clear (bit 7 only repeats them).
    """
    f = get_format(fmt)
    if f.bits > 16:
        raise _fail(f, expects_but_got("all_values", "a format of at most 16 bits", f.name))
    codes = np.arange(1 << f.bits, dtype=f.code_dtype)
    return codes, decode(f, codes)


def f32_bits(values) -> np.ndarray:
    """uint32 codes of f32 values (§5.2.1). float32 arrays keep their bits (NaN payloads too);
    other values must be exactly float32 or NaN, else SpecError (use ``encode("f32", x)`` to round)."""
    arr = np.asarray(values)
    if arr.dtype != np.float32:
        wide = _as_float64(FORMATS["f32"], arr)
        arr = wide.astype(np.float32)
        bad = (arr.astype(np.float64) != wide) & ~np.isnan(wide)
        if np.any(bad):
            raise _fail(FORMATS["f32"], expects_but_got("f32_bits", "values exact in f32", _first(wide, bad)))
    return arr.view(np.uint32)


def bits_to_f32(bits) -> np.ndarray:
    """float32 values of uint32 codes (§5.2.1); the inverse of :func:`f32_bits`."""
    return _codes(FORMATS["f32"], bits).view(np.float32)
