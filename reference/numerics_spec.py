"""The numerics the PTX text allows: exact value plus an honest tolerance (the ``spec`` model).

The tcgen05 text (§9.7.16.10) says nothing about accumulation order or rounding. The nearest
normative text is the warp-level ``mma`` "Precision and rounding" paragraph (§9.7.14.5.14, public
PTX ISA): products of f16/bf16/tf32/f8/f6/f4 are exact ("specified precision" / "at least single
precision"); accumulation is performed with *at least single precision* (f32 D, and every
e4m3/e5m2/e3m2/e2m3/e2m1 MMA) or *at least half precision* (kind::f16 with f16 D); "the
accumulation order, rounding and handling of subnormal inputs are unspecified". This model reads
that as: the K products and C are added in any order, each addition (and, for block-scaled kinds,
each scaled product) rounded toward zero or to nearest in a format with P significand bits and
the accumulator's subnormal range; the result is rounded toward zero or to nearest into D.

Bound, per output element (V exact value, S = sum of |terms|, n = rounding steps: (nonzero
terms) - 1 additions, plus one per nonzero scaled product for block-scaled kinds)::

    tol = 0                                  if "exact" (below)
    tol = ulp_D(|V|)                         if the accumulation is exact but V is not a D value
    tol = n * ulp_P(S') + ulp_D(|V| + n * ulp_P(S')) + flush + (K+1) * 2^-52 * S    otherwise

* ulp_P(x) = 2^(max(floor(log2 x), emin_acc) - P + 1): every partial sum lies in [-S, S], so each
  rounding errs by less than ulp_P(S); ulp_D likewise for D.
* "exact": all terms are integer multiples of 2^g (g from the smallest last-set-bit of each row of
  A, column of B, and C) and S < 2^(g + P) with 2^g no finer than the accumulator's smallest
  subnormal -- then every partial sum in every order is a P-bit number and no rounding occurs --
  and V is a D value. Exact-by-construction inputs always land here (tests prove tol = 0).
* Subnormal inputs (their handling is unspecified): ``flush`` adds |t| of every term with a
  subnormal factor (it may be flushed), and S' = max(S, S_nom) where S_nom uses the format's
  minimum normal magnitude for subnormal factors (their alignment may use the nominal exponent).
  Without subnormal inputs S' = S and flush = 0.
* S at or beyond the accumulator's overflow: tol = inf (intermediate overflow is permitted).

(kind, D) -> P, emin_acc: f32 D 24, -126; kind::f16 with f16 D 11, -14; kind::f8f6f4 with f16 D
24, -126 (its accumulation is "at least single precision").

Special values: any NaN operand or scale, Inf * 0 or Inf - Inf gives NaN (any NaN accepted);
otherwise an Inf operand gives that Inf (tol 0).
"""

from __future__ import annotations

import numpy as np

from reference import formats as F

SECTION = "9.7.16.10"
NAN_CODES = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
D_PRECISION = {"f32": (23, -126, float(F.max_finite("f32"))), "f16": (10, -14, float(F.max_finite("f16")))}


def accumulator(kind: str, d_type: str) -> tuple[int, int]:
    """(P, emin) of the narrowest accumulation the text allows (module docstring)."""
    if d_type == "f16" and kind == "f16":
        return 11, -14
    return 24, -126


def _floor_log2(x: np.ndarray) -> np.ndarray:
    """floor(log2 x) of positive normal float64 values, read from the exponent field."""
    return ((np.asarray(x, dtype=np.float64).view(np.int64) >> 52) & 0x7FF) - 1023


def _pow2(e: np.ndarray) -> np.ndarray:
    """2.0 ** e for integer arrays with -1022 <= e <= 1023 (built from the exponent field)."""
    return ((np.asarray(e, dtype=np.int64) + 1023) << 52).view(np.float64)


