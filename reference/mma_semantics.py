"""``tcgen05.mma`` on logical matrices: which elements are multiplied, what is written (§9.7.16.10).

:func:`mma` computes the expected D of one instruction from raw codes::

    A (M x K, or M x K/2 + metadata when sparse) --expand (§9.7.16.10.8)--> .ashift --> decode
    B (K x N, .ws: K x (N + column shift))       --column shift, zero-column mask--> decode
    negate A / B (Table 49); block scales per K chunk (§9.7.16.10.7)
    D = A*B + C * 2^-scale-input-d   (enable-input-d)      D = A*B   (otherwise)
    numerics: "spec" (exact value + tolerance) | "hardware" (bit-exact sm_100) | exact integers (i8)
    i8: saturate -> clamp to s32, else wrap modulo 2^32
    disable-output-lane: elements living in disabled Tensor Memory lanes keep their old D

Decisions on ambiguous text (docs/mma.md has the full list):

* ``.ashift`` "shifts the rows of A down by one row, except for the last row": A_used[r] = A[r-1]
  for r >= 1; nothing moves into row 0, which keeps A[0]. Row 0 (and row M/2 with cta_group::2,
  the first row of the peer CTA's Tensor Memory) is marked spec-ambiguous. With sparse A the
  expanded rows move (metadata moves with its row).
* Zero-column mask with a column shift: D column j uses B column j + shift (Table 45 example 4:
  "columns from 2 to 129 will be used"), and mask bit j zeroes that column (the mask describes
  the columns the MMA uses, as in public convolution code that sets the shift per filter tap);
  the other reading (bit j = B column j) is spec question Q-ZCM-SHIFT
  (``reference.zero_column_mask.zeroed_columns``).
* Max shift (B reuse, Table 42 bits 30-31) does not change the value of one MMA.
* disable-output-lane with cta_group::2: bits 0-127 are the lanes of the CTA that holds rows
  0..M/2-1 of D, bits 128-255 the peer CTA's. The lane of each D element comes from the data-path
  layout (2x2 Layout B puts the two column halves of a row in different lanes).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from reference import block_scaling as BS
from reference import datapath_layouts as DL
from reference import formats as F
from reference import numerics_hw as HW
from reference import numerics_spec as NS
from reference import sparsity as SP
from reference.errors import SpecError, expects_but_got
from reference.mma_qualifiers import MmaOp
from reference.spec_questions import is_explicit, resolve
from reference.zero_column_mask import zeroed_columns

SECTION = "9.7.16.10"
MODELS = ("spec", "hardware")
S32_MIN, S32_MAX = -(1 << 31), (1 << 31) - 1


@dataclass(frozen=True)
class MmaResult:
    """Expected D of one MMA (all M x N).

    ``d``: codes in D's format (uint32 for f32/s32, uint16 for f16; hardware model: the bits;
    spec model: a representative, the nearest-even rounding of ``d_value``). ``d_value``: float64
    (spec: the exact value; hardware: the value of ``d``). ``d_tol``: allowed |D - d_value| (0 =
    exact; always 0 for hardware and i8). ``written``: False where disable-output-lane kept the old
    D. ``ambiguous``: True where the value depends on a reading the spec leaves open.
    """

    d: np.ndarray
    d_value: np.ndarray
    d_tol: np.ndarray
    written: np.ndarray
    ambiguous: np.ndarray
    model: str


def _shape_err(what: str, want, got) -> SpecError:
    return SpecError(SECTION, "operand shapes", expects_but_got(what, f"shape {want}", got))


def ashift_source_rows(m: int, reading: str | None = None) -> np.ndarray:
    """Row of A that row r of a ``.ashift`` MMA uses (-1: a row of zeros): r - 1 for r >= 1; row 0
    per spec question ``Q-ASHIFT-ROW0`` (``keeps-a0``, the pick: 0; ``zero``: -1)."""
    first = -1 if resolve("Q-ASHIFT-ROW0", reading) == "zero" else 0
    return np.concatenate([[first], np.arange(m - 1)]).astype(np.int64)


def rows_taken(a: np.ndarray, src: np.ndarray) -> np.ndarray:
    """``a[src]`` with a row of zeros where ``src`` is -1."""
    src = np.asarray(src, dtype=np.int64)
    out = np.asarray(a)[np.maximum(src, 0)]
    return np.where((src < 0).reshape((-1,) + (1,) * (out.ndim - 1)), np.zeros_like(out), out)


def ashift_rows(a: np.ndarray, cta_group: int = 1, reading: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(A as used by a ``.ashift`` MMA, rows marked spec-ambiguous); see the module docstring.
    Row 0 is marked unless spec question ``Q-ASHIFT-ROW0`` was settled (``--reading``, a probe)."""
    shifted = rows_taken(a, ashift_source_rows(a.shape[0], reading))
    ambiguous = np.zeros(a.shape[0], dtype=bool)
    ambiguous[0] = reading is None and not is_explicit("Q-ASHIFT-ROW0")
    if cta_group == 2:
        ambiguous[a.shape[0] // 2] = True
    return shifted, ambiguous


def ws_columns(b: np.ndarray, n: int, m: int, zero_column_mask) -> tuple[np.ndarray, np.ndarray]:
    """(K x N B columns used by a .ws MMA, bool N mask of zeroed columns) (§9.7.16.4.3, Table 45)."""
    shift = zero_column_mask.column_shift if zero_column_mask is not None else 0
    if b.shape[1] < n + shift:
        raise _shape_err(f"B of a .ws MMA with column shift {shift}", f"(K, >= {n + shift})", b.shape)
    used = b[:, shift:shift + n]
    mask_bits = zero_column_mask.mask(m, n) if zero_column_mask is not None else 0
    return used, zeroed_columns(mask_bits, n, shift)         # spec question Q-ZCM-SHIFT


def disabled_elements(op: MmaOp, lane_offset: int = 0) -> np.ndarray:
    """M x N mask of D elements whose Tensor Memory lane ``disable-output-lane`` disables.

    Bit b of the vector (LSB of element 0 = lane 0; §9.7.16.10.9.1) disables lane b % 128 of CTA
    b // 128 of the pair (:func:`disabled_lanes`, spec question Q-DOL-2CTA). Where each D[i][j] lives comes from the data-path layout of the MMA
    (``reference.datapath_layouts``, §9.7.16.10.5): a lane can hold a whole row (Layouts A, D, F,
    C) or part of one (2x2 Layout B). ``lane_offset`` is the D address's lane alignment (0 or 16
    for the half-datapath Layouts C and F).
    """
    if op.disable_output_lane is None:
        return np.zeros((op.m, op.n), dtype=bool)
    layout = DL.layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws)
    if lane_offset not in layout.lane_alignments:
        raise SpecError(DL.SECTION, "Tensor Memory Datapath Lane Alignment", expects_but_got(
            f"lane alignment of Layout {layout.layout_id}", " or ".join(map(str, layout.lane_alignments)), lane_offset))
    reading = resolve("Q-DOL-2CTA", None) if op.cta_group == 2 else None
    return _disabled_elements(tuple(op.disable_output_lane), layout, op.n, lane_offset, reading).copy()


