"""Probe cases of the spec questions (``reference.spec_questions``, docs/spec-questions.md), and
which questions a suite case depends on.

A probe of question Q is one of the suite's own cases (found in the smoke level by its
parameters) whose outcome differs between Q's readings, with inputs synthesised once per reading:
under reading R the inputs are placed, and the expected values computed, as R says. A device
passes the comparison of exactly the reading it follows (``conformance.harness.probes``).

:func:`questions_of` says which questions a case's expected values depend on, from its parameters.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Callable

import numpy as np

from generators.inputs import NUMERICS, SEMANTIC, CaseInputs, seed_of, synthesize
from generators.params import Case
from reference.numerics_hw import ALIGN_QUESTION_KINDS
from reference.smem_descriptor import SmemDescriptor
from reference.spec_questions import QUESTIONS, defaults, following, is_explicit, question
from reference.spec_questions import reading as _reading
from reference.tables import BLOCK_SCALED_KINDS


@dataclass(frozen=True)
class Probe:
    """How question ``qid`` is probed: the base case (a predicate over smoke cases, the first match
    wins), what the probe kernel does, and how its inputs differ from the case's own."""

    qid: str
    kernel: str
    pick_case: Callable[[Case], bool]
    inputs: Callable[[Case], CaseInputs] = synthesize
    make_case: Callable[[], Case] | None = None     # a case built here when no smoke case fits
    refused: tuple[str, ...] = ()     # readings under which the device refuses the kernel (a legality question)
    # readings under which the kernel's outcome is undefined (a legality question about a runtime
    # descriptor value, which no assembler refuses): a refused launch, or a completed one whose D
    # no other reading predicts, matches them
    undefined: tuple[str, ...] = ()

    def defined(self) -> tuple[str, ...]:
        """The readings whose launch has expected values (data placed and D computed as they say)."""
        return tuple(r for r in QUESTIONS[self.qid].reading_ids() if r not in self.refused + self.undefined)


def _mma_case(kind: str, m: int, n: int, *, cta_group: int, sparse: bool, ws: bool = False,
              combo=lambda t: True, rows=None, readings=None, layouts=None, **want) -> Callable[[], Case]:
    """A Table-39 MMA case of this shape, outside the smoke level: the first legal combination of
    its row's pairwise covering array (``generators.variants.mma``) with the ``want``ed axis values
    and a type combination ``combo`` accepts (``rows``: these shape rows instead of Table 39's,
    legal under the spec-question ``readings``; ``layouts``: ``{"a_operand": ..., "b_layout": ...}``
    put in place of the wanted ones after the check -- layouts outside the case lists' legal matrix,
    whose tiles must be legal under ``readings``)."""
    def build() -> Case:
        from generators.variants import mma as VM
        from reference import tables as T

        with following(readings or {}):
            for row in rows or T.shape_rows(kind, ws=ws, cta_group=cta_group, sparse=sparse):
                if (row.kind, row.cta_group, row.sparse, row.ws) != (kind, cta_group, sparse, ws) or m not in row.m:
                    continue
                for types in filter(combo, T.TYPE_COMBOS[row.kind]):
                    base = VM.Base(row, types, m, n)
                    for r in VM.covering_rows(row):
                        r = {**r, **want}
                        if VM._valid(base, r) and r["a_operand"] != "tmem" and r["lbo_mode"] == "relative":
                            r = {**r, **(layouts or {})}
                            if _tiles_legal(base, r):
                                return VM.make_mma_case(base, r)
        raise LookupError(f"no legal kind::{kind} M={m} N={n} cta_group::{cta_group} case")
    return build


def _tiles_legal(base, r) -> bool:
    """Whether both shared-memory tiles of an MMA case have a canonical layout under the readings
    in force (``reference.smem_choice.choose_layout``: Tables 52-53, the K extent of a swizzle row)."""
    from generators.variants.common import parse_layout, spec_ok
    from reference.smem_choice import choose_layout

    row, c = base.row, base.combo
    k_a = row.k // 2 if row.sparse else row.k
    tiles = [(r["b_layout"], c.b_type, row.k)] + ([(r["a_operand"], c.a_type, k_a)] if r["a_operand"] != "tmem" else [])
    for layout, dtype, k in tiles:
        swizzle, major = parse_layout(layout)
        if not spec_ok(partial(choose_layout, major, swizzle, dtype, 8, k, kind=row.kind)):
            return False
    return True


