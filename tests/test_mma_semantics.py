"""tcgen05.mma semantics on exact-by-construction operands (§9.7.16.10, .10.1, .10.7-.10.9).

Every expected value is computed here from small integers with plain integer arithmetic; both
numerics models must give it exactly (spec model: tolerance 0).
"""

import numpy as np
import pytest

from reference import formats as F
from reference import sparsity as SP
from reference import tables as T
from reference.errors import SpecError
from reference.mma_qualifiers import MmaOp, check_collector_usage
from reference.mma_semantics import d_from_words, d_words, exact_integer_products, mma
from reference.zero_column_mask import ZeroColumnMaskDescriptor

pytestmark = [pytest.mark.reference, pytest.mark.semantic]

MODELS = ("spec", "hardware")
SMALL = (-2, -1, 0, 1, 2)                # exact in every element format (u8: 0..2)


def small_ints(rng, shape, a_type):
    vals = (0, 1, 2) if a_type == "u8" else SMALL
    return rng.choice(vals, size=shape)


def codes(fmt, values):
    return F.encode(fmt, np.asarray(values))


def expected_codes(d_type, ints):
    return F.encode(d_type, ints)


def run_both(op, a, b, c, **kw):
    return [mma(op, a, b, c, model=model, **kw) for model in MODELS]


def check_exact(results, want_ints, d_type):
    want = expected_codes(d_type, want_ints)
    for r in results:
        np.testing.assert_array_equal(r.d, want)
        np.testing.assert_array_equal(r.d_value, np.asarray(want_ints, dtype=np.float64))
        assert np.all(r.d_tol == 0)


def _combos():
    out = []
    for kind in T.KINDS:
        for combo in T.TYPE_COMBOS[kind]:
            out.append((kind, combo.d_type, combo.a_type, combo.b_type, combo.scale_type))
    return out


def _scale_vec(kind, scale_type):
    return {"mxf8f6f4": "1X", "mxf4": "2X"}.get(kind, "4X" if scale_type == "ue4m3" else "2X")


@pytest.mark.parametrize("kind,d_type,a_type,b_type,scale_type", _combos(),
                         ids=[f"{k}-{d}-{a}-{b}-{s}" for k, d, a, b, s in _combos()])
def test_every_type_combination_exact(kind, d_type, a_type, b_type, scale_type):
    rng = np.random.default_rng(hash((kind, d_type, a_type, b_type, scale_type)) % 2**32)
    k = T.mma_k(kind, False)
    m, n = 128, 8
    ai, bi = small_ints(rng, (m, k), a_type), small_ints(rng, (k, n), b_type)
    ci = rng.integers(-20, 21, size=(m, n))
    op = MmaOp(kind, a_type, b_type, d_type, m, n, scale_type=scale_type,
               scale_vec=_scale_vec(kind, scale_type) if scale_type else None)
    kw = {}
    if scale_type:
        sf = op.scale_factors
        one = F.encode(scale_type, np.ones(1))[0]
        kw = dict(scale_a=np.full((m, sf), one, dtype=np.uint8), scale_b=np.full((sf, n), one, dtype=np.uint8))
    want = ai.astype(np.int64) @ bi.astype(np.int64) + ci
    check_exact(run_both(op, codes(a_type, ai), codes(b_type, bi), codes(d_type, ci), **kw), want, d_type)


@pytest.mark.parametrize("kind,a_type,d_type", [("f16", "f16", "f32"), ("f16", "bf16", "f32"), ("tf32", "tf32", "f32"),
                                               ("f8f6f4", "e4m3", "f16"), ("f8f6f4", "e2m1", "f32")])
def test_negate_and_no_accumulate(kind, a_type, d_type):
    rng = np.random.default_rng(5)
    k, m, n = T.mma_k(kind, False), 64, 16
    ai, bi, ci = small_ints(rng, (m, k), a_type), small_ints(rng, (k, n), a_type), rng.integers(-9, 10, (m, n))
    a, b, c = codes(a_type, ai), codes(a_type, bi), codes(d_type, ci)
    for neg_a in (False, True):
        for neg_b in (False, True):
            for acc in (False, True):
                op = MmaOp(kind, a_type, a_type, d_type, m, n, negate_a=neg_a, negate_b=neg_b, enable_input_d=acc)
                sign = (-1) ** (neg_a + neg_b)
                want = sign * (ai @ bi) + (ci if acc else 0)
                check_exact(run_both(op, a, b, c), want, d_type)


