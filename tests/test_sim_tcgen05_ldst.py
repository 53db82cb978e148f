"""tcgen05.ld / tcgen05.st / tcgen05.ld.red on the simulator, against closed forms of the fragments.

Tensor Memory is filled through ``.32x32b`` (the text-defined map: thread t <-> lane t, register
i <-> column i) with cell(lane, col) = lane << 16 | col; each shape under test is then checked
against the table of docs/tmem.md written out here as formulas (not the reference code).
"""

import numpy as np
import pytest

from ptxsim import Fault, SimDevice, SimError
from reference.tables import ldst_registers
from tests.sim_ptx_tcgen05_ops import PRELOAD, REGS, braced, harness

pytestmark = pytest.mark.reference


def closed_form(shape, t, i, half_split=0, pack=False, h=0):
    """(lane offset, column offset) of register i (half h) of thread t (docs/tmem.md table)."""
    if shape == "32x32b":
        dl, u, base = t, i, 0
    elif shape == "16x64b":
        dl, u, base = 8 * (t & 1) + (t >> 2), ((t >> 1) & 1) + 2 * i, 0
    elif shape == "16x128b":
        dl, u, base = (t >> 2) + 8 * (i & 1), (t & 3) + 4 * (i >> 1), 0
    elif shape == "16x256b":
        dl, u, base = (t >> 2) + 8 * ((i >> 1) & 1), 2 * (t & 3) + (i & 1) + 8 * (i >> 2), 0
    else:
        dl, u, base = t & 15, i, (t >> 4) * half_split
    return dl, (base + 2 * u + h) if pack else (base + u)


def cell(lane, col):
    return (lane << 16) | col


def run(ptx, name, inputs=None, words=0, faults=(), hazards=True):
    dev = SimDevice(faults=faults, hazards=hazards)
    module = dev.load(ptx)
    data = np.zeros(0x40000, dtype=np.uint8) if inputs is None else inputs
    src = dev.memory.alloc(data.size)
    dev.memory.write(src, data.tobytes())
    out = dev.memory.alloc(4 * 128 * words)
    dev.run(module, name, [src, out], (1, 1, 1), (128, 1, 1))
    return dev.memory.read_array(out, 4 * 128 * words).view(np.uint32).reshape(128, words)


def preload_inputs(ncols):
    data = np.zeros(0x40000, dtype=np.uint8)
    vals = np.array([[cell(lane, c) for c in range(ncols)] for lane in range(128)], dtype=np.uint32)
    data[PRELOAD:PRELOAD + vals.nbytes] = vals.view(np.uint8).ravel()
    return data


LD_CASES = [("32x32b", 4, None, False), ("16x64b", 4, None, False), ("16x128b", 2, None, False),
            ("16x256b", 2, None, False), ("16x32bx2", 4, 12, False), ("16x64b", 2, None, True),
            ("16x256b", 1, None, True), ("16x32bx2", 2, 8, True)]


@pytest.mark.parametrize("shape,num,half,pack", LD_CASES)
def test_ld_shapes_against_closed_forms(shape, num, half, pack):
    nregs = ldst_registers(shape, num)
    col0 = 3
    tail = f", {half}" if half is not None else ""
    ins = (f"tcgen05.ld.sync.aligned.{shape}.x{num}{'.pack::16b' if pack else ''}.b32 {braced('w', nregs)}, "
           f"[%r9]{tail};")
    ptx = harness("ldk", preload=64, wregs=nregs, warp_body=(
        f"add.u32 %r9, %ta, {col0};", ins, "tcgen05.wait::ld.sync.aligned;"))
    out = run(ptx, "ldk", preload_inputs(64), nregs)
    for tid in range(128):
        w, t = divmod(tid, 32)
        for i in range(nregs):
            halves = []
            for h in ((0, 1) if pack else (0,)):
                dl, dc = closed_form(shape, t, i, half or 0, pack, h)
                halves.append(cell(32 * w + dl, col0 + dc))
            want = (halves[0] & 0xFFFF) | ((halves[1] & 0xFFFF) << 16) if pack else halves[0]
            assert out[tid, i] == want, (tid, i)


