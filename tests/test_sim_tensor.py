"""Tensor maps and TMA copies on the simulator.

Sources: CUDA Driver API ``cuTensorMapEncodeTiled`` (argument rules, element strides, OOB fill);
PTX ISA §9.7.9.27 ``cp.async.bulk.tensor`` (tile mode, mbarrier complete_tx, multicast, bulk
groups); CUDA C++ Programming Guide "TMA Swizzle" (16-byte chunks of each 128-byte line permuted by
the line's index modulo 8/4/2, pattern repeating every 1024/512/256 bytes) — CUTLASS
``Swizzle<3,4,3>`` / ``<2,4,3>`` / ``<1,4,3>``.

Expected shared-memory and global images are computed here with plain numpy indexing and the
guide's chunk formula, never with the simulator's own helpers.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptxsim import MemoryFault, SimDevice, SimError, decode_tensormap, tensormap_tiled

pytestmark = pytest.mark.reference

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
SMEM = 8192            # bytes of the shared buffer copied back after every load
BUF = 0x400            # the buffer is the kernel's first shared variable (simulator address map, 1024-aligned)
STALE = 0xA5           # shared memory before any write


# -- independent expectations --------------------------------------------------------------------

def swizzle_image(dense: np.ndarray, mode: str, base: int = BUF, size: int = SMEM) -> np.ndarray:
    """Shared-memory bytes [base, base+size) after writing ``dense`` at ``base`` with TMA swizzle
    ``mode`` (Programming Guide table: the 16-byte chunk of a 128-byte line is XORed with the
    line index mod 8 (128B), mod 4 (64B), mod 2 (32B), counted from 1024-byte aligned addresses)."""
    out = np.full(size, STALE, dtype=np.uint8)
    lines = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[mode]
    for i, byte in enumerate(dense.tolist()):
        addr = base + i
        line, chunk, within = addr // 128, (addr % 128) // 16, addr % 16
        phys = line * 128 + ((line % lines) ^ chunk) * 16 + within
        out[phys - base] = byte
    return out


def box_of(array: np.ndarray, coords, box, estrides=None, fill=0) -> np.ndarray:
    """The box (numpy axes outermost first) starting at ``coords`` (innermost first) of ``array``
    (axes outermost first), element strides honoured (ignored on the innermost dimension), out of
    bounds = ``fill``."""
    rank = array.ndim
    estrides = estrides or [1] * rank
    idx = []
    for d in range(rank):                      # d counts innermost first
        step = 1 if d == 0 else estrides[d]
        n = box[d] if d == 0 else -(-box[d] // estrides[d])
        idx.append([coords[d] + k * step for k in range(n)])
    shape = [len(i) for i in reversed(idx)]
    out = np.full(shape, fill, dtype=array.dtype)
    for pos in np.ndindex(*shape):
        src = [idx[rank - 1 - a][p] for a, p in enumerate(pos)]
        if all(0 <= s < array.shape[a] for a, s in enumerate(src)):
            out[pos] = array[tuple(src)]
    return out


# -- kernels ----------------------------------------------------------------------------------------

def load_kernel(rank: int, source: str = "cvta", multicast: bool = False) -> str:
    """One thread issues a rank-``rank`` TMA load of the box at the coordinate parameters into ``buf``
    (+ ``dst_off``), arming the mbarrier with ``nbytes``; all 128 threads wait, then copy the whole
    buffer to ``out`` (per CTA: ``out + rank * SMEM``).  ``source``: how the tensor map is named —
    ``cvta`` (mov.b64 + cvta.param), ``mov32`` (Triton: mov.b32, cvt, cvta.param), ``direct``
    (the parameter in the brackets), ``global`` (a pointer to a copy in global memory)."""
    cs = ", ".join(f".param .s32 c{d}" for d in range(rank))
    loads = "\n".join(f"    ld.param.s32 %r{20 + d}, [c{d}];" for d in range(rank))
    regs = ", ".join(f"%r{20 + d}" for d in range(rank))
    mapref = {"cvta": "%rd5", "mov32": "%rd5", "direct": "tmap", "global": "%rd6"}[source]
    dst = "shared::cluster" if multicast else "shared::cta"
    mc = ".multicast::cluster" if multicast else ""
    mc_op = ", %rs1" if multicast else ""
    issuer = "setp.eq.u32 %p4, %r30, 0;\n    and.pred %p4, %p4, %p1;" if multicast else "mov.pred %p4, %p1;"
    sync = ("barrier.cluster.arrive.aligned;\n    barrier.cluster.wait.aligned;" if multicast else "bar.sync 0;")
    return HEAD + f"""
