"""The spec's tables as data (PTX ISA §9.7.16).

Every other module reads legality from here; nothing re-derives it. Each datum names the table
it transcribes. Where the rendered table is ambiguous the decision is written beside the row.

Contents
  Table 39  kind × .ws × cta_group × sparsity × dtype × atype/btype → M, N, K   (§9.7.16.2.1)
  Table 41  swizzle mode → alignment of the repeating pattern                  (§9.7.16.4.1)
  Tables 42-44  instruction-descriptor type codes per kind                     (§9.7.16.4.2)
  Tables 47/48  .num × .shape → number of 32-bit registers                     (§9.7.16.8.3-4)
  Table 49  transpose / negate support per kind                                (§9.7.16.10.1)
  Table 50  N for 8-bit transposed B                                           (§9.7.16.10.1)
  Table 52  type size × major-ness → swizzle modes                             (§9.7.16.10.3)
  Table 53  swizzle atom shapes                                                (§9.7.16.10.6)
  Tables 54/55  scale vector sizes                                             (§9.7.16.10.7.1)
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve

# ---------------------------------------------------------------------------------------------
# MMA kinds (§9.7.16.10)
# ---------------------------------------------------------------------------------------------

KINDS: tuple[str, ...] = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED_KINDS: frozenset[str] = frozenset({"mxf8f6f4", "mxf4", "mxf4nvf4"})
TYPE_WORDS: tuple[str, ...] = (
    "f16", "bf16", "tf32", "f32", "s32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "u8", "s8",
)
SCALE_TYPES: tuple[str, ...] = ("ue8m0", "ue4m3")
F8F6F4_TYPES: tuple[str, ...] = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
# Significant bits of each type word (tf32: its 32-bit container, as it occupies memory).
ELEMENT_BITS: dict[str, int] = {
    "f32": 32, "tf32": 32, "s32": 32, "f16": 16, "bf16": 16,
    "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4,
}


def check_kind(kind: str) -> str:
    """Validate an MMA kind word (``f16``, ``tf32``, ..., ``mxf4nvf4``; §9.7.16.10)."""
    if kind not in KINDS:
        raise SpecError("9.7.16.10", "MMA kinds", expects_but_got("kind", "one of " + ", ".join(KINDS), kind))
    return kind


# ---------------------------------------------------------------------------------------------
# Table 39: shapes
# ---------------------------------------------------------------------------------------------

def _steps(start: int, stop: int, step: int) -> tuple[int, ...]:
    return tuple(range(start, stop + 1, step))


N_STEP8 = _steps(8, 256, 8)          # N = {8, 16, 24, ... 256}
N_STEP16 = _steps(16, 256, 16)       # N = {16, 32, ... 256}
N_I8_CG1 = (8, 16, 24, 32) + _steps(48, 256, 16)   # "steps of 16 after N > 32"
N_I8_CG2 = _steps(32, 256, 32)       # N = {32, 64, ... 256}
N_WS_DENSE = (64, 128, 256)
N_WS_SPARSE = (64, 128)


@dataclass(frozen=True)
class ShapeRow:
    """One row of Table 39: for these qualifiers, M in ``m``, N in ``n``, and K fixed.

    ``targets`` is empty when the row exists on every tcgen05 target, else the only targets
    that have it (K = 96: sm_103a only, §9.7.16.2.1.1).
    """

    kind: str
    ws: bool
    cta_group: int
    sparse: bool
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: int
    targets: tuple[str, ...] = ()


# K per kind (dense, sparse): Table 39 column K.
DENSE_SPARSE_K: dict[str, tuple[int, int]] = {
    "f16": (16, 32), "tf32": (8, 16), "f8f6f4": (32, 64), "i8": (32, 64),
    "mxf8f6f4": (32, 64), "mxf4": (64, 128), "mxf4nvf4": (64, 128),
}


def _table39() -> tuple[ShapeRow, ...]:
    rows: list[ShapeRow] = []
    for kind in ("f16", "tf32", "f8f6f4", "i8"):
        kd, ks = DENSE_SPARSE_K[kind]
        n1, n2 = (N_I8_CG1, N_I8_CG2) if kind == "i8" else (N_STEP8, N_STEP16)
        for sparse, k in ((False, kd), (True, ks)):
            rows.append(ShapeRow(kind, False, 1, sparse, (64, 128), n1, k))
            rows.append(ShapeRow(kind, False, 2, sparse, (128, 256), n2, k))
            # .ws: cta_group::1 only ("2 | Either | Invalid")
            rows.append(ShapeRow(kind, True, 1, sparse, (32, 64, 128), N_WS_SPARSE if sparse else N_WS_DENSE, k))
    # mxf8f6f4: cta_group::1 M = 128; cta_group::2 dense M = 128/256, sparse M = 256; no .ws.
    kd, ks = DENSE_SPARSE_K["mxf8f6f4"]
    rows += [
        ShapeRow("mxf8f6f4", False, 1, False, (128,), N_STEP8, kd),
        ShapeRow("mxf8f6f4", False, 1, True, (128,), N_STEP8, ks),
        ShapeRow("mxf8f6f4", False, 2, False, (128, 256), N_STEP16, kd),
        ShapeRow("mxf8f6f4", False, 2, True, (256,), N_STEP16, ks),
    ]
    # mxf4 / mxf4nvf4: as mxf8f6f4, plus dense 256xNx96 with cta_group::2 on sm_103a (K1 = 96).
    for kind in ("mxf4", "mxf4nvf4"):
        kd, ks = DENSE_SPARSE_K[kind]
        rows += [
            ShapeRow(kind, False, 1, False, (128,), N_STEP8, kd),
            ShapeRow(kind, False, 1, True, (128,), N_STEP8, ks),
            ShapeRow(kind, False, 2, False, (128, 256), N_STEP16, kd),
            ShapeRow(kind, False, 2, False, (256,), N_STEP16, 96, ("sm_103a",)),
            ShapeRow(kind, False, 2, True, (256,), N_STEP16, ks),
        ]
    return tuple(rows)


TABLE_39: tuple[ShapeRow, ...] = _table39()

# CuTe's sm_103 K = 96 atoms (docs/clients-cute.md CU2): SM103_MXF4_ULTRA_SS_VS (cta_group::1, M = 128) and
# SM103_MXF4_ULTRA_2x1SM_SS_VS (cta_group::2, M = 128 or 256). Rows outside Table 39, legal only under
# spec question Q-K96-M128 = cute-m128 (:func:`shape_table`).  N: what the atoms accept, 16..256 in steps of 16
# (static_assert, cute/arch/mma_sm100_umma.hpp:1643 and 1712; the cta_group::2 row is Table 39's K = 64 N anyway);
# cta_group::1 N = 8, 24, ... (Table 39's K = 64 row) has no source with K = 96.
CUTE_K96_ROWS: tuple[ShapeRow, ...] = tuple(
    row for kind in ("mxf4", "mxf4nvf4") for row in (
        ShapeRow(kind, False, 1, False, (128,), N_STEP16, 96, ("sm_103a",)),
        ShapeRow(kind, False, 2, False, (128,), N_STEP16, 96, ("sm_103a",))))


@dataclass(frozen=True)
class TypeCombo:
    """dtype × atype × btype (× scale type) allowed for a kind by Table 39 / Table 55."""

    d_type: str
    a_type: str
    b_type: str
    scale_type: str | None = None


def _type_combos() -> dict[str, tuple[TypeCombo, ...]]:
    # kind::f16: D f16 with f16 inputs; D f32 with f16 or bf16 inputs. Decision: A and B share
    # one type (the spec lists "atype/btype" jointly; public SM100 code rejects mixing f16 with
    # bf16). kind::i8: s8/u8 each independently (as warp-level mma does).
    f16 = (TypeCombo("f16", "f16", "f16"), TypeCombo("f32", "f16", "f16"), TypeCombo("f32", "bf16", "bf16"))
    tf32 = (TypeCombo("f32", "tf32", "tf32"),)
    f8 = tuple(TypeCombo(d, a, b) for d in ("f32", "f16") for a in F8F6F4_TYPES for b in F8F6F4_TYPES)
    i8 = tuple(TypeCombo("s32", a, b) for a in ("s8", "u8") for b in ("s8", "u8"))
    mxf8 = tuple(TypeCombo("f32", a, b, "ue8m0") for a in F8F6F4_TYPES for b in F8F6F4_TYPES)
    mxf4 = (TypeCombo("f32", "e2m1", "e2m1", "ue8m0"),)
    mxf4nv = (TypeCombo("f32", "e2m1", "e2m1", "ue8m0"), TypeCombo("f32", "e2m1", "e2m1", "ue4m3"))
    return {"f16": f16, "tf32": tf32, "f8f6f4": f8, "i8": i8, "mxf8f6f4": mxf8, "mxf4": mxf4, "mxf4nvf4": mxf4nv}


TYPE_COMBOS: dict[str, tuple[TypeCombo, ...]] = _type_combos()


def shape_table() -> tuple[ShapeRow, ...]:
    """The shape rows in force: Table 39, plus CuTe's K = 96 rows with M = 128 (:data:`CUTE_K96_ROWS`) under spec
    question ``Q-K96-M128`` = ``cute-m128`` (the suite's pick: CUTLASS example 89 issues M = 128 K = 96 on sm_103a,
    docs/clients-cute.md CU9).  The one legality table of tcgen05.mma shapes: :func:`check_shape` (the reference's
    and the simulator's descriptor check) and the variant matrix (``generators.variants.mma``) read it."""
    return TABLE_39 + (CUTE_K96_ROWS if resolve("Q-K96-M128", None) == "cute-m128" else ())


def shape_rows(kind: str, *, ws: bool | None = None, cta_group: int | None = None,
               sparse: bool | None = None) -> tuple[ShapeRow, ...]:
    """Rows of :func:`shape_table` for ``kind`` matching the given qualifiers (None = any)."""
    check_kind(kind)
    return tuple(r for r in shape_table() if r.kind == kind
                 and (ws is None or r.ws == ws)
                 and (cta_group is None or r.cta_group == cta_group)
                 and (sparse is None or r.sparse == sparse))


def mma_k(kind: str, sparse: bool, *, k96: bool = False) -> int:
    """K implied by kind and sparsity (§9.7.16.2.2: "K ... implicitly determined", Table 39)."""
    check_kind(kind)
    if k96:
        if kind not in ("mxf4", "mxf4nvf4") or sparse:
            raise SpecError("9.7.16.2.1", "Table 39", expects_but_got("K = 96", "kind mxf4/mxf4nvf4, dense", f"{kind}, {'sparse' if sparse else 'dense'}"))
        return 96
    return DENSE_SPARSE_K[kind][1 if sparse else 0]


def check_shape(kind: str, m: int, n: int, *, cta_group: int = 1, sparse: bool = False,
                ws: bool = False, k96: bool = False) -> ShapeRow:
    """Check M and N against :func:`shape_table` (Table 39; K = 96 with M = 128 also CuTe's rows under spec
    question ``Q-K96-M128`` = ``cute-m128``, the pick); returns the matching row or raises SpecError."""
    rows = shape_rows(kind, ws=ws, cta_group=cta_group, sparse=sparse)
    qual = f"kind::{kind}{' .ws' if ws else ''} cta_group::{cta_group} {'sparse' if sparse else 'dense'}"
    if not rows:
        raise SpecError("9.7.16.2.1", "Table 39", f"{qual} is Invalid")
    k = mma_k(kind, sparse, k96=k96)
    rows = tuple(r for r in rows if r.k == k)
    ms = sorted({mm for r in rows for mm in r.m})
    for r in rows:
        if m in r.m:
            if n not in r.n:
                raise SpecError("9.7.16.2.1", "Table 39", expects_but_got(f"N for {qual} M={m}", _describe(r.n), n))
            return r
    raise SpecError("9.7.16.2.1", "Table 39", expects_but_got(f"M for {qual} K={k}", f"one of {ms}", m))


def _describe(values: tuple[int, ...]) -> str:
    if len(values) > 6:
        return f"one of {{{values[0]}, {values[1]}, ..., {values[-1]}}}"
    return f"one of {list(values)}"


def check_types(kind: str, d_type: str, a_type: str, b_type: str, scale_type: str | None = None) -> TypeCombo:
    """Check a dtype/atype/btype(/scale) combination against Table 39 and Table 55."""
    check_kind(kind)
    combo = TypeCombo(d_type, a_type, b_type, scale_type if kind in BLOCK_SCALED_KINDS else None)
    if combo not in TYPE_COMBOS[kind]:
        legal = "; ".join(f"{c.d_type}<-{c.a_type}x{c.b_type}" + (f" scale {c.scale_type}" if c.scale_type else "")
                          for c in TYPE_COMBOS[kind][:6])
        more = " ..." if len(TYPE_COMBOS[kind]) > 6 else ""
        got = f"{d_type}<-{a_type}x{b_type}" + (f" scale {scale_type}" if scale_type else "")
        raise SpecError("9.7.16.2.1", "Table 39", expects_but_got(f"types for kind::{kind}", legal + more, got))
    return combo


# ---------------------------------------------------------------------------------------------
# Table 41: start of the swizzle repeating pattern
# ---------------------------------------------------------------------------------------------

# swizzle name -> byte boundary at which its repeating pattern starts (base offset 0).
# 128B with 32B atomicity repeats like 128B (public code treats it alike; the table names
# "128-Byte swizzle" only).
SWIZZLE_PATTERN_BYTES: dict[str, int] = {"128B": 1024, "128B_base32B": 1024, "64B": 512, "32B": 256, "none": 0}

# ---------------------------------------------------------------------------------------------
# Tables 42-44: instruction descriptor type codes
# ---------------------------------------------------------------------------------------------

D_TYPE_CODES: dict[str, int] = {"f16": 0, "f32": 1, "s32": 2}            # Table 42 bits 4-5
D_TYPES_BY_KIND: dict[str, tuple[str, ...]] = {                            # Table 42 "Values" columns
    "tf32": ("f32",), "f16": ("f16", "f32"), "f8f6f4": ("f16", "f32"), "i8": ("s32",),
}
A_B_TYPE_CODES: dict[str, dict[str, int]] = {                             # Tables 42-44 bits 7-9 / 10-12
    "tf32": {"tf32": 2},
    "f16": {"f16": 0, "bf16": 1},
    "f8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "i8": {"u8": 0, "s8": 1},
    "mxf8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1},
}
SCALE_TYPE_CODES: dict[str, dict[str, int]] = {                           # Tables 43-44 bit 23
    "mxf8f6f4": {"ue8m0": 1},
    "mxf4": {"ue8m0": 1},
    "mxf4nvf4": {"ue8m0": 1, "ue4m3": 0},
}
MAX_SHIFT_CODES: dict[int, int] = {0: 0, 8: 1, 16: 2, 32: 3}              # Table 42 bits 30-31
SCALE_ID_VALUES: dict[str, tuple[int, ...]] = {                           # Tables 43-44 bits 4-5, 29-30
    "mxf8f6f4": (0, 1, 2, 3), "mxf4": (0, 2), "mxf4nvf4": (0, 2),
}
# Scale factor A/B ids per number of scale factors per row (§9.7.16.10.7.2-3 text and figures):
# 1X: byte offset 0-3; 2X: half-word offset 0 or 2; 4X: "must be 0"; block32 K=96 (3 per row):
# Figures 234-237 show ids 00, 01, 10, 11; block16 K=96 (6 per row): Figures 238-239 show 00, 10.
SCALE_IDS_BY_SF: dict[int, tuple[int, ...]] = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,), 3: (0, 1, 2, 3), 6: (0, 2)}