@pytest.mark.parametrize("kind,a_type", [("f16", "f16"), ("tf32", "tf32")])
@pytest.mark.parametrize("s", range(16))
def test_scale_input_d(kind, a_type, s):
    # D = A*B + C * 2^-s; C = multiples of 2^s so everything is an integer
    rng = np.random.default_rng(s)
    k, m, n = T.mma_k(kind, False), 64, 8
    ai, bi = small_ints(rng, (m, k), a_type), small_ints(rng, (k, n), a_type)
    ci = rng.integers(-3, 4, (m, n)) << s
    op = MmaOp(kind, a_type, a_type, "f32", m, n, scale_input_d=s)
    check_exact(run_both(op, codes(a_type, ai), codes(a_type, bi), codes("f32", ci)), ai @ bi + (ci >> s), "f32")


def test_scale_input_d_rules():
    with pytest.raises(SpecError, match="scale-input-d"):
        MmaOp("f8f6f4", "e4m3", "e4m3", "f32", 128, 8, scale_input_d=1)          # NOTES.md item 8
    with pytest.raises(SpecError, match=r"\[0, 15\]"):
        MmaOp("f16", "f16", "f16", "f32", 128, 8, scale_input_d=16)
    with pytest.raises(SpecError, match="scale-input-d"):
        MmaOp("mxf8f6f4", "e4m3", "e4m3", "f32", 128, 8, scale_input_d=2)


def test_negate_not_for_i8():
    with pytest.raises(SpecError, match="Table 49"):
        MmaOp("i8", "s8", "s8", "s32", 128, 16, negate_a=True)


def test_f16_d_packing():
    words = d_words(np.array([0x3C00, 0xBC00], dtype=np.uint16), "f16")
    assert words.tolist() == [0x3C00, 0xBC00]
    assert d_from_words(np.array([0xFFFF3C00], dtype=np.uint32), "f16").tolist() == [0x3C00]
    assert d_from_words(np.array([0x3F800000], dtype=np.uint32), "f32").tolist() == [0x3F800000]


# ---------------------------------------------------------------------------------------------
# i8: wrap and saturate at the s32 boundaries
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("c_val,a0,b0,wrapped,saturated", [
    (2**31 - 1, 1, 1, -2**31, 2**31 - 1),
    (2**31 - 2, 2, 1, -2**31, 2**31 - 1),
    (-2**31, -1, 1, 2**31 - 1, -2**31),
    (-2**31 + 5, -127, 127, 2**31 - 127 * 127 + 5, -2**31),
    (2**31 - 1, 0, 5, 2**31 - 1, 2**31 - 1),
    (-2**31, 0, 0, -2**31, -2**31),
])
def test_i8_wrap_and_saturate(c_val, a0, b0, wrapped, saturated):
    m, n, k = 128, 16, 32
    a = np.zeros((m, k), dtype=np.int64)
    b = np.zeros((k, n), dtype=np.int64)
    a[:, 0], b[0, :] = a0, b0                     # A*B = a0 * b0 everywhere
    c = np.full((m, n), c_val)
    for sat, want in ((False, wrapped), (True, saturated)):
        op = MmaOp("i8", "s8", "s8", "s32", m, n, saturate=sat)
        r = mma(op, codes("s8", a), codes("s8", b), codes("s32", c))
        assert np.all(F.decode("s32", r.d) == want)


def test_i8_unsigned_full_range():
    m, n, k = 128, 16, 32
    a = np.full((m, k), 255)
    b = np.full((k, n), 255)
    op = MmaOp("i8", "u8", "u8", "s32", m, n)
    r = mma(op, codes("u8", a), codes("u8", b), codes("s32", np.zeros((m, n), dtype=np.int64)))
    assert np.all(F.decode("s32", r.d) == 32 * 255 * 255)