def _ulp(x: np.ndarray, bits_after_point: int, emin: int, out: np.ndarray | None = None) -> np.ndarray:
    """2^(max(floor(log2 x), emin) - bits_after_point) for x >= 0; x = 0 gives the subnormal quantum.

    Bit-level: clearing the mantissa of max(x, 2^emin) leaves 2^floor(log2); lowering its exponent
    field by ``bits_after_point`` divides by 2^bits_after_point (results stay normal in float64).
    ``out`` may be ``x`` itself.
    """
    res = np.maximum(x, 2.0 ** emin, out=out)
    field = res.view(np.int64)
    field >>= 52
    field -= bits_after_point
    field <<= 52
    return res


def lsb_exponent(x: np.ndarray) -> np.ndarray:
    """Exponent of the last set bit of each finite nonzero float64 (2^30 for 0 and non-finite)."""
    arr = np.asarray(x, dtype=np.float64)
    bits = np.abs(arr).view(np.int64)
    field = (bits >> 52) & 0x7FF
    mant = (bits & ((1 << 52) - 1)) | ((field > 0).astype(np.int64) << 52)
    low = mant & -mant                                         # lowest set bit, exact in float64
    tz = ((low.astype(np.float64).view(np.int64) >> 52) & 0x7FF) - 1023
    zero = (mant == 0) | (field == 0x7FF)
    # (arithmetic blend instead of np.where: several times faster on these sizes)
    return np.maximum(field, 1) - 1075 + tz + zero.astype(np.int64) * (1 << 31)


def min_lsb_exponent(x: np.ndarray, top: float | None = None) -> int:
    """min of :func:`lsb_exponent` over the finite nonzero elements of ``x`` (2^30 if none): from
    the OR of its elements as integers, or on a sample of ``x`` first, checked on all of it
    (``formats.lowest_bit``), else :func:`_min_lsb_exponent` of all of it. ``top``: max |x|
    where the caller has it."""
    return F.lowest_bit(np.asarray(x, dtype=np.float64), _min_lsb_exponent, 1 << 30, top)


def _min_lsb_exponent(x: np.ndarray) -> int:
    """min of :func:`lsb_exponent` over the finite nonzero elements of ``x`` (2^30 if none), in a
    few passes: each element's lowest set bit as a float64 power of two, then the exponent of
    their minimum.

    x = frac * 2^e (frexp, frac in [0.5, 1)) = mant * 2^(e - 53) with the 53-bit integer mant;
    its last set bit is (mant & -mant) * 2^(e - 53), a power of two >= 2^-1074 (exact in float64).
    """
    mag = np.abs(np.asarray(x, dtype=np.float64))
    keep = (mag != 0) & np.isfinite(mag)
    if not keep.all():
        mag = mag[keep]
    if mag.size == 0:
        return 1 << 30
    frac, e = np.frexp(mag)
    mant = np.ldexp(frac, 53).astype(np.int64)
    lowest = np.ldexp((mant & -mant).astype(np.float64), e - 53)
    return int(np.frexp(lowest.min())[1]) - 1


def _subnormal(values: np.ndarray, fmt: str) -> np.ndarray:
    f = F.get_format(fmt)
    if not f.is_float or f.mantissa_bits == 0:
        return np.zeros(np.shape(values), dtype=bool)
    tiny = 2.0 ** (1 - f.bias)
    mag = np.abs(values)
    return (mag > 0) & (mag < tiny)


def _any_subnormal(values: np.ndarray, fmt: str, mag: np.ndarray | None = None) -> bool:
    """Whether :func:`_subnormal` marks any element, in fewer passes: 0 < |x| < tiny somewhere
    exactly when more elements lie below tiny than are zero (NaN is neither). ``mag``: |values|
    where the caller has it."""
    f = F.get_format(fmt)
    if not f.is_float or f.mantissa_bits == 0:
        return False
    mag = np.abs(values) if mag is None else mag
    return np.count_nonzero(mag < 2.0 ** (1 - f.bias)) > mag.size - np.count_nonzero(mag)


def _special(aa: np.ndarray, bb: np.ndarray, c: np.ndarray):
    """The IEEE sum of products and C where it is not finite (finite stand-ins elsewhere)."""
    return F.product_sums_where_nonfinite(aa, bb, c)


