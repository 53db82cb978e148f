"""tcgen05.mma / .sp / .ws / .ws.sp variants (§9.7.16.10.9), legality from reference.tables.

Axes. *Table 39* (the base of every level): kind, .ws, cta_group, sparsity, dtype/atype/btype
(+ scale type), M, N (K follows; K = 96 rows are sm_103a only). *Kernel axes* (change the
spelling): A operand (TMEM or a shared-memory layout), collector usage, .ashift,
disable-output-lane, scale-input-d, zero-column mask, .scale_vectorsize. *Runtime axes*: B
layout, enable-input-d, negate, sparsity selector, scale-factor ids, saturate, max shift, LBO
mode. Levels:

* smoke: one case per Table-39 row (first combination, largest M, N rotating over the largest,
  the smallest and the one with most N-field bits), axes from the
  group's covering array; then a few more for kernel-axis values, descriptor and operand fields
  (``field_hole_pairs``) and sections (``section_hole_cases``) the first pass missed;
* default: every Table-39 combination; the other axes pairwise (per group of Table-39 rows
  with the same kind/.ws/cta_group/sparsity/K), every covering-array row used at least once;
* exhaustive: the default level plus the full product of Table-39 row x type combination x every
  valid spelling (kernel axes), with M, N and the runtime axes assigned from pairwise arrays.
  (A literal product with M, N and the runtime axes too is 4.4 million cases for the same set of
  kernels; measured, see docs/generators.md.)
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass
from functools import lru_cache

from generators.pairwise import pairwise
from generators.params import KERNEL_AXES, RUNTIME_AXES, Case, Params
from generators.ptx.mma import MmaSpelling, mma_kernel
from generators.variants.common import (
    assign_cyclic,
    make_case,
    operand_layouts,
    parse_layout,
    spec_ok,
    targets_for,
)
from reference import tables as T
from reference.block_scaling import check_scale_ids
from reference.datapath_layouts import layout_for
from reference.instr_descriptor import InstrDescriptor
from reference.smem_choice import choose_layout

COLLECTOR_OPS = ("fill", "use", "lastuse", "discard")
# disable-output-lane masks (runtime; words in generators/inputs/mma.py): none, every other lane
# (odd lanes in even words and even lanes in odd words, or the other way round, per case), lanes
# 32-63 of the issuing CTA, lanes 96-127 of the last CTA (the peer with cta_group::2)
DOL_PATTERNS = ("zero", "alternate_lanes", "warp1", "last_warp")
ZCM_PATTERNS = ("off", "example2", "example4")           # zero-column masks after §9.7.16.4.3 examples
NEGATE = ("none", "a", "b", "ab")


@dataclass(frozen=True)
class Base:
    """One Table-39 combination."""

    row: T.ShapeRow
    combo: T.TypeCombo
    m: int
    n: int

    @property
    def k96(self) -> bool:
        return self.row.k == 96


def _group_axes(row: T.ShapeRow) -> dict[str, tuple]:
    kind, scaled = row.kind, row.kind in T.BLOCK_SCALED_KINDS
    combos = T.TYPE_COMBOS[kind]
    a_layouts = tuple(dict.fromkeys(lay for c in combos for lay in operand_layouts(c.a_type)))
    b_layouts = tuple(dict.fromkeys(lay for c in combos for lay in operand_layouts(c.b_type)))
    plain = not row.ws and not scaled
    if row.ws:
        collectors = (None,) + tuple(f"b{i}::{op}" for i in range(4) for op in COLLECTOR_OPS)
    else:
        collectors = (None,) + tuple(f"a::{op}" for op in COLLECTOR_OPS)
    vecs = (None,) + tuple(dict.fromkeys(q for (k, _), qs in T.TABLE_55.items() if k == kind for q in qs)) if scaled else (None,)
    scale_ids = tuple(itertools.product(T.SCALE_ID_VALUES[kind], repeat=2)) if scaled else ((0, 0),)
    return {
        "a_operand": ("tmem",) + a_layouts,
        "collector": collectors,
        "ashift": (False, True) if plain else (False,),
        "dol": (None,) + DOL_PATTERNS if plain else (None,),
        "scale_input_d": (None,) + tuple(range(16)) if plain and kind in ("f16", "tf32") else (None,),
        "zcm": (None,) + ZCM_PATTERNS if row.ws else (None,),
        "scale_vec": vecs,
        "b_layout": b_layouts,
        "enable_input_d": (False, True),
        "negate": NEGATE if T.TABLE_49[kind][1] else ("none",),
        "selector": (0, 1, 2, 3) if row.sparse and kind in ("f16", "tf32") else (0,),
        "scale_ids": scale_ids,
        "saturate": (False, True) if kind == "i8" else (False,),
        "max_shift": (0, 8, 16, 32) if row.ws else (0,),
        "lbo_mode": ("relative", "absolute") if row.k == 96 else ("relative",),
    }


KMAJOR_SWIZZLED = ("sw32_k", "sw64_k", "sw128_k")


def _row_valid(r: dict) -> bool:
    """Rules between the non-Table-39 axes (syntax blocks of §9.7.16.10.9.1-4)."""
    if r.get("ashift"):
        # "It is illegal to specify either of .collector::a::use or .collector::a::fill along with .ashift";
        # .ashift appears only in the [a-tmem] forms.
        if r.get("a_operand") != "tmem" or r.get("collector") in ("a::fill", "a::use"):
            return False
    if r.get("lbo_mode") == "relative_lbo_set" and r.get("b_layout") not in KMAJOR_SWIZZLED:
        return False                    # nothing to set: B is not K-major swizzled
    if r.get("lbo_mode") == "absolute":
        # §9.7.16.3.1.2.1: absolute leading-dimension mode only with 128B swizzling
        if r.get("b_layout") != "sw128_k" or r.get("a_operand") not in ("tmem", "sw128_k"):
            return False
    return True


def spelling(row: T.ShapeRow, r: dict) -> MmaSpelling:
    return MmaSpelling(kind=row.kind, cta_group=row.cta_group, sparse=row.sparse, ws=row.ws,
                       scale_vec=r["scale_vec"], collector=r["collector"], ashift=r["ashift"],
                       a_tmem=r["a_operand"] == "tmem", dol=r["dol"] is not None,
                       scale_input_d=r["scale_input_d"], zcm=r["zcm"] is not None)


def descriptor(base: Base, r: dict) -> InstrDescriptor:
    """The instruction descriptor of a case (validated by reference.instr_descriptor)."""
    row, c = base.row, base.combo
    a_major = "K" if r["a_operand"] == "tmem" else parse_layout(r["a_operand"])[1]
    b_major = parse_layout(r["b_layout"])[1]
    neg = r["negate"]
    return InstrDescriptor(
        kind=row.kind, m=base.m, n=base.n, a_type=c.a_type, b_type=c.b_type, d_type=c.d_type,
        sparse=row.sparse, sparsity_selector=r["selector"], saturate=r["saturate"],
        negate_a=neg in ("a", "ab"), negate_b=neg in ("b", "ab"),
        transpose_a=a_major == "MN", transpose_b=b_major == "MN", max_shift=r["max_shift"],
        scale_type=c.scale_type, a_scale_id=r["scale_ids"][0], b_scale_id=r["scale_ids"][1], k96=base.k96)


def features(base: Base, r: dict) -> tuple[str, ...]:
    extra = ("K=96",) if base.k96 else ()
    extra += ("lbo absolute",) if r["lbo_mode"] == "absolute" else ()
    return spelling(base.row, r).features() + extra


@lru_cache(maxsize=None)
def tile_layout_ok(layout: str, dtype: str, kind: str, k: int) -> bool:
    """Whether an operand tile with ``k`` elements along K has a canonical layout in ``layout``
    (reference.smem_choice: a K-major swizzled row holds at most one swizzle row of K, §9.7.16.3.1.2,
    docs/layouts.md decision 5 -- e.g. the 64-byte K of sparse B does not fit a 32B swizzle row)."""
    swizzle, major = parse_layout(layout)
    return spec_ok(lambda: choose_layout(major, swizzle, dtype, 8, k, kind=kind))


def _valid(base: Base, r: dict) -> bool:
    row, c = base.row, base.combo
    if r["a_operand"] != "tmem" and r["a_operand"] not in operand_layouts(c.a_type):
        return False
    if r["b_layout"] not in operand_layouts(c.b_type):
        return False
    k_a = row.k // 2 if row.sparse else row.k
    if r["a_operand"] != "tmem" and not tile_layout_ok(r["a_operand"], c.a_type, row.kind, k_a):
        return False
    if not tile_layout_ok(r["b_layout"], c.b_type, row.kind, row.k):
        return False
    if r["ashift"] and base.m not in (128, 256):       # ".ashift is only allowed with M = 128 or M = 256"
        return False
    if c.scale_type is not None:
        vec = r["scale_vec"] or T.DEFAULT_SCALE_VEC[row.kind]
        if vec is None or not spec_ok(lambda: T.scale_factor_count(row.kind, vec, row.k, c.scale_type)):
            return False
        # §9.7.16.10.7.2-3: the scale factor ids a scale vector size allows (e.g. 4X: SFA_ID must be 0)
        sf = T.scale_factor_count(row.kind, vec, row.k, c.scale_type)
        if not spec_ok(lambda: check_scale_ids(row.kind, sf, *r["scale_ids"])):
            return False
    if not spec_ok(lambda: descriptor(base, r).check_legal(row.cta_group, row.ws)):
        return False
    return bool(targets_for(features(base, r)))


def case_id(base: Base, r: dict) -> str:
    row, c = base.row, base.combo
    parts = [spelling(row, r).opcode(), "sparse" if row.sparse else "dense",
             f"m{base.m}n{base.n}" + ("k96" if base.k96 else ""), c.d_type, c.a_type, c.b_type]
    if c.scale_type:
        parts.append(c.scale_type)
    parts += ["a_tmem"] if r["a_operand"] == "tmem" else ["a_smem", r["a_operand"]]
    parts.append("b_" + r["b_layout"])
    extras = [
        (r["dol"] is not None, f"dol_{r['dol']}"), (r["scale_input_d"] is not None, f"scale_input_d_{r['scale_input_d']}"),
        (r["zcm"] is not None, f"zcm_{r['zcm']}"), (r["enable_input_d"], "enable_input_d"),
        (r["negate"] != "none", f"neg_{r['negate']}"), (r["selector"] != 0, f"sel{r['selector']}"),
        (r["scale_ids"] != (0, 0), f"sfid_a{r['scale_ids'][0]}b{r['scale_ids'][1]}"),
        (r["saturate"], "satfinite"), (r["max_shift"] != 0, f"max_shift{r['max_shift']}"),
        (r["lbo_mode"] == "absolute", "lbo_absolute"), (r["lbo_mode"] == "relative_lbo_set", "kmajor_lbo_set"),
    ]
    return ".".join(parts + [text for on, text in extras if on])


def make_mma_case(base: Base, r: dict) -> Case:
    row, c = base.row, base.combo
    sp = spelling(row, r)
    kernel = mma_kernel(sp)
    params = Params.of(
        kind=row.kind, cta_group=row.cta_group, sparse=row.sparse, ws=row.ws, m=base.m, n=base.n, k=row.k,
        d_type=c.d_type, a_type=c.a_type, b_type=c.b_type, scale_type=c.scale_type,
        **{name: r[name] for name in KERNEL_AXES + RUNTIME_AXES},
        idesc=descriptor(base, r).encode())
    rule = f"Table 39: kind::{row.kind} {'.ws' if row.ws else 'no .ws'} cta_group::{row.cta_group} " \
           f"{'sparse' if row.sparse else 'dense'} M={base.m} N={base.n} K={row.k}"
    return make_case(case_id(base, r), sp.family, sp.section, kernel, params, features=features(base, r), rule=rule)


def _bases(row: T.ShapeRow) -> list[Base]:
    return [Base(row, c, m, n) for c in T.TYPE_COMBOS[row.kind] for m in row.m for n in row.n]


def _split(axes: dict[str, tuple]) -> tuple[dict, dict]:
    varying = {k: v for k, v in axes.items() if len(v) > 1}
    fixed = {k: v[0] for k, v in axes.items() if len(v) == 1}
    return varying, fixed


@lru_cache(maxsize=None)
def covering_rows(row: T.ShapeRow) -> tuple[dict, ...]:
    """The pairwise covering array of a Table-39 row's non-Table-39 axes (cached)."""
    varying, fixed = _split(_group_axes(row))
    rows = pairwise(varying, lambda r: _row_valid({**fixed, **r}), seed=zlib.crc32(repr((row.kind, row.ws, row.cta_group, row.sparse, row.k)).encode()))
    return tuple({**fixed, **r} for r in rows)


