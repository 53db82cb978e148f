"""Per-thread op-block kernels: every thread runs every ``// @op K NAME`` block."""

from __future__ import annotations

import numpy as np

from conformance.battery.spec import HEADER, Battery, buf_in, buf_out, p_buf

# 3. Per-thread op blocks: every thread runs every `// @op` block; block k writes SLOT bytes at
#    out + (gid * nops + k) * SLOT. Registers: %xa %xb %xc (u64 inputs a, b, c), their views
#    %ua/%uah (low/high 32 bits), %fa (f32 of the low word), %da (f64), %ha (low 16 bits), %pa
#    (bit 0 of %ua), %pb, %pc; %mb (this thread's 256-byte slice of input m), %o (the slot).
#    Results: %rr (b64) or %rs/%rs2 (b32), %hs (b16), %ps (pred), %fs (f32), %ds (f64) with a
#    kind that says how they are widened into the 8-byte slot.
# ================================================================================================

STORE = {
    "R64": "st.global.b64 [%o], %rr;",
    "R32": "cvt.u64.u32 %rr, %rs; st.global.b64 [%o], %rr;",
    "R32x2": "mov.b64 %rr, {%rs, %rs2}; st.global.b64 [%o], %rr;",
    "RH": "mov.b32 %rs, {%hs, %hz}; cvt.u64.u32 %rr, %rs; st.global.b64 [%o], %rr;",
    "RP": "selp.b64 %rr, 1, 0, %ps; st.global.b64 [%o], %rr;",
    "RF": "mov.b32 %rs, %fs; cvt.u64.u32 %rr, %rs; st.global.b64 [%o], %rr;",
    "RD": "mov.b64 %rr, %ds; st.global.b64 [%o], %rr;",
    "RSP": "selp.u32 %rs2, 1, 0, %ps; mov.b64 %rr, {%rs, %rs2}; st.global.b64 [%o], %rr;",
    "NONE": "",
}


#: %xa %xb %xc := the thread's (%gid) u64 words of the inputs a, b, c (parameters pa, pb, pc)
OPERAND_LOADS = "  mul.wide.u32 %rd4, %gid, 8;\n" + "\n".join(
    f"  ld.param.u64 %rd1, [p{x}];\n  cvta.to.global.u64 %rd1, %rd1;\n  add.u64 %rd1, %rd1, %rd4;\n  ld.global.u64 %x{x}, [%rd1];"
    for x in "abc")

#: the views of the operands an op block reads: %ua %ub %uc and %uah %ubh %uch (low and high 32 bits),
#: %da %db %dc (f64), %fa %fb %fc (the low words as f32), %ha %hb %hc (low 16 bits), and %hz = 0
OPERAND_VIEWS = """  mov.b64 {%ua, %uah}, %xa;
  mov.b64 {%ub, %ubh}, %xb;
  mov.b64 {%uc, %uch}, %xc;
  mov.b64 %da, %xa;
  mov.b64 %db, %xb;
  mov.b64 %dc, %xc;
  mov.b32 %fa, %ua;
  mov.b32 %fb, %ub;
  mov.b32 %fc, %uc;
  mov.b32 {%ha, %h7}, %ua;
  mov.b32 {%hb, %h7}, %ub;
  mov.b32 {%hc, %h7}, %uc;
  mov.b16 %hz, 0;"""


def op_table(kind: str):
    """An empty op table (rows ``(name, body, result kind)``, the kernel's ``// @op`` blocks in order)
    and the function that adds a row: ``o(name, body)``, of result ``kind`` unless the call names another."""
    table = []
    def o(name: str, body: str, kind: str = kind) -> None:
        table.append((name, body, kind))
    return table, o


