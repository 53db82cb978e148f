"""ldmatrix / stmatrix on the simulator (PTX ISA §9.7.14.5.15 ldmatrix, §9.7.14.5.16 stmatrix).

Expected fragments are written here from the ISA's rules (and, for the 8-bit shapes the ISA only
draws, CUTLASS's ``copy_traits_sm100.hpp`` layouts restated as row/column formulas), element by
element in plain Python, never through ``ptxsim.isa.matrix``.
"""

import numpy as np
import pytest

from ptxsim import SimDevice, SimError, UnimplementedError
from tests.sim_ptx import assemble

pytestmark = pytest.mark.reference

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
RNG = np.random.default_rng(7)
DATA = RNG.integers(0, 256, 1024, dtype=np.uint8)      # shared memory image: 2 warps x 32 rows x 16 bytes


def row_of_lane(lane: int) -> int:
    """The physical 16-byte row whose address lane ``lane`` supplies (a permutation)."""
    return (lane * 5 + 3) % 32


def kernel(instr: str, nregs: int, store: bool = False, generic: bool = False) -> str:
    regs = ", ".join(f"%r{20 + i}" for i in range(nregs))
    addr = "%rd7" if generic else "%r9"
    if store:
        body = "\n".join(f"    xor.b32 %r{20 + i}, %r{2 + i}, {i * 0x11111111};" for i in range(nregs)) + f"""
    {instr} [{addr}], {{{regs}}};
    bar.sync 0;
    ld.shared.v4.u32 {{%r11, %r12, %r13, %r14}}, [%r7];
    st.global.v4.u32 [%rd6], {{%r11, %r12, %r13, %r14}};"""
    else:
        body = f"    {instr} {{{regs}}}, [{addr}];\n" + "\n".join(
            f"    st.global.u32 [%rd6+{4 * i}], %r{20 + i};" for i in range(nregs))
    fill = "" if store else "    st.shared.v4.u32 [%r7], {%r2, %r3, %r4, %r5};\n    bar.sync 0;\n"
    return HEAD + f"""
.visible .entry mat(.param .u64 in_ptr, .param .u64 out_ptr)
.reqntid 64, 1, 1
{{
    .reg .b32 %r<30>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 buf[1024];
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd6, %rd2, %rd3;
    ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd4];
    mov.u32 %r6, buf;
    mad.lo.u32 %r7, %r1, 16, %r6;
{fill}    and.b32 %r8, %r1, 31;
    mad.lo.u32 %r9, %r8, 5, 3;
    and.b32 %r9, %r9, 31;
    shl.b32 %r9, %r9, 4;
    shr.u32 %r10, %r1, 5;
    shl.b32 %r10, %r10, 9;
    add.u32 %r9, %r9, %r10;
    add.u32 %r9, %r9, %r6;
    cvt.u64.u32 %rd5, %r9;
    cvta.shared.u64 %rd7, %rd5;
{body}
    ret;
}}
"""


def run(ptx: str) -> np.ndarray:
    dev = SimDevice()
    src = dev.memory.alloc(1024)
    dev.memory.write(src, DATA.tobytes())
    out = dev.memory.alloc(1024)
    dev.memory.write(out, bytes(1024))
    dev.run(dev.load(ptx), "mat", [src, out], (1, 1, 1), (64, 1, 1))
    return dev.memory.read_array(out, 1024)


def matrix_rows(warp: int, matrix: int, nrows: int) -> list[bytes]:
    """Row r of matrix i: the 16 bytes at the address lane i*nrows + r supplies."""
    base = warp * 512
    return [bytes(DATA[base + 16 * row_of_lane(matrix * nrows + r):][:16]) for r in range(nrows)]


def word(bs) -> int:
    return int.from_bytes(bytes(bs), "little")