def descriptor_scale_ids(kind: str, k96: bool = False) -> tuple[int, ...]:
    """Scale ids an instruction descriptor of ``kind`` may hold (Tables 43-44 and §9.7.16.10.7.2-3).

    The descriptor does not know .scale_vectorsize, so this is the union over the vector sizes
    legal for the kind and K. Erratum: Table 44 says "0 or 2" for mxf4/mxf4nvf4, but the K = 96
    block32 layouts (Figures 234-237, 243-...) use ids 0-3; with the K-dimension bit set we accept 0-3.
    """
    check_kind(kind)
    if kind not in SCALE_ID_VALUES:
        return (0,)
    if kind in ("mxf4", "mxf4nvf4") and k96:
        return tuple(sorted(set(SCALE_IDS_BY_SF[3]) | set(SCALE_IDS_BY_SF[6])))
    return SCALE_ID_VALUES[kind]

# ---------------------------------------------------------------------------------------------
# Tables 47/48: register counts of tcgen05.ld / tcgen05.st
# ---------------------------------------------------------------------------------------------

LDST_SHAPES: tuple[str, ...] = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
LDST_NUMS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
# 32-bit registers per thread for .x1 of each shape; .xN multiplies; at most 128 registers.
_REGS_X1: dict[str, int] = {"32x32b": 1, "16x64b": 1, "16x32bx2": 1, "16x128b": 2, "16x256b": 4}