def _smoke_n(ns, i: int) -> int:
    """N of the i-th smoke row: the largest, the smallest, then the one whose N>>3 (the instruction
    descriptor's N field, Tables 42-44) has the most 1-bits, in turn (field coverage, issue 15)."""
    return (ns[-1], ns[0], max(ns, key=lambda n: (bin(n >> 3).count("1"), n)))[i % 3]


def _smoke(rows) -> list[Case]:
    """One case per Table-39 row, then one more for every kernel-axis value (per MMA family)
    the first pass missed, so every qualifier and operand form appears at least once."""
    picked: list[tuple[Base, dict]] = []
    for i, row in enumerate(rows):
        combos = T.TYPE_COMBOS[row.kind]
        base = Base(row, combos[i % len(combos)], row.m[-1], _smoke_n(row.n, i))
        ca = covering_rows(row)
        for j in range(len(ca)):
            r = ca[(i + j) % len(ca)]
            if _valid(base, r):
                picked.append((base, r))
                break
    family = lambda row: spelling(row, {a: None for a in KERNEL_AXES} | {"a_operand": "tmem", "ashift": False}).family  # noqa: E731
    covered = {(family(b.row), a, r[a]) for b, r in picked for a in KERNEL_AXES}
    for row in rows:
        for r in covering_rows(row):
            new = {(family(row), a, r[a]) for a in KERNEL_AXES} - covered
            if not new:
                continue
            base = next((b for b in _bases(row) if _valid(b, r)), None)
            if base is not None:
                picked.append((base, r))
                covered |= new
    for fam in dict.fromkeys(family(b.row) for b, _ in picked):
        picked += lbo_set_variant([(b, r) for b, r in picked if family(b.row) == fam])
    picked += field_hole_pairs(rows, picked)
    out = [make_mma_case(b, r) for b, r in picked]
    return out + section_hole_cases(rows, out)


