"""tcgen05.mma operands in Tensor Memory and the .sp / .ws / .ashift / block-scaled forms.

Tensor Memory placement written here from docs/sim.md (reference/tmem_mma_operands decisions):
A row i at lane i, elements little-endian in 32-bit cells; metadata row i at lane i, nibble j at
bits 4*(j%8) of cell j//8 (+ selector for f16/tf32); scale factor s of row/column x at lane
x%32 of every quarter, column x//32, byte id+s.
"""

from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest

from ptxsim import Fault, SimError
from ptxsim.device import faults_overridden
from ptxsim.errors import SpecViolation
from tests.sim_mma_cases import MmaKernel, f16_codes, f32_bits, idesc, idesc_scaled, place, smem_desc

pytestmark = pytest.mark.reference

RNG = np.random.default_rng(99)


def ints(shape, lo=-3, hi=4):
    return RNG.integers(lo, hi, size=shape).astype(np.float64)


def f16_cells(a):
    """Rows of f16 values -> 32-bit cells, element 2c in the low half of cell c."""
    codes = f16_codes(a).astype(np.uint32)
    return codes[:, 0::2] | (codes[:, 1::2] << 16)


def b_image(b, start=0x4000, bits=16, enc=f16_codes):
    img = np.zeros(0x8000, dtype=np.uint8)
    lb, sb = place(img, enc(b.T), bits, start, "K")
    return img, smem_desc(start, lb, sb)


def test_a_in_tmem_and_ashift():
    m, n, k = 128, 32, 16
    a, b = ints((m, k)), ints((k, n))
    img, db = b_image(b)
    tmem = np.zeros((1, 128, 128), dtype=np.uint32)
    tmem[0, :, 64:72] = f16_cells(a)
    desc = idesc(m=m, n=n, a_type="f16", b_type="f16")
    plain = MmaKernel("tcgen05.mma.cta_group::1.kind::f16 [%r32], [%r33], %rd7, %r22, %p7;", readback=((0, 32),))
    out = plain.run(smem=[img], tmem=tmem, b_desc=db, a=64, enable=False, idesc_value=desc)
    assert (out[0] == f32_bits(a @ b)).all()
    ashift = MmaKernel("tcgen05.mma.cta_group::1.kind::f16.ashift [%r32], [%r33], %rd7, %r22, %p7;",
                       readback=((0, 32),))
    out = ashift.run(smem=[img], tmem=tmem, b_desc=db, a=64, enable=False, idesc_value=desc)
    used = np.concatenate([a[:1], a[:-1]])                    # rows move down one; row 0 keeps A[0]
    assert (out[0] == f32_bits(used @ b)).all()
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    up = Fault("ashift-up", "shift", lambda v, ctx: np.minimum(np.arange(len(v)) + 1, len(v) - 1)
               if ctx.op == "ashift" else v)
    bad = ashift.run(smem=[img], tmem=tmem, b_desc=db, a=64, enable=False, idesc_value=desc, faults=[up])
    assert (bad[0] != out[0]).any()


def test_ashift_requires_tmem_a():
    with pytest.raises(SpecViolation, match=r"line \d+: .*ashift"):   # a SimError naming the PTX line
        MmaKernel("tcgen05.mma.cta_group::1.kind::f16.ashift [%r32], %rd6, %rd7, %r22, %p7;").run(
            smem=[np.zeros(16, np.uint8)], tmem=np.zeros((1, 128, 128), np.uint32))


def test_collector_use_without_fill_reads_memory():
    m, n, k = 128, 32, 16
    a, b = ints((m, k)), ints((k, n))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, f16_codes(a), 16, 0, "K")
    lb, sb = place(img, f16_codes(b.T), 16, 0x4000, "K")
    kern = MmaKernel("tcgen05.mma.cta_group::1.kind::f16.collector::a::use [%r32], %rd6, %rd7, %r22, %p7;",
                     readback=((0, 32),))
    out = kern.run(smem=[img], tmem=np.zeros((1, 128, 128), np.uint32), a_desc=smem_desc(0, la, sa),
                   b_desc=smem_desc(0x4000, lb, sb), enable=False, idesc_value=idesc(m=m, n=n, a_type="f16", b_type="f16"))
    assert (out[0] == f32_bits(a @ b)).all()


