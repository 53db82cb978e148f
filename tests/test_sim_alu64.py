"""64-bit integer arithmetic and the integer forms where PTX leaves the result open, against the
words an H100 wrote (h100-battery seed 1; each row: battery thread, a, b, c, the H100's word).

Sources: ``/work/shared/hardware/h100-battery/outputs_h100_seed1.npz`` (``hw_alu64``,
``hw_misc``), op blocks of ``seed1/alu64.ptx`` and ``seed1/misc.ptx`` named per test.
"""

import pytest

from tests.sim_op_cases import check_rows

pytestmark = pytest.mark.reference


def test_div_s64_with_int64_min():
    """alu64 op 14 ``div.s64``: INT64_MIN as dividend or divisor divides exactly."""
    check_rows("div.s64 %rr, %xa, %xb;", [
        (279, 0x8000000000000000, 0x4079900000000000, 0, 0xffffffffffffffff),
        (325, 0xd560b33b6cbf4a08, 0x8000000000000000, 0, 0x0),
        (461, 0x8000000000000000, 0x130e52baf81e459f, 0, 0xfffffffffffffffa),
    ], "div.s64")


def test_div_s64_small_divisor_with_int64_min():
    """alu64 op 29 ``div.s64.small`` (divisor b >> 40)."""
    check_rows("shr.s64 %rd1, %xb, 40; div.s64 %rr, %xa, %rd1;", [
        (279, 0x8000000000000000, 0x4079900000000000, 0, 0xfffffe03c5566c99),
        (497, 0x8000000000000000, 0x8000000000000014, 0, 0x10000000000),
    ], "div.s64 small")


@pytest.mark.parametrize("body", ["rem.u64 %rr, %xa, %xb;", "rem.s64 %rr, %xa, %xb;"])
def test_rem_64_by_zero_is_all_ones(body):
    """alu64 ops 15/16 ``rem.u64``/``rem.s64`` by zero: all ones (PTX leaves it undefined)."""
    check_rows(body, [
        (799, 0xc095700000000000, 0, 0, 0xffffffffffffffff),
        (868, 0x3f2c33e55a4df0c8, 0, 0, 0xffffffffffffffff),
    ], body)


@pytest.mark.parametrize("body", ["rem.s16 %hs, %ha, %hb;", "rem.u16 %hs, %ha, %hb;"])
def test_rem_16_by_zero_is_all_ones(body):
    """misc ops 50/51 ``rem.s16``/``rem.u16`` by zero (b's low 16 bits are 0): 0xFFFF."""
    check_rows(body + " mov.b32 %rs, {%hs, %hz}; cvt.u64.u32 %rr, %rs;", [
        (13, 0xc091f40000000000, 0x26e27b4f7fa00000, 0, 0xffff),
        (28, 0xffffffff990e8bb4, 0x47efffffe0000000, 0, 0xffff),
    ], body)


# bfe/bfi .64: the H100 takes the whole 32-bit position and length (not bits 0-7 as the PTX ISA
# does, and as it does itself for the 32-bit forms).  Rows: pos 0x6b82428 / len 0x4d290f98 (pos
# >= 64: nothing), pos 1 / len 0xe11e8602 (len >= 64: everything from bit 1), pos 0xd3f7f800.
BFE_ROWS = [(0, 0x3b6608f33b742484, 0xf5a1dd6b82428, 0x4d290f98),
            (6, 0x92ca266808705462, 0x1daaa3ff00000001, 0x80042107e11e8602),
            (7, 0x20f0f7d153702, 0xc26f18c9d3f7f800, 0xffee5552b6ca21bf)]


def test_bfe_u64_uses_whole_position_and_length():
    """alu64 op 46 ``bfe.u64``."""
    check_rows("bfe.u64 %rr, %xa, %ub, %uc;",
               [r + (h,) for r, h in zip(BFE_ROWS, (0x0, 0x4965133404382a31, 0x0), strict=True)], "bfe.u64")


def test_bfe_s64_uses_whole_position_and_length():
    """alu64 op 47 ``bfe.s64`` (thread 6: the sign bit 63 fills the top)."""
    check_rows("bfe.s64 %rr, %xa, %ub, %uc;",
               [r + (h,) for r, h in zip(BFE_ROWS[:2], (0x0, 0xc965133404382a31), strict=True)], "bfe.s64")


def test_bfi_b64_uses_whole_position_and_length():
    """alu64 op 48 ``bfi.b64``."""
    check_rows("bfi.b64 %rr, %xa, %xb, %ub, %uc;",
               [r + (h,) for r, h in zip(BFE_ROWS, (0xf5a1dd6b82428, 0x25944cd010e0a8c5, 0xc26f18c9d3f7f800),
                                         strict=True)], "bfi.b64")


def test_mad_hi_cc_s32_is_the_signed_high_half_with_carry():
    """alu64 op 73 ``mad.hi.cc.s32`` + ``madc.lo.s32``: the signed product's upper half plus c,
    its carry into the low half's sum (thread 1: 0x16 * -0x6a0e7c5d, high half -10)."""
    check_rows("mad.hi.cc.s32 %rs, %ua, %ub, %uc; madc.lo.s32 %rs2, %ua, %ub, %uah; mov.b64 %rr, {%rs, %rs2};", [
        (0, 0x3b6608f33b742484, 0xf5a1dd6b82428, 0x4d290f98, 0x718e4d944392c57a),
        (1, 0x16, 0xc1bbca8b95f183a3, 0xf8c50829679ce210, 0xe2c15003679ce206),
        (4, 0xfaf6304e807fffff, 0x61996eb8ca376fdf, 0xffffffffffffffbf, 0xa03ec0701ac96387),
    ], "mad.hi.cc.s32 + madc.lo.s32")
