"""In-kernel tensor maps: ``tensormap.replace`` + ``tensormap.cp_fenceproxy`` (PTX ISA §9.7.9.26;
what Triton's ``tl.make_tensor_descriptor`` emits), then a ``cp.async.bulk.tensor`` load through
the edited map.

Field encodings checked against PTX text and Triton 3.9's output: rank written as rank - 1, the
PTX elemtype enum (f16 = 6, f32 = 7, f32.ftz = 8, f64 = 9, bf16 = 10: Triton's
``TMA_DTYPE_DEVICE_TO_HOST``), box/global dims and element strides as values, global strides in
bytes for dimension ord + 1, ord innermost first.  Expected data: plain numpy indexing and the
swizzle-chunk formula of ``tests/test_sim_tensor.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptxsim import SimDevice, SimError, decode_tensormap, tensormap_tiled
from ptxsim.memory.tensormap import decode_raw, replace_field
from tests.test_sim_tensor import box_of, swizzle_image

pytestmark = pytest.mark.reference

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
SMEM = 8192
PTX_ELEMTYPE = {"uint8": 0, "uint16": 1, "float16": 6, "float32": 7, "float32_ftz": 8, "float64": 9, "bfloat16": 10}


def build_kernel(elemtype: int, swizzle_mode: int, atomicity: int | None = None, space: str = "shared::cta",
                 fill: int | None = None) -> str:
    """Thread 0 builds a 2-D map field by field (in shared memory zeroed by warp 0 and copied to
    ``gmap`` with cp_fenceproxy, or directly in global memory), then loads the box at (c0, c1)
    into ``buf`` and every thread copies ``buf`` to ``out``."""
    tm = "%rd20" if space == "shared::cta" else "%rd21"
    extra = ""
    if atomicity is not None:
        extra += f"    tensormap.replace.tile.swizzle_atomicity.{space}.b1024.b32 [{tm}], {atomicity};\n"
    if fill is not None:
        extra += f"    tensormap.replace.tile.fill_mode.{space}.b1024.b32 [{tm}], {fill};\n"
    copy = """    @%p5 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd21], [%rd20], 128;
""" if space == "shared::cta" else ""
    return HEAD + f"""
.visible .entry build(.param .u64 out, .param .u64 gmap, .param .u64 src, .param .u32 dim0, .param .u32 dim1,
                      .param .u64 stride1, .param .u32 box0, .param .u32 box1, .param .u32 nbytes,
                      .param .s32 c0, .param .s32 c1)