# ---------------------------------------------------------------------------------------------
# disable-output-lane
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cta_group,m", [(1, 128), (2, 256)])
def test_disable_output_lane_each_lane(cta_group, m):
    rng = np.random.default_rng(cta_group)
    n, k = 16, 16
    ai, bi, ci = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (k, n)), rng.integers(-9, 10, (m, n))
    a, b, c = codes("f16", ai), codes("f16", bi), codes("f32", ci)
    full = ai @ bi + ci
    for lane in range(0, m, 7 if cta_group == 2 else 3):
        words = [0] * (4 * cta_group)
        words[lane // 32] |= 1 << (lane % 32)
        op = MmaOp("f16", "f16", "f16", "f32", m, n, cta_group=cta_group, disable_output_lane=tuple(words))
        for r in run_both(op, a, b, c):
            assert not r.written[lane].any() and r.written[np.arange(m) != lane].all()
            np.testing.assert_array_equal(r.d[lane], c[lane])             # the old D, bit for bit
            keep = np.arange(m) != lane
            np.testing.assert_array_equal(r.d[keep], expected_codes("f32", full[keep]))


def test_disable_output_lane_keeps_old_d_without_accumulate():
    m, n = 128, 8
    c = codes("f32", np.full((m, n), 7))
    words = (0xFFFFFFFF, 0, 0, 1 << 31)
    op = MmaOp("f16", "f16", "f16", "f32", m, n, disable_output_lane=words, enable_input_d=False)
    a, b = codes("f16", np.ones((m, 16))), codes("f16", np.ones((16, n)))
    for r in run_both(op, a, b, c):
        d = F.decode("f32", r.d)
        assert np.all(d[:32] == 7) and np.all(d[127] == 7) and np.all(d[32:127] == 16)


def test_disable_output_lane_rules():
    with pytest.raises(SpecError, match="4 unsigned 32-bit"):
        MmaOp("f16", "f16", "f16", "f32", 128, 8, disable_output_lane=(0, 0, 0, 0, 0, 0, 0, 0))
    with pytest.raises(SpecError, match="absent"):
        MmaOp("mxf8f6f4", "e4m3", "e4m3", "f32", 128, 8, disable_output_lane=(0, 0, 0, 0))


def test_disable_output_lane_half_datapath_layout():
    # M = 64, cta_group::1: Layout F ("4x1, 1/2 datapath"), row i in lane 32*(i//16) + i%16 + a
    m, n = 64, 8
    a, b = codes("f16", np.ones((m, 16))), codes("f16", np.ones((16, n)))
    c = codes("f32", np.full((m, n), -1))
    for offset in (0, 16):
        for lane in (0, 15, 16, 31, 32, 47, 50, 96, 127):
            words = [0, 0, 0, 0]
            words[lane // 32] |= 1 << (lane % 32)
            op = MmaOp("f16", "f16", "f16", "f32", m, n, disable_output_lane=tuple(words))
            r = mma(op, a, b, c, lane_offset=offset)
            want = np.ones((m, n), dtype=bool)
            local = lane % 32 - offset
            if 0 <= local < 16:
                want[16 * (lane // 32) + local] = False
            np.testing.assert_array_equal(r.written, want, err_msg=f"lane {lane} offset {offset}")
    with pytest.raises(SpecError, match="alignment"):
        mma(op, a, b, c, lane_offset=8)


def test_disable_output_lane_2x2_layout_splits_rows():
    # M = 128, cta_group::2, dense: Layout B ("2x2"); per CTA, D[i][j] in lane i + 64*(j // (N/2))
    m, n = 128, 32
    words = [0] * 8
    words[64 // 32] |= 1 << (64 % 32)                      # CTA 0, lane 64: row 0, columns N/2..N-1
    words[(128 + 3) // 32] |= 1 << ((128 + 3) % 32)        # CTA 1, lane 3: row 64 + 3, columns 0..N/2-1
    op = MmaOp("f16", "f16", "f16", "f32", m, n, cta_group=2, disable_output_lane=tuple(words))
    r = mma(op, codes("f16", np.ones((m, 16))), codes("f16", np.ones((16, n))), codes("f32", np.zeros((m, n))))
    want = np.ones((m, n), dtype=bool)
    want[0, n // 2:] = False
    want[67, : n // 2] = False
    np.testing.assert_array_equal(r.written, want)


# ---------------------------------------------------------------------------------------------
# .ws: zero-column mask and column shift (the spec's examples driving an MMA)
# ---------------------------------------------------------------------------------------------

def _ws_run(desc, m, n, width):
    """D = ones(M x K) * B with B[:, j] = j + 1 over N + shift columns: column j of D tells which
    B column was used (K * (j + shift + 1)) or that it was zeroed (0)."""
    k = 16
    b_cols = np.arange(1, width + 1)
    b = codes("f16", np.broadcast_to(b_cols, (k, width)))
    op = MmaOp("f16", "f16", "f16", "f32", m, n, ws=True, zero_column_mask=desc)
    a = codes("f16", np.ones((m, k)))
    res = run_both(op, a, b, codes("f32", np.zeros((m, n))))
    return [F.decode("f32", r.d)[0] / k for r in res]


def _bits_lsb_first(text):
    """'0b ... 111 0000 111' (MSB left) -> list of bits, LSB first."""
    digits = text.replace("0b", "").replace("…", "").replace(" ", "")
    return [int(ch) for ch in reversed(digits)]


def test_ws_example_2_m128():
    # Table 45 example 2: skip 2, use 3, fs0 0, sc0 0 -> mask0 0b ... 111 0000 111 0000
    desc = ZeroColumnMaskDescriptor((0, 0, 0, 0), (0, 0, 0, 0), True, 2, 3, 0)
    want = _bits_lsb_first("0b111 0000 111 0000")
    for cols in _ws_run(desc, 128, 64, 64):
        for j, zeroed in enumerate(want):
            assert cols[j] == (0 if zeroed else j + 1)


def test_ws_example_3_m64():
    desc = ZeroColumnMaskDescriptor((0, 0, 0, 0), (1, 0, 0, 0), True, 2, 3, 0)
    n = 64
    mask0 = _bits_lsb_first("0b111 0000 111 0000 111")
    mask1 = _bits_lsb_first("0b0000 111 0000 111 0000")
    for cols in _ws_run(desc, 64, n, n):
        for j, zeroed in enumerate(mask0):
            assert cols[j] == (0 if zeroed else j + 1)
        for j, zeroed in enumerate(mask1):
            assert cols[n // 2 + j] == (0 if zeroed else n // 2 + j + 1)


def test_ws_example_4_m32_with_column_shift():
    # sc {1,2,1,0}, fs {0,0,1,1}, skip 2, use 3, shift 2: "columns from 2 to N+1 will be used"
    desc = ZeroColumnMaskDescriptor((0, 1, 2, 1), (1, 1, 0, 0), True, 2, 3, 2)
    n = 64
    masks = [_bits_lsb_first(t) for t in ("0b0000 111 0000 111", "0b0000 111 0000 11",
                                          "0b111 0000 111 00", "0b111 0000 111 000")]
    for cols in _ws_run(desc, 32, n, n + 2):
        for i, mask in enumerate(masks):
            for j, zeroed in enumerate(mask):
                col = i * n // 4 + j
                assert cols[col] == (0 if zeroed else col + 2 + 1)


def test_ws_rules():
    with pytest.raises(SpecError, match=".ws"):
        MmaOp("f16", "f16", "f16", "f32", 128, 64, ws=True, cta_group=2)
    with pytest.raises(SpecError, match="only with .ws"):
        MmaOp("f16", "f16", "f16", "f32", 128, 64, zero_column_mask=ZeroColumnMaskDescriptor())
    with pytest.raises(SpecError, match="max_shift"):
        MmaOp("f16", "f16", "f16", "f32", 128, 64, max_shift=8)
    op = MmaOp("f16", "f16", "f16", "f32", 128, 64, ws=True, max_shift=16)
    r = mma(op, codes("f16", np.ones((128, 16))), codes("f16", np.ones((16, 64))), codes("f32", np.zeros((128, 64))))
    assert np.all(F.decode("f32", r.d) == 16)                     # max shift alone changes nothing


# ---------------------------------------------------------------------------------------------
# .ashift and collector usage
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,cta_group", [(128, 1), (256, 2)])
def test_ashift_moves_rows_down(m, cta_group):
    k, n = 16, 16
    ai = np.zeros((m, k), dtype=np.int64)
    ai[np.arange(m), np.arange(m) % k] = 1                      # row r selects B row r % K
    bi = np.arange(k * n).reshape(k, n) % 7
    op = MmaOp("f16", "f16", "f16", "f32", m, n, cta_group=cta_group, ashift=True)
    for r in run_both(op, codes("f16", ai), codes("f16", bi), codes("f32", np.zeros((m, n)))):
        d = F.decode("f32", r.d)
        for row in range(1, m):
            np.testing.assert_array_equal(d[row], bi[(row - 1) % k])   # D row r uses A row r - 1
        assert r.ambiguous[0].all()
        assert r.ambiguous[m // 2].all() == (cta_group == 2)


def test_ashift_and_collector_rules():
    with pytest.raises(SpecError, match="ashift"):
        MmaOp("f16", "f16", "f16", "f32", 64, 8, ashift=True)
    with pytest.raises(SpecError, match="lastuse or discard"):
        check_collector_usage("a::fill", ashift=True)
    assert check_collector_usage(None) == "a::discard"
    assert check_collector_usage(None, ws=True) == "b0::discard"
    assert check_collector_usage("collector::b3::use", ws=True) == "b3::use"
    with pytest.raises(SpecError):
        check_collector_usage("b1::use")


# ---------------------------------------------------------------------------------------------
# Sparse A == dense A with zeros
# ---------------------------------------------------------------------------------------------

SPARSE = [("tf32", "tf32", "f32", None), ("f16", "f16", "f16", None), ("f16", "bf16", "f32", None),
          ("f8f6f4", "e3m2", "f32", None), ("i8", "s8", "s32", None), ("mxf8f6f4", "e4m3", "f32", "ue8m0"),
          ("mxf4", "e2m1", "f32", "ue8m0"), ("mxf4nvf4", "e2m1", "f32", "ue4m3")]


@pytest.mark.parametrize("kind,a_type,d_type,scale_type", SPARSE, ids=[s[0] + "-" + s[1] for s in SPARSE])
def test_sparse_equals_dense_with_zeros(kind, a_type, d_type, scale_type):
    rng = np.random.default_rng(len(kind))
    pattern = SP.pattern_for_kind(kind)
    m = 128
    n = 16
    k = T.mma_k(kind, True)
    dense = np.zeros((m, k), dtype=np.int64)
    for r in range(m):
        for c0 in range(0, k, pattern.chunk):
            slots = rng.choice(pattern.chunk // pattern.unit, pattern.kept // pattern.unit, replace=False)
            for s in slots:
                for u in range(pattern.unit):
                    dense[r, c0 + s * pattern.unit + u] = rng.choice((-2, -1, 1, 2))
    comp, meta = SP.compress(pattern, dense)
    bi = small_ints(rng, (k, n), a_type)
    ci = rng.integers(-9, 10, (m, n))
    kw = {}
    scale_vec = None
    if scale_type:
        scale_vec = "4X" if scale_type == "ue4m3" else None
    op = MmaOp(kind, a_type, a_type, d_type, m, n, sparse=True, scale_type=scale_type, scale_vec=scale_vec,
               cta_group=1)
    if scale_type:
        one = F.encode(scale_type, np.ones(1))[0]
        kw = dict(scale_a=np.full((m, op.scale_factors), one, dtype=np.uint8),
                  scale_b=np.full((op.scale_factors, n), one, dtype=np.uint8))
    want = dense @ bi + ci
    results = run_both(op, codes(a_type, comp), codes(a_type, bi), codes(d_type, ci), meta=meta, **kw)
    check_exact(results, want, d_type)


def test_sparse_ambiguous_metadata_is_flagged():
    m, n = 128, 8
    op = MmaOp("f16", "f16", "f16", "f32", m, n, sparse=True)
    meta = np.full((m, 8), 0b0100, dtype=np.uint8)
    meta[5, 3] = 0b0110
    r = mma(op, codes("f16", np.ones((m, 16))), codes("f16", np.ones((32, n))), codes("f32", np.zeros((m, n))), meta=meta)
    assert r.ambiguous[5].all() and not r.ambiguous[np.arange(m) != 5].any()
    meta[6, 0] = 0b0001
    with pytest.raises(SpecError, match="meaningful"):
        mma(op, codes("f16", np.ones((m, 16))), codes("f16", np.ones((32, n))), codes("f32", np.zeros((m, n))), meta=meta)


def test_ws_sparse_with_mask():
    """.ws.sp: sparse A expanded, B columns shifted and masked (M = 64: two sub-masks)."""
    m, n = 64, 64
    pattern = SP.pattern_for_kind("f16")
    dense = np.zeros((m, 32), dtype=np.int64)
    dense[:, 0::4] = 1                                         # kept elements at chunk positions 0
    dense[:, 3::4] = 2                                         # and 3
    comp, meta = SP.compress(pattern, dense)
    desc = ZeroColumnMaskDescriptor((0, 0, 0, 0), (1, 0, 0, 0), True, 0, 0, 4)   # alternate 1,0 / 0,1
    b = codes("f16", np.broadcast_to(np.arange(1, n + 5) % 5, (32, n + 4)))
    op = MmaOp("f16", "f16", "f16", "f32", m, n, ws=True, sparse=True, zero_column_mask=desc)
    used = (np.arange(n) + 4 + 1) % 5                          # B column j + 4
    zeroed = np.array([(j % 2 == 0) if j < n // 2 else (j % 2 == 1) for j in range(n)])
    want = np.broadcast_to(np.where(zeroed, 0, used * (8 * 1 + 8 * 2)), (m, n))
    check_exact(run_both(op, codes("f16", comp), b, codes("f32", np.zeros((m, n))), meta=meta), want, "f32")


def test_cached_table_checks_follow_the_reading_and_raise_every_time():
    """MmaOp.validate's Table 39 look-ups are cached per arguments and Q-K96-M128 reading: an M = 128
    K = 96 MMA is legal under the pick (CuTe's rows) and not under "table-39", in either order, and
    an illegal shape raises again on a second construction."""
    from reference.spec_questions import following

    args = dict(kind="mxf4", a_type="e2m1", b_type="e2m1", d_type="f32", m=128, n=64, k96=True, scale_vec="block32")
    for _ in range(2):
        with following({"Q-K96-M128": "cute-m128"}):
            assert MmaOp(**args).k == 96
        with following({"Q-K96-M128": "table-39"}), pytest.raises(SpecError, match="Table 39"):
            MmaOp(**args)
        with pytest.raises(SpecError, match="Table 39"):
            MmaOp(kind="f16", a_type="f16", b_type="f16", d_type="f32", m=128, n=12)


@pytest.mark.parametrize("lo, hi, k", [(-128, 128, 64), (0, 256, 256), (-(1 << 31), 1 << 31, 8), (0, 1, 0)])
def test_exact_integer_products_is_the_int64_matmul(lo, hi, k):
    """``exact_integer_products`` (kind::i8's exact sum; through float64 while every partial sum
    stays below 2^53) equals numpy's int64 matmul, on i8/u8 ranges and beyond 2^53 (int64 path)."""
    rng = np.random.default_rng(k)
    a, b = rng.integers(lo, hi, (24, k)), rng.integers(lo, hi, (k, 7))
    a[0, :], b[:, 0] = lo, hi - 1                         # the extremes, summed K times
    assert np.array_equal(exact_integer_products(a, b), a.astype(np.int64) @ b.astype(np.int64))
