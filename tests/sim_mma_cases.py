"""Building and running hand-written tcgen05.mma kernels for the simulator's self-tests.

Everything here is written from the spec text, independently of the simulator and of the
generators: descriptors bit by bit (Tables 40, 42-45), shared memory images by the canonical
layout formulas (§9.7.16.3, no swizzle), D placement by the data-path layout table
(docs/tmem.md), Tensor Memory operands per docs/sim.md (reference/tmem_mma_operands decisions).
"""

from __future__ import annotations

import numpy as np

from ptxsim import SimDevice
from tests.sim_ptx_tcgen05_ops import PRELOAD, harness

PARAMS = 0x38000
SMEM = 0x8000
TYPE_CODES = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5, "u8": 0, "s8": 1}
D_CODES = {"f16": 0, "f32": 1, "s32": 2}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8}


def smem_desc(start, lbo, sbo):
    """Table 40 (no swizzle, relative LBO)."""
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46


def idesc(*, m, n, a_type, b_type, d_type="f32", sparse=False, selector=0, saturate=False, neg_a=False,
          neg_b=False, t_a=False, t_b=False, max_shift=0):
    """Table 42, bit by bit."""
    return (selector | sparse << 2 | saturate << 3 | D_CODES[d_type] << 4 | TYPE_CODES[a_type] << 7
            | TYPE_CODES[b_type] << 10 | neg_a << 13 | neg_b << 14 | t_a << 15 | t_b << 16 | (n >> 3) << 17
            | (m >> 4) << 24 | {0: 0, 8: 1, 16: 2, 32: 3}[max_shift] << 30)


def idesc_scaled(*, m, n, a_type, b_type, a_id=0, b_id=0, scale_type="ue8m0", mxf4=False):
    """Tables 43/44, bit by bit (bit 23: 1 = ue8m0, 0 = ue4m3)."""
    codes = {"e2m1": 1} if mxf4 else TYPE_CODES                  # Table 44: E2M1 = 1
    return (b_id << 4 | codes[a_type] << 7 | codes[b_type] << 10 | (n >> 3) << 17
            | (1 if scale_type == "ue8m0" else 0) << 23 | (m >> 7) << 27 | a_id << 29)


