"""The ALU battery: 179 scalar and packed 32-bit sequences (f32 in four rounding modes, ftz/sat,
f16x2/bf16x2, cvt, integer, bit and byte ops; :data:`ALU32_OPS`), every thread runs every one on
its own three 32-bit inputs.

The kernel is the h100-alu kernel (``diff``, measured on an H100 on 2026-11-26) with each op line
wrapped in ``// @op K NAME`` ... ``// @end K`` markers, so that a device refusing one form still
runs the others; op ``k`` writes the 4-byte word ``out[(gid * 179 + k)]``.
"""

from __future__ import annotations

import numpy as np

from conformance.battery.alu32_ops import ALU32_OPS
from conformance.battery.spec import Battery, buf_in, buf_out, p_buf, p_val

THREADS, BLOCK = 8192, 256
HEADER32 = ".version 8.7\n.target sm_90\n.address_size 64\n"
PROLOGUE = """.visible .entry alu32(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po, .param .u32 n)
{
  .reg .b32 %ua, %ub, %uc, %r, %r2; .reg .f32 %fa, %fb, %fc, %fr; .reg .b16 %h1, %h2, %h3, %h4, %hz, %rs1;
  .reg .f64 %da, %db, %dr; .reg .b64 %dl, %a64, %b64, %c64, %o64, %off; .reg .pred %p1, %p2, %pn; .reg .u32 %gid, %n, %nt;
  mov.u32 %gid, %tid.x; mov.u32 %r, %ctaid.x; mov.u32 %nt, %ntid.x; mad.lo.u32 %gid, %r, %nt, %gid;
  ld.param.u32 %n, [n]; setp.ge.u32 %pn, %gid, %n; @%pn bra DONE;
  ld.param.u64 %a64, [pa]; ld.param.u64 %b64, [pb]; ld.param.u64 %c64, [pc]; ld.param.u64 %o64, [po];
  mul.wide.u32 %off, %gid, 4; add.u64 %a64, %a64, %off; add.u64 %b64, %b64, %off; add.u64 %c64, %c64, %off;
  ld.global.u32 %ua, [%a64]; ld.global.u32 %ub, [%b64]; ld.global.u32 %uc, [%c64];
  mov.b32 %fa, %ua; mov.b32 %fb, %ub; mov.b32 %fc, %uc; mov.b16 %hz, 0;
  mul.wide.u32 %off, %gid, STRIDE; add.u64 %o64, %o64, %off;
"""

#: f32 values the ops are most likely to treat specially: zeros, infinities, NaNs (quiet, signalling,
#: with payloads), subnormal and normal limits, one, rounding and conversion boundaries, and
#: f16x2/bf16x2 pairs of the same kinds
SPECIAL32 = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FA00000, 0x7FC00001,
             0xFF800001, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
             0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0x3EFFFFFF, 0x3FC00000, 0x4B000000, 0x4B7FFFFF,
             0x4F000000, 0x4F800000, 0xCF000000, 0xCF000001, 0x477FE000, 0x477FF000, 0x33000000, 0x387FC000,
             0x38800000, 0x7C007C00, 0xFC00FC00, 0x7E007E01, 0x7F807F80, 0x7FC17FC1, 0x00010001, 0x80018001,
             0x3C003C00, 0x3F803F80, 0x7BFF7BFF, 0x7F7F7F7F, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, 0x0000FFFF,
             0xFFFF0000, 0x00000020, 0x0000001F, 0x00000021)


def inputs32(rng, n: int) -> list[np.ndarray]:
    """Three u32 columns: random words, f32 near one, specials, f32 subnormals, small integers,
    small negative integers, random f16x2/bf16x2 pairs near one; plus cancellation rows (b = a with
    its low bits flipped, or -a)."""
    cols = []
    for _ in range(3):
        v = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        kind = rng.integers(0, 9, n)
        sign = rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31)
        near = sign | (rng.integers(120, 135, n).astype(np.uint32) << np.uint32(23)) | \
            rng.integers(0, 2**23, n).astype(np.uint32)
        sp = np.array(SPECIAL32, dtype=np.uint32)
        v = np.where(kind == 1, near, v)
        v = np.where(kind == 2, sp[rng.integers(0, len(sp), n)], v)
        v = np.where(kind == 3, sign | rng.integers(1, 2**23, n).astype(np.uint32), v)
        v = np.where(kind == 4, rng.integers(0, 64, n).astype(np.uint32), v)
        v = np.where(kind == 5, (-rng.integers(1, 64, n)).astype(np.int64).astype(np.uint32), v)
        halves = (rng.integers(0x3000, 0x4400, n).astype(np.uint32) << np.uint32(16)) | \
            rng.integers(0x3000, 0x4400, n).astype(np.uint32)
        half_signs = (rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31)) | \
            (rng.integers(0, 2, n).astype(np.uint32) << np.uint32(15))
        v = np.where(kind == 6, halves | half_signs, v)
        cols.append(v.astype(np.uint32))
    idx = rng.integers(0, n, n // 16)
    cols[1][idx] = cols[0][idx] ^ rng.integers(0, 16, len(idx)).astype(np.uint32)
    idx = rng.integers(0, n, n // 32)
    cols[1][idx] = cols[0][idx] ^ np.uint32(1 << 31)
    return cols


def alu32_ptx() -> str:
    stride = 4 * len(ALU32_OPS)
    blocks = []
    for k, (name, body) in enumerate(ALU32_OPS):
        line = body.replace("{off}", str(4 * k))
        blocks.append(f"  // @op {k} {name}\n  {{ {line} }}\n  // @end {k}")
    return HEADER32 + "\n" + PROLOGUE.replace("STRIDE", str(stride)) + "\n".join(blocks) + "\nDONE:\n  ret;\n}\n"


def add_alu32(bat: Battery) -> None:
    f = bat.ptx("alu32.ptx", alu32_ptx())
    names = [bat.npy(f"alu32_{col}.npy", arr) for col, arr in zip("abc", inputs32(bat.rng, THREADS), strict=True)]
    nops = len(ALU32_OPS)
    bat.case(name="alu32", ptx=f, kernel="alu32", grid=[THREADS // BLOCK], block=[BLOCK],
             buffers=[buf_in("a", names[0]), buf_in("b", names[1]), buf_in("c", names[2]),
                      buf_out("out", THREADS * nops * 4)],
             params=[p_buf("a"), p_buf("b"), p_buf("c"), p_buf("out"), p_val("u32", THREADS)],
             sections=[{"name": "ops", "offset": 0, "bytes": THREADS * nops * 4, "dtype": "u32",
                        "shape": [THREADS, nops, 1], "kind": "per_thread_ops", "inputs": names}],
             ops=[name for name, _ in ALU32_OPS],
             note="the h100-alu sequences: f32 add/sub/mul/fma/div/sqrt/rcp and cvt in rn/rz/rm/rp, ftz/sat, "
                  "min/max (.NaN), testp, setp/set, f16x2/bf16x2 arithmetic, approximate forms, integer and "
                  "bit/byte ops; one op block each")