def _table47() -> dict[tuple[str, int], int]:
    return {(s, n): _REGS_X1[s] * n for s in LDST_SHAPES for n in LDST_NUMS if _REGS_X1[s] * n <= 128}


TABLE_47: dict[tuple[str, int], int] = _table47()   # tcgen05.ld (NA combinations absent)
TABLE_48: dict[tuple[str, int], int] = dict(TABLE_47)  # tcgen05.st: the same numbers


def ldst_registers(shape: str, num: int, *, op: str = "ld") -> int:
    """32-bit registers per thread of ``tcgen05.{ld,st}.<shape>.x<num>`` (Table 47 / Table 48)."""
    table, name, sec = (TABLE_47, "Table 47", "9.7.16.8.3") if op == "ld" else (TABLE_48, "Table 48", "9.7.16.8.4")
    if shape not in LDST_SHAPES:
        raise SpecError(sec, name, expects_but_got(".shape", "one of " + ", ".join("." + s for s in LDST_SHAPES), shape))
    if (shape, num) not in table:
        legal = [n for n in LDST_NUMS if (shape, n) in table]
        raise SpecError(sec, name, expects_but_got(f".num for .{shape}", f"one of .x{legal[0]} ... .x{legal[-1]} (NA beyond)", f".x{num}"))
    return table[(shape, num)]