@functools.lru_cache(maxsize=1024)
def _disabled_elements(words: tuple[int, ...], layout, n: int, lane_offset: int, reading: str | None) -> np.ndarray:
    """:func:`disabled_elements` of one vector, layout, N and lane alignment (computed once; read-only)."""
    bits = 0
    for i, word in enumerate(words):
        bits |= word << (32 * i)
    where = DL.d_placement(layout, n, lane_offset)
    lane = where[..., 0] * DL.LANES + where[..., 1]              # (cta, lane) of each D element, flat
    out = np.take(disabled_lanes(bits, layout.cta_group, reading).reshape(-1), lane)
    out.setflags(write=False)
    return out


def disabled_lanes(bits: int, cta_group: int, reading: str | None = None) -> np.ndarray:
    """bool[cta_group, 128]: Tensor Memory lanes (per CTA of the pair) the ``disable-output-lane``
    vector ``bits`` (bit b = bit b % 32 of element b // 32) keeps from being written (§9.7.16.10.9.1).
    cta_group::2 is spec question ``Q-DOL-2CTA``: ``cta-halves`` (the pick) -- bit b is lane b % 128
    of CTA b // 128; ``lanes-shared`` -- bit l < 128 is lane l of both CTAs, bits 128-255 unused."""
    if cta_group == 2 and resolve("Q-DOL-2CTA", reading) == "lanes-shared":
        low = _bit_vector(bits, 128)
        return np.stack([low, low])
    return _bit_vector(bits, 128 * cta_group).reshape(cta_group, 128)


