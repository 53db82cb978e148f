"""tcgen05.cp and tcgen05.shift on the simulator, against closed forms written here.

Shared memory images are laid out with the K-major canonical formulas of §9.7.16.3 (no swizzle:
row r, 16-byte chunk c at start + (r%8)*16 + (r//8)*SBO + c*LBO; 128B swizzle: 16-byte chunk
index XOR (row % 8)), descriptors encoded bit by bit from Table 40.
"""

import numpy as np
import pytest

from ptxsim import Fault, SimDevice
from ptxsim.device import faults_overridden
from tests.sim_ptx_tcgen05_ops import PRELOAD, harness

pytestmark = pytest.mark.reference

DESC = 0x20000                   # byte offset of the descriptor in the input block


def desc_bits(start, lbo, sbo, swizzle=0, base=0):
    """Table 40, bit by bit."""
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | base << 49 | swizzle << 61


def source_bytes(rows, row_bytes, seed=0):
    r, b = np.meshgrid(np.arange(rows), np.arange(row_bytes), indexing="ij")
    return ((r * 7 + b * 3 + seed) & 0xFF).astype(np.uint8)


def image_k_major(data, sbo=256, lbo=128, swizzle128=False):
    rows, row_bytes = data.shape
    img = np.zeros(0x8000, dtype=np.uint8)
    for r in range(rows):
        for c in range(row_bytes // 16):
            if swizzle128:
                a = (r % 8) * 128 + (r // 8) * 1024 + ((c ^ (r % 8)) * 16)
            else:
                a = (r % 8) * 16 + (r // 8) * sbo + c * lbo
            img[a:a + 16] = data[r, 16 * c:16 * c + 16]
    return img


def issue_cp(instr, lane=0, col=0):
    return ("ld.global.u64 %rd6, [%in+0x20000];", "shr.u32 %r20, %sbase, 4;", "cvt.u64.u32 %rd7, %r20;",
            "add.s64 %rd6, %rd6, %rd7;", f"add.u32 %r21, %tbase, {(lane << 16) | col};", f"{instr} [%r21], %rd6;")


def run(ptx, data, words, ctas=1, faults=()):
    dev = SimDevice(faults=faults)
    module = dev.load(ptx)
    src = dev.memory.alloc(data.size)
    dev.memory.write(src, data.tobytes())
    out = dev.memory.alloc(4 * 128 * words * ctas)
    dev.run(module, ptx.split(".entry ")[1].split("(")[0], [src, out], (ctas, 1, 1), (128, 1, 1))
    return dev.memory.read_array(out, 4 * 128 * words * ctas).view(np.uint32).reshape(ctas, 128, words)


def words_of(row):
    return [int(x) for x in np.asarray(row, dtype=np.uint8).view("<u4")]


def inputs(img, desc):
    data = np.zeros(0x40000, dtype=np.uint8)
    data[:img.size] = img
    data[DESC:DESC + 8] = np.array([desc], dtype=np.uint64).view(np.uint8)
    return data


def dests(shape, multicast):
    """Source row -> lanes, from the text: rows 0-31 and 32-63 of .64x128b go to warp pairs."""
    if shape in ("128x256b", "128x128b"):
        return {r: [r] for r in range(128)}
    if shape == "4x256b":
        return {r: [32 * r] for r in range(4)}
    if multicast == "warpx2::02_13":     # warps 0,2 get rows 0-31; warps 1,3 rows 32-63
        return {r: [r % 32 + 32 * (r // 32), r % 32 + 32 * (r // 32 + 2)] for r in range(64)}
    if multicast == "warpx2::01_23":     # warps 0,1 get rows 0-31; warps 2,3 rows 32-63
        return {r: [r % 32 + 64 * (r // 32), r % 32 + 64 * (r // 32) + 32] for r in range(64)}
    return {r: [r + 32 * w for w in range(4)] for r in range(32)}


@pytest.mark.parametrize("shape,multicast", [("128x256b", None), ("4x256b", None), ("128x128b", None),
                                             ("64x128b", "warpx2::02_13"), ("64x128b", "warpx2::01_23"),
                                             ("32x128b", "warpx4")])
def test_cp_shapes(shape, multicast):
    rows, bits = (int(x) for x in shape.rstrip("b").split("x"))
    data = source_bytes(rows, bits // 8)
    instr = f"tcgen05.cp.cta_group::1.{shape}" + (f".{multicast}" if multicast else "")
    ptx = harness("cp", smem_bytes=0x8000, issue=issue_cp(instr, col=5), readback=((0, 16),))
    out = run(ptx, inputs(image_k_major(data), desc_bits(0, 128, 256)), 16)[0]
    want = np.full((128, 16), 0x7FBADBAD, dtype=np.uint32)
    for r, lanes in dests(shape, multicast).items():
        for lane in lanes:
            want[lane, 5:5 + bits // 32] = words_of(data[r])
    assert (out == want).all()


def test_cp_128b_swizzle():
    data = source_bytes(128, 32, seed=11)
    ptx = harness("cpsw", smem_bytes=0x8000, issue=issue_cp("tcgen05.cp.cta_group::1.128x256b"), readback=((0, 8),))
    out = run(ptx, inputs(image_k_major(data, swizzle128=True), desc_bits(0, 16, 1024, swizzle=2)), 8)[0]
    assert all(out[r].tolist() == words_of(data[r]) for r in range(128))


@pytest.mark.parametrize("fmt,bits", [("b4x16_p64", 4), ("b6x16_p32", 6)])
def test_cp_decompression(fmt, bits):
    rng = np.random.default_rng(bits)
    codes = rng.integers(0, 1 << bits, size=(128, 16))
    data = np.zeros((128, 16), dtype=np.uint8)
    for r in range(128):
        stream = sum(int(c) << (bits * i) for i, c in enumerate(codes[r]))
        data[r, :2 * bits] = [(stream >> (8 * b)) & 0xFF for b in range(2 * bits)]
        data[r, 2 * bits:] = 0xEE                           # padding is ignored
    ptx = harness("cpd", smem_bytes=0x8000, issue=issue_cp(f"tcgen05.cp.cta_group::1.128x128b.b8x16.{fmt}"),
                  readback=((0, 4),))
    out = run(ptx, inputs(image_k_major(data), desc_bits(0, 128, 256)), 4)[0]
    shift = 2 if bits == 4 else 0                           # 4-bit codes in bits 5-2 (docs/tmem.md)
    for r in range(128):
        assert out[r].tolist() == words_of((codes[r] << shift).astype(np.uint8)), r
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    swap = Fault("nibbles", "cp_decompress", lambda v, ctx: v.reshape(-1, 2)[:, ::-1].reshape(v.shape))
    bad = run(ptx, inputs(image_k_major(data), desc_bits(0, 128, 256)), 4, faults=[swap])[0]
    assert (bad != out).any()


def test_cp_cta_pair_reads_each_ctas_own_shared_memory():
    data = [source_bytes(128, 32, seed=3), source_bytes(128, 32, seed=40)]
    ptx = harness("cppair", cta_group=2, smem_bytes=0x8000, issue=issue_cp("tcgen05.cp.cta_group::2.128x256b"),
                  readback=((0, 8),))
    block = inputs(image_k_major(data[0]), desc_bits(0, 128, 256))
    block[0x8000:0x10000] = image_k_major(data[1])               # rank 1 stages from in + 0x8000
    out = run(ptx, block, 8, ctas=2)
    for c in range(2):
        assert all(out[c, r].tolist() == words_of(data[c][r]) for r in range(128))


def test_smem_desc_fault_changes_the_copy():
    data = source_bytes(128, 32, seed=5)
    from dataclasses import replace
    sbo_off = Fault("sbo", "smem_desc", lambda d, ctx: replace(d, stride_byte_offset=d.stride_byte_offset + 16))
    ptx = harness("cpf", smem_bytes=0x8000, issue=issue_cp("tcgen05.cp.cta_group::1.128x256b"), readback=((0, 8),))
    out = run(ptx, inputs(image_k_major(data), desc_bits(0, 128, 256)), 8, faults=[sbo_off])[0]
    assert out[0].tolist() == words_of(data[0]) and out[8].tolist() != words_of(data[8])


@pytest.mark.parametrize("cg", [1, 2])
def test_shift_down(cg):
    pre = np.array([[(lane << 16) | c for c in range(16)] for lane in range(128)], dtype=np.uint32)
    data = np.zeros(0x40000, dtype=np.uint8)
    for c in range(cg):
        off = PRELOAD + 0x10000 * c
        data[off:off + pre.nbytes] = (pre + c).view(np.uint8).ravel()
    ptx = harness("shift", cta_group=cg, preload=16, issue=(
        f"add.u32 %r21, %tbase, {(32 << 16) | 4};", f"tcgen05.shift.cta_group::{cg}.down [%r21];"),
        readback=((0, 16),))
    out = run(ptx, data, 16, ctas=cg)
    for c in range(cg):
        want = pre + c
        want[33:64, 4:12] = (pre + c)[32:63, 4:12]        # rows 1..31 of the block take rows 0..30
        assert (out[c] == want).all()
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    keep = Fault("noshift", "shift", lambda v, ctx: np.arange(len(v)))
    bad = run(ptx, data, 16, ctas=cg, faults=[keep])
    assert (bad[0] == pre).all()