# ---------------------------------------------------------------------------------------------
# Table 49 / Table 50: transpose and negate
# ---------------------------------------------------------------------------------------------

# kind -> (transpose A/B supported, negate A/B supported)
TABLE_49: dict[str, tuple[bool, bool]] = {
    "tf32": (True, True), "f16": (True, True), "f8f6f4": (True, True), "mxf8f6f4": (True, True),
    "i8": (True, False), "mxf4": (False, True), "mxf4nvf4": (False, True),
}
# 8-bit transposed B: cta_group -> legal N (Table 50)
TABLE_50: dict[int, tuple[int, ...]] = {1: _steps(16, 256, 16), 2: _steps(32, 256, 32)}

# ---------------------------------------------------------------------------------------------
# Table 52 / Table 53: major-ness and swizzling
# ---------------------------------------------------------------------------------------------

SWIZZLES: tuple[str, ...] = ("none", "128B_base32B", "128B", "64B", "32B")
MAJORS: tuple[str, ...] = ("K", "MN")


def table52_swizzles(type_bits: int, major: str) -> tuple[str, ...]:
    """Swizzle modes allowed for an operand whose elements take ``type_bits`` bits of shared memory (Table 52).

    K-major ("Row" A / "Column" B): all modes, every type size. MN-major (transposed): 8/16-bit
    all but 128B with 32B atomicity; 32-bit only 128B with 32B atomicity; 4-bit (two per byte,
    kind::mxf4/mxf4nvf4) none.

    ``type_bits`` is the *slot* an element takes in shared memory, not its significant bits: the
    4/6-bit types of kind::f8f6f4 / mxf8f6f4 sit 16 to a 16-byte unit (§9.7.16.10.4.4), i.e. in
    8-bit slots, and are treated as 8-bit here. Decision (spec-ambiguous): Table 52 has no
    transposed row for 4/6-bit types, but Table 49 allows transpose for f8f6f4/mxf8f6f4 and public
    SM100 code (CUTLASS ``sm1xx_common.inl``) builds MN-major layouts of unpacked f4/f6 operands.
    """
    if major == "K":
        return SWIZZLES
    if major != "MN":
        raise SpecError("9.7.16.10.3", "Table 52", expects_but_got("major-ness", "K or MN", major))
    if type_bits in (8, 16):
        return tuple(s for s in SWIZZLES if s != "128B_base32B")
    if type_bits == 32:
        return ("128B_base32B",)
    return ()