def _bit_vector(bits: int, count: int) -> np.ndarray:
    """bool[count]: bit b of the integer ``bits`` at index b (little-endian bytes, LSB first)."""
    raw = np.frombuffer((bits & ((1 << count) - 1)).to_bytes(count // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little").astype(bool)


def _logical_a(op: MmaOp, a, meta, metadata_context) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a)
    ambiguous = np.zeros(op.m, dtype=bool)
    if op.sparse:
        pattern = SP.pattern_for_kind(op.kind)
        if meta is None:
            raise SpecError("9.7.16.10.8", "sparse A", expects_but_got("metadata for a sparse MMA", "an M x K/chunk array", None))
        if a.shape != (op.m, op.k // 2):
            raise _shape_err("compressed A", (op.m, op.k // 2), a.shape)
        status = SP.check_metadata(pattern, meta, metadata_context)
        if not is_explicit("Q-META-0110"):
            ambiguous |= (status == SP.AMBIGUOUS).any(axis=1)
        a = SP.expand(pattern, a, meta)
    elif a.shape != (op.m, op.k):
        raise _shape_err("A", (op.m, op.k), a.shape)
    if op.ashift:
        a, amb = ashift_rows(a, op.cta_group)
        ambiguous |= amb
    return a, ambiguous


def logical_operands(op: MmaOp, a, b, *, meta=None, metadata_context: str = "tcgen05"):
    """(A values M x K, B values K x N, ambiguous rows): the multiplicands the MMA uses."""
    a_codes, ambiguous = _logical_a(op, a, meta, metadata_context)
    b = np.asarray(b)
    if op.ws:
        b, zeroed = ws_columns(b, op.n, op.m, op.zero_column_mask)
    else:
        zeroed = np.zeros(op.n, dtype=bool)
    if b.shape != (op.k, op.n):
        raise _shape_err("B", (op.k, op.n), b.shape)
    a_val = F.decode(op.a_type, a_codes)
    b_val = F.decode(op.b_type, b)
    b_val = np.where(zeroed[None, :], np.zeros((), dtype=b_val.dtype), b_val)
    if op.negate_a:
        a_val = -a_val
    if op.negate_b:
        b_val = -b_val
    return a_val, b_val, ambiguous


def _scales(op: MmaOp, scale_a, scale_b):
    if not op.block_scaled:
        if scale_a is not None or scale_b is not None:
            raise SpecError("9.7.16.10.7", "block scaling", expects_but_got(f"scale matrices for kind::{op.kind}", "none", "given"))
        return None, None
    if scale_a is None or scale_b is None:
        raise SpecError("9.7.16.10.7", "block scaling", expects_but_got(f"scale_A and scale_B for kind::{op.kind}", "both", "missing"))
    sa, sb = BS.check_scale_shapes(op.m, op.n, op.scale_factors, scale_a, scale_b)
    return BS.per_k(BS.scale_values(op.scale_type, sa), BS.scale_values(op.scale_type, sb), op.k)


def _decode_d(d_type: str, codes: np.ndarray) -> np.ndarray:
    """Values of D codes. Fast path: every uint32 is an f32 code and every uint16 an f16 code, so
    a reinterpretation equals ``formats.decode``; other dtypes go through it (with validation)."""
    if d_type == "f32" and codes.dtype == np.uint32:
        return codes.view(np.float32).astype(np.float64)
    if d_type == "f16" and codes.dtype == np.uint16:
        return codes.view(np.float16).astype(np.float64)
    return F.decode(d_type, codes)


def exact_integer_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B of integer matrices, exactly, as int64. Through float64 (a BLAS matmul, far cheaper
    than numpy's integer one) when K * max|A| * max|B| < 2^53: every product and partial sum is
    then an integer below 2^53, which float64 holds exactly, so no order of summation rounds."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    if a64.size == 0 or b64.size == 0:
        return a64 @ b64
    bound = a.shape[1] * int(np.abs(a64).max()) * int(np.abs(b64).max())
    if bound >= 1 << 53:
        return a64 @ b64
    return (a64.astype(np.float64) @ b64.astype(np.float64)).astype(np.int64)


def integer_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, saturate: bool, reading: str | None = None) -> np.ndarray:
    """s32 result of kind::i8: exact sum, then clamp (saturate) or wrap modulo 2^32. Saturation is
    spec question ``Q-I8-SAT``: ``clamp-once`` (the pick) clamps the exact sum; ``running`` adds C,
    then the products in K order, clamping after each addition."""
    if saturate and resolve("Q-I8-SAT", reading) == "running":
        acc = np.broadcast_to(c.astype(np.int64), (a.shape[0], b.shape[1])).copy()
        for k in range(a.shape[1]):
            acc = np.clip(acc + a[:, k:k + 1].astype(np.int64) * b[k:k + 1, :].astype(np.int64), S32_MIN, S32_MAX)
        return acc
    exact = exact_integer_products(a, b)
    exact += c.astype(np.int64)
    if saturate:
        return np.clip(exact, S32_MIN, S32_MAX)
    return ((exact - S32_MIN) % (1 << 32)) + S32_MIN


def mma(op: MmaOp, a, b, c, *, model: str = "spec", meta=None, scale_a=None, scale_b=None,
        lane_offset: int = 0, metadata_context: str = "tcgen05") -> MmaResult:
    """Expected D of one MMA from raw codes (see the module docstring for the pipeline).

    ``c`` is D's content before the MMA (codes, M x N): the accumulator when enable-input-d is
    true, and the value kept in disabled lanes either way.
    """
    return mma_models(op, a, b, c, models=(model,), meta=meta, scale_a=scale_a, scale_b=scale_b,
                      lane_offset=lane_offset, metadata_context=metadata_context)[model]


def mma_models(op: MmaOp, a, b, c, *, models=MODELS, meta=None, scale_a=None, scale_b=None,
               lane_offset: int = 0, metadata_context: str = "tcgen05") -> dict[str, MmaResult]:
    """:func:`mma` under each numerics model of ``models``: {model: MmaResult}. The steps no model
    changes (the multiplicands, scales, C's values, the disabled elements) run once."""
    for model in models:
        if model not in MODELS:
            raise SpecError(SECTION, "numerics model", expects_but_got("model", "spec or hardware", model))
    a_val, b_val, amb_rows = logical_operands(op, a, b, meta=meta, metadata_context=metadata_context)
    sa, sb = _scales(op, scale_a, scale_b)
    c = np.asarray(c)
    if c.shape != (op.m, op.n):
        raise _shape_err("C (D before the MMA)", (op.m, op.n), c.shape)
    off = disabled_elements(op, lane_offset)
    # C's values (and the check of its codes) where the MMA reads them: accumulated, or kept
    c_val = _decode_d(op.d_type, c) if op.enable_input_d or off.any() else None
    fused = {model: _fused(op, model, a_val, b_val, c_val, sa, sb) for model in models}
    return {model: _result(op, model, *fused[model], c, c_val, amb_rows, off) for model in models}


def _fused(op: MmaOp, model: str, a_val, b_val, c_val, sa, sb):
    """(D codes, values, tolerance) of one MMA under ``model`` from its multiplicands (new arrays,
    which :func:`_result` completes in place). Without
    enable-input-d the numerics models get the C term as the scalar 0.0 (broadcast: no M x N
    passes over zeros)."""
    shape = (op.m, op.n)
    if op.kind == "i8":
        c_term = c_val if op.enable_input_d else np.zeros(shape, dtype=np.int64)
        d_int = integer_mma(a_val, b_val, c_term, op.saturate)
        d, value, tol = F.encode("s32", d_int), d_int.astype(np.float64), np.zeros(shape)
    elif model == "spec":
        c_term = (c_val * 2.0 ** -op.scale_input_d if op.scale_input_d else c_val) if op.enable_input_d else 0.0
        value, tol = NS.spec_fused(op.kind, op.d_type, a_val, b_val, c_term, a_fmt=op.a_type, b_fmt=op.b_type,
                                   sa=sa, sb=sb, scale_fmt=op.scale_type)
        d = NS.representative_codes(value, op.d_type)
    else:
        c_term = c_val if op.enable_input_d else 0.0
        prm = HW.hw_params(op.kind, op.d_type)
        step = prm.step * (2 if op.sparse else 1)
        value = HW.hw_fused(op.kind, op.d_type, a_val, b_val, c_term, a_fmt=op.a_type, b_fmt=op.b_type,
                            sa=sa, sb=sb, scale_fmt=op.scale_type,
                            c_shift=op.scale_input_d if op.enable_input_d else 0, step=step)
        d, tol = HW.d_codes(value, op.d_type), np.zeros(shape)
    return d, value, tol


def _result(op: MmaOp, model: str, d, value, tol, c, c_val, amb_rows, off) -> MmaResult:
    """The MmaResult: disabled elements keep C, ambiguous rows marked where written. ``d``,
    ``value`` and ``tol`` are :func:`_fused`'s own new arrays (one set per model): C's codes and
    values are written into them in place (cast as ``astype`` casts)."""
    written = ~off
    if off.any():
        np.copyto(d, c, casting="unsafe", where=off)
        np.copyto(value, c_val, casting="unsafe", where=off)
        np.copyto(tol, 0.0, where=off)
    ambiguous = amb_rows[:, None] & written
    return MmaResult(d, value, tol, written, ambiguous, model if op.kind != "i8" else "exact")


# ----------------------------------------------------------------------------------------------
# D packing in Tensor Memory (§9.7.16.10.4.1)
# ----------------------------------------------------------------------------------------------

def d_words(codes, d_type: str) -> np.ndarray:
    """32-bit Tensor Memory words of D: 16-bit elements unpacked, in the low 16 bits (upper 0)."""
    return np.asarray(codes).astype(np.uint32) & (np.uint32(0xFFFF) if d_type == "f16" else np.uint32(0xFFFFFFFF))


def d_from_words(words, d_type: str) -> np.ndarray:
    """D codes from 32-bit words; f16 reads the low 16 bits and ignores the upper 16."""
    w = np.asarray(words, dtype=np.uint32)
    return (w & np.uint32(0xFFFF)).astype(np.uint16) if d_type == "f16" else w
