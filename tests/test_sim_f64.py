"""f64 arithmetic and conversions against the words an H100 wrote (h100-battery seed 1, kernel
``f64``; each row: battery thread, a, b, c, the H100's word; the op block is named per test).

Source: ``/work/shared/hardware/h100-battery/outputs_h100_seed1.npz`` (``hw_f64``) and
``seed1/f64.ptx``.  Finite results are IEEE 754 correctly rounded; where the PTX ISA leaves a
value open (NaN payloads, NaN to integer) the rows pin what the H100 wrote (docs/sim.md
"Hardware behaviours adopted").
"""

import pytest

from tests.sim_op_cases import check_rows

pytestmark = pytest.mark.reference

TO_RR = " mov.b64 %rr, %ds;"
MAX = 0x7fefffffffffffff


@pytest.mark.parametrize("body, rows", [
    # op 18: a*b ~ 2^1343: the largest finite value, not +inf
    ("mul.rz.f64 %ds, %da, %db;", [(12, 0xedf1fccf15ae328d, 0xedf1fccf15ae32aa, 0, MAX)]),
    # op 20: overflow to -MAX; thread 1: two subnormals, 1 ulp below the float64 quotient's rounding
    ("div.rz.f64 %ds, %da, %db;", [(0, 0xc2517ef341acd000, 0xf49d4030ba7a8, 0, 0xffefffffffffffff),
                                   (1, 0x8003dd48d56c2992, 0x800e5c9339a219f3, 0, 0x3fd13891d3e75385)]),
    # op 21: the reciprocal of a subnormal overflows: +-MAX
    ("rcp.rz.f64 %ds, %da;", [(1, 0x8003dd48d56c2992, 0, 0, 0xffefffffffffffff), (2, 0x5, 0, 0, MAX)]),
    # op 22: roots of subnormals (the square of the root underflows in a float64 check)
    ("sqrt.rz.f64 %ds, %da;", [(2, 0x5, 0, 0, 0x1e71e3779b97f4a7), (9, 0x43, 0, 0, 0x1e905ee68efad48a)]),
    # op 34: a negative product below the smallest subnormal rounds down to -2^-1074
    ("mul.rm.f64 %ds, %da, %db;", [(14, 0xbe40dafaa49dddce, 0x30, 0, 0x8000000000000001)]),
    # op 50: a positive product of two subnormals rounds up to 2^-1074
    ("mul.rp.f64 %ds, %da, %db;", [(1, 0x8003dd48d56c2992, 0x800e5c9339a219f3, 0, 0x1)]),
    ("div.rp.f64 %ds, %da, %db;", [(8, 0x13478d89, 0x50d103d9ec7c9, 0, 0x3e8e891accdcd44e)]),     # op 52
    ("rcp.rp.f64 %ds, %da;", [(58, 0x70807be3166da, 0, 0, 0x7fe234426ca42eea)]),                  # op 53
    ("sqrt.rp.f64 %ds, %da;", [(20, 0xd56661c84855, 0, 0, 0x1fdd3767e28b9ba1)]),                  # op 54
])
def test_directed_rounding_at_the_ends_of_the_range(body, rows):
    check_rows(body + TO_RR, rows, body)


FMA_ROWS = {  # ops 19, 35, 51: (thread, a, b, c) -> H100 word per mode
    "rz": [(12, 0xedf1fccf15ae328d, 0xedf1fccf15ae32aa, 0xc2634ca8627f8800, MAX),
           (14, 0xbe40dafaa49dddce, 0x30, 0x8008462f66ab18fd, 0x8008462f66ab18fd),
           (5, 0xc263db553b005000, 0x40a95229e928fb0b, 0x800e8a54bfdc9115, 0xc31f6cad44662ad9)],
    "rm": [(12, 0xedf1fccf15ae328d, 0xedf1fccf15ae32aa, 0xc2634ca8627f8800, MAX),
           (14, 0xbe40dafaa49dddce, 0x30, 0x8008462f66ab18fd, 0x8008462f66ab18fe),
           (5, 0xc263db553b005000, 0x40a95229e928fb0b, 0x800e8a54bfdc9115, 0xc31f6cad44662ada)],
    "rp": [(103, 0x518fac80026b01ed, 0xfb91c1a65e39c676, 0x13, 0xffefffffffffffff),
           (14, 0xbe40dafaa49dddce, 0x30, 0x8008462f66ab18fd, 0x8008462f66ab18fd),
           (5, 0xc263db553b005000, 0x40a95229e928fb0b, 0x800e8a54bfdc9115, 0xc31f6cad44662ad9)],
}


@pytest.mark.parametrize("mode", sorted(FMA_ROWS))
def test_fma_f64_directed_modes(mode):
    check_rows(f"fma.{mode}.f64 %ds, %da, %db, %dc;" + TO_RR, FMA_ROWS[mode], f"fma.{mode}.f64")


def test_fma_error_term_signs():
    """op 65 (a*b - rn(a*b) by fma): thread 12: the product overflows, -inf + the exact product is
    -inf; thread 14: the product underflows, the error term is -0 (a tiny negative rounded)."""
    check_rows("mul.rn.f64 %d1, %da, %db; neg.f64 %d1, %d1; fma.rn.f64 %ds, %da, %db, %d1;" + TO_RR, [
        (12, 0xedf1fccf15ae328d, 0xedf1fccf15ae32aa, 0, 0xfff0000000000000),
        (14, 0xbe40dafaa49dddce, 0x30, 0, 0x8000000000000000),
    ], "fma error term")