def spec_fused(kind: str, d_type: str, a, b, c, *, a_fmt: str, b_fmt: str, sa=None, sb=None,
               scale_fmt: str | None = None, shortcut: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(exact value V, tolerance) of D = A*B + C for each element; see the module docstring.

    ``a`` M x K, ``b`` K x N are operand values (after sparsity, negation, masking), ``c`` the C
    term, M x N or a scalar for all elements (already multiplied by 2^-scale-input-d; 0 when
    enable-input-d is false), ``sa``/``sb``
    scale values broadcast along K. ``shortcut=False`` always takes the per-element path (the
    shortcut: see ``_all_exact``; both give the same result, which tests check).
    """
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    sa = None if sa is None else np.asarray(sa, dtype=np.float64)
    return _spec_block(kind, d_type, a, b, c, a_fmt, b_fmt, sa, sb, scale_fmt, shortcut)


def _exact_tolerance(v: np.ndarray, d_type: str) -> np.ndarray:
    """Tolerance of elements whose accumulation is exact: 0 where D holds the value V, else one
    ulp of D (the single rounding to D)."""
    p_d, emin_d, max_d = D_PRECISION[d_type]
    with np.errstate(over="ignore"):
        in_d = (v.astype(np.float32 if d_type == "f32" else np.float16) == v) & (np.abs(v) <= max_d)
    if in_d.all():
        return np.zeros(v.shape)
    return np.where(in_d, 0.0, _ulp(np.abs(v), p_d, emin_d))


def _all_exact(abs_a, abs_b, c, s_max: float, p_acc, emin_acc) -> bool:
    """Whether every element's accumulation is exact, from whole-matrix bounds (a sufficient
    condition for ``_exact_elements`` marking every element): every term of every element is a
    multiple of 2^g, g = min(lsb over A + lsb over B, lsb over C) <= each element's own g, so
    g >= emin - P + 1 and ``s_max`` (max S, or an upper bound of it) < 2^(g + P) give each
    element's condition. Inputs finite.

    Written as g >= G, G = max(emin - P + 1, floor(log2 s_max) - P + 1) (the two conditions;
    integers): the lsb of the small A and B, and for C (M x N) only whether every element is a
    multiple of 2^G (``formats.multiples_of_pow2``), which is cheaper than its lsb."""
    if s_max == 0.0:
        return True
    log_s = int((np.array(s_max).view(np.int64) >> 52) - 1023)
    g_min = max(emin_acc - p_acc + 1, log_s - p_acc + 1)
    g_prod = (min_lsb_exponent(abs_a, float(abs_a.max(initial=0.0)))    # (2^30 for an all-zero operand)
              + min_lsb_exponent(abs_b, float(abs_b.max(initial=0.0))))
    return g_prod >= g_min and F.multiples_of_pow2(c, g_min)


def _spec_block(kind, d_type, a, b, c, a_fmt, b_fmt, sa, sb, scale_fmt, shortcut=True):
    """The body of spec_fused, written with in-place operations: large temporaries are
    expensive (page faults) and dominate the cost on small K."""
    aa, bb = a, b
    if sa is not None or sb is not None:      # block scaling (errstate only then: it costs calls)
        with np.errstate(invalid="ignore", over="ignore"):
            aa = a if sa is None else a * sa
            bb = b if sb is None else b * np.asarray(sb, dtype=np.float64)
    k = a.shape[1]
    finite_in = all(np.isfinite(x).all() for x in (aa, bb, c))
    special = None if finite_in else _special(aa, bb, c)
    aa_f, bb_f, c_f = (aa, bb, c) if finite_in else (np.where(np.isfinite(x), x, 0.0) for x in (aa, bb, c))
    abs_a, abs_b = np.abs(aa_f), np.abs(bb_f)
    p_acc, emin_acc = accumulator(kind, d_type)
    p_d, emin_d, max_d = D_PRECISION[d_type]

    value = aa_f @ bb_f
    value += c_f
    scratch = np.abs(c_f)
    # (|A|, |B| are the operands' own magnitudes when finite and unscaled)
    mag_a = abs_a if finite_in and sa is None else None
    mag_b = abs_b if finite_in and sb is None else None
    subnormal_in = (_any_subnormal(a, a_fmt, mag_a) or _any_subnormal(b, b_fmt, mag_b)
                    or (sa is not None and (_any_subnormal(sa, scale_fmt) or _any_subnormal(np.asarray(sb), scale_fmt))))
    over_limit = 2.0 ** 128 if p_acc == 24 else 65520.0
    s_bound = None
    if shortcut and not subnormal_in and special is None:
        # the whole-matrix shortcut on a bound of S first: no |A| @ |B| when it passes
        s_bound = F.magnitude_sum_bound(abs_a, abs_b, float(scratch.max(initial=0.0)))
        if s_bound < over_limit and _all_exact(abs_a, abs_b, c_f, s_bound, p_acc, emin_acc):
            # every element exact, none overflows; where the accumulator is D's own format, every
            # V (a sum without rounding in it) is a D value: nothing to check
            in_d = (p_acc, emin_acc) == (p_d + 1, emin_d)
            return value, np.zeros(value.shape) if in_d else _exact_tolerance(value, d_type)
    total_abs = abs_a @ abs_b
    total_abs += scratch

    s_prime, flush, touched = total_abs, None, None
    if subnormal_in:
        sub_a = _subnormal(a, a_fmt) | (False if sa is None else _subnormal(sa, scale_fmt))
        sub_b = _subnormal(b, b_fmt) | (False if sb is None else _subnormal(np.asarray(sb), scale_fmt))
        # flush: sum of |t| over terms with a subnormal factor (one matmul on stacked operands)
        flush = np.hstack([abs_a * sub_a, abs_a]) @ np.vstack([abs_b, abs_b * sub_b])
        nom_a = np.where(sub_a, np.maximum(abs_a, _nominal(a_fmt, sa, sub_a.shape)), abs_a)
        nom_b = np.where(sub_b, np.maximum(abs_b, _nominal(b_fmt, sb, sub_b.shape)), abs_b)
        s_prime = nom_a @ nom_b                    # >= S: nominal magnitudes only grow
        s_prime += scratch
        touched = sub_a.any(axis=1)[:, None] | sub_b.any(axis=0)[None, :]

    over = s_prime >= over_limit
    s_max = float(total_abs.max(initial=0.0))
    retry = s_bound is not None and (s_max != s_bound or s_bound >= over_limit)     # else: the same test
    if retry and _all_exact(abs_a, abs_b, c_f, s_max, p_acc, emin_acc):
        tol = _exact_tolerance(value, d_type)    # every element exact (the bound was loose, or overflows)
        tol[over] = np.inf
        return value, tol
    work = np.empty_like(value)
    exact = _exact_elements(abs_a, abs_b, c_f, total_abs, p_acc, emin_acc, touched, work)

    # rounding steps: additions of nonzero terms (n - 1), plus each scaled product (block scaling);
    # (k+1) 2^-52 S of float64 summation here is <= (k+1) 2^-27 ulp_P(S) for P <= 24: folded in
    steps = np.matmul((abs_a != 0).astype(np.float64), (abs_b != 0).astype(np.float64), out=work)
    if sa is not None:
        steps *= 2
    steps += c_f != 0
    steps -= 1
    np.maximum(steps, 0, out=steps)
    steps += (k + 1) * 2.0 ** -27
    acc_err = _ulp(s_prime, p_acc - 1, emin_acc, out=s_prime)      # S' is not needed after this
    acc_err *= steps
    tol = np.abs(value, out=scratch) if scratch.shape == value.shape else np.abs(value)
    tol += acc_err
    _ulp(tol, p_d, emin_d, out=tol)
    tol += acc_err
    if flush is not None:
        tol += flush
    if exact is not None:
        tol[exact] = _exact_tolerance(value[exact], d_type)
    if over.any():
        tol[over] = np.inf

    if special is not None:
        nonfinite = ~np.isfinite(special)
        value = np.where(nonfinite, special, value)
        tol = np.where(nonfinite, 0.0, tol)
    return value, tol


def _exact_elements(abs_a, abs_b, c, total_abs, p_acc, emin_acc, touched, work):
    """Mask of elements whose accumulation is exact in every order (module docstring), or None.

    All terms of element (m, n) are multiples of 2^g, g = min(lsb over row m of A + lsb over column
    n of B, lsb of C); exact when S < 2^(g + P) and 2^g is no finer than the accumulator's
    smallest subnormal. C's lsb is computed only where the products alone would pass.
    """
    g_a = lsb_exponent(abs_a).min(axis=1)
    g_b = lsb_exponent(abs_b).min(axis=0)
    # candidates: S < 2^(g_a + P) * 2^g_b, two cheap passes over M x N (powers clipped to float64)
    thr = np.ldexp(1.0, np.clip(g_a + p_acc, -1000, 1000))
    inv = np.ldexp(1.0, np.clip(-g_b, -1000, 1000))
    cand = np.multiply(total_abs, inv[None, :], out=work) < thr[:, None]
    if touched is not None:
        cand &= ~touched
    if not cand.any():
        return None
    rows, cols = np.nonzero(cand)
    s = total_abs[rows, cols]
    g = np.minimum(g_a[rows] + g_b[cols], lsb_exponent(np.broadcast_to(c, total_abs.shape)[rows, cols]))
    log_s = (s.view(np.int64) >> 52) - 1023
    ok = (s == 0) | ((g >= emin_acc - p_acc + 1) & (log_s < g + p_acc))
    exact = np.zeros(total_abs.shape, dtype=bool)
    exact[rows[ok], cols[ok]] = True
    return exact if ok.any() else None


def _nominal(fmt: str, scale, shape: tuple[int, ...]) -> np.ndarray:
    """Magnitude a subnormal factor may be aligned as: the format's minimum normal (times its scale)."""
    f = F.get_format(fmt)
    tiny = 2.0 ** (1 - f.bias) if f.is_float else 1.0
    if scale is None:
        return np.full(shape, tiny)
    return tiny * np.abs(np.broadcast_to(np.asarray(scale, dtype=np.float64), shape))