@pytest.mark.parametrize("shape,num,half,unpack", [("16x128b", 2, None, False), ("16x64b", 1, None, True),
                                                    ("16x32bx2", 2, 16, False), ("16x256b", 1, None, False)])
def test_st_shapes_against_closed_forms(shape, num, half, unpack):
    nregs = ldst_registers(shape, num, op="st")
    head = f", {half}" if half is not None else ""
    ptx = harness("stk", vregs=nregs, readback=((0, 32),), preload=32, warp_body=(
        f"tcgen05.st.sync.aligned.{shape}.x{num}{'.unpack::16b' if unpack else ''}.b32 [%ta]{head}, "
        f"{braced('v', nregs)};", "tcgen05.wait::st.sync.aligned;"))
    data = preload_inputs(32)
    regs = np.array([[0xA0000000 | (tid << 12) | (i << 4) | 5 for i in range(nregs)] for tid in range(128)],
                    dtype=np.uint32)
    data[REGS:REGS + regs.nbytes] = regs.view(np.uint8).ravel()
    out = run(ptx, "stk", data, 32)
    want = np.array([[cell(lane, c) for c in range(32)] for lane in range(128)], dtype=np.uint32)
    for tid in range(128):
        w, t = divmod(tid, 32)
        for i in range(nregs):
            for h in ((0, 1) if unpack else (0,)):
                dl, dc = closed_form(shape, t, i, half or 0, unpack, h)
                v = int(regs[tid, i])
                want[32 * w + dl, dc] = ((v >> (16 * h)) & 0xFFFF) if unpack else v
    assert (out == want).all()


def test_st_without_wait_is_not_visible():
    ptx = harness("nowait", vregs=1, readback=((0, 1),), warp_body=(
        "tcgen05.st.sync.aligned.32x32b.x1.b32 [%ta], {%v0};",))
    out = run(ptx, "nowait", None, 1, hazards=False)      # with the checker: HazardError wait-st
    assert (out == 0x7FBADBAD).all()


@pytest.mark.parametrize("op,dtype,abs_,nan", [("min", "u32", False, False), ("max", "s32", False, False),
                                               ("min", "f32", True, False), ("max", "f32", False, True)])
def test_ld_red(op, dtype, abs_, nan):
    mods = f".{op}" + (".abs" if abs_ else "") + (".NaN" if nan else "") + f".{dtype}"
    ptx = harness("red", preload=8, wregs=9, warp_body=(
        f"tcgen05.ld.red.sync.aligned.32x32b.x8{mods} {braced('w', 8)}, %w8, [%ta];",
        "tcgen05.wait::ld.sync.aligned;"))
    rng = np.random.default_rng(7)
    vals = rng.integers(0, 2**32, size=(128, 8), dtype=np.uint64).astype(np.uint32)
    if dtype == "f32":
        vals = np.float32(rng.normal(size=(128, 8)) * 100).view(np.uint32)
        vals[5, 3] = 0x7FC00000                                        # a NaN in lane 5
    data = np.zeros(0x40000, dtype=np.uint8)
    data[PRELOAD:PRELOAD + vals.nbytes] = vals.view(np.uint8).ravel()
    out = run(ptx, "red", data, 9)
    assert (out[:, :8] == vals).all()
    for lane in range(128):
        row = vals[lane].astype(np.int64)
        if dtype == "u32":
            want = getattr(row, op)()
        elif dtype == "s32":
            want = int(np.int32(getattr(row.astype(np.uint32).view(np.int32), op)()).view(np.uint32))
        else:
            f = row.astype(np.uint32).view(np.float32).astype(np.float64)
            f = np.abs(f) if abs_ else f
            if nan and np.isnan(f).any():
                want = 0x7FFFFFFF
            else:
                want = int(np.float32(getattr(np, "nan" + op)(f)).view(np.uint32))
        assert out[lane, 8] == want, lane


