"""slct, %is_explicit_cluster, %nwarpid and createpolicy with .L2::cache_hint loads, against the
words an H100 wrote (h100-battery seed 1, kernels ``misc`` and ``ldst``; each row: battery
thread, a, b, c, the H100's word).

Source: ``/work/shared/hardware/h100-battery/outputs_h100_seed1.npz`` (``hw_misc``, ``hw_ldst``),
``seed1/misc.ptx`` ops 25-30, 105, 107 and ``seed1/ldst.ptx`` op 29.
"""

import pytest

from tests.sim_op_cases import check_rows

pytestmark = pytest.mark.reference

# threads 0-3 (c >= 0 and c < 0 as s32 and f32), 70 (c = -0.0f), 12 (c a NaN), 178 (c = a negative
# f32 subnormal, 0x807fffff)
ROWS = [(0, 0xc088f00000000000, 0x415a8e720e5165b9, 0x3d), (1, 0x25, 0x800e015749e8eb65, 0x80002926c9395f1a),
        (2, 0xbeb396dc5c, 0x10, 0x3f9c1d9d25f053ae), (3, 0x4049000000000000, 0x31, 0x42420ee405254000),
        (70, 0x5d5b1177742ccbcb, 0xf, 0xc547c8d580000000), (12, 0xbe227927508ffb9c, 0x830b5d08518630ba, 0xffffffffffffffe8),
        (178, 0x41757994, 0x10a80d81ec34059c, 0xd735162f807fffff)]


@pytest.mark.parametrize("body, want", [
    ("slct.s32.s32 %rs, %ua, %ub, %uc; cvt.u64.u32 %rr, %rs;",                                  # op 25
     [0x0, 0x49e8eb65, 0xb396dc5c, 0x0, 0xf, 0x518630ba, 0xec34059c]),
    ("slct.f32.s32 %fs, %fa, %fb, %uc; mov.b32 %rs, %fs; cvt.u64.u32 %rr, %rs;",                # op 26
     [0x0, 0x49e8eb65, 0xb396dc5c, 0x0, 0xf, 0x518630ba, 0xec34059c]),
    ("slct.b32.f32 %rs, %ua, %ub, %fc; cvt.u64.u32 %rr, %rs;",                                  # op 27
     [0x0, 0x49e8eb65, 0xb396dc5c, 0x0, 0x742ccbcb, 0x518630ba, 0xec34059c]),
    ("slct.ftz.b32.f32 %rs, %ua, %ub, %fc; cvt.u64.u32 %rr, %rs;",                              # op 28
     [0x0, 0x49e8eb65, 0xb396dc5c, 0x0, 0x742ccbcb, 0x518630ba, 0x41757994]),
    ("slct.u64.s32 %rr, %xa, %xb, %uc;",                                                         # op 29
     [0xc088f00000000000, 0x800e015749e8eb65, 0xbeb396dc5c, 0x4049000000000000, 0xf, 0x830b5d08518630ba,
      0x10a80d81ec34059c]),
    ("slct.f64.f32 %ds, %da, %db, %fc; mov.b64 %rr, %ds;",                                       # op 30
     [0xc088f00000000000, 0x800e015749e8eb65, 0xbeb396dc5c, 0x4049000000000000, 0x5d5b1177742ccbcb,
      0x830b5d08518630ba, 0x10a80d81ec34059c]),
])
def test_slct(body, want):
    """d = a where c >= 0 (-0.0 included), else b; a NaN c selects b; .ftz flushes a subnormal c."""
    check_rows(body, [r + (w,) for r, w in zip(ROWS, want, strict=True)], body)


def test_is_explicit_cluster_is_a_predicate():
    """op 107: false for a launch without a cluster."""
    check_rows("mov.pred %ps, %is_explicit_cluster; selp.b64 %rr, 1, 0, %ps;", [r + (0,) for r in ROWS[:2]],
               "%is_explicit_cluster")


def test_nwarpid_is_the_sms_warp_slots():
    """op 105: %nwarpid is 64 (the SM's warp slots), whatever the CTA's size."""
    check_rows("mov.u32 %rs, %nwarpid; cvt.u64.u32 %rr, %rs;", [r + (0x40,) for r in ROWS[:2]], "%nwarpid")


def test_cache_policy_has_no_effect_on_a_load():
    """ldst op 29: createpolicy + ld.L2::cache_hint reads the memory's words as a plain load does."""
    body = ("createpolicy.fractional.L2::evict_last.b64 %rd9, 1.0; "
            "ld.global.L1::evict_last.L2::cache_hint.v2.b32 {%r1, %r2}, [%rd15], %rd9; mov.b64 %rr, {%r1, %r2};")
    check_rows(body, [r + (r[1],) for r in ROWS], "ld.L2::cache_hint")


@pytest.mark.parametrize("form", [
    "createpolicy.fractional.L2::evict_first.b64 %rd9;",
    "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd9, 0.5;",
    "createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %rd9, [%rd15], 16, 64;",
    "createpolicy.cvt.L2.b64 %rd9, %xb;",
])
def test_createpolicy_forms(form):
    """Every createpolicy form (PTX ISA §9.7.9, createpolicy) loads and runs; the policy is used by
    a cache-hinted store and load without changing the data."""
    body = form + (" st.global.L2::cache_hint.u64 [%rd15+8], %xc, %rd9; "
                   "ld.global.L2::cache_hint.u64 %rr, [%rd15+8], %rd9;")
    check_rows(body, [r + (r[3],) for r in ROWS[:2]], form)


def test_createpolicy_fraction_out_of_range_is_refused():
    from ptxsim import SimDevice, UnimplementedError
    from tests.sim_op_cases import kernel
    with pytest.raises(UnimplementedError, match=r"fraction in \(0.0, 1.0\]"):
        SimDevice().load(kernel("createpolicy.fractional.L2::evict_last.b64 %rd9, 1.5;"))