def _cute_k96_rows():
    from reference.tables import CUTE_K96_ROWS

    return CUTE_K96_ROWS


def _kmajor_base32b_case() -> Case:
    """Q-KMAJOR-BASE32B: a kind::f16 cta_group::1 M = 128 MMA with A and B K-major in 128B_base32B
    (legal only under legal-8-rows / legal-4-rows, so built outside the case lists): the first type
    combination and N, in Table 39's order, whose synthesized tiles start on a 32-byte chunk with
    base offset 0 (so the probe does not depend on Q-BASE-OFFSET as well)."""
    from reference.tables import TYPE_COMBOS, shape_rows

    readings = {"Q-KMAJOR-BASE32B": "legal-8-rows"}
    row = next(r for r in shape_rows("f16", ws=False, cta_group=1, sparse=False) if 128 in r.m)
    for types, n in itertools.product(TYPE_COMBOS["f16"], row.n):
        case = _mma_case("f16", 128, n, cta_group=1, sparse=False, combo=types.__eq__, readings=readings,
                         a_operand="sw128_k", b_layout="sw128_k",
                         layouts={"a_operand": "sw128b32_k", "b_layout": "sw128b32_k"})()
        with following(readings):
            record = synthesize(case).record
        starts = [SmemDescriptor.decode(int(record[key])) for key in ("a_desc", "b_desc")]
        if all(d.base_offset == 0 and d.start_address % 32 == 0 for d in starts):
            return case
    raise LookupError("probe of Q-KMAJOR-BASE32B expects an f16 M=128 case whose tiles start on 32-byte chunks "
                      "with base offset 0, but got none")


def _mma_with(change) -> Callable[[Case], CaseInputs]:
    """The case's MMA inputs (``generators.inputs.mma``) with ``change(logical)`` applied."""
    def build(case: Case) -> CaseInputs:
        from generators.inputs import mma as MI

        rng = np.random.default_rng(seed_of(case.case_id))
        logical = change(MI.logical_operands(MI.mma_op(case.params), rng, SEMANTIC))
        rec, blocks, _, region = MI.place_mma(case.params, logical, rng)
        return CaseInputs(rec, blocks.blocks(), MI.LANES * region.ncols, {"mma": logical, "region": region}, ())
    return build


def _a_per_quarter(logical):
    """Q-WS-A-LANES: under ``own-quarter`` each lane quarter of the .ws layout holds a different A (A's
    rows rotated by the block number), the expected D of block b being ``a_blocks[b]`` * B; under
    ``first-quarter`` A sits in the first quarter only (random words in the others), as placed."""
    from reference.datapath_layouts import layout_for
    from reference.spec_questions import reading
    from reference.tmem_mma_operands import quarter_blocks

    op = logical.op
    if reading("Q-WS-A-LANES") != "own-quarter":
        return logical
    blocks = quarter_blocks(layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws))
    return replace(logical, a_blocks=tuple(np.roll(logical.a, b, axis=0) for b in range(blocks)))


def _all_0110(logical):
    return replace(logical, meta=np.full_like(logical.meta, 0b0110))


def _tf32_past_half(logical):
    """Q-TF32-TRUNC: bit 12 of every tf32 container set (the semantic inputs keep it clear): the low
    13 bits are then at least half a tf32 unit, so rounding to nearest moves the value and
    truncation does not."""
    from generators.inputs.values import TF32_HALF_UNIT

    half = np.uint64(TF32_HALF_UNIT)
    return replace(logical, a=logical.a | half, b=logical.b | half)


def _smallest(fmt: str) -> float:
    from reference import formats as F

    _, vals = F.all_values(fmt)
    return float(vals[np.isfinite(vals) & (vals > 0)].min())