.visible .entry tload(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u64 gmap, .param .u32 nbytes,
                      .param .u32 dst_off, .param .u16 mask, {cs})
.reqntid 128
{{
    .reg .pred %p<6>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<12>;
    .shared .align 1024 .b8 buf[{SMEM}];
    .shared .align 8 .b64 bar;

    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    mov.u32 %r3, bar;
    mov.u32 %r30, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
    fence.mbarrier_init.release.cluster;
    {sync}
    ld.param.u32 %r10, [nbytes];
    ld.param.u32 %r11, [dst_off];
    ld.param.u16 %rs1, [mask];
    add.u32 %r12, %r2, %r11;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r10;
    {sync}
{loads}
    mov.b64 %rd5, tmap;
    cvta.param.u64 %rd5, %rd5;
    mov.b32 %r31, tmap;
    cvt.u64.u32 %rd7, %r31;
    {"cvta.param.u64 %rd5, %rd7;" if source == "mov32" else ""}
    ld.param.u64 %rd6, [gmap];
    {issuer}
    @%p4 prefetch.tensormap [{mapref}];
    @%p4 cp.async.bulk.tensor.{rank}d.{dst}.global.tile.mbarrier::complete_tx::bytes{mc} [%r12], [{mapref}, {{{regs}}}], [%r3]{mc_op};
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra WAIT;
    ld.param.u64 %rd2, [out];
    mul.wide.u32 %rd8, %r30, {SMEM};
    add.u64 %rd2, %rd2, %rd8;
    shl.b32 %r13, %r1, 4;
LOOP:
    setp.ge.u32 %p3, %r13, {SMEM};
    @%p3 bra DONE;
    add.u32 %r14, %r2, %r13;
    ld.shared.v4.u32 {{%r15, %r16, %r17, %r18}}, [%r14];
    cvt.u64.u32 %rd3, %r13;
    add.u64 %rd4, %rd2, %rd3;
    st.global.v4.u32 [%rd4], {{%r15, %r16, %r17, %r18}};
    add.u32 %r13, %r13, 2048;
    bra LOOP;
DONE:
    {sync}
    ret;
}}
"""


def run_load(array: np.ndarray, coords, box, *, dtype: str, swizzle="none", estrides=None, oob_fill="none",
             strides=None, dims=None, nbytes=None, source="cvta", dst_off=0, raw_map=None, address_offset=0):
    """Run :func:`load_kernel` on ``array`` (axes outermost first); the shared buffer's bytes."""
    rank = array.ndim
    dev = SimDevice()
    g = dev.memory.alloc(array.nbytes + 1024)
    dev.memory.write(g, array)
    esize = array.itemsize
    dims = dims or list(reversed(array.shape))
    if strides is None:
        strides = [int(s) for s in reversed(array.strides)][1:]
    tm = raw_map if raw_map is not None else tensormap_tiled(
        dtype, rank, g + address_offset, dims, strides, box, estrides or [1] * rank, swizzle=swizzle, oob_fill=oob_fill)
    gmap = dev.memory.alloc(128, align=64)
    dev.memory.write(gmap, tm)
    out = dev.memory.alloc(SMEM)
    if nbytes is None:
        counts = [box[0]] + [-(-b // s) for b, s in zip(box[1:], (estrides or [1] * rank)[1:], strict=True)]
        nbytes = int(np.prod(counts)) * esize
    module = dev.load(load_kernel(rank, source))
    dev.run(module, "tload", [tm, out, gmap, nbytes, dst_off, 0, *coords], 1, 128)
    return dev.memory.read_array(out, SMEM)


def _array(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-1000, 1000, size=shape).astype(dtype) / 8
    return rng.integers(0, 250, size=shape).astype(dtype)


# -- loads -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("swizzle,inner", [("none", 40), ("32B", 16), ("64B", 32), ("128B", 64)])
def test_2d_load_lands_swizzled(swizzle, inner):
    a = _array((50, 96), np.float16)
    coords, box = [8, 3], [inner, 24]
    img = run_load(a, coords, box, dtype="float16", swizzle=swizzle)
    expect = swizzle_image(box_of(a, coords, box).view(np.uint8).reshape(-1), swizzle)
    assert np.array_equal(img, expect)


@pytest.mark.parametrize("swizzle,inner", [("none", 8), ("32B", 8), ("64B", 16), ("128B", 32)])
@pytest.mark.parametrize("source", ["cvta", "mov32", "direct", "global"])
def test_3d_load_every_swizzle_and_map_source(swizzle, inner, source):
    a = _array((5, 12, 40), np.float32, seed=1)
    coords, box = [4, 2, 1], [inner, 8, 3]
    img = run_load(a, coords, box, dtype="float32", swizzle=swizzle, source=source)
    expect = swizzle_image(box_of(a, coords, box).view(np.uint8).reshape(-1), swizzle)
    assert np.array_equal(img, expect)


def test_oob_negative_and_past_the_end_read_zero():
    a = _array((20, 64), np.uint16, seed=2)
    coords, box = [-16, 12], [64, 16]                 # 16 columns before 0, 8 rows past the end
    img = run_load(a, coords, box, dtype="uint16", swizzle="128B")
    want = box_of(a, coords, box, fill=0)
    assert (want[8:] == 0).all() and (want[:, :16] == 0).all()
    assert np.array_equal(img, swizzle_image(want.view(np.uint8).reshape(-1), "128B"))


def test_oob_nan_request_zero_fma_fills_nan_for_floats():
    a = _array((6, 32), np.float32, seed=3)
    coords, box = [24, -2], [16, 8]
    img = run_load(a, coords, box, dtype="float32", oob_fill="nan_request_zero_fma")
    got = img[:16 * 8 * 4].view(np.float32).reshape(8, 16)
    want = box_of(a, coords, box, fill=np.nan)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[:2]).all() and np.isnan(got[:, 8:]).all()
    assert np.array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


def test_oob_nan_fill_is_0x7ff7_in_every_16_bits():
    """The H100's fill (recorded bf16 and f32 images): 0x7FF7 halves, 0x7FF77FF7 for f32 elements."""
    a = _array((6, 32), np.float32, seed=3)
    img = run_load(a, [32, 0], [16, 2], dtype="float32", oob_fill="nan_request_zero_fma")
    assert (img[:16 * 2 * 4].view(np.uint32) == 0x7FF77FF7).all()
    h = _array((6, 64), np.float16, seed=3)
    img = run_load(h, [56, 4], [16, 4], dtype="float16", oob_fill="nan_request_zero_fma")
    box = img[:16 * 4 * 2].view(np.uint16).reshape(4, 16)
    assert (box[2:] == 0x7FF7).all() and (box[:, 8:] == 0x7FF7).all()
    assert np.array_equal(box[:2, :8], h[4:6, 56:64].view(np.uint16))


@pytest.mark.parametrize(("dtype", "start"), [("float16", 3), ("float32", -3), ("uint8", 5)])
def test_misaligned_innermost_start_faults_as_the_h100_traps(dtype, start):
    """An H100 trapped on every TMA copy whose innermost start was not a multiple of 16 bytes."""
    a = _array((8, 64), np.dtype(dtype) if dtype != "uint8" else np.uint8, seed=5)
    with pytest.raises(MemoryFault) as info:
        run_load(a, [start, 0], [32, 4], dtype=dtype)
    text = str(info.value)
    assert "innermost box start" in text and "multiple of 16 bytes" in text and "line " in text, text


@pytest.mark.parametrize(("swizzle", "span", "inner"), [("32B", 32, 8), ("64B", 64, 16), ("64B", 64, 24),
                                                        ("128B", 128, 8), ("128B", 128, 48)])
def test_narrow_box_rows_start_one_swizzle_span_apart(swizzle, span, inner):
    """Rows narrower than the span: each starts on its own span, then the address swizzle (the
    placement of the 7 recorded H100 narrow boxes); the rest of each span is not written."""
    a = _array((20, 64), np.float16, seed=6)
    rows = 8
    img = run_load(a, [0, 0], [inner, rows], dtype="float16", swizzle=swizzle)
    box = box_of(a, [0, 0], [inner, rows]).view(np.uint8).reshape(rows, inner * 2)
    expect = np.full(SMEM, STALE, dtype=np.uint8)
    for r in range(rows):
        row = swizzle_image(box[r], swizzle, base=BUF + r * span, size=SMEM - r * span)
        written = row != STALE
        expect[r * span:][written] = row[written]
    assert np.array_equal(img, expect)


def test_box_entirely_out_of_bounds_still_completes_its_bytes():
    a = _array((4, 32), np.uint8, seed=4)
    img = run_load(a, [64, 100], [32, 4], dtype="uint8")
    assert (img[:128] == 0).all() and (img[128:] == STALE).all()


def test_element_strides_copy_every_sth_element_and_ignore_dimension_0():
    a = _array((9, 10, 48), np.uint32, seed=5)
    coords, box, es = [4, 1, 2], [8, 7, 5], [3, 2, 3]  # dim 0 stride ignored; dims 1, 2 give 4 and 2 elements
    img = run_load(a, coords, box, dtype="uint32", estrides=es)
    want = box_of(a, coords, box, es)
    assert want.shape == (2, 4, 8)
    assert np.array_equal(img, swizzle_image(want.view(np.uint8).reshape(-1), "none"))


def test_5d_load_with_padded_strides():
    full = _array((3, 4, 3, 5, 24), np.float16, seed=6)
    a = full[:, :, :, :, :16]                          # 16 of 24 columns: rows padded to 48 bytes in memory
    strides = [int(s) for s in reversed(full.strides)][1:]
    coords, box = [8, -1, 1, 2, 1], [8, 4, 2, 2, 2]
    img = run_load(full, coords, box, dtype="float16", strides=strides, dims=list(reversed(a.shape)))
    want = box_of(a, coords, box)
    assert (want[..., :] == 0).any()
    assert np.array_equal(img, swizzle_image(want.view(np.uint8).reshape(-1), "none"))


def test_wrong_expect_tx_never_completes():
    from ptxsim import Livelock
    a = _array((8, 64), np.float16)
    with pytest.raises(Livelock):
        run_load(a, [0, 0], [64, 8], dtype="float16", swizzle="128B", nbytes=64 * 8 * 2 + 16)


def test_swizzled_destination_must_start_on_the_pattern_repeat():
    a = _array((8, 64), np.float16)
    with pytest.raises(MemoryFault, match="1024-byte repeat"):
        run_load(a, [0, 0], [64, 8], dtype="float16", swizzle="128B", dst_off=128)
    with pytest.raises(MemoryFault, match="128-byte alignment"):
        run_load(a, [0, 0], [64, 8], dtype="float16", dst_off=16)
    img = run_load(a, [0, 0], [32, 8], dtype="float16", swizzle="64B", dst_off=512)
    expect = swizzle_image(box_of(a, [0, 0], [32, 8]).view(np.uint8).reshape(-1), "64B", base=BUF + 512,
                           size=SMEM - 512)
    assert np.array_equal(img[512:], expect) and (img[:512] == STALE).all()


def test_simulator_refuses_garbage_and_modified_maps():
    a = _array((8, 64), np.float16)
    with pytest.raises(SimError, match="magic"):
        run_load(a, [0, 0], [64, 8], dtype="float16", raw_map=bytes(range(128)))
    tm = bytearray(tensormap_tiled("float16", 2, 1 << 32, [64, 8], [128], [64, 8], [1, 1]))
    tm[30] ^= 1
    with pytest.raises(SimError, match="CRC"):
        run_load(a, [0, 0], [64, 8], dtype="float16", raw_map=bytes(tm))


# -- multicast --------------------------------------------------------------------------------------

def test_multicast_lands_in_every_cta_of_the_mask():
    a = _array((16, 64), np.float16, seed=7)
    coords, box = [0, 4], [64, 8]
    dev = SimDevice()
    g = dev.memory.alloc(a.nbytes)
    dev.memory.write(g, a)
    tm = tensormap_tiled("float16", 2, g, [64, 16], [128], box, [1, 1], swizzle="128B")
    out = dev.memory.alloc(2 * SMEM)
    module = dev.load(load_kernel(2, multicast=True))
    dev.run(module, "tload", [tm, out, 0, 64 * 8 * 2, 0, 0b11, *coords], 2, 128, cluster=2)
    img = dev.memory.read_array(out, 2 * SMEM).reshape(2, SMEM)
    expect = swizzle_image(box_of(a, coords, box).view(np.uint8).reshape(-1), "128B")
    assert np.array_equal(img[0], expect) and np.array_equal(img[1], expect)


# -- stores and reductions -------------------------------------------------------------------------

def store_kernel(rank: int, op: str | None = None) -> str:
    """128 threads copy ``nimg`` bytes from ``img`` into ``buf`` (16 per thread per step); thread 0
    stores (or reduces) the box at the coordinates through the map, commits and waits."""
    cs = ", ".join(f".param .s32 c{d}" for d in range(rank))
    loads = "\n".join(f"    ld.param.s32 %r{20 + d}, [c{d}];" for d in range(rank))
    regs = ", ".join(f"%r{20 + d}" for d in range(rank))
    instr = (f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{op}.tile.bulk_group" if op else
             f"cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group")
    return HEAD + f"""
.visible .entry tstore(.param .align 64 .b8 tmap[128], .param .u64 img, .param .u32 nimg, {cs})
.reqntid 128
{{
    .reg .pred %p<4>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 buf[{SMEM}];

    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    ld.param.u64 %rd1, [img];
    ld.param.u32 %r3, [nimg];
    shl.b32 %r13, %r1, 4;
LOOP:
    setp.ge.u32 %p3, %r13, %r3;
    @%p3 bra COPIED;
    cvt.u64.u32 %rd3, %r13;
    add.u64 %rd4, %rd1, %rd3;
    ld.global.v4.u32 {{%r15, %r16, %r17, %r18}}, [%rd4];
    add.u32 %r14, %r2, %r13;
    st.shared.v4.u32 [%r14], {{%r15, %r16, %r17, %r18}};
    add.u32 %r13, %r13, 2048;
    bra LOOP;
COPIED:
    fence.proxy.async.shared::cta;
    bar.sync 0;
{loads}
    setp.eq.u32 %p1, %r1, 0;
    @%p1 {instr} [tmap, {{{regs}}}], [%r2];
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    bar.sync 0;
    ret;
}}
"""


def run_store(initial: np.ndarray, image: np.ndarray, coords, box, *, dtype, swizzle="none", op=None, edit=None):
    """Run :func:`store_kernel` (its text through ``edit`` when given) and return the global tensor."""
    rank = initial.ndim
    dev = SimDevice()
    g = dev.memory.alloc(initial.nbytes)
    dev.memory.write(g, initial)
    src = dev.memory.alloc(SMEM)
    raw = np.zeros(SMEM, dtype=np.uint8)
    raw[:image.size] = image
    dev.memory.write(src, raw)
    dims = list(reversed(initial.shape))
    strides = [int(s) for s in reversed(initial.strides)][1:]
    tm = tensormap_tiled(dtype, rank, g, dims, strides, box, [1] * rank, swizzle=swizzle)
    ptx = store_kernel(rank, op)
    module = dev.load(edit(ptx) if edit else ptx)
    dev.run(module, "tstore", [tm, src, SMEM, *coords], 1, 128)
    return dev.memory.read_array(g, initial.nbytes).view(initial.dtype).reshape(initial.shape)


def unswizzled_box(image: np.ndarray, mode: str, nbytes: int) -> np.ndarray:
    """The dense box bytes a TMA store reads from the swizzled shared ``image`` (at BUF)."""
    lines = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[mode]
    dense = np.empty(nbytes, dtype=np.uint8)
    for i in range(nbytes):
        addr = BUF + i
        line, chunk, within = addr // 128, (addr % 128) // 16, addr % 16
        dense[i] = image[line * 128 + ((line % lines) ^ chunk) * 16 + within - BUF]
    return dense


@pytest.mark.parametrize("swizzle,inner", [("none", 24), ("64B", 32), ("128B", 64)])
def test_store_writes_in_bound_elements_only(swizzle, inner):
    initial = _array((30, 80), np.float16, seed=8)
    image = np.random.default_rng(9).integers(0, 256, size=SMEM, dtype=np.uint8)
    keep = inner // 2 // 8 * 8                          # columns in bounds; the start stays 16-byte aligned
    coords, box = [80 - keep, 26], [inner, 8]           # the other columns and half the rows out of bounds
    got = run_store(initial, image, coords, box, dtype="float16", swizzle=swizzle)
    tile = unswizzled_box(image, swizzle, inner * 8 * 2).view(np.float16).reshape(8, inner)
    want = initial.copy()
    want[26:30, 80 - keep:80] = tile[:4, :keep]
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))


