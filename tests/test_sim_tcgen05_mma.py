"""tcgen05.mma on the simulator: dense kinds, qualifiers and operands, against D computed here.

Inputs are exact by construction (small integers), so D = A*B + C is exact in float64 and in
every D format; the expected value is written in numpy from the logical matrices. Shared memory
images and descriptors come from tests/sim_mma_cases.py (spec formulas, not the simulator's).
"""

from dataclasses import replace

import numpy as np
import pytest

from ptxsim import Fault
from ptxsim.device import faults_overridden
from tests.sim_mma_cases import MmaKernel, f16_codes, f32_bits, idesc, place, smem_desc

pytestmark = pytest.mark.reference

RNG = np.random.default_rng(2024)
MMA_F16 = "tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;"


def ints(shape, lo=-3, hi=4):
    return RNG.integers(lo, hi, size=shape).astype(np.float64)


def f16_setup(m=128, n=64, k=16, transpose_a=False, transpose_b=False, ctas=1):
    """Images of A (per CTA m/ctas x k) at 0 and B (per CTA n/ctas x k) at 0x4000, descriptors."""
    a, b = ints((m, k)), ints((k, n))
    imgs, descs = [], None
    mc, nc = m // ctas, n // ctas
    for c in range(ctas):
        img = np.zeros(0x8000, dtype=np.uint8)
        a_part = a[c * mc:(c + 1) * mc]
        b_part = b[:, c * nc:(c + 1) * nc].T                          # N x K
        if transpose_a:
            la, sa = place(img, f16_codes(a_part), 16, 0, "MN")
        else:
            la, sa = place(img, f16_codes(a_part), 16, 0, "K")
        lb, sb = place(img, f16_codes(b_part), 16, 0x4000, "MN" if transpose_b else "K")
        imgs.append(img)
        descs = (smem_desc(0, la, sa), smem_desc(0x4000, lb, sb))
    return a, b, imgs, descs


def cells_c(c, ctas=1):
    t = np.zeros((ctas, 128, 128), dtype=np.uint32)
    t[:, :, :c.shape[-1]] = c
    return t