def _with_products(logical, pairs, c: float):
    """The logical operands with every D(i, j) = c + sum of a*b over ``pairs`` (values after
    negation; A's other columns zero, so every other product is zero)."""
    from reference import formats as F

    op = logical.op
    a, b = np.zeros_like(logical.a), np.zeros_like(logical.b)
    for k, (x, y) in enumerate(pairs):
        a[:, k] = F.encode(op.a_type, np.full(a.shape[0], -x if op.negate_a else x))
        b[k, :] = F.encode(op.b_type, np.full(b.shape[1], -y if op.negate_b else y))
    cc = np.full_like(logical.c, int(F.encode(op.d_type, np.array([c]))[0]) if c else 0)
    return replace(logical, a=a, b=b, c=cc)


def _product_below_alignment(logical):
    """Q-FP8-ALIGN (§9.7.16.10.6): every D(i, j) = C + p with C = 2^E and one product
    p = -(smallest A value)(smallest B value) wholly below the last fraction bit kept after alignment
    (E = exponent of |p| + 26, the hardware model's F = 25): truncation toward zero drops p (D = C),
    toward -inf makes it -2^(E-25) (D = C - 2^(E-24) after RZ to f32)."""
    sa, sb = _smallest(logical.op.a_type), _smallest(logical.op.b_type)
    return _with_products(logical, [(sa, -sb)], 2.0 ** (int(np.floor(np.log2(sa * sb))) + 26))


def _tiny_products(logical):
    """Q-E-ZERO: products 2^-145 and -2^-165 and a zero one, C = 0 (tf32 operands, D f32)."""
    return _with_products(logical, [(2.0 ** -70, 2.0 ** -75), (2.0 ** -80, -(2.0 ** -85)), (0.0, 1.0)], 0.0)


def _overflowing_products(logical):
    """Q-RZ-OVERFLOW: products 2^127 + 2^127 = 2^128, C = 0 (tf32 operands, D f32)."""
    return _with_products(logical, [(2.0 ** 64, 2.0 ** 63)] * 2, 0.0)


def _p(case: Case, **want) -> bool:
    return all(case.params.get(k) == v for k, v in want.items())


def _scaled_c_below_f32(logical):
    """Q-SCALE-INPUT-D: C = (1 + 2^-23) 2^-126 and one product -2^-(148+s), s = scale-input-d in 4..7.
    Exact: C * 2^-s = 2^-(126+s) + 2^-(149+s) plus the product is just below 2^-(126+s) (D, RZ:
    2^-(126+s) - 2^-149). Rounded first: C * 2^-s becomes the subnormal 2^-(126+s), whose nominal
    exponent -126 puts the product below the last aligned bit (D = 2^-(126+s))."""
    s = logical.op.scale_input_d
    half = (148 + s) // 2
    out = _with_products(logical, [(2.0 ** -half, -(2.0 ** -(148 + s - half)))], 0.0)
    c = np.full_like(logical.c, 0x00800001)              # (1 + 2^-23) * 2^-126 in f32
    return replace(out, c=c)


def _saturating_products(logical):
    """Q-I8-SAT: C = 2^31 - 101, products 127*127 then (-127)*127 (A is s8)."""
    out = _with_products(logical, [(127, 127), (-127, 127)], 0.0)
    return replace(out, c=np.full_like(logical.c, 2 ** 31 - 101))


def _st_preloaded(case: Case) -> CaseInputs:
    """Q-UNPACK-UPPER: the st case's inputs with the stored region preloaded with random words."""
    from generators.inputs.movement import st_inputs

    return st_inputs(case, np.random.default_rng(seed_of(case.case_id)))