def representative_codes(value: np.ndarray, d_type: str) -> np.ndarray:
    """A D code for each spec value: round to nearest even (numpy's float64 -> f32/f16 casts
    round once, ties to even, overflow to Inf); NaN -> 0x7FFFFFFF / 0x7FFF."""
    v = np.asarray(value, dtype=np.float64)
    with np.errstate(over="ignore"):
        codes = v.astype(np.float32).view(np.uint32) if d_type == "f32" else v.astype(np.float16).view(np.uint16)
    nan = np.isnan(v)
    if nan.any():
        codes[nan] = NAN_CODES[d_type]
    return codes


def spec_accepts(d_type: str, got_codes, d_value, d_tol) -> np.ndarray:
    """True where a D code is allowed by the spec model's (value, tolerance).

    NaN expected: any NaN. Inf expected: that Inf. Tolerance inf: anything. Otherwise |got - V| <=
    tol, or got is an Inf of V's sign and |V| + tol reaches D's round-to-nearest overflow threshold.
    """
    got = F.decode(d_type, got_codes)
    v = np.asarray(d_value, dtype=np.float64)
    tol = np.asarray(d_tol, dtype=np.float64)
    p_d, _, max_d = D_PRECISION[d_type]
    threshold = max_d + 2.0 ** (int(_floor_log2(np.array(max_d))) - p_d) / 2
    with np.errstate(invalid="ignore"):
        close = np.abs(got - v) <= tol
        overflow = np.isinf(got) & np.isfinite(v) & (np.sign(got) == np.sign(v)) & (np.abs(v) + tol >= threshold)
        ok = np.where(np.isnan(v), np.isnan(got),
                      np.where(np.isinf(v), got == v, (close & ~np.isnan(got)) | overflow))
    return ok | np.isinf(tol)