def place(img, codes, bits, start, major, sbo=None, lbo=None):
    """Write a (mn x k) code matrix with the no-swizzle canonical layout at byte ``start`` of ``img``.

    K-major: row r, unit u at start + (r%8)*16 + (r//8)*SBO + u*LBO.  MN-major: unit v (T elements
    along MN), K row j at start + v*SBO + (j%8)*16 + (j//8)*LBO.  Returns (lbo, sbo) used.
    """
    mn, k = codes.shape
    per = 128 // bits
    if major == "K":
        sbo = sbo or 128
        lbo = lbo or 128 * -(-mn // 8)
        for r in range(mn):
            for e in range(k):
                _put(img, start + (r % 8) * 16 + (r // 8) * sbo + (e // per) * lbo, e % per, bits, codes[r, e])
    else:
        sbo = sbo or 128
        lbo = lbo or 128 * -(-mn // per)
        for r in range(mn):
            for e in range(k):
                _put(img, start + (r // per) * sbo + (e % 8) * 16 + (e // 8) * lbo, r % per, bits, codes[r, e])
    return lbo, sbo


def _put(img, unit, index, bits, code):
    if bits == 4:                                 # two per byte, element 2i in the low nibble
        byte = unit + index // 2
        img[byte] = (img[byte] & (0xF0 if index % 2 == 0 else 0x0F)) | (int(code) << (4 * (index % 2)))
        return
    nbytes = bits // 8
    off = unit + index * nbytes
    img[off:off + nbytes] = np.array([int(code)], dtype=f"<u{nbytes}").view(np.uint8)


class MmaKernel:
    """One test kernel: the MMA ``text`` (operands %r32 d, %rd6/%r33 a, %rd7 b, %r34 meta,
    %r22 idesc, %r35/%r36 scales, %p7 enable, {%r24..%r31} disable-output-lane, %rd9 zcm)."""

    def __init__(self, text, *, cta_group=1, preload=128, readback=((0, 64),)):
        self.cta_group = cta_group
        self.readback = readback
        self.words = sum(n for _, n in readback)
        issue = ["ld.global.u64 %rd6, [%in+0x38000];", "ld.global.u64 %rd7, [%in+0x38008];",
                 "shr.u32 %r20, %sbase, 4;", "cvt.u64.u32 %rd8, %r20;", "add.s64 %rd6, %rd6, %rd8;",
                 "add.s64 %rd7, %rd7, %rd8;", "ld.global.u32 %r22, [%in+0x38010];",
                 "ld.global.u32 %r23, [%in+0x38014];", "setp.ne.u32 %p7, %r23, 0;",
                 "ld.global.u64 %rd9, [%in+0x38040];"]
        issue += [f"ld.global.u32 %r{24 + i}, [%in+{PARAMS + 0x18 + 4 * i}];" for i in range(8)]
        for reg, off in ((32, 0x48), (33, 0x4C), (34, 0x50), (35, 0x54), (36, 0x58)):
            issue += [f"ld.global.u32 %r{reg}, [%in+{PARAMS + off}];", f"add.u32 %r{reg}, %r{reg}, %tbase;"]
        self.ptx = harness("mma", cta_group=cta_group, smem_bytes=SMEM, preload=preload, issue=issue + [text],
                           readback=readback)
        self.preload = preload

    def run(self, *, smem, tmem, a_desc=0, b_desc=0, idesc_value=0, enable=True, dol=(), zcm=0,
            d=0, a=0, meta=0, sfa=0, sfb=0, faults=(), hazards=True, readings=None, strict=False):
        """``smem``: bytes per CTA (list), ``tmem``: uint32[ctas, 128, preload] preloaded cells;
        address operands as (lane << 16 | column) offsets. Returns uint32[ctas, 128, words]."""
        ctas = self.cta_group
        data = np.zeros(0x40000, dtype=np.uint8)
        for c, img in enumerate(smem):
            img = np.asarray(img, dtype=np.uint8)
            data[SMEM * c:SMEM * c + img.size] = img
        for c in range(ctas):
            cells = np.asarray(tmem[c], dtype=np.uint32)
            off = PRELOAD + 0x10000 * c
            data[off:off + cells.nbytes] = cells.view(np.uint8).ravel()
        words = np.zeros(0x20, dtype=np.uint32)
        words[0:2] = [a_desc & 0xFFFFFFFF, a_desc >> 32]
        words[2:4] = [b_desc & 0xFFFFFFFF, b_desc >> 32]
        words[4], words[5] = idesc_value, int(enable)
        words[6:6 + len(dol)] = dol
        words[16:18] = [zcm & 0xFFFFFFFF, zcm >> 32]
        words[18:23] = [d, a, meta, sfa, sfb]
        data[PARAMS:PARAMS + words.nbytes] = words.view(np.uint8)
        dev = SimDevice(faults=faults, hazards=hazards, readings=readings, strict=strict)
        module = dev.load(self.ptx)
        src = dev.memory.alloc(data.size)
        dev.memory.write(src, data.tobytes())
        out = dev.memory.alloc(4 * 128 * self.words * ctas)
        dev.run(module, "mma", [src, out], (ctas, 1, 1), (128, 1, 1))
        return dev.memory.read_array(out, 4 * 128 * self.words * ctas).view(np.uint32).reshape(ctas, 128, self.words)


def f32_bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def f16_codes(x):
    return np.asarray(x, dtype=np.float16).view(np.uint16).astype(np.uint64)


#: representative MMA kernels (assembled by tests/test_sim_assemble.py)
KERNELS: dict[str, tuple[str, str]] = {
    f"mma_{name}": (MmaKernel(text, cta_group=cg).ptx, "sm_100a") for name, text, cg in (
        ("dol", "tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, {%r24, %r25, %r26, %r27}, %p7;", 1),
        ("sp", "tcgen05.mma.sp.cta_group::1.kind::f16 [%r32], %rd6, %rd7, [%r34], %r22, %p7;", 1),
        ("ws", "tcgen05.mma.ws.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7, %rd9;", 1),
        ("mxf4", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X "
                 "[%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;", 1),
        ("ashift", "tcgen05.mma.cta_group::1.kind::f16.ashift [%r32], [%r33], %rd7, %r22, %p7;", 1),
        ("pair", "tcgen05.mma.cta_group::2.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;", 2),
    )
}