def opblock_ptx(name: str, ops, slot: int, shared_bytes: int = 0, extra_decl: str = "",
                prologue: str = "") -> str:
    nops = len(ops)
    blocks = []
    for k, op in enumerate(ops):
        oname, body, kind = op
        body = body.replace("$L_", f"$L{k}_")
        blocks.append(f"  // @op {k} {oname}\n  {{\n  add.u64 %o, %obase, {k * slot};\n  {body}\n  {STORE[kind]}\n  }}\n"
                      f"  // @end {k}")
    sdecl = f".shared .align 16 .b8 sbuf[{shared_bytes}];\n" if shared_bytes else ""
    nl = "\n"
    return HEADER + f"""
{sdecl}{extra_decl}
.visible .entry {name}(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pm, .param .u64 po)
{{
  .reg .pred %p<8>, %pa, %pb, %pc, %ps;
  .reg .b16 %h<8>, %ha, %hb, %hc, %hz, %hs;
  .reg .b32 %r<16>, %ua, %ub, %uc, %uah, %ubh, %uch, %gid, %tidx, %lane, %fm, %warp, %rs, %rs2, %rsb;
  .reg .f32 %f<8>, %fa, %fb, %fc, %fs;
  .reg .b64 %rd<16>, %xa, %xb, %xc, %rr, %o, %obase, %mb, %rdsb;
  .reg .f64 %d<8>, %da, %db, %dc, %ds;
  activemask.b32 %fm;
  mov.u32 %tidx, %tid.x;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mad.lo.u32 %gid, %r1, %r2, %tidx;
  mov.u32 %lane, %laneid;
  shr.u32 %warp, %tidx, 5;
{OPERAND_LOADS}
  ld.param.u64 %mb, [pm];
  cvta.to.global.u64 %mb, %mb;
  mul.wide.u32 %rd4, %gid, 256;
  add.u64 %mb, %mb, %rd4;
  ld.param.u64 %obase, [po];
  cvta.to.global.u64 %obase, %obase;
  mul.wide.u32 %rd4, %gid, {nops * slot};
  add.u64 %obase, %obase, %rd4;
{OPERAND_VIEWS}
  and.b32 %r1, %ua, 1;
  setp.ne.u32 %pa, %r1, 0;
  and.b32 %r1, %ub, 1;
  setp.ne.u32 %pb, %r1, 0;
  and.b32 %r1, %uc, 1;
  setp.ne.u32 %pc, %r1, 0;
{prologue}
{nl.join(blocks)}
  ret;
}}
"""


SPECIAL64 = [0, 1, 2, 3, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF,
             0x00000000FFFFFFFF, 0x0000000100000000, 0x0000000080000000, 0x000000007FFFFFFF, 0xFFFFFFFF80000000,
             0x8000000000000001, 0x00000000000000FF, 0x0000000000000080, 0x000000000000FFFF, 0x0000000000008000,
             # f64 specials
             0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF8000000000123,
             0x7FF0000000000001, 0xFFF8000000000000, 0x7FF4000000000000, 0x0000000000000001, 0x000FFFFFFFFFFFFF,
             0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000,
             0x3FF8000000000000, 0x4330000000000000, 0x4340000000000000, 0x43E0000000000000, 0x43F0000000000000,
             0xC3E0000000000000, 0x41E0000000000000, 0x41F0000000000000, 0xC1E0000000000000, 0x41DFFFFFFFE00000,
             0x41EFFFFFFFE00000, 0xBFE0000000000000, 0x3FDFFFFFFFFFFFFF, 0x40EFFC0000000000, 0x40EFFE0000000000,
             0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x36A0000000000000, 0x3810000000000000, 0x380FFFFFC0000000,
             0x43DFFFFFFFFFFFFF, 0x43EFFFFFFFFFFFFF, 0xC3E0000000000001, 0x4004000000000000, 0xC004000000000000,
             0x3FF0000000000001, 0x3CB0000000000000, 0xC1E0000000100000, 0x41E0000000100000]