def _signed_zeros(case: Case) -> CaseInputs:
    """Q-LDRED-ZERO: every loaded cell a signed zero, register 0 of each thread +0 and the others -0
    (.min; .max the opposite signs): neg-below gives the others' zero, zeros-equal register 0's."""
    from generators.inputs.movement import ld_inputs
    from reference.tmem import TensorMemory, TmemAddress
    from reference.tmem_fragments import fragment_map, ld

    p = case.params
    width = fragment_map(p["shape"], p["num"], half_split=p["imm"], op="ld").columns
    first, rest = (0, 0x80000000) if p["redop"] == "min" else (0x80000000, 0)
    cells = np.full((128, width), rest, dtype=np.uint32)
    index = TensorMemory()
    index.cells[:, :width] = np.arange(128 * width, dtype=np.uint32).reshape(128, width)
    for w in range(4):                       # the cell each thread's register 0 comes from
        reg0 = ld(index, TmemAddress(p["lane_offset"] + 32 * w, 0), p["shape"], p["num"], half_split=p["imm"],
                  warp_id=w)[:, 0]
        cells[reg0 // width, reg0 % width] = first
    return ld_inputs(case, np.random.default_rng(seed_of(case.case_id)), cells=cells)


def _tf32_f32(c: Case) -> bool:
    return c.family == "mma" and _p(c, kind="tf32", d_type="f32", ashift=False, lbo_mode="relative", sparse=False)


def based_descriptors(inputs: CaseInputs) -> list[int]:
    """The shared-memory descriptors of a case's record whose base offset is not 0."""
    from reference.smem_descriptor import SmemDescriptor

    out = []
    for key in ("a_desc", "b_desc", "s_desc"):
        raw = inputs.record.get(key)
        if raw is not None and SmemDescriptor.decode(int(raw)).base_offset:
            out.append(int(raw))
    return out


def _based_tile(c: Case) -> bool:
    """An MMA case (dense, f16) whose synthesized inputs place a swizzled tile at base offset != 0."""
    if c.family != "mma" or not _p(c, kind="f16", sparse=False, lbo_mode="relative"):
        return False
    return bool(based_descriptors(synthesize(c)))


PROBES: dict[str, Probe] = {p.qid: p for p in (
    Probe("Q-ZCM-SPAN", "tcgen05.mma.ws kind::f16 M=32 N=64, zero-column mask of Table 45 example 2 (skip 2, use 3)",
          lambda c: c.family == "mma.ws" and _p(c, kind="f16", m=32, zcm="example2", sparse=False)),
    Probe("Q-ZCM-SHIFT", "tcgen05.mma.ws kind::f16 M=32 N=64, zero-column mask of Table 45 example 4 (column shift 2)",
          lambda c: c.family == "mma.ws" and _p(c, kind="f16", m=32, zcm="example4", sparse=False)),
    Probe("Q-LBO-KSW", "tcgen05.mma kind::f16 cta_group::2 M=256 N=16, B K-major 32B swizzle, descriptor LBO 32..1008 B",
          lambda c: c.family == "mma" and _p(c, lbo_mode="relative_lbo_set")),
    Probe("Q-LAYOUT-C", "tcgen05.mma.sp kind::f16 cta_group::2 M=128 N=64 (Layout C), D read back from all 128 lanes",
          lambda c: False, make_case=_mma_case("f16", 128, 64, cta_group=2, sparse=True)),
    Probe("Q-BASE-OFFSET", "tcgen05.mma kind::f16 whose swizzled tile's pattern and start are at block + 128*j "
          "(descriptor base offset j != 0)", _based_tile),
    Probe("Q-WS-A-LANES", "tcgen05.mma.ws kind::f16 M=32 N=64, A in Tensor Memory: a different A in each lane quarter "
          "(own-quarter: D column block b reads lanes 32b..32b+31) or A in lanes 0-31 only (first-quarter)",
          lambda c: c.family == "mma.ws" and _p(c, kind="f16", m=32, a_operand="tmem", sparse=False),
          _mma_with(_a_per_quarter)),
    Probe("Q-META-0110", "tcgen05.mma.sp kind::f16, every metadata nibble 0b0110",
          lambda c: c.family == "mma.sp" and _p(c, kind="f16", lbo_mode="relative", ashift=False), _mma_with(_all_0110)),
    Probe("Q-META-TMEM", "tcgen05.mma.sp kind::f16 cta_group::1 M=128, random metadata (which lane holds a row's chunks)",
          lambda c: c.family == "mma.sp" and _p(c, kind="f16", m=128, cta_group=1, ws=False, lbo_mode="relative",
                                                 ashift=False)),
    Probe("Q-FP8-ALIGN", "tcgen05.mma kind::f8f6f4 D f32 (enable-input-d): C = 2^E and one product -2^(E-26) per "
          "element (e2m3 x e3m2: C = 2^19, product -2^-7), below the last aligned fraction bit",
          lambda c: c.family == "mma" and _p(c, kind="f8f6f4", d_type="f32", enable_input_d=True, sparse=False),
          _mma_with(_product_below_alignment)),
    Probe("Q-SFB-2CTA", "tcgen05.mma kind::mxf8f6f4 cta_group::2 M=256 N=256: lead = all N scale factors of B in each "
          "CTA, split = each CTA's SFB its N/2 columns (laid out for N/2)",
          lambda c: c.family == "mma" and _p(c, kind="mxf8f6f4", cta_group=2, sparse=False)),
    Probe("Q-K96-M128", "tcgen05.mma kind::mxf4 block32 K = 96 cta_group::1 M=128 N=64 (sm_103a, CuTe's "
          "SM103_MXF4_ULTRA_SS_VS shape): refused (table-39) or D = A*B (cute-m128)",
          lambda c: False, make_case=lambda: _mma_case("mxf4", 128, 64, cta_group=1, sparse=False, rows=_cute_k96_rows(),
                                                       readings={"Q-K96-M128": "cute-m128"}, scale_vec="block32")(),
          refused=("table-39",)),
    Probe("Q-KMAJOR-BASE32B", "tcgen05.mma kind::f16 cta_group::1 M=128, A and B K-major 128B_base32B "
          "(descriptor swizzle mode 1; built outside the case lists): D = A*B with 8-row or 4-row SBO groups "
          "(legal-8-rows, legal-4-rows), or a refused launch / any other D (table-53)",
          lambda c: False, make_case=_kmajor_base32b_case, undefined=("table-53",)),
    Probe("Q-SFB-2X2", "tcgen05.mma kind::mxf8f6f4 cta_group::2 M=128 N=64, random scale factor per B column: "
          "replicated = all 64 columns in every lane quarter, by-datapath = columns 0-31 in lanes 0-63, 32-63 in 64-127",
          lambda c: False, make_case=_mma_case("mxf8f6f4", 128, 64, cta_group=2, sparse=False)),
    Probe("Q-E-ZERO", "tcgen05.mma kind::tf32 D f32, C = 0: products 2^-145, -2^-165 and a zero product per element",
          _tf32_f32, _mma_with(_tiny_products)),
    Probe("Q-I8-SAT", "tcgen05.mma kind::i8 (s8 A) .satfinite with enable-input-d M=128 N=64: C = 2^31 - 101, "
          "products +16129 then -16129 per element",
          lambda c: False, _mma_with(_saturating_products),
          make_case=_mma_case("i8", 128, 64, cta_group=1, sparse=False, combo=lambda t: t.a_type == "s8",
                              saturate=True, enable_input_d=True, negate="none", dol=None)),
    Probe("Q-RZ-OVERFLOW", "tcgen05.mma kind::tf32 D f32, C = 0: products 2^127 + 2^127 per element (RZ overflow)",
          _tf32_f32, _mma_with(_overflowing_products)),
    Probe("Q-DOL-2CTA", "tcgen05.mma cta_group::2 M=256 with only element 7 of disable-output-lane set (bits 224-255): "
          "lanes 96-127 of CTA 1 kept, or no lane (elements 4-7 unused)",
          lambda c: c.family == "mma" and _p(c, cta_group=2, dol="last_warp", sparse=False)),
    Probe("Q-SCALE-INPUT-D", "tcgen05.mma kind::tf32 D f32 with enable-input-d and scale-input-d s in 4..7: C = "
          "(1 + 2^-23) 2^-126 and one product -2^-(148+s) per element",
          lambda c: c.family == "mma" and _p(c, kind="tf32", d_type="f32", enable_input_d=True, sparse=False)
          and 4 <= (c.params.get("scale_input_d") or 0) <= 7, _mma_with(_scaled_c_below_f32)),
    Probe("Q-TF32-TRUNC", "tcgen05.mma kind::tf32, every operand's low 13 container bits at least half a tf32 unit",
          lambda c: c.family == "mma" and _p(c, kind="tf32", ashift=False, lbo_mode="relative", sparse=False),
          _mma_with(_tf32_past_half)),
    Probe("Q-K96-SFW", "tcgen05.mma kind::mxf4 K = 96 block32 cta_group::2 M=256 N=16, B scale id 2 (bytes 2-4)",
          lambda c: c.family == "mma" and _p(c, k=96, n=16)),
    Probe("Q-SHIFT-ROW0", "tcgen05.shift.down on random Tensor Memory: row 0 afterwards (old content or zero)",
          lambda c: c.family == "shift"),
    Probe("Q-LDRED-ZERO", "tcgen05.ld.red .min.f32 (no .abs, no .NaN), register 0 of every thread +0 and the "
          "others -0: redval -0 (neg-below) or +0 (zeros-equal)",
          lambda c: c.family == "ld.red" and _p(c, type="f32", abs=False, nan=False, redop="min"), _signed_zeros),
    Probe("Q-UNPACK-UPPER", "tcgen05.st .unpack::16b over preloaded random Tensor Memory, cells read back: "
          "bits 16-31 zero, or the preloaded bits", lambda c: c.family == "st" and _p(c, unpack=True), _st_preloaded),
    Probe("Q-CP-NIBBLE", "tcgen05.cp .b8x16.b4x16_p64 (4-bit to 8-bit decompression), then tcgen05.ld",
          lambda c: c.family == "cp" and _p(c, decompress="b4x16_p64")),
    Probe("Q-ASHIFT-ROW0", "tcgen05.mma kind::f16 .ashift M=128 N=8 (A in Tensor Memory): D row 0",
          lambda c: c.family == "mma" and _p(c, kind="f16", ashift=True)),
)}


def probe_for(qid: str) -> Probe | None:
    question(qid)
    return PROBES.get(qid)


@lru_cache(maxsize=4)
def _smoke_cases(readings: tuple[tuple[str, str], ...]) -> tuple[Case, ...]:
    """The smoke level's legal cases under ``readings`` (the defaults in force; enumerated once,
    not once per probe)."""
    from generators.variants import cases

    return tuple(cases("smoke", negatives=False))


def probe_case(qid: str) -> Case:
    """The suite case a question's probe runs (first smoke case the probe's predicate accepts)."""
    probe = PROBES[qid]
    if probe.make_case is not None:
        return probe.make_case()
    for c in _smoke_cases(tuple(sorted(defaults().items()))):
        if c.legal and probe.pick_case(c):
            return c
    raise LookupError(f"probe of {qid} expects a smoke case its predicate accepts, but got none")


def probe_inputs(qid: str, case: Case) -> dict[str, CaseInputs]:
    """``{reading: inputs placed as that reading says}`` for every reading of ``qid``."""
    probe = PROBES[qid]
    legal = probe.defined()
    out = {}
    for r in QUESTIONS[qid].reading_ids():
        with following({qid: r if r in legal else legal[0]}):     # refused / undefined: the same kernel and data
            out[r] = probe.inputs(case)
    return out


# -- which questions a case depends on ---------------------------------------------------------------

def _swizzled_smem(p) -> bool:
    """Whether a case stages a swizzled shared-memory operand (its tile may get a base offset)."""
    layouts = (p.get("a_operand"), p.get("b_layout"))
    return any(isinstance(v, str) and v.startswith("sw") and not v.startswith("swnone") for v in layouts) \
        or p.get("src_swizzle") not in (None, "none")


def _k_major_swizzled(layout) -> bool:
    return isinstance(layout, str) and layout.endswith("_k") and not layout.startswith("swnone") and layout != "tmem"


def _k96_groups_differ(p) -> bool:
    """Whether a K = 96 case reads a scale-factor byte past byte 3 from an operand whose columns of
    one set of four bytes are not a multiple of 4 (where Q-K96-SFW's readings part)."""
    from generators.inputs.mma import mma_op
    from reference.tmem_mma_operands import scale_factor_columns

    with following({"Q-K96-M128": "cute-m128"} if p.get("m") == 128 else {}):     # legal only so
        op = mma_op(p)
    sf = op.scale_factors
    operands = ((op.m // op.cta_group, op.a_scale_id), (op.n, op.b_scale_id))
    return any(sid + sf - 1 >= 4 and scale_factor_columns(mn) % 4 for mn, sid in operands)


def questions_of(case: Case, mode: str = SEMANTIC, numerics: str = "spec",
                 inputs: CaseInputs | None = None) -> tuple[str, ...]:
    """The spec questions whose reading changes this case's expected values (from its parameters,
    the input ``mode``, the ``--numerics`` model of numerics companions and, when given, its
    synthesized ``inputs``: Q-BASE-OFFSET only where a descriptor has a base offset; without
    inputs, wherever a shared-memory operand is swizzled).

    Questions the suite's cases never meet are absent: metadata 0b0110 (never fed), ``.ashift``
    row 0 (compared nowhere while unsettled), signed zeros of ``ld.red`` (never fed). The ``.unpack::16b``
    upper half and the shifted row 0 count only once their reading was chosen (compared only then). Semantic inputs are exact under every reading of
    Q-TF32-TRUNC and Q-FP8-ALIGN (``generators.inputs.values``); numerics companions are not.
    """
    p = case.params
    based = ("Q-BASE-OFFSET",) if (based_descriptors(inputs) if inputs is not None else _swizzled_smem(p)) else ()
    if case.family == "cp":
        return based + (("Q-CP-NIBBLE",) if p.get("decompress") == "b4x16_p64" else ())
    if case.family == "shift":          # row 0 is compared only once the reading was chosen
        return ("Q-SHIFT-ROW0",) if is_explicit("Q-SHIFT-ROW0") else ()
    if case.family == "st" and p.get("unpack"):     # likewise the upper half of .unpack::16b cells
        return ("Q-UNPACK-UPPER",) if is_explicit("Q-UNPACK-UPPER") else ()
    if not case.family.startswith("mma") and case.family != "sync":
        return based
    out = list(based)
    zcm = p.get("zcm")
    if zcm not in (None, "off"):
        from generators.inputs.mma import ZCM

        if ZCM[zcm].skip_span != ZCM[zcm].use_span:
            out.append("Q-ZCM-SPAN")
        if ZCM[zcm].column_shift:
            out.append("Q-ZCM-SHIFT")
    if p.get("sparse") and p.get("kind") in ("f16", "tf32") and p.get("m", 0) // p.get("cta_group", 1) == 128:
        out.append("Q-META-TMEM")
    if case.family.startswith("mma.ws") and p.get("a_operand") == "tmem" and p.get("m") in (32, 64) \
            and question("Q-WS-A-LANES").pick != _reading("Q-WS-A-LANES"):
        out.append("Q-WS-A-LANES")         # A in the first quarter only: only the other reading computes D
    if p.get("k") == 96 and _k96_groups_differ(p):
        out.append("Q-K96-SFW")
    if p.get("k") == 96 and p.get("m") == 128:      # legal only under cute-m128
        out.append("Q-K96-M128")
    if "sw128b32_k" in (p.get("a_operand"), p.get("b_layout")):     # legal only under legal-8-rows / -4-rows
        out.append("Q-KMAJOR-BASE32B")
    numeric = mode == NUMERICS and case.family != "sync"
    if "tf32" in (p.get("a_type"), p.get("b_type")) and numeric:
        out.append("Q-TF32-TRUNC")
    if p.get("kind") in ALIGN_QUESTION_KINDS and numeric and numerics == "hardware":
        out.append("Q-FP8-ALIGN")
    if numeric and numerics == "hardware" and p.get("kind") != "i8":     # random codes reach both ends
        out.append("Q-E-ZERO")
        if p.get("d_type") == "f32":
            out.append("Q-RZ-OVERFLOW")
        if p.get("scale_input_d") and p.get("enable_input_d"):      # row 0 of C is subnormal
            out.append("Q-SCALE-INPUT-D")
    if p.get("kind") == "i8" and p.get("saturate") and p.get("enable_input_d"):     # C near the limits
        out.append("Q-I8-SAT")
    if p.get("cta_group") == 2 and p.get("dol") in ("warp1", "last_warp"):      # odd_lanes / zero: the same lanes
        out.append("Q-DOL-2CTA")
    if p.get("cta_group") == 2 and p.get("m") == 128 and p.get("sparse"):
        out.append("Q-LAYOUT-C")
    if p.get("cta_group") == 2 and p.get("kind") in BLOCK_SCALED_KINDS:
        out.append("Q-SFB-2CTA")
        if p.get("m") == 128:
            out.append("Q-SFB-2X2")
    if p.get("lbo_mode") == "relative_lbo_set" and (_k_major_swizzled(p.get("a_operand"))
                                                     or _k_major_swizzled(p.get("b_layout"))):
        out.append("Q-LBO-KSW")
    return tuple(out)


__all__ = ["Probe", "PROBES", "probe_for", "probe_case", "probe_inputs", "questions_of"]