.reqntid 128
{{
    .reg .pred %p<8>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<30>;
    .shared .align 1024 .b8 buf[{SMEM}];
    .shared .align 128 .b8 tmap[128];
    .shared .align 8 .b64 bar;

    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    mov.u32 %r3, bar;
    mov.u32 %r4, tmap;
    cvt.u64.u32 %rd20, %r4;
    ld.param.u64 %rd21, [gmap];
    setp.eq.u32 %p1, %r1, 0;
    setp.lt.u32 %p5, %r1, 32;
    shl.b32 %r5, %r1, 2;
    add.u32 %r6, %r4, %r5;
    mov.b32 %r7, 0;
    @%p5 st.shared::cta.b32 [%r6], %r7;
    bar.sync 0;
    @!%p1 bra BUILT;
    ld.param.u64 %rd1, [src];
    ld.param.u32 %r10, [dim0];
    ld.param.u32 %r11, [dim1];
    ld.param.u64 %rd2, [stride1];
    ld.param.u32 %r12, [box0];
    ld.param.u32 %r13, [box1];
    mov.b32 %r14, 1;
    tensormap.replace.tile.global_address.{space}.b1024.b64 [{tm}], %rd1;
    tensormap.replace.tile.rank.{space}.b1024.b32 [{tm}], 0x1;
    tensormap.replace.tile.box_dim.{space}.b1024.b32 [{tm}], 0x0, %r12;
    tensormap.replace.tile.box_dim.{space}.b1024.b32 [{tm}], 0x1, %r13;
    tensormap.replace.tile.global_dim.{space}.b1024.b32 [{tm}], 0x0, %r10;
    tensormap.replace.tile.global_dim.{space}.b1024.b32 [{tm}], 0x1, %r11;
    tensormap.replace.tile.global_stride.{space}.b1024.b64 [{tm}], 0x0, %rd2;
    tensormap.replace.tile.element_stride.{space}.b1024.b32 [{tm}], 0x0, %r14;
    tensormap.replace.tile.element_stride.{space}.b1024.b32 [{tm}], 0x1, %r14;
    tensormap.replace.tile.elemtype.{space}.b1024.b32 [{tm}], {elemtype};
    tensormap.replace.tile.interleave_layout.{space}.b1024.b32 [{tm}], 0x0;
    tensormap.replace.tile.swizzle_mode.{space}.b1024.b32 [{tm}], {swizzle_mode};
{extra}BUILT:
    bar.sync 0;
{copy}    @%p5 fence.proxy.tensormap::generic.acquire.gpu [%rd21], 128;
    @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
    bar.sync 0;
    ld.param.u32 %r15, [nbytes];
    ld.param.s32 %r16, [c0];
    ld.param.s32 %r17, [c1];
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r15;
    @%p1 cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r2], [%rd21, {{%r16, %r17}}], [%r3];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra WAIT;
    ld.param.u64 %rd3, [out];
    shl.b32 %r20, %r1, 4;
LOOP:
    setp.ge.u32 %p3, %r20, {SMEM};
    @%p3 bra DONE;
    add.u32 %r21, %r2, %r20;
    ld.shared.v4.u32 {{%r22, %r23, %r24, %r25}}, [%r21];
    cvt.u64.u32 %rd4, %r20;
    add.u64 %rd5, %rd3, %rd4;
    st.global.v4.u32 [%rd5], {{%r22, %r23, %r24, %r25}};
    add.u32 %r20, %r20, 2048;
    bra LOOP;
DONE:
    ret;
}}
"""


def run_build(array: np.ndarray, coords, box, *, dtype: str, swizzle_mode: int, atomicity=None, space="shared::cta",
              fill=None, elemtype=None):
    """(shared buffer bytes after the load, the 128 map bytes in global memory, the array's address)."""
    dev = SimDevice()
    g = dev.memory.alloc(array.nbytes + 1024)
    dev.memory.write(g, array)
    gmap = dev.memory.alloc(128, align=64)
    out = dev.memory.alloc(SMEM)
    nbytes = box[0] * box[1] * array.itemsize
    ptx = build_kernel(PTX_ELEMTYPE[dtype] if elemtype is None else elemtype, swizzle_mode, atomicity, space, fill)
    module = dev.load(ptx)
    dims = list(reversed(array.shape))
    dev.run(module, "build", [out, gmap, g, dims[0], dims[1], array.strides[0], box[0], box[1], nbytes, *coords],
            1, 128)
    return dev.memory.read_array(out, SMEM), dev.memory.read(gmap, 128), g


def _array(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.integers(-1000, 1000, size=shape) / 8).astype(dtype)


@pytest.mark.parametrize("space", ["shared::cta", "global"])
@pytest.mark.parametrize("dtype,npdt,swizzle,mode,inner", [
    ("float16", np.float16, "128B", 3, 64), ("float32", np.float32, "64B", 2, 16),
    ("bfloat16", np.uint16, "32B", 1, 16), ("float32", np.float32, "none", 0, 8)])
def test_built_map_loads_and_equals_tensormap_tiled(space, dtype, npdt, swizzle, mode, inner):
    a = _array((40, 96), npdt)
    coords, box = [8, 30], [inner, 16]                # rows 30..45: 6 rows past the end read as zero
    img, raw, g = run_build(a, coords, box, dtype=dtype, swizzle_mode=mode, space=space)
    expect = swizzle_image(box_of(a, coords, box).view(np.uint8).reshape(-1), swizzle)
    assert np.array_equal(img, expect)
    ref = tensormap_tiled(dtype, 2, g, [96, 40], [a.strides[0]], box, [1, 1], swizzle=swizzle)
    assert decode_tensormap(raw) == decode_tensormap(ref)
    assert raw == ref                                  # same fields, same bytes (unused fields stay zero)


def test_atomicity_and_nan_fill_fields():
    a = _array((8, 64), np.float16)
    img, raw, g = run_build(a, [0, 0], [64, 8], dtype="float16", swizzle_mode=3, atomicity=1, fill=1)
    t = decode_tensormap(raw)
    assert (t.swizzle, t.oob_fill) == ("128B_atom_32B", "nan_request_zero_fma")
    assert raw == tensormap_tiled("float16", 2, g, [64, 8], [128], [64, 8], [1, 1], swizzle="128B_atom_32B",
                                  oob_fill="nan_request_zero_fma")


def test_ptx_elemtype_enum_differs_from_the_driver():
    a = _array((8, 16), np.float64)
    _, raw, _ = run_build(a, [0, 0], [16, 8], dtype="float64", swizzle_mode=0)
    assert decode_tensormap(raw).dtype == "float64"           # PTX 9 (driver: 8)
    _, raw, _ = run_build(_array((8, 32), np.float32), [0, 0], [16, 8], dtype="float32", swizzle_mode=0, elemtype=8)
    assert decode_tensormap(raw).dtype == "float32_ftz"       # PTX 8 (driver: 10)


def test_invalid_built_map_fails_at_the_copy():
    a = _array((8, 64), np.float16)
    with pytest.raises(SimError, match="swizzle_mode 1 with swizzle_atomicity 1"):
        run_build(a, [0, 0], [16, 8], dtype="float16", swizzle_mode=1, atomicity=1)
    with pytest.raises(SimError, match="boxDim"):           # 64 f16 = 128 bytes > the 32B span
        run_build(a, [0, 0], [64, 8], dtype="float16", swizzle_mode=1)


# -- the field editor on the host ------------------------------------------------------------------

def test_replace_field_starts_from_an_empty_map_and_records_bad_values():
    assert decode_raw(b"\xff" * 128) == bytearray(128)
    ref = tensormap_tiled("uint8", 1, 0x1000, [32], [], [16], [1])
    assert decode_raw(ref) == bytearray(ref)
    raw = b""
    for field, value, ordinal in (("global_address", 0x1000, 0), ("rank", 0, 0), ("box_dim", 16, 0),
                                  ("global_dim", 32, 0), ("element_stride", 1, 0), ("elemtype", 0, 0)):
        raw = replace_field(raw or bytes(128), field, value, ordinal)
    assert raw == ref
    bad = replace_field(raw, "box_dim", 0, 0)
    with pytest.raises(ValueError, match=r"box_dim\[0\] was set by tensormap.replace to 0"):
        decode_tensormap(bad)
    assert replace_field(bad, "box_dim", 16, 0) == ref        # a valid value clears the record
    with pytest.raises(ValueError, match="ordinal 0..3"):
        replace_field(raw, "global_stride", 16, 4)
    with pytest.raises(ValueError, match="CRC"):              # a host-made map stays checked strictly
        decode_tensormap(ref[:-1] + bytes([ref[-1] ^ 1]))


def test_swizzle_pairs():
    raw = tensormap_tiled("float16", 2, 0x1000, [64, 8], [128], [64, 8], [1, 1], swizzle="128B")
    for atom, name in ((1, "128B_atom_32B"), (2, "128B_atom_32B_flip_8B"), (3, "128B_atom_64B"), (0, "128B")):
        raw = replace_field(raw, "swizzle_atomicity", atom)
        assert decode_tensormap(raw).swizzle == name


def test_pointer_param_align_is_the_pointees():
    """Triton: ``.param .u64 .ptr .global .align 1 p`` after a .u32: ``.align`` after ``.ptr`` is the
    pointee's alignment, so the parameter keeps its natural 8-byte alignment."""
    ptx = HEAD + """
.visible .entry k(.param .u32 n, .param .u64 .ptr .global .align 1 out)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u32 %r1, [n];
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
"""
    dev = SimDevice()
    out = dev.memory.alloc(4)
    dev.run(dev.load(ptx), "k", [7, out], 1, 1)
    assert dev.memory.read_array(out, 4).view(np.uint32)[0] == 7


# -- packed f32 arithmetic (sm_100 .f32x2) -----------------------------------------------------------

F32X2 = HEAD + """
.visible .entry f32x2(.param .u64 in_ptr, .param .u64 out_ptr)
.reqntid 64
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 24;
    add.u64 %rd4, %rd1, %rd3;
    ld.global.b64 %rd5, [%rd4];
    ld.global.b64 %rd6, [%rd4+8];
    ld.global.b64 %rd7, [%rd4+16];
    add.f32x2 %rd8, %rd5, %rd6;
    sub.rn.f32x2 %rd9, %rd5, %rd6;
    mul.rn.f32x2 %rd10, %rd5, %rd6;
    fma.rn.f32x2 %rd11, %rd5, %rd6, %rd7;
    add.rz.ftz.f32x2 %rd12, %rd5, %rd6;
    fma.rm.sat.f32x2 %rd13, %rd5, %rd6, %rd7;
    mul.rp.f32x2 %rd14, %rd5, %rd6;
    add.rn.f32 %r2, 0f3F800000, 0f40000000;
    mov.b64 %rd15, {%r2, %r2};
    mul.wide.u32 %rd16, %r1, 64;
    add.u64 %rd17, %rd2, %rd16;
    st.global.v4.b64 [%rd17], {%rd8, %rd9, %rd10, %rd11};
    st.global.v4.b64 [%rd17+32], {%rd12, %rd13, %rd14, %rd15};
    ret;
}
"""


def test_f32x2_against_numpy_float32():
    from fractions import Fraction

    from tests.sim_ptx import run_kernel

    rng = np.random.default_rng(5)
    vals = (rng.standard_normal((64, 3, 2)) * np.exp2(rng.integers(-20, 20, (64, 3, 2)))).astype(np.float32)
    vals[0, 0], vals[0, 1] = [1e-40, -3.0], [2.0, 3.0]                  # a subnormal (ftz) and an exact zero sum
    vals[1, 0], vals[1, 1], vals[1, 2] = [0.5, np.inf], [0.5, 0.0], [0.25, 1.0]    # fma saturates; inf * 0 = NaN
    dev = SimDevice()
    src = dev.memory.alloc(vals.nbytes)
    dev.memory.write(src, vals)
    out = run_kernel(dev, F32X2, "f32x2", 64 * 16, block=(64, 1, 1), in_ptr=src).view(np.float32).reshape(64, 8, 2)
    a, b, c = vals[:, 0], vals[:, 1], vals[:, 2]
    same = lambda got, want: np.array_equal(got.view(np.uint32), np.asarray(want, np.float32).view(np.uint32))  # noqa: E731
    assert same(out[:, 0], a + b) and same(out[:, 1], a - b) and same(out[2:, 2], a[2:] * b[2:])
    assert np.isnan(out[1, 2, 1]) and out[1, 2, 1:].view(np.uint32)[0] == 0x7FFFFFFF   # canonical NaN
    assert np.all(out[:, 7] == np.float32(3.0))                         # scalar add.rn.f32 still works

    def exact(x, y, z=None):
        e = Fraction(float(x)) * Fraction(float(y)) + (Fraction(float(z)) if z is not None else 0)
        return e

    for i in range(2, 64):                  # fma.rn: the exact value rounded once (f64 has the room here)
        for j in range(2):
            e = exact(a[i, j], b[i, j], c[i, j])
            assert out[i, 3, j] == np.float32(float(e)) or abs(Fraction(float(out[i, 3, j])) - e) <= abs(
                Fraction(float(np.float32(float(e)))) - e)
            want = np.float32(float(e))      # rm: the largest f32 <= exact, then clamped to [0, 1]
            if Fraction(float(want)) > e:
                want = np.nextafter(want, np.float32(-np.inf))
            assert out[i, 5, j] == np.clip(want, 0, 1)
            p = Fraction(float(a[i, j])) * Fraction(float(b[i, j]))
            up = np.float32(float(p))
            if Fraction(float(up)) < p:
                up = np.nextafter(up, np.float32(np.inf))
            assert out[i, 6, j] == up        # mul.rp
    assert out[0, 4, 0] == 2.0 and out[0, 4, 1] == 0.0 and not np.signbit(out[0, 4, 1])   # ftz input; +0
    assert out[1, 5, 0] == 0.5 and out[1, 5, 1] == 0.0                   # sat: 0.5, NaN -> 0
    s = a.astype(np.float64) + b.astype(np.float64)             # add.rz: truncate the f64 sum toward zero
    r = s.astype(np.float32)
    r = np.where(np.abs(r.astype(np.float64)) > np.abs(s), np.nextafter(r, np.float32(0)), r)
    r = np.where(np.abs(r) < 2.0 ** -126, np.copysign(np.float32(0), r), r)
    assert same(out[2:, 4], r[2:])