def expected_m8n8(num: int, trans: bool) -> list[list[int]]:
    """§9.7.14.5.15: lane l holds elements 2*(l%4), 2*(l%4)+1 of row l/4 (16-bit elements);
    .trans: of the transposed matrix."""
    out = []
    for t in range(64):
        w, lane = divmod(t, 32)
        regs = []
        for i in range(num):
            rows = matrix_rows(w, i, 8)
            elem = [[word(r[2 * c:2 * c + 2]) for c in range(8)] for r in rows]     # 8x8 of u16
            if trans:
                elem = [[elem[c][r] for c in range(8)] for r in range(8)]
            lo, hi = elem[lane // 4][2 * (lane % 4)], elem[lane // 4][2 * (lane % 4) + 1]
            regs.append(lo | hi << 16)
        out.append(regs)
    return out


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_m8n8_b16(num, trans):
    instr = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    out = run(kernel(instr, num)).view(np.uint32).reshape(64, 4)
    assert out[:, :num].tolist() == expected_m8n8(num, trans)


def test_ldmatrix_generic_address():
    out = run(kernel("ldmatrix.sync.aligned.m8n8.x4.b16", 4, generic=True)).view(np.uint32).reshape(64, 4)
    assert out.tolist() == expected_m8n8(4, False)


def expected_m16n16(num: int, widen=None) -> list[list[int]]:
    """.m16n16.trans (8-bit): view the 16x16 byte matrix M (row = supplying lane) transposed,
    T[n][k] = M[k][n]; lane (a, b) = (l%4, l/4) holds in register j the bytes
    T[b][4a+2j], T[b][4a+2j+1], T[b+8][4a+2j], T[b+8][4a+2j+1]."""
    out = []
    for t in range(64):
        w, lane = divmod(t, 32)
        a, b = lane % 4, lane // 4
        regs = []
        for i in range(num):
            rows = [widen(r) if widen else r for r in matrix_rows(w, i, 16)]
            T = [[rows[kk][n] for kk in range(16)] for n in range(16)]
            for j in range(2):
                c = 4 * a + 2 * j
                regs.append(word([T[b][c], T[b][c + 1], T[b + 8][c], T[b + 8][c + 1]]))
        out.append(regs)
    return out


def widen4(row: bytes) -> bytes:
    """b4x16_p64: 16 nibbles, low nibble first, then 8 padding bytes."""
    return bytes(x for byte in row[:8] for x in (byte & 15, byte >> 4))


def widen6(row: bytes) -> bytes:
    """b6x16_p32: 16 six-bit fields of the little-endian 96-bit stream, then 4 padding bytes."""
    v = int.from_bytes(row[:12], "little")
    return bytes((v >> (6 * i)) & 63 for i in range(16))


@pytest.mark.parametrize("num", [1, 2])
@pytest.mark.parametrize("fmt", ["b8", "b8x16.b6x16_p32", "b8x16.b4x16_p64"])
def test_ldmatrix_m16n16_trans(num, fmt):
    instr = f"ldmatrix.sync.aligned.m16n16.x{num}.trans.shared.{fmt}"
    out = run(kernel(instr, 2 * num)).view(np.uint32).reshape(64, 4)
    widen = {"b8": None, "b8x16.b6x16_p32": widen6, "b8x16.b4x16_p64": widen4}[fmt]
    assert out[:, :2 * num].tolist() == expected_m16n16(num, widen)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("fmt", ["b6x16_p32", "b4x16_p64"])
def test_ldmatrix_m8n16_widens(num, fmt):
    instr = f"ldmatrix.sync.aligned.m8n16.x{num}.shared.b8x16.{fmt}"
    out = run(kernel(instr, num)).view(np.uint32).reshape(64, 4)
    widen = widen6 if fmt == "b6x16_p32" else widen4
    for t in range(64):
        w, lane = divmod(t, 32)
        for i in range(num):
            row = widen(matrix_rows(w, i, 8)[lane // 4])
            assert int(out[t, i]) == word(row[4 * (lane % 4):4 * (lane % 4) + 4]), (t, i)


def regs_of(t: int, nregs: int) -> list[int]:
    """The registers the store kernel builds: input word i of thread t xor i*0x11111111."""
    base = DATA.view(np.uint32)
    return [int(base[4 * t + i]) ^ (i * 0x11111111) for i in range(nregs)]


def stored_image(num: int, shape: str, trans: bool) -> np.ndarray:
    """Shared memory after stmatrix (0xA5 where no row was written), by the ISA's fragment rule."""
    img = np.full(1024, 0xA5, dtype=np.uint8)
    for w in range(2):
        for i in range(num):
            if shape == "m8n8":            # 8x8 u16 matrix M; lane l holds M[l/4][2(l%4)+e]
                M = [[0] * 8 for _ in range(8)]
                for lane in range(32):
                    v = regs_of(32 * w + lane, num)[i]
                    for e in range(2):
                        M[lane // 4][2 * (lane % 4) + e] = (v >> (16 * e)) & 0xFFFF
                if trans:
                    M = [[M[c][r] for c in range(8)] for r in range(8)]
                rows = [b"".join(x.to_bytes(2, "little") for x in r) for r in M]
            else:                              # 16x8 bytes R[n][k] (rows b, b+8; cols 2a, 2a+1), stored transposed
                R = [[0] * 8 for _ in range(16)]
                for lane in range(32):
                    a, b = lane % 4, lane // 4
                    v = regs_of(32 * w + lane, num)[i].to_bytes(4, "little")
                    R[b][2 * a], R[b][2 * a + 1], R[b + 8][2 * a], R[b + 8][2 * a + 1] = v
                rows = [bytes(R[n][kk] for n in range(16)) for kk in range(8)]
            for r in range(8):
                off = 512 * w + 16 * row_of_lane(8 * i + r)
                img[off:off + 16] = np.frombuffer(rows[r], dtype=np.uint8)
    return img


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_m8n8_b16(num, trans):
    instr = f"stmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    assert run(kernel(instr, num, store=True)).tolist() == stored_image(num, "m8n8", trans).tolist()


@pytest.mark.parametrize("num", [1, 2, 4])
def test_stmatrix_m16n8_trans_b8(num):
    instr = f"stmatrix.sync.aligned.m16n8.x{num}.trans.shared.b8"
    assert run(kernel(instr, num, store=True)).tolist() == stored_image(num, "m16n8", True).tolist()


def test_ldmatrix_in_a_diverged_warp_is_refused():
    ptx = kernel("ldmatrix.sync.aligned.m8n8.x1.shared.b16", 1).replace(
        "    ldmatrix", "    setp.lt.u32 %p1, %r8, 16;\n    @%p1 bra SKIP;\n    ldmatrix").replace(
        "    ret;", "SKIP:\n    ret;").replace(".reg .b64 %rd<8>;", ".reg .b64 %rd<8>;\n    .reg .pred %p<2>;")
    with pytest.raises(SimError, match="diverged"):
        run(ptx)


def test_ldmatrix_m16n16_without_trans_is_refused():
    with pytest.raises(UnimplementedError, match="requires .trans"):
        SimDevice().load(kernel("ldmatrix.sync.aligned.m16n16.x1.shared.b8", 2))


ASSEMBLE = {
    "ldmatrix_m8n8_x4_trans": kernel("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 4),
    "ldmatrix_m16n16_x2": kernel("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8", 4),
    "ldmatrix_m8n16_x4": kernel("ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b6x16_p32", 4),
    "stmatrix_m16n8_x4": kernel("stmatrix.sync.aligned.m16n8.x4.trans.shared.b8", 4, store=True),
    "ldmatrix_generic": kernel("ldmatrix.sync.aligned.m8n8.x4.b16", 4, generic=True),
}


@pytest.mark.assemble
@pytest.mark.parametrize("name", sorted(ASSEMBLE))
def test_kernels_assemble(name):
    result = assemble(ASSEMBLE[name], "sm_100a")
    assert result.returncode == 0, result.stderr
