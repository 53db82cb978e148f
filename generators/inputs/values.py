"""Exact-by-construction operand values: small numbers with few significant bits.

The semantic tier compares device results bit for bit, so its inputs are chosen to make every
product and every partial sum of an MMA exact in the accumulator (f32: 24 significant bits; f16:
11), whatever the order of accumulation (PTX ISA §9.7.14.5.14 "Precision and rounding": any order,
at least single precision). Then the spec model's tolerance is 0 and the hardware model agrees to
the bit, so a mismatch is a real bug, never a rounding question (the oracle checks both).

Pools (values, not codes; every one is exact in every operand format of its kind):

    WIDE     +-{0.5, 1, 1.5, 2, 3}        products on the 1/4 grid, |p| <= 9
    NARROW   +-{0.5, 1, 1.5, 2}           for f16 accumulators: |sum| stays below 2^9 = 2^(11-2)
    u8 0..255, s8 -128..127, u4 0..15, s4 -8..7: the full ranges (products and sums are exact in
    the s32 accumulator), each tile holding the minimum, the maximum and zero
    scales   ue8m0 2^-1, 2^0, 2^1 (codes 126..128); ue4m3 0.5, 1, 2

Subnormal values of a format are left out (0.5 is subnormal in e2m1 and e2m3: the spec model
leaves subnormal inputs open). Zero is never drawn for floating-point A/B (the sign of an all-zero sum is the one place IEEE and the published
hardware model differ), nor -0 for C. tf32 codes get random bits in their low 12 container bits
when ``tf32_noise`` is set: the format has 10 mantissa bits, the container's low 13 are not part of
the value (shared/spec/NOTES.md item 10; ``reference.formats`` ignores them on decode). Bit 12 (half
a tf32 unit) stays clear, so the value is the same under both readings of spec question
``Q-TF32-TRUNC`` (truncated, or rounded to nearest): exact by construction either way; the probe
of that question (``generators.probes``) sets bit 12.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from reference import formats as F

WIDE = (0.5, 1.0, 1.5, 2.0, 3.0)
NARROW = (0.5, 1.0, 1.5, 2.0)
TF32_HALF_UNIT = 1 << 12           # half of a tf32 unit in the last place of its f32 container
C_GRID = 0.25                      # accumulator values: multiples of 1/4
INT_POOLS = {"u8": (0, 255), "s8": (-128, 127), "u4": (0, 15), "s4": (-8, 7)}     # full ranges
SCALE_VALUES = {"ue8m0": (0.5, 1.0, 2.0), "ue4m3": (0.5, 1.0, 2.0)}
UE4M3_IGNORED_BIT = 0x80           # reference.formats: the sign bit of the unsigned ue4m3 is ignored


def is_integer_type(fmt: str) -> bool:
    return fmt in ("u8", "s8", "u4", "s4", "s32")


def element_values(fmt: str, shape, rng: np.random.Generator, pool=WIDE) -> np.ndarray:
    """float64 values drawn from the pool of ``fmt``: floats never zero; integers over the type's
    full range, with its minimum, maximum and zero at seeded places of every tile of 3+ elements."""
    if fmt in INT_POOLS:
        return _integer_values(fmt, shape, rng).astype(np.float64)
    mags = rng.choice(_normal_pool(fmt, tuple(pool)), size=shape)   # no subnormal inputs: the spec model
    signs = rng.choice(SIGNS, size=shape)                             # leaves their handling open
    return mags * signs


def _integer_values(fmt: str, shape, rng: np.random.Generator) -> np.ndarray:
    """int64 values over the full range of integer ``fmt``, its minimum, maximum and zero at
    seeded places of every tile of 3+ elements (:func:`element_values`)."""
    lo, hi = INT_POOLS[fmt]
    vals = rng.integers(lo, hi + 1, size=shape)
    if vals.size >= 3:
        vals.flat[rng.choice(vals.size, 3, replace=False)] = (lo, hi, 0)
    return vals


SIGNS = np.array([-1.0, 1.0])
SIGNS.setflags(write=False)


@functools.lru_cache(maxsize=None)
def _normal_pool(fmt: str, pool: tuple[float, ...]) -> np.ndarray:
    """The values of ``pool`` that are normal in ``fmt`` (float64, read-only; one per format and pool)."""
    fmt_info = F.get_format(fmt)
    out = np.asarray([v for v in pool if v >= 2.0 ** (1 - fmt_info.bias)], dtype=np.float64)
    out.setflags(write=False)
    return out


def element_codes(fmt: str, values, rng: np.random.Generator | None = None, *, tf32_noise: bool = False) -> np.ndarray:
    """uint64 codes of exactly representable ``values`` (raises if one is not)."""
    vals = np.asarray(values, dtype=np.float64)
    codes = F.exact_codes(fmt, vals)
    if codes is None:
        bad = vals[~F.is_representable(fmt, vals)]
        raise ValueError(f"value pool expects values exact in {fmt}, but got {bad[:4].tolist()}")
    codes = codes.astype(np.uint64)
    if fmt == "tf32" and tf32_noise and rng is not None:
        codes |= rng.integers(0, TF32_HALF_UNIT, size=codes.shape).astype(np.uint64)
    return codes


def operand_codes(fmt: str, shape, rng: np.random.Generator, pool=WIDE, *, tf32_noise: bool = False) -> np.ndarray:
    """uint64 codes of operand values drawn as :func:`element_values` draws them (the same random
    numbers, in the same order, then :func:`element_codes`'s tf32 noise): ``element_codes(fmt,
    element_values(fmt, shape, rng, pool), rng, tf32_noise=...)``, with the codes of a float pool
    looked up in a table of its signed values (encoded and checked once per format and pool)
    instead of encoded element by element."""
    if fmt in INT_POOLS:
        return _integer_codes(fmt)[_integer_values(fmt, shape, rng)]
    mags = _normal_pool(fmt, tuple(pool))
    # rng.choice(array, size) draws rng.integers(0, len(array), size) and indexes with them
    mag_idx = rng.integers(0, mags.size, size=shape)
    sign_idx = rng.integers(0, SIGNS.size, size=shape)
    sign_idx *= mags.size                   # flat index sign * len(mags) + magnitude, in place
    sign_idx += mag_idx
    codes = _signed_pool_codes(fmt, tuple(pool)).ravel()[sign_idx]
    if fmt == "tf32" and tf32_noise:
        codes = codes | rng.integers(0, TF32_HALF_UNIT, size=codes.shape).astype(np.uint64)
    return codes


@functools.lru_cache(maxsize=None)
def _integer_codes(fmt: str) -> np.ndarray:
    """uint64 codes of every value v of integer ``fmt`` at index v (Python's wrap-around: 0 .. hi
    first, then lo .. -1), encoded and checked by :func:`element_codes` once (read-only)."""
    lo, hi = INT_POOLS[fmt]
    codes = element_codes(fmt, np.concatenate((np.arange(0, hi + 1), np.arange(lo, 0))).astype(np.float64))
    codes.setflags(write=False)
    return codes


@functools.lru_cache(maxsize=None)
def _signed_pool_codes(fmt: str, pool: tuple[float, ...]) -> np.ndarray:
    """uint64 codes [sign, magnitude] of SIGNS[s] * _normal_pool(fmt, pool)[m] (read-only)."""
    values = SIGNS[:, None] * _normal_pool(fmt, pool)[None, :]
    codes = element_codes(fmt, values)
    codes.setflags(write=False)
    return codes


def accumulator_values(shape, rng: np.random.Generator, *, limit: float = 8.0, scale_exp: int = 0) -> np.ndarray:
    """C values on the 1/4 grid in [-limit, limit] (never -0), times 2^scale_exp.

    ``scale_exp`` = scale-input-d: the MMA uses C * 2^-s, which lands back on the 1/4 grid.
    """
    steps = int(limit / C_GRID)
    k = rng.integers(-steps, steps + 1, size=shape)
    return k.astype(np.float64) * C_GRID * (2.0 ** scale_exp)


def accumulator_codes(d_type: str, shape, rng: np.random.Generator, *, limit: float = 8.0,
                      scale_exp: int = 0) -> np.ndarray:
    """uint64 codes of :func:`accumulator_values` (the same draw): ``element_codes(d_type,
    accumulator_values(...))``, looked up in a table of the grid's codes (encoded and checked once
    per format, limit and scale)."""
    steps = int(limit / C_GRID)
    k = rng.integers(-steps, steps + 1, size=shape)
    return _grid_codes(d_type, steps, scale_exp)[k]


@functools.lru_cache(maxsize=None)
def _grid_codes(d_type: str, steps: int, scale_exp: int) -> np.ndarray:
    """uint64 codes of k * C_GRID * 2^scale_exp at index k (Python's wrap-around: k = 0 .. steps
    first, then k = -steps .. -1), so the draws k = -steps .. steps index it directly (read-only)."""
    k = np.concatenate((np.arange(0, steps + 1), np.arange(-steps, 0)))
    codes = element_codes(d_type, k.astype(np.float64) * C_GRID * (2.0 ** scale_exp))
    codes.setflags(write=False)
    return codes


def scale_codes(scale_type: str, shape, rng: np.random.Generator, *, sign_noise: bool = False) -> np.ndarray:
    """uint8 scale-factor codes of powers of two near 1 (ue4m3: optionally with bit 7 set)."""
    vals = rng.choice(np.asarray(SCALE_VALUES[scale_type]), size=shape)
    codes = F.encode(scale_type, vals).astype(np.uint8)
    if scale_type == "ue4m3" and sign_noise:
        codes |= (rng.integers(0, 2, size=shape) * UE4M3_IGNORED_BIT).astype(np.uint8)
    return codes


def random_words(rng: np.random.Generator, shape) -> np.ndarray:
    """uint32 random bit patterns (data-movement cases: any bits are exact): the numbers
    ``rng.integers(0, 1 << 32, size=shape, dtype=np.uint64)`` draws, as uint32 (large arrays
    through :func:`_pcg64_words`, the same numbers without the 64-bit detour)."""
    size = int(shape) if isinstance(shape, (int, np.integer)) else math.prod(shape)
    if size >= RAW_WORDS_MIN and type(rng.bit_generator) is np.random.PCG64 and sys.byteorder == "little":
        return _pcg64_words(rng.bit_generator, size).reshape(shape)
    return rng.integers(0, 1 << 32, size=shape, dtype=np.uint64).astype(np.uint32)


RAW_WORDS_MIN = 2048       # words from which :func:`_pcg64_words` pays for its two state look-ups


def _pcg64_words(bitgen: np.random.PCG64, size: int) -> np.ndarray:
    """``size`` full-range 32-bit draws of a PCG64 generator, as ``Generator.integers`` makes them:
    its 32-bit source (numpy ``pcg64_next32``) hands out the low half of each 64-bit output, then
    keeps the high half for the next draw (state ``has_uint32``/``uinteger``)::

        outputs   r0          r1          r2 ...          (random_raw: 64-bit outputs, in order)
        words     lo(r0) hi(r0) lo(r1) hi(r1) lo(r2) ...  (a kept half first, if any)

    Here the whole run comes from ``random_raw`` viewed as little-endian 32-bit halves, and the
    kept half is taken from, and left in, the state as the 32-bit source would."""
    state = bitgen.state
    kept = state["has_uint32"]
    words = np.empty(size, dtype=np.uint32)
    if kept:
        words[0] = state["uinteger"]
    rest = size - kept
    raw = bitgen.random_raw((rest + 1) // 2)
    words[kept:] = raw.view(np.uint32)[:rest]
    if kept or rest % 2:
        state = bitgen.state
        state["has_uint32"] = rest % 2
        state["uinteger"] = int(raw[-1] >> np.uint64(32)) if rest % 2 else 0
        bitgen.state = state
    return words


def distinct_f32_words(rng: np.random.Generator, shape) -> np.ndarray:
    """Finite nonzero f32 bit patterns of distinct magnitudes within a row (ld.red: no ties, no
    NaN, no zeros -- the orderings the text leaves to decisions), random signs."""
    shape = tuple(shape)
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    mags = np.stack([rng.permutation(np.arange(1, 4 * cols + 1))[:cols] for _ in range(rows)]).reshape(shape)
    vals = mags.astype(np.float32) * np.float32(0.375) * rng.choice(np.array([-1, 1], dtype=np.float32), size=shape)
    return vals.astype(np.float32).view(np.uint32)


def class_codes(fmt: str) -> dict[str, int]:
    """See :func:`_class_codes` (a fresh dict; computed once per format)."""
    return dict(_class_codes(fmt))


@functools.lru_cache(maxsize=None)
def _class_codes(fmt: str) -> dict[str, int]:
    """One code per special value class of floating-point ``fmt`` that it has (§5.2.1, §5.2.3; OCP
    MX v1.0 §5.3): -0, the smallest subnormal, the smallest and largest normal, minus the largest,
    +-Inf, a NaN, and +0 where the format has no sign (numerics companions, issue 15). Normal:
    exponent field >= 1 (ue8m0: every code)."""
    f = F.get_format(fmt)
    if f.container_bits == 32:                 # f32 and tf32 (tf32: the value bits of its container)
        ulp = 1 if f.mantissa_bits == 23 else 1 << 13
        out = {"+0": 0, "-0": 0x80000000, "subnormal": ulp, "min normal": 0x00800000, "max normal": 0x7F800000 - ulp,
               "-max normal": 0xFF800000 - ulp, "+Inf": 0x7F800000, "-Inf": 0xFF800000, "NaN": 0x7FC00000}
        return out
    codes, vals = F.all_values(fmt)
    codes, vals = np.asarray(codes).astype(np.int64), np.asarray(vals, dtype=np.float64)
    min_normal = 2.0 ** -f.bias if f.mantissa_bits == 0 else 2.0 ** (1 - f.bias)
    finite = np.isfinite(vals)
    picks = {"+0": (vals == 0) & ~np.signbit(vals), "-0": (vals == 0) & np.signbit(vals),
             "subnormal": finite & (vals > 0) & (vals < min_normal),
             "min normal": vals == min_normal, "max normal": vals == F.max_finite(fmt),
             "-max normal": vals == -F.max_finite(fmt), "+Inf": vals == np.inf, "-Inf": vals == -np.inf,
             "NaN": np.isnan(vals)}
    return {name: int(codes[hit][0]) for name, hit in picks.items() if hit.any()}


def plant(codes: np.ndarray, start: int, specials) -> np.ndarray:
    """``codes`` with ``specials`` written at flat positions ``start, start + 1, ...`` (as many as fit)."""
    out = np.array(codes, copy=True)
    specials = list(specials)[:max(0, out.size - start)]
    out.flat[start:start + len(specials)] = specials
    return out
