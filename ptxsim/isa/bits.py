"""Bit-field instructions: lop3, popc, clz, bfe, bfi, prmt (PTX ISA §9.7.1, §9.7.7)."""

from __future__ import annotations

import numpy as np

from ptxsim.isa.alu import U32, _ops
from ptxsim.ptx.parser import Imm
from ptxsim.ptx.registry import Unsupported, opcode


@opcode("lop3")
def compile_lop3(ins, q, k):
    t = q.take_type(("b32",))
    d, a, b, c, lut = _ops(k, ins, 5)
    if not isinstance(lut, Imm):
        raise Unsupported("lop3 expects an immediate lookup table")
    table = int(lut.value) & 0xFF
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.reader(c, t), k.writer(d, t)

    def run(m, s):
        x, y, z = (np.asarray(r(m, s), dtype=np.uint32) for r in (ra, rb, rc))
        out = np.zeros(np.broadcast(x, y, z).shape, dtype=np.uint32)
        for i in range(8):          # minterm i: a = bit 2, b = bit 1, c = bit 0 (0xF0, 0xCC, 0xAA)
            if table >> i & 1:
                out |= (x if i & 4 else ~x) & (y if i & 2 else ~y) & (z if i & 1 else ~z)
        w(m, s, out)
    return run


@opcode("popc", "clz")
def compile_count(ins, q, k):
    t = q.take_type(("b32", "b64"))
    d, a = _ops(k, ins, 2)
    ra, w = k.reader(a, t), k.writer(d, U32)
    bits = t.bits

    def popc(x):
        x = np.asarray(x).astype(np.uint64)
        n = np.zeros(x.shape, dtype=np.uint32)
        for i in range(bits):
            n += ((x >> np.uint64(i)) & np.uint64(1)).astype(np.uint32)
        return n

    def clz(x):
        x = np.asarray(x).astype(np.uint64)
        n = np.full(x.shape, bits, dtype=np.uint32)
        for i in range(bits):
            n = np.where((x >> np.uint64(i)) & np.uint64(1), np.uint32(bits - 1 - i), n)
        return n
    fn = popc if ins.parts[0] == "popc" else clz
    return lambda m, s: w(m, s, fn(ra(m, s)))


def field_operand_mask(bits: int) -> int:
    """The bits of bfe/bfi's position and length operands that count.  The PTX ISA takes bits
    0-7 of each (pos = b[7:0], len = c[7:0]); the H100 does so for the 32-bit forms but uses the
    whole 32-bit operand for the .u64/.s64/.b64 forms (measured: h100-battery alu64, bfe.u64,
    bfe.s64 and bfi.b64 with random operands, 1024 of 1024 threads; docs/sim.md)."""
    return 0xFF if bits == 32 else 0xFFFFFFFF


@opcode("bfe")
def compile_bfe(ins, q, k):
    t = q.take_type(("u32", "s32", "u64", "s64"))
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, t), k.reader(b, U32), k.reader(c, U32), k.writer(d, t)
    bits = t.bits
    used = field_operand_mask(bits)

    def run(m, s):       # PTX ISA bfe pseudo-code: bits past the field or the msb take sbit
        x = np.asarray(ra(m, s)).astype(t.udtype).astype(np.uint64)
        pos = np.asarray(rb(m, s)).astype(np.int64) & used
        ln = np.asarray(rc(m, s)).astype(np.int64) & used
        eff = np.where(pos >= bits, 0, np.minimum(ln, bits - np.minimum(pos, bits)))
        mask = np.where(eff >= 64, np.uint64(2**64 - 1),
                        (np.uint64(1) << np.minimum(eff, 63).astype(np.uint64)) - np.uint64(1))
        field = (x >> np.minimum(pos, 63).astype(np.uint64)) & mask
        if t.kind == "s":
            at = np.minimum(pos + ln - 1, bits - 1).astype(np.uint64)
            sbit = np.where(ln == 0, np.uint64(0), (x >> at) & np.uint64(1))
            field = np.where(sbit == 1, field | ~mask, field)
        w(m, s, (field & np.uint64(t.mask)).astype(t.udtype).view(t.dtype))
    return run


@opcode("bfi")
def compile_bfi(ins, q, k):
    t = q.take_type(("b32", "b64"))
    d, f, b, c, ln = _ops(k, ins, 5)
    rf, rb, rc, rl, w = k.reader(f, t), k.reader(b, t), k.reader(c, U32), k.reader(ln, U32), k.writer(d, t)
    bits = t.bits
    used = np.uint64(field_operand_mask(bits))

    def run(m, s):
        fv = np.asarray(rf(m, s)).astype(np.uint64)
        bv = np.asarray(rb(m, s)).astype(np.uint64)
        pos = np.asarray(rc(m, s)).astype(np.uint64) & used
        n = np.minimum(np.asarray(rl(m, s)).astype(np.uint64) & used, np.uint64(bits))
        n = np.where(pos >= bits, np.uint64(0), np.minimum(n, np.uint64(bits) - np.minimum(pos, np.uint64(bits))))
        mask = np.where(n >= 64, np.uint64(2**64 - 1), (np.uint64(1) << np.minimum(n, np.uint64(63))) - np.uint64(1))
        p = np.minimum(pos, np.uint64(63))
        out = (bv & ~(mask << p)) | ((fv & mask) << p)
        w(m, s, t.from_u64(out))
    return run


#: prmt's special modes (PTX ISA prmt): for each mode, the four byte selectors (d.b0..d.b3, numbering
#: the bytes of {b, a} as 7..0) that c[1:0] = 0..3 choose; written as the generic selector c.
PRMT_MODES = {
    "f4e": (0x3210, 0x4321, 0x5432, 0x6543),    # forward 4 extract
    "b4e": (0x5670, 0x6701, 0x7012, 0x0123),    # backward 4 extract
    "rc8": (0x0000, 0x1111, 0x2222, 0x3333),    # replicate byte
    "ecl": (0x3210, 0x3211, 0x3222, 0x3333),    # edge clamp left
    "ecr": (0x0000, 0x1110, 0x2210, 0x3210),    # edge clamp right
    "rc16": (0x1010, 0x3232, 0x1010, 0x3232),   # replicate half-word
}


def permute_bytes(src, sel, sign_replicate: bool):
    """Byte i of the result is byte sel.nibble[i] & 7 of the 8-byte ``src``; with
    ``sign_replicate`` (the generic form) a selector with bit 3 set gives that byte's sign bit
    copied into all 8 bits."""
    out = np.zeros(np.broadcast(src, sel).shape, dtype=np.uint64)
    for i in range(4):
        nib = (sel >> np.uint64(4 * i)) & np.uint64(0xF)
        byte = (src >> ((nib & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
        if sign_replicate:
            byte = np.where(nib & np.uint64(8), np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
        out |= byte << np.uint64(8 * i)
    return out


@opcode("prmt")
def compile_prmt(ins, q, k):
    t = q.take_type(("b32",))
    mode = q.take(*PRMT_MODES)
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.reader(c, U32), k.writer(d, t)
    table = None if mode is None else np.array(PRMT_MODES[mode], dtype=np.uint64)

    def run(m, s):
        src = (np.asarray(rb(m, s)).astype(np.uint64) << np.uint64(32)) | np.asarray(ra(m, s)).astype(np.uint64)
        sel = np.asarray(rc(m, s)).astype(np.uint64)
        if table is not None:
            sel = table[(sel & np.uint64(3)).astype(np.intp)]
        w(m, s, permute_bytes(src, sel, sign_replicate=table is None).astype(np.uint32))
    return run
