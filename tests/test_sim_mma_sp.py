"""Warp-level mma.sp on the simulator (§9.7.14.6), against fragments written out per element here.

f16 m16n8k16 (A 16x8 compressed: a0 = rows gid cols 2*tig+{0,1}, a1 = rows gid+8; B 16x8:
b0 = rows 2*tig+{0,1}, b1 = rows 2*tig+8+{0,1}, column gid; C/D f32: c0,c1 row gid, c2,c3 row
gid+8, column 2*tig+{0,1}); metadata: thread 4*gid+selector holds row gid in bits 0-15 and row
gid+8 in bits 16-31, chunk j at bits 4j (PTX ISA mma.sp m16n8k16 figures, §9.7.14.6.1 text).
"""

import numpy as np
import pytest

from ptxsim import Fault, SimDevice
from ptxsim.device import faults_overridden
from tests.sim_ptx import HEAD100

pytestmark = pytest.mark.reference

RNG = np.random.default_rng(5)


def kernel(opcode, na, nb, nc, nd, selector):
    n_in = na + nb + nc + 1
    regs = [f"%a{i}" for i in range(na)] + [f"%b{i}" for i in range(nb)] + [f"%c{i}" for i in range(nc)] + ["%e"]
    lines = [HEAD100, ".visible .entry wsp(.param .u64 in_ptr, .param .u64 out_ptr)", ".reqntid 32, 1, 1", "{",
             f".reg .b32 %a<{na}>;", f".reg .b32 %b<{nb}>;", f".reg .b32 %c<{nc}>;", f".reg .b32 %d<{nd}>;",
             ".reg .b32 %e, %t;", ".reg .b64 %rd<4>;",
             "ld.param.u64 %rd0, [in_ptr];", "ld.param.u64 %rd1, [out_ptr];", "mov.u32 %t, %tid.x;",
             f"mul.wide.u32 %rd2, %t, {4 * n_in};", "add.s64 %rd2, %rd2, %rd0;"]
    lines += [f"ld.global.b32 {r}, [%rd2+{4 * i}];" for i, r in enumerate(regs)]
    vec = lambda stem, n: "{" + ", ".join(f"%{stem}{i}" for i in range(n)) + "}"  # noqa: E731
    lines.append(f"{opcode} {vec('d', nd)}, {vec('a', na)}, {vec('b', nb)}, {vec('c', nc)}, %e, {selector};")
    lines += [f"mul.wide.u32 %rd3, %t, {4 * nd};", "add.s64 %rd3, %rd3, %rd1;"]
    lines += [f"st.global.b32 [%rd3+{4 * i}], %d{i};" for i in range(nd)]
    return "\n".join(lines + ["ret;", "}", ""])


def run(ptx, regs, nd, faults=()):
    dev = SimDevice(faults=faults)
    src = dev.memory.alloc(regs.nbytes)
    dev.memory.write(src, regs.astype(np.uint32).tobytes())
    out = dev.memory.alloc(32 * nd * 4)
    dev.run(dev.load(ptx), "wsp", [src, out], (1, 1, 1), (32, 1, 1))
    return dev.memory.read_array(out, 32 * nd * 4).view(np.uint32).reshape(32, nd)


def h(x):
    return int(np.float16(x).view(np.uint16))


@pytest.mark.parametrize("selector", [0, 3])
def test_f16_m16n8k16(selector):
    nib = RNG.choice([0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110], size=(16, 4))
    comp = RNG.integers(-3, 4, size=(16, 8)).astype(float)
    dense = np.zeros((16, 16))
    for r in range(16):
        for g in range(4):
            dense[r, 4 * g + (nib[r, g] & 3)] = comp[r, 2 * g]
            dense[r, 4 * g + (nib[r, g] >> 2)] = comp[r, 2 * g + 1]
    b = RNG.integers(-3, 4, size=(16, 8)).astype(float)
    c = RNG.integers(-50, 50, size=(16, 8)).astype(float)
    regs = np.zeros((32, 2 + 2 + 4 + 1), dtype=np.uint64)
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3
        regs[lane, 0] = h(comp[gid, 2 * tig]) | h(comp[gid, 2 * tig + 1]) << 16
        regs[lane, 1] = h(comp[gid + 8, 2 * tig]) | h(comp[gid + 8, 2 * tig + 1]) << 16
        regs[lane, 2] = h(b[2 * tig, gid]) | h(b[2 * tig + 1, gid]) << 16
        regs[lane, 3] = h(b[2 * tig + 8, gid]) | h(b[2 * tig + 9, gid]) << 16
        for r in range(4):
            regs[lane, 4 + r] = np.float32(c[gid + 8 * (r // 2), 2 * tig + r % 2]).view(np.uint32)
        if tig == selector:
            bits = lambda row: sum(int(x) << (4 * j) for j, x in enumerate(nib[row]))  # noqa: E731
            regs[lane, 8] = bits(gid) | bits(gid + 8) << 16
    ptx = kernel("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, 2, 4, 4, selector)
    out = run(ptx, regs, 4)
    want = dense @ b + c
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3
        for r in range(4):
            assert out[lane, r] == np.float32(want[gid + 8 * (r // 2), 2 * tig + r % 2]).view(np.uint32)
    if faults_overridden():        # run by the stand-in execution tier: good path only
        return
    reverse = Fault("rev", "sparsity_metadata", lambda p, ctx: p[..., ::-1])
    assert (run(ptx, regs, 4, faults=[reverse]) != out).any()


def test_s8_m16n8k32_satfinite():
    """s8: A compressed 16x16 (a0 row gid bytes 4*tig.., a1 row gid+8), B 32x8 (b0 rows 4*tig.., b1 +16)."""
    comp = np.full((16, 16), 127)
    nib = np.full((16, 8), 0b0100)
    b = np.full((32, 8), 127)
    c = np.full((16, 8), 0x7FFFFF00)
    regs = np.zeros((32, 2 + 2 + 4 + 1), dtype=np.uint64)
    pack = lambda vals: sum((int(v) & 0xFF) << (8 * i) for i, v in enumerate(vals))  # noqa: E731
    for lane in range(32):
        gid, tig = lane >> 2, lane & 3
        regs[lane, 0] = pack(comp[gid, 4 * tig:4 * tig + 4])
        regs[lane, 1] = pack(comp[gid + 8, 4 * tig:4 * tig + 4])
        regs[lane, 2] = pack(b[4 * tig:4 * tig + 4, gid])
        regs[lane, 3] = pack(b[4 * tig + 16:4 * tig + 20, gid])
        regs[lane, 4:8] = c[0, 0]
        if tig in (0, 1):                             # selector 0: threads T0, T1 of each quad
            row = gid + 8 * tig
            regs[lane, 8] = sum(int(x) << (4 * j) for j, x in enumerate(nib[row]))
    ptx = kernel("mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", 2, 2, 4, 4, 0)
    out = run(ptx, regs, 4)
    assert (out == 0x7FFFFFFF).all()