@pytest.mark.parametrize("enable", [True, False])
def test_f16_dense_layout_d(enable):
    a, b, imgs, (da, db) = f16_setup()
    c = ints((128, 64), -100, 100)
    k = MmaKernel(MMA_F16)
    out = k.run(smem=imgs, tmem=cells_c(f32_bits(c)[None]), a_desc=da, b_desc=db, enable=enable,
                idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16"))
    want = a @ b + (c if enable else 0)
    assert (out[0] == f32_bits(want)).all()


def test_f16_transpose_negate():
    a, b, imgs, (da, db) = f16_setup(transpose_a=True, transpose_b=True)
    k = MmaKernel(MMA_F16)
    out = k.run(smem=imgs, tmem=cells_c(np.zeros((1, 128, 64), np.uint32)), a_desc=da, b_desc=db, enable=False,
                idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16", t_a=True, t_b=True, neg_a=True))
    assert (out[0] == f32_bits(-a @ b + 0.0)).all()


def test_f16_d_in_f16_and_scale_input_d():
    a, b, imgs, (da, db) = f16_setup()
    c = ints((128, 64), -64, 64) * 4
    k = MmaKernel("tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7, 2;")
    out = k.run(smem=imgs, tmem=cells_c(f16_codes(c).astype(np.uint32)[None] | 0xABCD0000), a_desc=da, b_desc=db,
                idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16", d_type="f16"))
    want = f16_codes(a @ b + c / 4).astype(np.uint32)
    assert (out[0] == want).all()                       # 16-bit D in the low half, upper half 0


def test_disable_output_lane():
    a, b, imgs, (da, db) = f16_setup()
    c = ints((128, 64), -100, 100)
    dol = [0x80000001, 0, 0xFFFF0000, 0]                  # lanes 0, 31, 80..95
    k = MmaKernel("tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, "
                  "{%r24, %r25, %r26, %r27}, %p7;")
    out = k.run(smem=imgs, tmem=cells_c(f32_bits(c)[None]), a_desc=da, b_desc=db, dol=dol,
                idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16"))
    want = a @ b + c
    off = [0, 31] + list(range(80, 96))
    want[off] = c[off]
    assert (out[0] == f32_bits(want)).all()
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    shifted = Fault("dol+1", "mma_operands", lambda o, ctx: replace(o, disable_output_lane=o.disable_output_lane << 1))
    bad = k.run(smem=imgs, tmem=cells_c(f32_bits(c)[None]), a_desc=da, b_desc=db, dol=dol, faults=[shifted],
                idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16"))
    assert (bad[0] != out[0]).any()


def test_tf32_i8_f8_kinds():
    m, n = 128, 32
    for kind, at, bits, k, dt in (("tf32", "tf32", 32, 8, "f32"), ("i8", "s8", 8, 32, "s32"),
                                  ("f8f6f4", "e4m3", 8, 32, "f32")):
        a, b = ints((m, k)), ints((k, n))
        img = np.zeros(0x8000, dtype=np.uint8)
        enc = {"tf32": lambda x: f32_bits(x).astype(np.uint64),
               "s8": lambda x: (x.astype(np.int64) & 0xFF).astype(np.uint64),
               "e4m3": lambda x: np.asarray(__import__("ml_dtypes").float8_e4m3fn(x)).view(np.uint8).astype(np.uint64)}[at]
        la, sa = place(img, enc(a), bits, 0, "K")
        lb, sb = place(img, enc(b.T), bits, 0x4000, "K")
        text = f"tcgen05.mma.cta_group::1.kind::{kind} [%r32], %rd6, %rd7, %r22, %p7;"
        out = MmaKernel(text, readback=((0, 32),)).run(
            smem=[img], tmem=cells_c(np.zeros((1, 128, 32), np.uint32)), a_desc=smem_desc(0, la, sa),
            b_desc=smem_desc(0x4000, lb, sb), enable=False, idesc_value=idesc(m=m, n=n, a_type=at, b_type=at, d_type=dt))
        want = (a @ b).astype(np.int64).astype(np.uint32) if dt == "s32" else f32_bits(a @ b)
        assert (out[0] == want).all(), kind


@pytest.mark.parametrize("saturate", [False, True])
def test_i8_saturate_and_wrap(saturate):
    m, n, k = 128, 16, 32
    a = np.full((m, k), 127.0)
    b = np.full((k, n), 127.0)
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, a.astype(np.uint64), 8, 0, "K")
    lb, sb = place(img, b.T.astype(np.uint64), 8, 0x4000, "K")
    c = np.full((128, 16), 0x7FFF0000, dtype=np.uint32)
    text = "tcgen05.mma.cta_group::1.kind::i8 [%r32], %rd6, %rd7, %r22, %p7;"
    out = MmaKernel(text, readback=((0, 16),)).run(
        smem=[img], tmem=cells_c(c[None]), a_desc=smem_desc(0, la, sa), b_desc=smem_desc(0x4000, lb, sb),
        idesc_value=idesc(m=m, n=n, a_type="s8", b_type="s8", d_type="s32", saturate=saturate))
    exact = 0x7FFF0000 + 127 * 127 * 32
    want = 0x7FFFFFFF if saturate else exact - (1 << 32)
    assert (out[0].astype(np.int64) == (want & 0xFFFFFFFF)).all()


def test_cta_group_2_m256():
    a, b, imgs, (da, db) = f16_setup(m=256, n=64, ctas=2)
    text = "tcgen05.mma.cta_group::2.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;"
    out = MmaKernel(text, cta_group=2).run(smem=imgs, tmem=cells_c(np.zeros((2, 128, 64), np.uint32), 2),
                                           a_desc=da, b_desc=db, enable=False,
                                           idesc_value=idesc(m=256, n=64, a_type="f16", b_type="f16"))
    want = f32_bits(a @ b)
    assert (out[0] == want[:128]).all() and (out[1] == want[128:]).all()


def test_cta_group_2_m128_layout_b():
    """Layout B (2x2): D[i][j] of CTA c at lane i + 64*(j // (N/2)), column j % (N/2)."""
    a, b, imgs, (da, db) = f16_setup(m=128, n=64, ctas=2)
    text = "tcgen05.mma.cta_group::2.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;"
    out = MmaKernel(text, cta_group=2, readback=((0, 32),)).run(
        smem=imgs, tmem=cells_c(np.zeros((2, 128, 32), np.uint32), 2), a_desc=da, b_desc=db, enable=False,
        idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16"))
    want = f32_bits(a @ b)
    for c in range(2):
        for i in range(64):
            for j in range(64):
                assert out[c, i + 64 * (j // 32), j % 32] == want[64 * c + i, j]


def test_layout_f_m64_lane_alignment_16():
    """Layout F: D[i][j] at lane 32*(i//16) + i%16 + 16."""
    a, b, imgs, (da, db) = f16_setup(m=64, n=32)
    out = MmaKernel(MMA_F16, readback=((0, 32),)).run(
        smem=imgs, tmem=cells_c(np.zeros((1, 128, 32), np.uint32)), a_desc=da, b_desc=db, enable=False,
        d=16 << 16, idesc_value=idesc(m=64, n=32, a_type="f16", b_type="f16"))
    want = f32_bits(a @ b)
    for i in range(64):
        assert (out[0, 32 * (i // 16) + i % 16 + 16] == want[i]).all()


def test_instr_desc_and_result_faults():
    a, b, imgs, (da, db) = f16_setup()
    k = MmaKernel(MMA_F16)
    kw = dict(smem=imgs, tmem=cells_c(np.zeros((1, 128, 64), np.uint32)), a_desc=da, b_desc=db, enable=False,
              idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16", neg_b=True))
    good = k.run(**kw)
    assert (good[0] == f32_bits(-(a @ b) + 0.0)).all()
    ignore_neg = Fault("negB", "instr_desc", lambda d, ctx: replace(d, negate_b=False))
    assert (k.run(**kw, faults=[ignore_neg])[0] == f32_bits(a @ b)).all()
    corner = Fault("corner", "mma_result", lambda v, ctx: np.where((ctx.row == 5) & (ctx.col == 7), v ^ 1, v))
    bad = k.run(**kw, faults=[corner])[0]
    assert (bad != good[0]).sum() == 1 and bad[5, 7] != good[0, 5, 7]


def test_commit_arriving_early_leaves_d_unwritten():
    a, b, imgs, (da, db) = f16_setup()
    early = Fault("early", "mbarrier", lambda e, ctx: replace(e, complete_pending=False) if e.kind == "commit" else e)
    out = MmaKernel(MMA_F16).run(smem=imgs, tmem=cells_c(np.zeros((1, 128, 64), np.uint32)), a_desc=da, b_desc=db,
                                 enable=False, idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16"),
                                 faults=[early], hazards=False)     # the hazard checker would report the read
    assert (out[0] == 0).all()


def _one_mma(kind, at, bt, a_codes, b_codes, bits, d_type="f32", n=16, **desc):
    """D of a 128 x n MMA from A codes (128 x K) and B codes (K x n), K-major, no accumulate."""
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, np.asarray(a_codes, dtype=np.uint64), bits, 0, "K")
    lb, sb = place(img, np.asarray(b_codes, dtype=np.uint64).T, bits, 0x4000, "K")
    text = f"tcgen05.mma.cta_group::1.kind::{kind} [%r32], %rd6, %rd7, %r22, %p7;"
    return MmaKernel(text, readback=((0, n),)).run(
        smem=[img], tmem=cells_c(np.zeros((1, 128, n), np.uint32)), a_desc=smem_desc(0, la, sa),
        b_desc=smem_desc(0x4000, lb, sb), enable=False,
        idesc_value=idesc(m=128, n=n, a_type=at, b_type=bt, d_type=d_type, **desc))[0]


def test_numerics_probes_hardware_model():
    """Facts of the published sm_100 model (reference/numerics_hw.py): f32 RZ, tf32 low 13 bits
    ignored, canonical NaN, subnormal results kept."""
    f16 = lambda x: int(np.float16(x).view(np.uint16))  # noqa: E731
    a = np.zeros((128, 16), dtype=np.uint64)
    b = np.zeros((16, 16), dtype=np.uint64)
    a[:, :4] = [f16(1.0), f16(2.0 ** -12), f16(2.0 ** -12), f16(2.0 ** -12)]
    b[:4, :] = [[f16(1.0)], [f16(2.0 ** -12)], [f16(2.0 ** -12)], [f16(2.0 ** -12)]]
    a[5, 7] = 0x7E00                                              # NaN in row 5
    out = _one_mma("f16", "f16", "f16", a, b, 16)
    assert out[0, 0] == f32_bits(1.0 + 2.0 ** -23)                 # 1 + 3*2^-24 toward zero
    assert (out[5] == 0x7FFFFFFF).all()                            # canonical NaN
    t = np.zeros((128, 8), dtype=np.uint64)
    u = np.zeros((8, 16), dtype=np.uint64)
    t[:, 0] = 0x3F801000                                          # 1 + 2^-11: bit 12 is ignored
    t[:, 1] = f32_bits(2.0 ** -100)
    u[0, :] = f32_bits(1.0)
    u[1, 1] = f32_bits(2.0 ** -30)
    t[7, 0] = 0                                                   # row 7: only 2^-100 * 2^-30
    out = _one_mma("tf32", "tf32", "tf32", t, u, 32)
    assert out[0, 0] == f32_bits(1.0) and out[0, 2] == f32_bits(1.0)
    assert out[7, 1] == 0x00080000 and out[7, 0] == 0               # 2^-130: a kept subnormal


def test_mixed_types_and_bf16():
    e4 = lambda x: np.asarray(__import__("ml_dtypes").float8_e4m3fn(x)).view(np.uint8)  # noqa: E731
    e5 = lambda x: np.asarray(__import__("ml_dtypes").float8_e5m2(x)).view(np.uint8)  # noqa: E731
    a, b = ints((128, 32)), ints((32, 16))
    out = _one_mma("f8f6f4", "e4m3", "e5m2", e4(a), e5(b), 8)
    assert (out == f32_bits(a @ b)).all()
    a, b = ints((128, 16)) * 1.5, ints((16, 16)) * 256
    bf = lambda x: np.asarray(__import__("ml_dtypes").bfloat16(x)).view(np.uint16)  # noqa: E731
    out = _one_mma("f16", "bf16", "bf16", bf(a), bf(b), 16, neg_b=True)
    assert (out == f32_bits(-(a @ b) + 0.0)).all()


def test_disable_output_lane_cta_pair():
    """cta_group::2: bits 0-127 are the lanes of the even CTA, 128-255 of the odd one."""
    a, b, imgs, (da, db) = f16_setup(m=256, n=64, ctas=2)
    c = ints((256, 64), -100, 100)
    tmem = np.zeros((2, 128, 128), dtype=np.uint32)
    tmem[0, :, :64], tmem[1, :, :64] = f32_bits(c[:128]), f32_bits(c[128:])
    dol = [0x0000000F, 0, 0, 0, 0, 0, 0x00010000, 0]              # CTA0 lanes 0-3, CTA1 lane 80
    text = ("tcgen05.mma.cta_group::2.kind::f16 [%r32], %rd6, %rd7, %r22, "
            "{%r24, %r25, %r26, %r27, %r28, %r29, %r30, %r31}, %p7;")
    out = MmaKernel(text, cta_group=2).run(smem=imgs, tmem=tmem, a_desc=da, b_desc=db, dol=dol,
                                           idesc_value=idesc(m=256, n=64, a_type="f16", b_type="f16"))
    want = a @ b + c
    for row in (0, 1, 2, 3, 128 + 80):
        want[row] = c[row]
    assert (out[0] == f32_bits(want[:128])).all() and (out[1] == f32_bits(want[128:])).all()