@pytest.mark.parametrize("spelling", ["%w8", "{%w8}"])
def test_ld_red_redval_one_register_vector(spelling):
    """Triton 3.9 (load_min/load_max) writes redval as ``{%r}``; ptxas accepts it (sm_103a)."""
    ptx = harness("redv", preload=8, wregs=9, warp_body=(
        f"tcgen05.ld.red.sync.aligned.32x32b.x8.max.u32 {braced('w', 8)}, {spelling}, [%ta];",
        "tcgen05.wait::ld.sync.aligned;"))
    vals = np.random.default_rng(3).integers(0, 2**32, size=(128, 8), dtype=np.uint64).astype(np.uint32)
    data = np.zeros(0x40000, dtype=np.uint8)
    data[PRELOAD:PRELOAD + vals.nbytes] = vals.view(np.uint8).ravel()
    out = run(ptx, "redv", data, 9)
    assert (out[:, 8] == vals.max(axis=1)).all()


def test_ld_red_redval_vector_of_two_is_refused():
    ptx = harness("redv2", preload=8, wregs=10, warp_body=(
        f"tcgen05.ld.red.sync.aligned.32x32b.x8.max.u32 {braced('w', 8)}, {{%w8, %w9}}, [%ta];",
        "tcgen05.wait::ld.sync.aligned;"))
    with pytest.raises(Exception, match="redval expects one register"):
        SimDevice().load(ptx)


def test_lane_quarter_restriction():
    ptx = harness("quarter", wregs=1, warp_body=(
        "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%w0}, [%tbase];", "tcgen05.wait::ld.sync.aligned;"))
    with pytest.raises(SimError, match="9.7.16.8.1"):
        run(ptx, "quarter", None, 1)


def test_unallocated_column():
    ptx = harness("unalloc", wregs=1, warp_body=(
        "add.u32 %r9, %ta, 510;", "tcgen05.ld.sync.aligned.32x32b.x4.b32 {%w0, %r10, %r11, %r12}, [%r9];"))
    with pytest.raises(SimError, match="Tensor Memory shape"):
        run(ptx, "unalloc", None, 1)


def test_ld_map_fault_swaps_registers():
    swap = Fault("swap01", "tmem_ld_map", lambda v, ctx: v[:, [1, 0] + list(range(2, v.shape[1]))])
    ptx = harness("ldf", preload=4, wregs=4, warp_body=(
        "tcgen05.ld.sync.aligned.32x32b.x4.b32 " + braced("w", 4) + ", [%ta];", "tcgen05.wait::ld.sync.aligned;"))
    good = run(ptx, "ldf", preload_inputs(4), 4)
    bad = run(ptx, "ldf", preload_inputs(4), 4, faults=[swap])
    assert (bad[:, 0] == good[:, 1]).all() and (bad[:, 1] == good[:, 0]).all()


def test_st_map_fault_moves_a_lane():
    def rotate(v, ctx):
        v = v.copy()
        v[..., 0] = (v[..., 0] + 1) % 32
        return v
    lane_off = Fault("lane+1", "tmem_st_map", rotate)
    ptx = harness("stf", vregs=1, readback=((0, 1),), warp_body=(
        "tcgen05.st.sync.aligned.32x32b.x1.b32 [%ta], {%v0};", "tcgen05.wait::st.sync.aligned;"))
    data = np.zeros(0x40000, dtype=np.uint8)
    regs = np.arange(128, dtype=np.uint32) + 1000
    data[REGS:REGS + regs.nbytes] = regs.view(np.uint8)
    bad = run(ptx, "stf", data, 1, faults=[lane_off])
    assert bad[1, 0] == 1000 and bad[2, 0] == 1001 and bad[0, 0] == 1031 and bad[33, 0] == 1032