def metadata_cells(nib, reading):
    """Hand placement of 128 rows x 8 metadata nibbles (chunk j of row i: ``nib[i, j]``) in one column,
    per reading of spec question Q-META-TMEM (written out here, not taken from ``reference``)."""
    cells = np.zeros(128, dtype=np.uint64)
    for row in range(128):
        if reading == "row-per-lane":              # row i's eight chunks in lane i, chunk j at bits 4j
            cells[row] = sum(int(x) << (4 * j) for j, x in enumerate(nib[row]))
            continue
        group, h, r = row // 16, (row % 16) // 8, row % 8   # CUTLASS: row 16g+8h+r
        for j, x in enumerate(nib[row]):           # chunks 0-3 in lane 16g+r, 4-7 in lane 16g+r+8, bits 16h+4(j%4)
            cells[16 * group + r + 8 * (j // 4)] |= int(x) << (16 * h + 4 * (j % 4))
    return cells.astype(np.uint32)


@pytest.mark.parametrize("reading", ["cutlass-interleaved", "row-per-lane"])
@pytest.mark.parametrize("selector", [0, 2])
def test_sparse_f16(selector, reading):
    m, n, k = 128, 32, 32                                      # logical K 32: 8 chunks of 4
    ordered = [0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110]
    nib = RNG.choice(ordered, size=(m, 8))
    comp = ints((m, 16))
    dense = np.zeros((m, k))
    for r in range(m):
        for g in range(8):
            dense[r, 4 * g + (nib[r, g] & 3)] = comp[r, 2 * g]
            dense[r, 4 * g + (nib[r, g] >> 2)] = comp[r, 2 * g + 1]
    b = ints((k, n))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, f16_codes(comp), 16, 0, "K")
    lb, sb = place(img, f16_codes(b.T), 16, 0x4000, "K")
    tmem = np.zeros((1, 128, 128), dtype=np.uint32)
    tmem[0, :, 96 + selector] = metadata_cells(nib, reading)
    kern = MmaKernel("tcgen05.mma.sp.cta_group::1.kind::f16 [%r32], %rd6, %rd7, [%r34], %r22, %p7;",
                     readback=((0, 32),))
    kw = dict(smem=[img], tmem=tmem, a_desc=smem_desc(0, la, sa), b_desc=smem_desc(0x4000, lb, sb), meta=96,
              enable=False, idesc_value=idesc(m=m, n=n, a_type="f16", b_type="f16", sparse=True, selector=selector),
              readings={"Q-META-TMEM": reading})
    out = kern.run(**kw)
    assert (out[0] == f32_bits(dense @ b)).all()
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    reverse = Fault("rev", "sparsity_metadata", lambda p, ctx: p[..., ::-1])
    assert (kern.run(**kw, faults=[reverse])[0] != out[0]).any()


def zcm_bits(start_count, first_span, skip, use, shift, nz=True):
    """Table 45, bit by bit."""
    v = sum(c << (8 * i) for i, c in enumerate(start_count)) | sum(f << (32 + i) for i, f in enumerate(first_span))
    return v | int(nz) << 39 | skip << 40 | use << 48 | shift << 56


def submask(first_span, start, skip, use, width):
    """The worked examples' reading: 1-runs skip+1 long, 0-runs use+1 long, first run = first_span."""
    pattern = []
    value = first_span
    while len(pattern) < width + start:
        pattern += [value] * ((skip if value else use) + 1)
        value ^= 1
    return pattern[start:start + width]


def test_ws_m64_zero_column_mask_and_shift():
    m, n, k, shift = 64, 64, 16, 2
    a, b = ints((m, k)), ints((k, n + shift))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, f16_codes(a), 16, 0, "K")
    lb, sb = place(img, f16_codes(b.T), 16, 0x4000, "K")
    zcm = zcm_bits((1, 3, 0, 0), (0, 1, 0, 0), 2, 3, shift)
    mask = submask(0, 1, 2, 3, 32) + submask(1, 3, 2, 3, 32)
    used = b[:, shift:shift + n] * (1 - np.array(mask))[None, :]
    kern = MmaKernel("tcgen05.mma.ws.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7, %rd9;",
                     readback=((0, 32),))
    kw = dict(smem=[img], tmem=np.zeros((1, 128, 128), np.uint32), a_desc=smem_desc(0, la, sa),
              b_desc=smem_desc(0x4000, lb, sb), enable=False, zcm=zcm, idesc_value=idesc(m=m, n=n, a_type="f16", b_type="f16"))
    out = kern.run(**kw)[0]
    want = f32_bits(a @ used + 0.0)
    for i in range(m):                                          # Layout E (2x2)
        for j in range(n):
            assert out[i + 64 * (j // 32), j % 32] == want[i, j]
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    assert (kern.run(**kw, faults=[Fault("nomask", "zero_column_mask", lambda v, ctx: v & False)])[0] != out).any()
    noshift = Fault("noshift", "mma_operands", lambda o, ctx: replace(o, column_shift=0))
    assert (kern.run(**kw, faults=[noshift])[0] != out).any()


def test_ws_m32_layout_g():
    m, n, k = 32, 64, 16
    a, b = ints((m, k)), ints((k, n))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, f16_codes(a), 16, 0, "K")
    lb, sb = place(img, f16_codes(b.T), 16, 0x4000, "K")
    out = MmaKernel("tcgen05.mma.ws.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;", readback=((0, 16),)).run(
        smem=[img], tmem=np.zeros((1, 128, 128), np.uint32), a_desc=smem_desc(0, la, sa),
        b_desc=smem_desc(0x4000, lb, sb), enable=False, idesc_value=idesc(m=m, n=n, a_type="f16", b_type="f16"))[0]
    want = f32_bits(a @ b)
    for i in range(m):                                          # Layout G (1x4)
        for j in range(n):
            assert out[i + 32 * (j // 16), j % 16] == want[i, j]


def e4m3(x):
    return np.asarray(ml_dtypes.float8_e4m3fn(x)).view(np.uint8).astype(np.uint64)


def sf_cells(codes_a, codes_b, a_id, b_id, col_a=100, col_b=110):
    tmem = np.zeros((1, 128, 128), dtype=np.uint32)
    for col, codes, sid in ((col_a, codes_a, a_id), (col_b, codes_b, b_id)):
        for x, row in enumerate(codes):
            for s, code in enumerate(row):
                for q in range(4):
                    tmem[0, x % 32 + 32 * q, col + x // 32] |= int(code) << (8 * (sid + s))
    return tmem


@pytest.mark.parametrize("a_id,b_id", [(0, 0), (2, 1)])
def test_block_scaled_mxf8f6f4(a_id, b_id):
    m, n, k = 128, 32, 32
    a, b = ints((m, k)), ints((k, n))
    sa_codes = RNG.integers(125, 130, size=(m, 1))
    sb_codes = RNG.integers(125, 130, size=(n, 1))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, e4m3(a), 8, 0, "K")
    lb, sb = place(img, e4m3(b.T), 8, 0x4000, "K")
    tmem = sf_cells(sa_codes, sb_codes, a_id, b_id)
    kern = MmaKernel("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;",
                     readback=((0, 32),))
    kw = dict(smem=[img], tmem=tmem, a_desc=smem_desc(0, la, sa), b_desc=smem_desc(0x4000, lb, sb), sfa=100, sfb=110,
              enable=False, idesc_value=idesc_scaled(m=m, n=n, a_type="e4m3", b_type="e4m3", a_id=a_id, b_id=b_id))
    out = kern.run(**kw)[0]
    scale_a, scale_b = 2.0 ** (sa_codes - 127), 2.0 ** (sb_codes - 127)
    assert (out == f32_bits((a * scale_a) @ (b * scale_b.T))).all()
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    ignore_id = Fault("sfa-id", "scale_factors", lambda v, ctx: ctx.reread(0, v.b_id))
    bad = kern.run(**kw, faults=[ignore_id])[0]
    assert (bad != out).any() if a_id else (bad == out).all()


def test_block_scaled_mxf4_2x():
    m, n, k = 128, 32, 64
    vals = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
    ia, ib = RNG.integers(0, 16, size=(m, k)), RNG.integers(0, 16, size=(k, n))
    a, b = vals[ia], vals[ib]
    sa_codes, sb_codes = RNG.integers(126, 129, size=(m, 2)), RNG.integers(126, 129, size=(n, 2))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, ia.astype(np.uint64), 4, 0, "K")
    lb, sb = place(img, ib.T.astype(np.uint64), 4, 0x4000, "K")
    kern = MmaKernel("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X "
                     "[%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;", readback=((0, 32),))
    out = kern.run(smem=[img], tmem=sf_cells(sa_codes, sb_codes, 2, 0), a_desc=smem_desc(0, la, sa),
                   b_desc=smem_desc(0x4000, lb, sb), sfa=100, sfb=110, enable=False,
                   idesc_value=idesc_scaled(m=m, n=n, a_type="e2m1", b_type="e2m1", a_id=2, mxf4=True))[0]
    sa_k = np.repeat(2.0 ** (sa_codes - 127), 32, axis=1)
    sb_k = np.repeat(2.0 ** (sb_codes - 127), 32, axis=1).T
    assert (out == f32_bits((a * sa_k) @ (b * sb_k) + 0.0)).all()


def test_scale_factors_must_be_replicated():
    m, n = 128, 32
    img = np.zeros(0x8000, dtype=np.uint8)
    tmem = sf_cells(np.full((m, 1), 127), np.full((n, 1), 127), 0, 0)
    tmem[0, 70, 100] ^= 1                                       # quarter 2 disagrees
    kern = MmaKernel("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;",
                     readback=((0, 32),))
    with pytest.raises(SimError, match="duplicated to all 32 lane partitions"):
        kern.run(smem=[img], tmem=tmem, a_desc=smem_desc(0, 2048, 128), b_desc=smem_desc(0x4000, 512, 128), sfa=100,
                 sfb=110, idesc_value=idesc_scaled(m=m, n=n, a_type="e4m3", b_type="e4m3"))


def test_descriptor_sparsity_bit_must_match_the_instruction():
    kern = MmaKernel("tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;")
    with pytest.raises(SimError, match="sparsity bit"):
        kern.run(smem=[np.zeros(16, np.uint8)], tmem=np.zeros((1, 128, 128), np.uint32),
                 idesc_value=idesc(m=128, n=64, a_type="f16", b_type="f16", sparse=True))


@pytest.mark.parametrize("t,swizzle", [("e2m1", "128B"), ("e3m2", "none"), ("e5m2", "64B")])
def test_f8f6f4_padded_and_swizzled_operands(t, swizzle):
    """Shared memory images by the reference packer (independent of the reader the simulator uses)."""
    from reference import formats as F
    from reference.smem_choice import choose_layout
    from reference.smem_image import pack
    m, n, k = 128, 32, 32
    vals = F.decode(t, F.all_values(t)[0])
    pool = F.all_values(t)[0][np.isfinite(vals) & (np.abs(vals) <= 4) & ((np.abs(vals) >= 0.25) | (vals == 0))]
    ca, cb = RNG.choice(pool, size=(m, k)), RNG.choice(pool, size=(n, k))
    la = choose_layout("K", swizzle, t, m, k, 0, kind="f8f6f4")
    lb = choose_layout("K", swizzle, t, n, k, 0x4000, kind="f8f6f4")
    img = np.zeros(0x8000, dtype=np.uint8)
    for lay, codes in ((la, ca), (lb, cb)):
        im = pack(lay, codes.astype(np.uint64))
        img[im.base_address:im.end_address] = np.frombuffer(im.data, dtype=np.uint8)
    out = MmaKernel("tcgen05.mma.cta_group::1.kind::f8f6f4 [%r32], %rd6, %rd7, %r22, %p7;", readback=((0, 32),)).run(
        smem=[img], tmem=np.zeros((1, 128, 128), np.uint32), a_desc=la.descriptor().encode(),
        b_desc=lb.descriptor().encode(), enable=False, idesc_value=idesc(m=m, n=n, a_type=t, b_type=t))[0]
    want = F.decode(t, ca) @ F.decode(t, cb).T
    assert (out == f32_bits(want + 0.0)).all()


@pytest.mark.parametrize("kind,t,major,swizzle,start,pattern", [
    ("tf32", "tf32", "MN", "128B_base32B", 0x0, None), ("f8f6f4", "e4m3", "MN", "128B", 0x0, None),
    ("f16", "f16", "K", "128B", 0x180, 0x100), ("f16", "f16", "K", "none", 0x30, None)])
def test_a_layouts_transposed_base_offset_unaligned_start(kind, t, major, swizzle, start, pattern):
    """A in the layout the reference chooses (descriptor from it); B plain K-major."""
    from reference import formats as F
    from reference.smem_choice import choose_layout
    from reference.smem_image import pack
    m, n = 128, 32
    k = {"tf32": 8, "f16": 16}.get(t, 32)
    vals = ints((m, k))
    bvals = ints((k, n))
    enc = (lambda x: F.encode(t, x)) if t != "tf32" else (lambda x: f32_bits(x))
    la = choose_layout(major, swizzle, t, m, k, start, kind=kind, pattern_start=pattern)
    img = np.zeros(0x8000, dtype=np.uint8)
    im = pack(la, np.asarray(enc(vals), dtype=np.uint64))
    img[im.base_address:im.end_address] = np.frombuffer(im.data, dtype=np.uint8)
    bits = {"tf32": 32, "f16": 16}.get(t, 8)
    lb, sb = place(img, np.asarray(enc(bvals.T), dtype=np.uint64), bits, 0x6000, "K")    # A may pass 0x4000
    text = f"tcgen05.mma.cta_group::1.kind::{kind} [%r32], %rd6, %rd7, %r22, %p7;"
    out = MmaKernel(text, readback=((0, n),)).run(
        smem=[img], tmem=np.zeros((1, 128, 128), np.uint32), a_desc=la.descriptor().encode(),
        b_desc=smem_desc(0x6000, lb, sb), enable=False,
        idesc_value=idesc(m=m, n=n, a_type=t, b_type=t, t_a=major == "MN"))[0]
    assert (out == f32_bits(vals @ bvals + 0.0)).all()


def test_block_scaled_mxf4nvf4_ue4m3_4x_sign_ignored():
    m, n, k = 128, 32, 64
    vals = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
    ia, ib = RNG.integers(0, 16, size=(m, k)), RNG.integers(0, 16, size=(k, n))
    scale_codes = np.array([0x30, 0x38, 0x40, 0x3C])              # e4m3 0.5, 1, 2, 1.5
    sa_codes = RNG.choice(scale_codes, size=(m, 4)) | (RNG.integers(0, 2, size=(m, 4)) << 7)   # sign bit set at random
    sb_codes = RNG.choice(scale_codes, size=(n, 4)) | (RNG.integers(0, 2, size=(n, 4)) << 7)
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, ia.astype(np.uint64), 4, 0, "K")
    lb, sb = place(img, ib.T.astype(np.uint64), 4, 0x4000, "K")
    kern = MmaKernel("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 "
                     "[%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;", readback=((0, 32),))
    out = kern.run(smem=[img], tmem=sf_cells(sa_codes, sb_codes, 0, 0), a_desc=smem_desc(0, la, sa),
                   b_desc=smem_desc(0x4000, lb, sb), sfa=100, sfb=110, enable=False,
                   idesc_value=idesc_scaled(m=m, n=n, a_type="e2m1", b_type="e2m1", scale_type="ue4m3", mxf4=True))[0]
    e4m3 = {0x30: 0.5, 0x38: 1.0, 0x40: 2.0, 0x3C: 1.5}
    dec = np.vectorize(lambda c: e4m3[int(c) & 0x7F])
    sa_k = np.repeat(dec(sa_codes), 16, axis=1)
    sb_k = np.repeat(dec(sb_codes), 16, axis=1).T
    assert (out == f32_bits((vals[ia] * sa_k) @ (vals[ib] * sb_k) + 0.0)).all()