# (swizzle, leading dimension) -> atom shape in 128-bit elements, rows x cols as printed in
# Table 53 ("M/N" = MN-major, "K" = K-major). 128B with 32B atomicity has no K-major atom.
TABLE_53: dict[tuple[str, str], tuple[int, int]] = {
    ("128B_base32B", "MN"): (8, 4),
    ("128B", "MN"): (8, 8), ("128B", "K"): (8, 8),
    ("64B", "MN"): (4, 8), ("64B", "K"): (8, 4),
    ("32B", "MN"): (2, 8), ("32B", "K"): (8, 2),
    ("none", "MN"): (1, 8), ("none", "K"): (8, 1),
}

KMAJOR_BASE32B = "Q-KMAJOR-BASE32B"


def legal_swizzles(type_bits: int, major: str, reading: str | None = None) -> tuple[str, ...]:
    """The swizzle modes an operand of this slot width and major-ness may use: Table 52's, less
    those without a Table 53 atom, which is spec question ``Q-KMAJOR-BASE32B`` (K-major 128B with
    32B atomicity): Table 52 lists "all swizzling modes" for K-major, Table 53 has no K-major atom
    for it ("–"). Under ``table-53`` (the pick) the mode is not legal for K-major; under
    ``legal-8-rows`` / ``legal-4-rows`` it is (``reference.smem_layout.kmajor_group_rows``).
    The one table-driven predicate of the shared-memory legal matrix: ``check_combination`` (the
    reading in force) and the case lists (``generators.variants.common.operand_layouts``: the pick)."""
    allowed = table52_swizzles(type_bits, major)
    if resolve(KMAJOR_BASE32B, reading) != "table-53":
        return allowed
    return tuple(s for s in allowed if (s, major) in TABLE_53)