@pytest.mark.parametrize("body, rows", [
    # op 0: two NaNs: b's; a signalling NaN is quieted (bit 51), payload and sign kept
    ("add.rn.f64 %ds, %da, %db;", [(19, 0xffffffff95561345, 0xffffffff95561365, 0, 0xffffffff95561365),
                                   (32, 0xffffffffae8ca600, 0x7fffffffae8ca600, 0, 0x7fffffffae8ca600),
                                   (364, 0x7ff0000000000001, 0xc098f80000000000, 0, 0x7ff8000000000001)]),
    # op 1: sub returns b's NaN with its sign unchanged
    ("sub.rn.f64 %ds, %da, %db;", [(2, 0x5, 0xffffffffc8a21f17, 0, 0xffffffffc8a21f17)]),
    # op 3: fma with NaNs in a and c: c's
    ("fma.rn.f64 %ds, %da, %db, %dc;", [(52, 0xfffffffffffffff4, 0x4dd014ff5dede4cc, 0xffffffffffffffc1,
                                         0xffffffffffffffc1)]),
    # op 4: div with two NaNs: a's
    ("div.rn.f64 %ds, %da, %db;", [(19, 0xffffffff95561345, 0xffffffff95561365, 0, 0xffffffff95561345)]),
    # ops 72/73: min/max of two NaNs: b's
    ("min.f64 %ds, %da, %db;", [(19, 0xffffffff95561345, 0xffffffff95561365, 0, 0xffffffff95561365)]),
    ("max.f64 %ds, %da, %db;", [(32, 0xffffffffae8ca600, 0x7fffffffae8ca600, 0, 0x7fffffffae8ca600)]),
    # ops 74/75: abs/neg of a NaN: the NaN quieted, sign unchanged
    ("abs.f64 %ds, %da;", [(4, 0xffffffff993701a2, 0, 0, 0xffffffff993701a2),
                           (364, 0x7ff0000000000001, 0, 0, 0x7ff8000000000001)]),
    ("neg.f64 %ds, %da;", [(4, 0xffffffff993701a2, 0, 0, 0xffffffff993701a2)]),
    # op 6: an invalid operation (sqrt of a negative) gives 0xFFF8000000000000
    ("sqrt.rn.f64 %ds, %da;", [(0, 0xc2517ef341acd000, 0, 0, 0xfff8000000000000)]),
])
def test_nan_results(body, rows):
    check_rows(body + TO_RR, rows, body)


@pytest.mark.parametrize("body, rows", [
    # ops 11/26: NaN -> the sign bit alone, also for unsigned destinations
    ("cvt.rni.s32.f64 %rs, %da; cvt.u64.u32 %rr, %rs;", [(4, 0xffffffff993701a2, 0, 0, 0x80000000)]),
    ("cvt.rzi.u64.f64 %rr, %da;", [(4, 0xffffffff993701a2, 0, 0, 0x8000000000000000)]),
    # ops 9/41/58: infinities and values past the range clamp (no Python OverflowError)
    ("cvt.rni.s64.f64 %rr, %da;", [(54, 0xfff0000000000000, 0, 0, 0x8000000000000000),
                                   (507, 0x7ff0000000000000, 0, 0, 0x7fffffffffffffff),
                                   (7, 0x74272cb980000000, 0, 0, 0x7fffffffffffffff)]),
    ("cvt.rmi.s64.f64 %rr, %da;", [(54, 0xfff0000000000000, 0, 0, 0x8000000000000000)]),
    ("cvt.rpi.u64.f64 %rr, %da;", [(54, 0xfff0000000000000, 0, 0, 0x0),
                                   (507, 0x7ff0000000000000, 0, 0, 0xffffffffffffffff)]),
    # op 8: f64 NaN -> f16: sign, the payload's top bits, quiet bit
    ("cvt.rn.f16.f64 %hs, %da; mov.b32 %rs, {%hs, %hz}; cvt.u64.u32 %rr, %rs;",
     [(364, 0x7ff0000000000001, 0, 0, 0x7e00), (602, 0x7ff4000000000000, 0, 0, 0x7f00)]),
    # op 68: f16 NaN -> f64 quieted (0x7de0 is a signalling f16 NaN)
    ("cvt.f64.f16 %ds, %ha; mov.b64 %rr, %ds;", [(73, 0xffffffffda897de0, 0, 0, 0x7fff800000000000),
                                                 (744, 0xbed4e4e51cdefc38, 0, 0, 0xfff8e00000000000)]),
    # op 67: with .ftz every f32 NaN becomes 0x7FFFFFFF, widened
    ("cvt.ftz.f64.f32 %ds, %fa; mov.b64 %rr, %ds;", [(16, 0x41dfffffffe00000, 0, 0, 0x7fffffffe0000000)]),
    # op 71: .sat: -0 and NaN give +0
    ("cvt.sat.f64.f64 %ds, %da; mov.b64 %rr, %ds;", [(154, 0x8000000000000000, 0, 0, 0x0),
                                                     (4, 0xffffffff993701a2, 0, 0, 0x0)]),
])
def test_conversions(body, rows):
    check_rows(body, rows, body)