def _majors(base: Base, r: dict) -> dict[str, str]:
    """{"A": major-ness, "B": major-ness} of the shared-memory operands of a case."""
    out = {"B": parse_layout(r["b_layout"])[1]}
    if r["a_operand"] != "tmem":
        out["A"] = parse_layout(r["a_operand"])[1]
    return out


def _lane16(base: Base) -> bool:
    """Whether the case's data-path layout allows lane alignment 16 (Layouts F and C, §9.7.16.10.5)."""
    row = base.row
    return 16 in layout_for(base.m, row.cta_group, sparse=row.sparse, ws=row.ws).lane_alignments


def _a_low_lane16(base: Base, r: dict) -> bool:
    """Whether the case's inputs place A in Tensor Memory at lane 16 and a column below 256 (the
    taddr bits 20 and 8 of A, §9.7.16.1.1; lane alignment and columns are drawn per case by
    ``generators.inputs.mma``)."""
    from generators.inputs import synthesize

    tm_a = int(synthesize(make_mma_case(base, r)).record["tm_a"])
    return tm_a >> 16 == 16 and tm_a & 0xFFFF < 256


def field_hole_pairs(rows, picked: list[tuple[Base, dict]]) -> list[tuple]:
    """A few more smoke cases for instruction-descriptor and operand fields the others leave
    constant (field coverage, issue 15): per kind, a K-major and an MN-major A and B in shared memory
    where the kind has them (the transpose bits of Tables 42-44, §9.7.16.4.2); one A in Tensor Memory
    at lane 16 of a Layout F or C data path and a column below 256 (taddr of A, §9.7.16.1.1)."""
    have = {(b.row.kind, op, major) for b, r in picked for op, major in _majors(b, r).items()}
    out = []
    for row in rows:
        for r in covering_rows(row):
            base = next((b for b in _bases(row) if _valid(b, r)), None)
            if base is None:
                continue
            new = {(row.kind, op, major) for op, major in _majors(base, r).items()} - have
            if new:
                out.append((base, r))
                have |= new
    lane16 = ((b, r) for row in rows for b in _bases(row) if _lane16(b)
              for r in covering_rows(row) if r["a_operand"] == "tmem" and _valid(b, r))
    pair = next((p for p in lane16 if _a_low_lane16(*p)), None)
    return out + ([pair] if pair else [])