# ---------------------------------------------------------------------------------------------
# Tables 54/55: block scaling
# ---------------------------------------------------------------------------------------------

SCALE_VEC_QUALIFIERS: tuple[str, ...] = ("scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32")


@dataclass(frozen=True)
class ScaleVecRow:
    """Table 54 row: scale_A is M x ``sf``, scale_B is ``sf`` x N."""

    qualifier: str
    kind: str
    k: int | None      # None: every supported K (other than one listed separately)
    sf: int


def _table54() -> tuple[ScaleVecRow, ...]:
    rows = [ScaleVecRow("scale_vec::1X", "mxf8f6f4", None, 1),
            ScaleVecRow("block32", "mxf8f6f4", None, 1)]
    for kind in ("mxf4", "mxf4nvf4"):
        rows += [ScaleVecRow("scale_vec::2X", kind, None, 2), ScaleVecRow("block32", kind, 96, 3),
                 ScaleVecRow("block32", kind, None, 2)]
    rows += [ScaleVecRow("scale_vec::4X", "mxf4nvf4", None, 4), ScaleVecRow("block16", "mxf4nvf4", 96, 6),
             ScaleVecRow("block16", "mxf4nvf4", None, 4)]
    return tuple(rows)


TABLE_54: tuple[ScaleVecRow, ...] = _table54()

# Default .scale_vectorsize when the qualifier is omitted (§9.7.16.10.9.1): mxf4 -> .block32;
# mxf4nvf4 must spell it; mxf8f6f4 has a single choice (1X == block32).
DEFAULT_SCALE_VEC: dict[str, str | None] = {"mxf8f6f4": "scale_vec::1X", "mxf4": "block32", "mxf4nvf4": None}

# Table 55: (kind, scale type) -> allowed .scale_vectorsize qualifiers.
TABLE_55: dict[tuple[str, str], tuple[str, ...]] = {
    ("mxf8f6f4", "ue8m0"): ("scale_vec::1X", "block32"),
    ("mxf4", "ue8m0"): ("scale_vec::2X", "block32"),
    ("mxf4nvf4", "ue8m0"): ("scale_vec::2X", "block32", "scale_vec::4X", "block16"),
    ("mxf4nvf4", "ue4m3"): ("scale_vec::4X", "block16"),
}


def scale_factor_count(kind: str, qualifier: str, k: int, scale_type: str = "ue8m0") -> int:
    """Columns of scale_A (= rows of scale_B) for a block-scaled MMA (Tables 54, 55)."""
    allowed = TABLE_55.get((kind, scale_type))
    if allowed is None:
        raise SpecError("9.7.16.10.7.1", "Table 55", expects_but_got(f"scale type for kind::{kind}",
                        "ue8m0" + (" or ue4m3" if kind == "mxf4nvf4" else ""), scale_type))
    if qualifier not in allowed:
        raise SpecError("9.7.16.10.7.1", "Table 55", expects_but_got(f".scale_vectorsize for kind::{kind} with {scale_type}",
                        "one of " + ", ".join("." + q for q in allowed), "." + qualifier))
    rows = [r for r in TABLE_54 if r.qualifier == qualifier and r.kind == kind]
    exact = [r for r in rows if r.k == k]
    if exact:
        return exact[0].sf
    if k == 96 and qualifier.startswith("scale_vec"):
        # K = 96 is expressed only through .block16/.block32 (Table 54 lists no scale_vec row for it).
        raise SpecError("9.7.16.10.7.1", "Table 54", expects_but_got("qualifier for K = 96", ".block16 or .block32", "." + qualifier))
    return next(r.sf for r in rows if r.k is None)
