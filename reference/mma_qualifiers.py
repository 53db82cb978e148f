"""One ``tcgen05.mma`` variant with its operands' qualifiers, and the rules between them.

PTX ISA §9.7.16.10.9.1-.4 (instruction texts), §9.7.16.10.1 (Table 49), §9.7.16.2.1 (Table 39),
§9.7.16.10.7 (Tables 54, 55). :class:`MmaOp` holds everything that changes the *value* of D:
kind, types, M, N, sparsity, .ws, .cta_group, negation, saturation, enable-input-d,
scale-input-d, .ashift, the scale vector size, disable-output-lane and the .ws zero-column mask.
Collector usage changes no value; :func:`check_collector_usage` checks its legality only.

Syntax facts used (from the six syntax blocks of each instruction):

* ``disable-output-lane`` exists only in the non-block-scaled, non-.ws forms; 4 x 32-bit for
  cta_group::1, 8 x 32-bit for cta_group::2 (one bit per Tensor Memory lane).
* ``scale-input-d`` exists only for kind::f16 and kind::tf32, values 0..15 (NOTES.md item 8).
* ``.ashift`` exists only for A in Tensor Memory, non-.ws, M = 128 or 256, and not with
  ``.collector::a::use`` / ``::fill``.
* ``.ws``: cta_group::1 only, kinds f16/tf32/f8f6f4/i8, optional zero-column mask; B collector
  buffers b0-b3.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from reference import tables as T
from reference.block_scaling import check_scale_ids, resolve_scale_vec
from reference.errors import SpecError, expects_but_got
from reference.spec_questions import following, resolve
from reference.zero_column_mask import ZeroColumnMaskDescriptor

SECTION = "9.7.16.10.9.1"
WS_KINDS = ("f16", "tf32", "f8f6f4", "i8")
SCALE_INPUT_D_KINDS = ("f16", "tf32")
COLLECTOR_OPS = ("fill", "use", "lastuse", "discard")


def _err(rule: str, what: str, expected: str, got: object, section: str = SECTION) -> SpecError:
    return SpecError(section, rule, expects_but_got(what, expected, got))


@dataclass(frozen=True)
class MmaOp:
    """Value-relevant qualifiers and immediates of one ``tcgen05.mma{.sp}{.ws}``.

    ``scale_vec`` is a Table 55 qualifier or alias ("1X", "2X", "4X", "3X", "6X", "block16",
    "block32"; None = the kind's default). ``disable_output_lane`` is the vector of 32-bit
    values (None = operand absent). ``shapes_checked=False`` skips Table 39's M/N lists (for
    logical experiments on small matrices); K is always the kind's K.
    """

    kind: str
    a_type: str
    b_type: str
    d_type: str
    m: int
    n: int
    sparse: bool = False
    ws: bool = False
    cta_group: int = 1
    k96: bool = False
    scale_type: str | None = None
    scale_vec: str | None = None
    a_scale_id: int = 0
    b_scale_id: int = 0
    negate_a: bool = False
    negate_b: bool = False
    saturate: bool = False
    enable_input_d: bool = True
    scale_input_d: int = 0
    ashift: bool = False
    sparsity_selector: int = 0
    max_shift: int = 0
    disable_output_lane: tuple[int, ...] | None = None
    zero_column_mask: ZeroColumnMaskDescriptor | None = None
    shapes_checked: bool = True

    def __post_init__(self) -> None:
        if self.kind in T.BLOCK_SCALED_KINDS and self.scale_type is None:
            object.__setattr__(self, "scale_type", "ue8m0")
        if self.disable_output_lane is not None:
            object.__setattr__(self, "disable_output_lane", tuple(self.disable_output_lane))
        self.validate()

    # ------------------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """K of the MMA (Table 39; logical K for sparse A)."""
        return T.mma_k(self.kind, self.sparse, k96=self.k96)

    @property
    def block_scaled(self) -> bool:
        return self.kind in T.BLOCK_SCALED_KINDS

    @property
    def scale_factors(self) -> int:
        """SF: columns of scale_A / rows of scale_B (Table 54); 0 for kinds without block scaling."""
        if not self.block_scaled:
            return 0
        return resolve_scale_vec(self.kind, self.scale_vec, self.k, self.scale_type)[1]

    # ------------------------------------------------------------------------------------------
    def validate(self) -> None:
        kind = T.check_kind(self.kind)
        for name in ("sparse", "ws", "k96", "negate_a", "negate_b", "saturate", "enable_input_d", "ashift", "shapes_checked"):
            if not isinstance(getattr(self, name), bool):
                raise _err("qualifiers", name, "a boolean", getattr(self, name))
        _check_types(kind, self.d_type, self.a_type, self.b_type, self.scale_type)
        if self.cta_group not in (1, 2):
            raise _err(".cta_group", "cta_group", "1 or 2", self.cta_group)
        if self.shapes_checked:
            _check_shape(kind, self.m, self.n, self.cta_group, self.sparse, self.ws, self.k96, resolve("Q-K96-M128", None))
        elif not (isinstance(self.m, int) and isinstance(self.n, int) and self.m > 0 and self.n > 0):
            raise _err("Table 39", "M and N", "positive integers", (self.m, self.n))
        _, negate_ok = T.TABLE_49[kind]
        if (self.negate_a or self.negate_b) and not negate_ok:
            raise _err("Table 49", f"negate for kind::{kind}", "false (not supported)", True, "9.7.16.10.1")
        if self.saturate and kind != "i8":
            raise _err("Table 42 bit 3", f"saturate for kind::{kind}", "false (integer kind only)", True, "9.7.16.4.2")
        self._validate_block_scaling()
        self._validate_optional_operands()
        self._validate_ws()
        if self.sparse:
            from reference.sparsity import check_sparsity_selector
            check_sparsity_selector(kind, self.sparsity_selector)
        elif self.sparsity_selector:
            raise _err("Table 42 bits 0-1", "sparsity_selector of a dense MMA", "0", self.sparsity_selector, "9.7.16.4.2")

    def _validate_block_scaling(self) -> None:
        if self.block_scaled:
            _, sf = resolve_scale_vec(self.kind, self.scale_vec, self.k, self.scale_type)
            check_scale_ids(self.kind, sf, self.a_scale_id, self.b_scale_id)
        elif self.scale_vec is not None or self.a_scale_id or self.b_scale_id:
            raise _err("Table 54", f"scale_vectorsize / scale ids for kind::{self.kind}", "none (no block scaling)",
                       (self.scale_vec, self.a_scale_id, self.b_scale_id), "9.7.16.10.7")

    def _validate_optional_operands(self) -> None:
        s = self.scale_input_d
        if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= 15:
            raise _err("scale-input-d", "scale-input-d", "an integer in [0, 15]", s)
        if s and (self.kind not in SCALE_INPUT_D_KINDS or self.ws):
            raise _err("scale-input-d", f"scale-input-d for kind::{self.kind}{' .ws' if self.ws else ''}",
                       "0 (only kind::f16 and kind::tf32, non-.ws forms)", s)
        lanes = self.disable_output_lane
        if lanes is not None:
            if self.ws or self.block_scaled:
                raise _err("disable-output-lane", "disable-output-lane", "absent for .ws and block-scaled forms", lanes)
            want = 4 * self.cta_group
            if len(lanes) != want or any(not isinstance(v, int) or not 0 <= v < 1 << 32 for v in lanes):
                raise _err("disable-output-lane", f"disable-output-lane for cta_group::{self.cta_group}",
                           f"{want} unsigned 32-bit values", lanes)
        if self.ashift:
            if self.ws or self.m not in (128, 256):
                raise _err(".ashift", ".ashift", "a non-.ws MMA with M = 128 or 256", f"M={self.m}{' .ws' if self.ws else ''}")

    def _validate_ws(self) -> None:
        if self.ws:
            if self.kind not in WS_KINDS or self.cta_group != 1:
                raise _err(".ws", ".ws", "cta_group::1 with kind f16, tf32, f8f6f4 or i8",
                           f"cta_group::{self.cta_group} kind::{self.kind}", "9.7.16.10.9.3")
        if self.zero_column_mask is not None and not self.ws:
            raise _err("zero-column-mask-desc", "zero-column mask", "only with .ws", "non-.ws MMA", "9.7.16.10.9.3")
        if self.max_shift not in T.MAX_SHIFT_CODES or (self.max_shift and not self.ws):
            raise _err("Table 42 bits 30-31", "max_shift", "0, 8, 16 or 32, nonzero only with .ws", self.max_shift, "9.7.16.4.2")

    @property
    def column_shift(self) -> int:
        return self.zero_column_mask.column_shift if self.zero_column_mask is not None else 0


# Table look-ups of :meth:`MmaOp.validate`, once per arguments (a SpecError is raised again on every call)

@functools.lru_cache(maxsize=1024)
def _check_types(kind: str, d_type: str, a_type: str, b_type: str, scale_type: str | None) -> None:
    """Table 39's type combination with Table 55's scale type (:func:`reference.tables.check_types`)."""
    T.check_types(kind, d_type, a_type, b_type, scale_type)


@functools.lru_cache(maxsize=4096)
def _check_shape(kind: str, m: int, n: int, cta_group: int, sparse: bool, ws: bool, k96: bool, k96_reading: str) -> None:
    """Table 39's M and N (:func:`reference.tables.check_shape`) under reading ``k96_reading`` of
    spec question Q-K96-M128 (which adds CuTe's K = 96 rows with M = 128)."""
    with following({"Q-K96-M128": k96_reading}):
        T.check_shape(kind, m, n, cta_group=cta_group, sparse=sparse, ws=ws, k96=k96)


def check_collector_usage(usage: str | None, *, ws: bool = False, ashift: bool = False) -> str:
    """Legality of ``.collector::<buffer>::<op>`` (§9.7.16.10.9.1-.4); returns the effective usage.

    Non-.ws: buffer ``a``; default ``a::discard``; ``a::use`` / ``a::fill`` are illegal with
    ``.ashift``. .ws: buffers ``b0``-``b3``; default ``b0::discard``. No effect on values.
    """
    default = "b0::discard" if ws else "a::discard"
    if usage is None:
        return default
    parts = usage.removeprefix("collector::").split("::")
    buffers = ("b0", "b1", "b2", "b3") if ws else ("a",)
    if len(parts) != 2 or parts[0] not in buffers or parts[1] not in COLLECTOR_OPS:
        raise _err(".collector_usage", ".collector_usage", f"<{'|'.join(buffers)}>::<{'|'.join(COLLECTOR_OPS)}>", usage)
    if ashift and parts[1] in ("use", "fill"):
        raise _err(".collector_usage", "collector usage with .ashift", "lastuse or discard", usage)
    return "::".join(parts)