def inputs64(rng, n: int):
    """Three u64 columns: random words, near-one doubles, specials (integer limits, f64 specials,
    conversion boundaries), small shift amounts, small negative ints, small integer doubles,
    x.5-ish doubles, f64 subnormals, sign-extended s32, f32 specials in the low word."""
    f32sp = np.array([0x0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0xFFC00001, 0x1, 0x807FFFFF,
                      0x00800000, 0x7F7FFFFF, 0x3F800000, 0xBF800000, 0x4B000000, 0x4F000000, 0xCF000000, 0x477FE000,
                      0x3F000000, 0x7C007C00, 0xFC00FC00, 0x7E007E01, 0x00010001, 0x80018001, 0x7BFF7BFF], np.uint64)
    sp = np.array(SPECIAL64, dtype=np.uint64)
    cols = []
    for _ in range(3):
        v = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
        kind = rng.integers(0, 11, n)
        near = (rng.integers(0, 2**52, n, dtype=np.uint64) | (rng.integers(1023 - 30, 1023 + 30, n).astype(np.uint64) << np.uint64(52))
                | (rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)))
        v = np.where(kind == 1, near, v)
        v = np.where(kind == 2, sp[rng.integers(0, len(sp), n)], v)
        v = np.where(kind == 3, rng.integers(0, 72, n).astype(np.uint64), v)
        v = np.where(kind == 4, (-rng.integers(1, 72, n)).astype(np.int64).view(np.uint64), v)
        v = np.where(kind == 5, rng.integers(-2000, 2000, n).astype(np.float64).view(np.uint64), v)
        half = (rng.integers(-2**40, 2**40, n) + rng.choice([0.5, 0.25, 0.75, 0.49999999999, 0.5000000001], n))
        v = np.where(kind == 6, half.astype(np.float64).view(np.uint64), v)
        v = np.where(kind == 7, rng.integers(0, 2**52, n, dtype=np.uint64) | (rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)), v)
        v = np.where(kind == 8, rng.integers(-2**31, 2**31, n).astype(np.int64).view(np.uint64), v)
        v = np.where(kind == 9, (rng.integers(0, 2**32, n, dtype=np.uint64) << np.uint64(32)) | f32sp[rng.integers(0, len(f32sp), n)], v)
        cols.append(v.astype(np.uint64))
    idx = rng.integers(0, n, n // 8)            # cancellation rows: b = a with low bits flipped, or -a
    cols[1][idx] = cols[0][idx] ^ rng.integers(0, 64, len(idx)).astype(np.uint64)
    idx = rng.integers(0, n, n // 16)
    cols[1][idx] = cols[0][idx] ^ np.uint64(1 << 63)
    return cols


def add_opblock(bat: Battery, name: str, ops, slot=8, threads=1024, block=128, shared_bytes=0, extra_decl="",
                prologue="", note="", m_bytes_per_thread=0, inputs=None, grid=None) -> None:
    f = bat.ptx(f"{name}.ptx", opblock_ptx(name, ops, slot, shared_bytes, extra_decl, prologue))
    if inputs is None:
        inputs = inputs64(bat.rng, threads)
    names = []
    for col, arr in zip("abc", inputs, strict=False):
        names.append(bat.npy(f"{name}_{col}.npy", arr))
    mfile = bat.npy(f"{name}_m.npy", bat.rng.integers(0, 256, max(threads * m_bytes_per_thread, 16), dtype=np.uint8))
    nops = len(ops)
    bat.case(name=name, ptx=f, kernel=name, grid=grid or [threads // block], block=[block],
             buffers=[buf_in("a", names[0]), buf_in("b", names[1]), buf_in("c", names[2]), buf_in("m", mfile),
                      buf_out("out", threads * nops * slot)],
             params=[p_buf("a"), p_buf("b"), p_buf("c"), p_buf("m"), p_buf("out")],
             ops=[o[0] for o in ops],
             sections=[{"name": "ops", "offset": 0, "bytes": threads * nops * slot,
                        "dtype": "u64" if slot == 8 else "u32", "shape": [threads, nops, slot // (8 if slot == 8 else 4)],
                        "kind": "per_thread_ops", "inputs": names, "m": mfile}],
             note=note)


# ---- 64-bit integer -----------------------------------------------------------------------------
