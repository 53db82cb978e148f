"""Expected D registers of warp-level ``mma.sp`` cases (§9.7.14.6).

D = expand(A, metadata) x B + C, computed exactly (block-scaled kinds, §9.7.14.3:
(A * scale_A) x (B * scale_B) + C, scale_A 16 x SF and scale_B SF x 8 spread over K / SF logical
columns each by ``reference.block_scaling.per_k``): the operands are exact by construction, so
every product and the sum are exact in float64 (integers: int64, then ``.satfinite`` clamps, else
the value must fit s32). The result must be exactly representable in D's type, else the inputs
were not exact (:class:`OracleError`). D reaches the registers through
``reference.warp_mma_fragments.scatter``.
"""

from __future__ import annotations

import numpy as np

from conformance.harness.oracles.common import FULL, Expected, OracleError, piece, register_section
from reference import block_scaling as BS
from reference import formats as F
from reference import sparsity as SP
from reference import warp_mma_fragments as WF

S32_MIN, S32_MAX = -(1 << 31), (1 << 31) - 1
QUIET_F16 = 0x7E00            # f16 exponent all ones and the quiet bit: every quiet NaN has them


def warp_d(lg) -> np.ndarray:
    """D codes (16 x 8) of the logical operands."""
    SP.check_metadata(lg.pattern, lg.meta, lg.context)
    a = SP.expand(lg.pattern, F.decode(lg.a_type, lg.a), lg.meta, fill=0.0)
    b = F.decode(lg.b_type, lg.b)
    c = F.decode(lg.c_type, lg.c)
    if lg.scales is not None:
        sa, sb = BS.per_k(BS.scale_values(lg.scales.scale_type, lg.scales.a),
                          BS.scale_values(lg.scales.scale_type, lg.scales.b), lg.k)
        a, b = a * sa, b * sb
    if lg.d_type == "s32":
        exact = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
        if lg.satfinite:
            exact = np.clip(exact, S32_MIN, S32_MAX)
        elif exact.min() < S32_MIN or exact.max() > S32_MAX:
            raise OracleError("warp-level integer mma.sp without .satfinite overflows s32 on these inputs")
        return F.encode("s32", exact).astype(np.uint64)
    with np.errstate(invalid="ignore"):          # Inf x 0, Inf - Inf: NaN, as IEEE 754 says
        value = (a[:, :, None] * b[None, :, :]).sum(axis=1) + c
    finite = np.isfinite(value)
    if not F.is_representable(lg.d_type, np.where(finite, value, 0.0)).all():
        raise OracleError(f"warp-level mma.sp result not exact in {lg.d_type}: inputs are not exact by construction")
    return F.encode(lg.d_type, value).astype(np.uint64)


def warp_expected(case, inputs, spec, numerics, mode) -> Expected:
    lg = inputs.logical["warp"]
    d = warp_d(lg)
    frag = WF.cd_fragment(16 if lg.d_type == "f16" else 32)
    out = piece(case.kernel, inputs.record, "registers")
    value_type = {"f32": "f32", "s32": "s32", "f16": "u32"}[lg.d_type]
    nan = F.is_nan_code(lg.d_type, d) if lg.d_type != "s32" else np.zeros(d.shape, dtype=bool)
    mask, nan_any = FULL, None
    if lg.d_type == "f32" and nan.any():                     # any NaN stands for a NaN result
        nan_any = WF.scatter(frag, nan.astype(np.uint64)) != 0
    if lg.d_type == "f16" and nan.any():                     # two halves a register: compare a NaN half's
        d = np.where(nan, QUIET_F16, d)                      # exponent and quiet bit only (any quiet NaN)
        mask = WF.scatter(frag, np.where(nan, QUIET_F16, 0xFFFF).astype(np.uint64))
    regs = WF.scatter(frag, d)
    return Expected([register_section("D registers", out, inputs.out_words, regs, mask, value_type=value_type,
                                      nan_any=nan_any)], inputs.decisions)
