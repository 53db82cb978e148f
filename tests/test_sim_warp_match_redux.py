"""match.sync and redux.sync against the words an H100 wrote (h100-battery seed 1, kernel
``warp``, warp 1 = threads 32-63, ops 58-75; warp 0 for the all-equal case of match.all).

Source: ``/work/shared/hardware/h100-battery/outputs_h100_seed1.npz`` (``hw_warp``),
``seed1/warp.ptx`` (the bodies below are its op blocks) and ``seed1/warp_{a,b,c}.npy`` (the
operands: the low 32 bits of a, b and c of each lane are listed here).
"""

import pytest

from tests.sim_op_cases import run_rows

pytestmark = pytest.mark.reference

A1 = [0xd8d7c460, 0x72322030, 0x6b6ba758, 0x5eb29d7c, 0xd14398ce, 0x2d73800e, 0x4740cbea, 0xa951ce22,
      0xd9362c42, 0xeb6e90d0, 0xf87d1006, 0x9d12b178, 0x5d7bc6c0, 0x74b099e0, 0xb79cd52e, 0x8611f876,
      0x12dda576, 0x3dbd2312, 0x522fad90, 0xbc97932c, 0x9ef13f44, 0xd92ef056, 0x8816eb22, 0x27f2d180,
      0xa8ed30d8, 0x65d2f0f8, 0xee793e42, 0x3da63be2, 0x737d374, 0x9235c0f6, 0x3b795d5c, 0x3c3f14b6]
B1 = [0xc5a5fd17, 0xe9027a01, 0xc8c01402, 0x691fad29, 0x5fd8473a, 0xaa613637, 0x60a7ca2b, 0xfa69bc0c,
      0x1776e622, 0x63e3501c, 0x6fcce904, 0x607ab93f, 0x410f172f, 0xc11ef2f, 0x9a367a3a, 0xa169f020,
      0x91e19014, 0x86f71202, 0xb342b505, 0x5523ee1d, 0x6753433a, 0x7975542e, 0x8725c31e, 0xb3dc3503,
      0xca00fa11, 0x89e3652a, 0x2de10c27, 0xc1460b19, 0x30227013, 0xa5514503, 0x4b88aa24, 0xb3f7c004]
C1 = [0xdcca7e19, 0xa8f740c8, 0xd9e4fee2, 0x3e7cf864, 0x515f07ce, 0x453eca44, 0xd0fde3da, 0x37f2d591,
      0xaf35698f, 0x5abcf407, 0x8c3d8111, 0x2c0d1136, 0x9e61842d, 0x19698113, 0xcd98d00f, 0x8de30d1a,
      0x4979a993, 0x5f4900f7, 0xe66802f1, 0xb9dab942, 0x58b1c9c4, 0x28b0be24, 0xd84f8cfa, 0xed88deaa,
      0xacd99351, 0xd6c1863c, 0xb3dfac5b, 0x5d0c1492, 0xed54376e, 0xda5e5edd, 0xad8aab83, 0x73cc1294]
ROWS1 = list(zip(A1, B1, C1, strict=True))
# warp 0's a (low 32 bits): a & 0x300 is 0 in every lane
A0 = [0x49ea08e1, 0xf72e7083, 0x64ebe489, 0x49e2bc53, 0xfbec4c0f, 0x1078f801, 0x86e7946b, 0xe1be802b,
      0x2c9390a5, 0x2b1ccc29, 0x846ed8ef, 0x25e81cb3, 0x6c9ccc0b, 0x83f49829, 0xa237e8cb, 0x1dba0081,
      0x07795c6d, 0xcdb2e8c9, 0x677d98eb, 0xa86ed825, 0xd98e6001, 0x2416b4ab, 0xac50e0ad, 0x5375186f,
      0x874fb84f, 0x9ea29809, 0x0d907079, 0x358c24a3, 0xf45b30b7, 0x63227405, 0x94db1cf1, 0xc63d801d]

