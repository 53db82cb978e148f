"""The simulator's MMA numerics call site: its exact fast path gives the hardware model's bits."""

import numpy as np
import pytest

from ptxsim.isa import mma_arith as M
from reference import formats as F
from reference import numerics_hw as HW

pytestmark = pytest.mark.reference

RNG = np.random.default_rng(11)


def hw_codes(case):
    a, b = M._values(case)
    sa, sb = M._scales_per_k(case, a.shape[1])
    c = F.decode(case.d_type, case.c.astype(np.uint16 if case.d_type == "f16" else np.uint32)) \
        if case.enable_input_d else np.zeros(case.c.shape)
    v = HW.hw_fused(case.kind, case.d_type, a, b, np.asarray(c, dtype=np.float64), a_fmt=case.a_type,
                    b_fmt=case.b_type, sa=sa, sb=sb, scale_fmt=case.scale_type,
                    c_shift=case.scale_input_d if case.enable_input_d else 0, shortcut=False)
    return HW.d_codes(v, case.d_type).astype(np.uint32)


@pytest.mark.parametrize("kind,t,d_type,k,scale", [("f16", "f16", "f32", 16, 0), ("f16", "bf16", "f16", 16, 3),
                                                   ("tf32", "tf32", "f32", 8, 0), ("f8f6f4", "e4m3", "f32", 32, 0),
                                                   ("f8f6f4", "e2m1", "f16", 32, 0)])
@pytest.mark.parametrize("spread", [2, 40])
def test_fast_path_matches_the_hardware_model(kind, t, d_type, k, scale, spread):
    """Small integers (fast path taken) and wide exponents (fast path declines or agrees)."""
    if t == "tf32":                        # 11 significant bits: bf16-like values, any exponent spread
        vals = F.decode("bf16", np.arange(1 << 16, dtype=np.uint16))
        vals = vals[np.isfinite(vals) & (np.abs(vals) <= 2.0 ** spread) & (np.abs(vals) >= 2.0 ** -spread)]
        pool = F.encode("tf32", vals)
    else:
        fmt_codes = F.all_values(t)[0]
        vals = F.decode(t, fmt_codes)
        pool = fmt_codes[np.isfinite(vals) & (np.abs(vals) <= 2.0 ** spread)]
    a = RNG.choice(pool, size=(16, k)).astype(np.uint64)
    b = RNG.choice(pool, size=(k, 8)).astype(np.uint64)
    c = F.encode(d_type, RNG.integers(-64, 64, size=(16, 8)).astype(np.float64))
    case = M.MmaCase(kind, d_type, t, t, a, b, np.asarray(c, dtype=np.uint32), scale_input_d=scale)
    assert (M.mma_arithmetic(case) == hw_codes(case)).all()


def test_fast_path_is_taken_for_small_integers():
    a = F.encode("f16", RNG.integers(-3, 4, size=(128, 16)).astype(float)).astype(np.uint64)
    b = F.encode("f16", RNG.integers(-3, 4, size=(16, 256)).astype(float)).astype(np.uint64)
    case = M.MmaCase("f16", "f32", "f16", "f16", a, b, np.zeros((128, 256), np.uint32))
    av, bv = M._values(case)
    assert M.exact_fast_path(case, av, bv, np.zeros((128, 256)), None, None, HW.hw_params("f16", "f32")) is not None


@pytest.mark.parametrize("spread", [1, 30])
def test_fast_path_with_block_scales_matches_the_hardware_model(spread):
    codes = F.all_values("e4m3")[0]
    vals = F.decode("e4m3", codes)
    pool = codes[np.isfinite(vals) & (np.abs(vals) <= 8)]
    a = RNG.choice(pool, size=(16, 32)).astype(np.uint64)
    b = RNG.choice(pool, size=(32, 8)).astype(np.uint64)
    sa = RNG.integers(127 - spread, 128 + spread, size=(16, 1)).astype(np.uint8)
    sb = RNG.integers(127 - spread, 128 + spread, size=(1, 8)).astype(np.uint8)
    case = M.MmaCase("mxf8f6f4", "f32", "e4m3", "e4m3", a, b, np.zeros((16, 8), np.uint32), sa=sa, sb=sb,
                     scale_type="ue8m0")
    assert (M.mma_arithmetic(case) == hw_codes(case)).all()
