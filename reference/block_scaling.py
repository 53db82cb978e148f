"""Block scaling on logical scale matrices (PTX ISA §9.7.16.10.7, Tables 54 and 55).

``D = (A * scale_A) * (B * scale_B) + D``: ``scale_A`` is M x SF and ``scale_B`` is SF x N; row m of
A is cut into SF chunks of K / SF consecutive elements and chunk j is multiplied by
``scale_A[m, j]`` (columns of B likewise with ``scale_B[j, n]``). SF comes from Table 54:

    .scale_vectorsize          kinds                 K                SF
    scale_vec::1X / block32    mxf8f6f4              all              1
    scale_vec::2X / block32    mxf4, mxf4nvf4        64, 128          2
    block32 ("3X")             mxf4, mxf4nvf4        96               3
    scale_vec::4X / block16    mxf4nvf4              64, 128          4
    block16 ("6X")             mxf4nvf4              96               6

Decision (sparse K): K is the logical K (128 for sparse mxf4), so a sparse MMA's chunks are
K / SF = 64 logical columns = 32 stored elements of the compressed A -- the reading under which
Table 54's "M x 2 for all supported K" and the heading "scale_vec::2X/block32 with K=64/K=128"
agree.

Scale values: ue8m0 = 2^(code-127), 0xFF is NaN; ue4m3 = e4m3 with the sign bit ignored
(``reference.formats``). Where a scale factor sits in Tensor Memory (the SFA_ID / SFB_ID byte
offsets) is a placement question: the ids are validated here and have no effect on the values.
"""

from __future__ import annotations

import numpy as np

from reference import formats as F
from reference import tables as T
from reference.errors import SpecError, expects_but_got

SECTION = "9.7.16.10.7"

# CLI / API spellings -> Table 55 qualifier. "3X" and "6X" are the K = 96 forms of block32 / block16
# ("Semantically equivalent to scale_vec::3X / ::6X", §9.7.16.10.7.2.4-.5 headings).
SCALE_VEC_ALIASES: dict[str, str] = {
    "1X": "scale_vec::1X", "2X": "scale_vec::2X", "4X": "scale_vec::4X", "3X": "block32", "6X": "block16",
    "block16": "block16", "block32": "block32",
    "scale_vec::1X": "scale_vec::1X", "scale_vec::2X": "scale_vec::2X", "scale_vec::4X": "scale_vec::4X",
}


def resolve_scale_vec(kind: str, scale_vec: str | None, k: int, scale_type: str = "ue8m0") -> tuple[str, int]:
    """(Table 55 qualifier, SF) for a block-scaled MMA; ``None`` takes the default of §9.7.16.10.9.1.

    ``3X`` / ``6X`` are accepted only with K = 96; every other form goes through Tables 54/55.
    """
    T.check_kind(kind)
    if kind not in T.BLOCK_SCALED_KINDS:
        raise SpecError(SECTION, "block scaling", expects_but_got("kind", "mxf8f6f4, mxf4 or mxf4nvf4", kind))
    if scale_vec is None:
        qualifier = T.DEFAULT_SCALE_VEC[kind]
        if qualifier is None:
            raise SpecError("9.7.16.10.9.1", ".scale_vectorsize", expects_but_got(
                "scale_vectorsize for kind::mxf4nvf4", "an explicit qualifier (no default)", None))
    else:
        qualifier = SCALE_VEC_ALIASES.get(scale_vec)
        if qualifier is None:
            raise SpecError(SECTION, "Table 54", expects_but_got("scale_vectorsize", "one of " + ", ".join(SCALE_VEC_ALIASES), scale_vec))
        if scale_vec in ("3X", "6X") and k != 96:
            raise SpecError(SECTION, "Table 54", expects_but_got(f"K for .{scale_vec}", "96", k))
    return qualifier, T.scale_factor_count(kind, qualifier, k, scale_type)


def legal_scale_ids(kind: str, sf: int) -> tuple[int, ...]:
    """SFA_ID / SFB_ID values for ``sf`` scale factors per row (§9.7.16.10.7.2-3, ``T.SCALE_IDS_BY_SF``).

    1X: 0-3 (byte offset); 2X: 0 or 2 (half-word offset); 4X: must be 0; K = 96: block32 (SF = 3)
    0-3 (Figures 234-237, although Table 44 lists 0 and 2), block16 (SF = 6) 0 or 2 (Figures 238-239).
    """
    T.check_kind(kind)
    return T.SCALE_IDS_BY_SF[sf]


def check_scale_ids(kind: str, sf: int, a_scale_id: int, b_scale_id: int) -> None:
    legal = legal_scale_ids(kind, sf)
    for name, v in (("a_scale_id", a_scale_id), ("b_scale_id", b_scale_id)):
        if v not in legal:
            raise SpecError(SECTION, "Scale Factor A/B ID", expects_but_got(f"{name} for kind::{kind} with {sf} scale factors",
                            " or ".join(map(str, legal)), v))


def check_scale_shapes(m: int, n: int, sf: int, scale_a, scale_b) -> tuple[np.ndarray, np.ndarray]:
    sa, sb = np.asarray(scale_a), np.asarray(scale_b)
    if sa.shape != (m, sf):
        raise SpecError(SECTION, "Table 54", expects_but_got("scale_A shape", f"M x SF = {(m, sf)}", sa.shape))
    if sb.shape != (sf, n):
        raise SpecError(SECTION, "Table 54", expects_but_got("scale_B shape", f"SF x N = {(sf, n)}", sb.shape))
    return sa, sb


def scale_values(scale_type: str, codes) -> np.ndarray:
    """float64 values of scale codes (ue8m0: 0xFF -> NaN; ue4m3: sign bit ignored)."""
    if scale_type not in T.SCALE_TYPES:
        raise SpecError(SECTION, "Table 55", expects_but_got("scale type", "ue8m0 or ue4m3", scale_type))
    return F.decode(scale_type, codes)


def per_k(scale_a, scale_b, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Scale factors broadcast along K: (M x K) for A and (K x N) for B; chunk = K / SF columns."""
    sa, sb = np.asarray(scale_a), np.asarray(scale_b)
    sf = sa.shape[1]
    if k % sf:
        raise SpecError(SECTION, "Table 54", expects_but_got(f"K divisible by SF = {sf}", "True", k))
    block = k // sf
    return np.repeat(sa, block, axis=1), np.repeat(sb, block, axis=0)