# warp 1, op 58 (and op 60, the same groups as 64-bit values): the lanes sharing a & 0x300
ANY_1 = [0xa3208733, 0xa3208733, 0x185a0044, 0x40856808, 0xa3208733, 0xa3208733, 0x185a0044, 0x4001080,
         0xa3208733, 0xa3208733, 0xa3208733, 0x40856808, 0x4001080, 0x40856808, 0x40856808, 0xa3208733,
         0x40856808, 0x185a0044, 0x40856808, 0x185a0044, 0x185a0044, 0xa3208733, 0x185a0044, 0x40856808,
         0xa3208733, 0xa3208733, 0x4001080, 0x185a0044, 0x185a0044, 0xa3208733, 0x40856808, 0xa3208733]



def per_half_warp(instr: str) -> str:
    """``instr`` run by each half-warp apart, ``{mask}`` its membermask (lanes 0-15: 0x0000ffff,
    lanes 16-31: 0xffff0000), as the battery's half-warp blocks do."""
    return ("mov.u32 %r2, %laneid; setp.lt.u32 %p1, %r2, 16; @!%p1 bra $HI; "
            f"{instr.format(mask='0x0000ffff')} bra $J; $HI: {instr.format(mask='0xffff0000')} $J:")


@pytest.mark.parametrize("body", [
    "and.b32 %r1, %ua, 0x300; match.any.sync.b32 %rs, %r1, 0xffffffff; cvt.u64.u32 %rr, %rs;",          # op 58
    "and.b64 %rd1, %xa, 0x300; shl.b64 %rd1, %rd1, 30; or.b64 %rd1, %rd1, 5; "
    "match.any.sync.b64 %rs, %rd1, 0xffffffff; cvt.u64.u32 %rr, %rs;",                                  # op 60
])
def test_match_any(body):
    assert run_rows(body, ROWS1) == ANY_1


def test_match_any_distinct_values():
    """op 59: 32 distinct values: each lane alone."""
    assert run_rows("match.any.sync.b32 %rs, %uc, 0xffffffff; cvt.u64.u32 %rr, %rs;", ROWS1) == [1 << i for i in range(32)]


def test_match_any_half_warps():
    """op 64: each half-warp matches among itself with its own membermask."""
    body = "and.b32 %r1, %ua, 0x300; " + per_half_warp("match.any.sync.b32 %rs, %r1, {mask};") + " cvt.u64.u32 %rr, %rs;"
    want = [g & (0xFFFF if i < 16 else 0xFFFF0000) for i, g in enumerate(ANY_1)]
    assert want[14:18] == [0x6808, 0x8733, 0x40850000, 0x185a0000]                # as recorded
    assert run_rows(body, ROWS1) == want


@pytest.mark.parametrize("rows, want", [(ROWS1, 0x0), ([(a, 0, 0) for a in A0], 0x1FFFFFFFF)])
def test_match_all(rows, want):
    """op 61: {mask, p}: warp 1 differs (0, false), warp 0 agrees (all lanes, true)."""
    body = ("and.b32 %r1, %ua, 0x300; match.all.sync.b32 %rs|%ps, %r1, 0xffffffff; "
            "selp.u32 %rs2, 1, 0, %ps; mov.b64 %rr, {%rs, %rs2};")
    assert run_rows(body, rows) == [want] * 32


@pytest.mark.parametrize("op, want", [
    ("add.u32", 0x21069d0f), ("add.s32", 0x21069d0f), ("min.u32", 0x19698113), ("min.s32", 0x8c3d8111),
    ("max.u32", 0xed88deaa), ("max.s32", 0x73cc1294), ("and.b32", 0x0), ("or.b32", 0xffffffff),
    ("xor.b32", 0x83c25c75),
])
def test_redux(op, want):
    """ops 65-73: the reduction of c over the warp, in every lane."""
    assert run_rows(f"redux.sync.{op} %rs, %uc, 0xffffffff; cvt.u64.u32 %rr, %rs;", ROWS1) == [want] * 32


def test_redux_half_warps():
    """op 75: redux.sync.min.s32 of b per half-warp."""
    body = per_half_warp("redux.sync.min.s32 %rs, %ub, {mask};") + " cvt.u64.u32 %rr, %rs;"
    assert run_rows(body, ROWS1) == [0x9a367a3a] * 16 + [0x86f71202] * 16


def test_a_thread_outside_its_membermask_is_an_error():
    from ptxsim import SimError
    with pytest.raises(SimError, match="not in its membermask"):
        run_rows("redux.sync.add.u32 %rs, %uc, 0x0000ffff; cvt.u64.u32 %rr, %rs;", ROWS1)