def section_hole_cases(rows, have: list[Case]) -> list[Case]:
    """A few more smoke cases, each exercising a section (generators.sections) the others miss:
    per Table-39 row every M (data-path layouts, sparsity-metadata layouts by M), and per 4/6-bit
    A type an A in Tensor Memory (its packing sections); a candidate is kept only if it adds one."""
    from generators.sections import section_ids_of

    covered = {s for c in have for s in section_ids_of(c)}

    def candidates():
        for row in rows:
            combos = T.TYPE_COMBOS[row.kind]
            for m in row.m:
                yield Base(row, combos[0], m, row.n[-1]), covering_rows(row)
            for combo in combos:
                if T.ELEMENT_BITS[combo.a_type] in (4, 6):
                    yield Base(row, combo, row.m[-1], row.n[-1]), [r for r in covering_rows(row) if r["a_operand"] == "tmem"]

    out = []
    for base, options in candidates():
        r = next((r for r in options if _valid(base, r)), None)
        if r is None:
            continue
        case = make_mma_case(base, r)
        new = set(section_ids_of(case)) - covered
        if new:
            out.append(case)
            covered |= new
    return out


def _exhaustive_pairs(row: T.ShapeRow) -> list[tuple]:
    """Every type combination x every valid spelling of the row; (M, N) and the runtime axes
    assigned cyclically (pairwise array), trying further values until the case is legal."""
    axes = _group_axes(row)
    kernel_rows = [dict(zip(KERNEL_AXES, vals, strict=False)) for vals in itertools.product(*(axes[a] for a in KERNEL_AXES))]
    kernel_rows = [r for r in kernel_rows if _row_valid(r)]
    runtime_varying, runtime_fixed = _split({a: axes[a] for a in RUNTIME_AXES})
    runtime_rows = [{**runtime_fixed, **r} for r in pairwise(runtime_varying, seed=1)]
    shapes = [(m, n) for m in row.m for n in row.n]
    out = []
    i = 0
    for combo in T.TYPE_COMBOS[row.kind]:
        for kr in kernel_rows:
            i += 1
            for j in range(len(shapes) * 2):
                m, n = shapes[(i + j) % len(shapes)]
                r = {**kr, **runtime_rows[(i + j) % len(runtime_rows)]}
                base = Base(row, combo, m, n)
                if _row_valid(r) and _valid(base, r):
                    out.append((base, r))
                    break
    return out


