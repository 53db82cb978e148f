"""Warp-level sparse MMA variants (§9.7.14.6.1 storage; syntax and targets from the public PTX
ISA §9.7.14.6.3, verified with ptxas 13.0).

Rows: shape, A/B types, accumulator types, fragment sizes in 32-bit registers per thread, and
the sparsity-selector values §9.7.14.6.1 defines for the shape ("any other value results in an
undefined behavior": never generated). Targets: reference.targets.WARP_MMA_SP_TARGETS filtered
by the features of the spelling.
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.params import Case, Params
from generators.ptx.warp import WarpSparseSpelling, warp_sparse_kernel
from generators.variants.common import make_case
from reference.tables import F8F6F4_TYPES
from reference.targets import WARP_MMA_SP_TARGETS, legal_targets

SECTION = "9.7.14.6.1"


@dataclass(frozen=True)
class WarpRow:
    shape: str
    a_types: tuple[str, ...]
    acc: tuple[tuple[str, str], ...]       # (dtype, ctype) pairs
    a_regs: int
    b_regs: int
    selectors: tuple[int, ...]
    int_types: bool = False
    kind: str | None = None
    ordered_only: bool = False


# dtype must equal ctype for m16n8k16/k32 (ptxas 13.0: ".dtype must be '.f16' when .ctype is '.f16'")
_F16_ACC = (("f16", "f16"), ("f32", "f32"))
_INT8, _INT4 = ("s8", "u8"), ("s4", "u4")

ROWS: tuple[WarpRow, ...] = (
    # §9.7.14.6.1: m16n8k16 f16 selector in {0..3}; m16n8k32 f16: 0 (T0,T1) or 1 (T2,T3)
    WarpRow("m16n8k16", ("f16",), _F16_ACC, 2, 2, (0, 1, 2, 3)),
    WarpRow("m16n8k32", ("f16",), _F16_ACC, 4, 4, (0, 1)),
    WarpRow("m16n8k16", ("bf16",), (("f32", "f32"),), 2, 2, (0, 1, 2, 3)),
    WarpRow("m16n8k32", ("bf16",), (("f32", "f32"),), 4, 4, (0, 1)),
    # tf32: m16n8k8 {0..3}, m16n8k16 {0, 1}
    WarpRow("m16n8k8", ("tf32",), (("f32", "f32"),), 2, 2, (0, 1, 2, 3)),
    WarpRow("m16n8k16", ("tf32",), (("f32", "f32"),), 4, 4, (0, 1)),
    # integers: m16n8k32 u8/s8 and m16n8k64 u4/s4 {0, 1}; m16n8k64 u8/s8 and m16n8k128 u4/s4: 0
    WarpRow("m16n8k32", _INT8, (("s32", "s32"),), 2, 2, (0, 1), int_types=True),
    WarpRow("m16n8k64", _INT8, (("s32", "s32"),), 4, 4, (0,), int_types=True),
    WarpRow("m16n8k64", _INT4, (("s32", "s32"),), 2, 2, (0, 1), int_types=True),
    WarpRow("m16n8k128", _INT4, (("s32", "s32"),), 4, 4, (0,), int_types=True),
    # fp8 without .kind (sm_89+): m16n8k64, selector 0, f32 accumulators (ptxas rejects f16)
    WarpRow("m16n8k64", ("e4m3", "e5m2"), (("f32", "f32"),), 4, 4, (0,)),
    # .kind::f8f6f4 / block-scaled (sm_120a): selector 0
    WarpRow("m16n8k64", F8F6F4_TYPES, (("f32", "f32"), ("f16", "f16")), 4, 4, (0,), kind="f8f6f4", ordered_only=True),
    WarpRow("m16n8k64", F8F6F4_TYPES, (("f32", "f32"),), 4, 4, (0,), kind="mxf8f6f4", ordered_only=True),
    WarpRow("m16n8k128", ("e2m1",), (("f32", "f32"),), 4, 4, (0,), kind="mxf4", ordered_only=True),
    WarpRow("m16n8k128", ("e2m1",), (("f32", "f32"),), 4, 4, (0,), kind="mxf4nvf4", ordered_only=True),
)

# Block-scaled warp-level MMA: (kind) -> (scale_vec or None, scale type) choices.
_SCALES = {
    "mxf8f6f4": ((None, "ue8m0"), ("scale_vec::1X", "ue8m0")),
    "mxf4": ((None, "ue8m0"), ("scale_vec::2X", "ue8m0")),
    "mxf4nvf4": (("scale_vec::2X", "ue8m0"), ("scale_vec::4X", "ue4m3")),   # 4X with ue8m0: ptxas rejects
}


def _c_regs(acc_type: str) -> int:
    return 2 if acc_type == "f16" else 4     # f16 accumulators packed f16x2


def spellings() -> list[WarpSparseSpelling]:
    out = []
    for row in ROWS:
        b_types = row.a_types
        for a in row.a_types:
            for b in b_types:
                if row.kind is None and not row.int_types and a != b and a not in ("e4m3", "e5m2"):
                    continue
                for d, c in row.acc:
                    if d != c and row.kind is not None:
                        continue
                    for ordered in ((True,) if row.ordered_only else (False, True)):
                        for sat in ((False, True) if row.int_types else (False,)):
                            scales = _SCALES.get(row.kind or "", ((None, None),))
                            for vec, stype in scales:
                                for sel in row.selectors:
                                    out.append(WarpSparseSpelling(
                                        shape=row.shape, d_type=d, a_type=a, b_type=b, c_type=c, ordered=ordered,
                                        selector=sel, a_regs=row.a_regs, b_regs=row.b_regs, c_regs=_c_regs(c), d_regs=_c_regs(d),
                                        satfinite=sat, kind=row.kind, scale_vec=vec, scale_type=stype))
    return out


def case_for(sp: WarpSparseSpelling) -> Case:
    kernel = warp_sparse_kernel(sp)
    cid = f"{sp.opcode()}.sel{sp.selector}"
    params = Params.of(shape=sp.shape, d_type=sp.d_type, a_type=sp.a_type, b_type=sp.b_type, c_type=sp.c_type,
                       ordered_metadata=sp.ordered, selector=sp.selector, satfinite=sp.satfinite, kind=sp.kind,
                       scale_vec=sp.scale_vec, scale_type=sp.scale_type)
    return make_case(cid, "warp.mma.sp", SECTION, kernel, params,
                     targets=legal_targets(sp.features(), WARP_MMA_SP_TARGETS),
                     rule="§9.7.14.6.1: sparsity selector values defined for the shape")


def warp_mma_sp_cases(level: str) -> list[Case]:
    all_sp = spellings()
    if level == "smoke":
        seen, picked = set(), []
        for sp in all_sp:       # one per (shape, A type, kind, ordered)
            key = (sp.shape, sp.a_type, sp.kind, sp.ordered)
            if key not in seen:
                seen.add(key)
                picked.append(sp)
        all_sp = picked[::2] + [sp for sp in picked if sp.kind]
        all_sp = list(dict.fromkeys(all_sp))
    return [case_for(sp) for sp in all_sp]