def test_reduce_add_and_max_into_global():
    initial = _array((8, 32), np.int32, seed=10)
    image = np.random.default_rng(11).integers(-500, 500, size=SMEM // 4, dtype=np.int32).view(np.uint8)
    coords, box = [8, 2], [16, 4]
    tile = image[:16 * 4 * 4].view(np.int32).reshape(4, 16)
    got = run_store(initial, image, coords, box, dtype="int32", op="add")
    want = initial.copy()
    want[2:6, 8:24] += tile
    assert np.array_equal(got, want)
    got = run_store(initial, image, coords, box, dtype="int32", op="max")
    want = initial.copy()
    want[2:6, 8:24] = np.maximum(want[2:6, 8:24], tile)
    assert np.array_equal(got, want)


# -- tensor map encoding -----------------------------------------------------------------------------

GOOD = dict(dtype="float16", rank=2, global_address=1 << 32, global_dims=[64, 32], global_strides=[128],
            box_dims=[64, 16], element_strides=[1, 1], swizzle="128B")


def test_roundtrip_and_layout():
    raw = tensormap_tiled(**GOOD)
    assert len(raw) == 128 and raw[:8] == b"PTXSIMTM"
    t = decode_tensormap(raw)
    assert (t.dtype, t.rank, t.global_address, t.global_dims, t.global_strides, t.box_dims, t.swizzle) == (
        "float16", 2, 1 << 32, (64, 32), (128,), (64, 16), "128B")
    assert t.encode() == raw
    assert tensormap_tiled(**{**GOOD, "dtype": 6, "swizzle": "CU_TENSOR_MAP_SWIZZLE_128B"}) == raw


@pytest.mark.parametrize("change,message", [
    (dict(rank=6, global_dims=[1] * 6, global_strides=[16] * 5, box_dims=[8] * 6, element_strides=[1] * 6), "tensorRank expects 1..5"),
    (dict(global_address=(1 << 32) + 8), "16-byte alignment"),
    (dict(global_strides=[120]), "multiples of 16"),
    (dict(global_strides=[1 << 40]), "less than 2\\^40"),
    (dict(global_strides=[128, 256]), "globalStrides expects 1 entries"),
    (dict(box_dims=[64, 257]), "boxDim expects every entry non-zero and <= 256"),
    (dict(box_dims=[64, 0]), "boxDim expects every entry non-zero"),
    (dict(box_dims=[4, 16], swizzle="none"), "multiple of 16 bytes"),
    (dict(box_dims=[128, 16]), "<= 128 bytes"),
    (dict(box_dims=[32, 16], swizzle="32B"), "<= 32 bytes"),
    (dict(element_strides=[1, 9]), "elementStrides expects every entry non-zero and <= 8"),
    (dict(global_dims=[64, 0]), "globalDim expects every dimension non-zero"),
    (dict(global_dims=[64, (1 << 32) + 1]), "2\\^32"),
    (dict(dtype="int32", box_dims=[32, 16], oob_fill="nan_request_zero_fma"), "floating-point"),
    (dict(dtype="float8"), "tensorDataType expects one of"),
    (dict(swizzle="256B"), "swizzle expects one of"),
    (dict(interleave="16B"), "tensorRank expects >= 3"),
    (dict(rank=3, global_dims=[8, 8, 8], global_strides=[32, 256], box_dims=[16, 8, 8], element_strides=[1, 1, 1],
          interleave="32B", swizzle="64B"), "swizzle expects 32B when interleave is 32B"),
    (dict(rank=3, global_dims=[8, 8, 8], global_strides=[32, 256], box_dims=[8, 8, 8], element_strides=[1, 1, 1],
          interleave="32B", swizzle="32B", global_address=(1 << 32) + 16), "32-byte alignment"),
    (dict(dtype="16u4_align16b", global_dims=[64, 32], box_dims=[128, 1], swizzle="none"), "multiple of 128"),
])
def test_encoder_refuses_what_the_driver_refuses(change, message):
    with pytest.raises(ValueError, match=message) as info:
        tensormap_tiled(**{**GOOD, **change})
    assert "but got" in str(info.value) and "cuTensorMapEncodeTiled" in str(info.value)


def test_packed_types_encode_but_are_not_copied():
    raw = tensormap_tiled("16u4_align8b", 2, 1 << 32, [64, 4], [32], [32, 4], [1, 1])
    assert decode_tensormap(raw).dtype == "16u4_align8b"
    with pytest.raises(SimError, match="packed"):
        run_load(np.zeros((4, 32), np.uint8), [0, 0], [32, 4], dtype="uint8", raw_map=raw, nbytes=64)


def test_decode_refuses_wrong_size_and_version():
    with pytest.raises(ValueError, match="128 bytes"):
        decode_tensormap(b"\0" * 64)
    raw = bytearray(tensormap_tiled(**GOOD))
    raw[8] = 2
    with pytest.raises(ValueError, match="version"):
        decode_tensormap(bytes(raw))


# -- hazard checker: a bulk store reads its source until wait_group.read (§9.7.9.27) ----------------

_COMMIT = "    @%p1 cp.async.bulk.commit_group;\n"
_WAITED = "    @%p1 cp.async.bulk.wait_group.read 0;\n    bar.sync 0;\n"
_OVERWRITE = "    st.shared.u32 [%r2], %r1;\n"


def test_bulk_store_source_overwritten_before_wait_group_read():
    from ptxsim import HazardError
    initial = _array((8, 32), np.int32, seed=10)
    image = np.zeros(SMEM, dtype=np.uint8)
    with pytest.raises(HazardError) as info:
        run_store(initial, image, [0, 0], [16, 4], dtype="int32", edit=lambda p: p.replace(_COMMIT, _COMMIT + _OVERWRITE))
    exc = info.value
    assert exc.rule == "smem-overwrite" and "cp.async.bulk.tensor" in exc.first and "st.shared" in exc.second, str(exc)
    assert "wait_group.read" in str(exc)
    # after the issuing thread's wait_group.read (and a barrier for the other threads) it is clean
    run_store(initial, image, [0, 0], [16, 4], dtype="int32", edit=lambda p: p.replace(_WAITED, _WAITED + _OVERWRITE))