def lbo_set_variant(pairs) -> list[tuple]:
    """One more case after ``pairs``: the first with a K-major swizzled B and relative LBO, its
    descriptors carrying an LBO other than 16 B (lbo_mode ``relative_lbo_set``). §9.7.16.3.1 says
    the K-major swizzled LBO is "not used"; NOTES 5: a case that varies it tells whether hardware
    ignores it. One per Table-39 row (per family at smoke), not a pairwise axis, so a hardware that
    honours the field fails a few attributable cases instead of a quarter of the matrix."""
    for base, r in pairs:
        if r["b_layout"] in KMAJOR_SWIZZLED and r["lbo_mode"] == "relative":
            variant = {**r, "lbo_mode": "relative_lbo_set"}
            if _valid(base, variant):
                return [(base, variant)]
    return []


def mma_cases(level: str) -> list[Case]:
    """Every MMA case of ``level`` in deterministic order (Table 39 row order; the rows in force,
    ``reference.tables.shape_table``: CuTe's K = 96 M = 128 rows last, under Q-K96-M128 = cute-m128)."""
    rows = T.shape_table()
    if level == "smoke":
        return _smoke(rows)
    out: list[Case] = []
    for row in rows:
        pairs = assign_cyclic(_bases(row), covering_rows(row), _valid)
        pairs += lbo_set_variant(pairs)
        if level == "exhaustive":
            pairs += _exhaustive_pairs(row)
        out.extend(make_mma_case(b, r) for b, r in pairs)
    if level == "exhaustive":
        out = list({c.case_id: c for c in out}.values())
    return out
