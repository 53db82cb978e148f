"""Op blocks of warp collectives, ldmatrix/stmatrix and cp.async."""

from __future__ import annotations

import numpy as np

from conformance.battery.gen_opblock import add_opblock, inputs64, op_table, opblock_ptx
from conformance.battery.spec import WAIT_BOUND, Battery, buf_in, buf_out, p_buf

# ---- warp collectives ---------------------------------------------------------------------------

def inputs_warp(rng, n: int):
    """a: random words whose bit 0 (vote predicate %pa) has a per-warp density (warp%4: all ones,
    all zeros, 50 %, 90 %) and whose bits 8-9 (match values) are per-warp constant / 4 values /
    2 values / constant; b: shuffle lanes/offsets 0..63 in the low byte (row indices above);
    c: random."""
    a = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2)
    warp = np.arange(n) // 32
    bit0 = np.where(warp % 4 == 0, 1, np.where(warp % 4 == 1, 0, np.where(warp % 4 == 2, rng.integers(0, 2, n),
                                                                           (rng.random(n) < 0.9).astype(int))))
    m = np.where(warp % 4 == 0, 0, np.where(warp % 4 == 1, rng.integers(0, 4, n), np.where(warp % 4 == 2, rng.integers(0, 2, n), 3)))
    a = (a & ~np.uint64(0x301)) | bit0.astype(np.uint64) | (m.astype(np.uint64) << np.uint64(8))
    b = (rng.integers(0, 2**56, n, dtype=np.uint64) << np.uint64(8)) | rng.integers(0, 64, n).astype(np.uint64)
    c = rng.integers(0, 2**63, n, dtype=np.uint64)
    return [a, b, c]


def _half(body_lo: str, body_hi: str) -> str:
    return (f"setp.lt.u32 %p1, %lane, 16; @!%p1 bra $L_hi; {body_lo} bra $L_j; $L_hi: {body_hi} $L_j:")


def ops_warp():
    table, o = op_table("RSP")
    cs = {"idx": [0x1F, 0x101F, 0x181F, 0x1C1F, 0x0F, 0x1007], "up": [0x0, 0x1000, 0x1800, 0x1C00, 0x05],
          "down": [0x1F, 0x101F, 0x181F, 0x1C1F, 0x10], "bfly": [0x1F, 0x101F, 0x181F, 0x1C1F, 0x07]}
    for mode, cv in cs.items():
        for c in cv:
            o(f"shfl.{mode} b=rand c=0x{c:x}", f"shfl.sync.{mode}.b32 %rs|%ps, %ua, %ub, 0x{c:x}, 0xffffffff;")
        o(f"shfl.{mode} b=rand per-thread c", f"and.b32 %r1, %uc, 0x1f1f; shfl.sync.{mode}.b32 %rs|%ps, %ua, %ub, %r1, 0xffffffff;")
    for imm in (1, 2, 4, 8, 16):
        o(f"shfl.bfly imm {imm}", f"shfl.sync.bfly.b32 %rs, %ua, {imm}, 0x1f, -1;", "R32")
    o("shfl.down imm 1", "shfl.sync.down.b32 %rs|%ps, %ua, 1, 0x1f, -1;")
    o("shfl.up imm 1", "shfl.sync.up.b32 %rs|%ps, %ua, 1, 0, -1;")
    o("shfl.idx imm 0 / 31", "shfl.sync.idx.b32 %rs, %ua, 0, 0x1f, -1; shfl.sync.idx.b32 %rs2, %uah, 31, 0x1f, -1;", "R32x2")
    o("shfl.down mask=%fm", "shfl.sync.down.b32 %rs|%ps, %ua, 3, 0x1f, %fm;")
    o("shfl.idx f32 operand", "shfl.sync.idx.b32 %f1, %fa, %ub, 0x1f, -1; mov.b32 %rs, %f1;", "R32")
    for mode, c in (("idx", 0x101F), ("up", 0x1000), ("down", 0x101F), ("bfly", 0x101F)):
        bsrc = "and.b32 %r1, %ub, 15;" if mode == "bfly" else "mov.u32 %r1, %ub;"
        o(f"shfl.{mode} half-warps (diverged)", bsrc + " " + _half(
            f"shfl.sync.{mode}.b32 %rs|%ps, %ua, %r1, 0x{c:x}, 0x0000ffff;",
            f"shfl.sync.{mode}.b32 %rs|%ps, %ua, %r1, 0x{c:x}, 0xffff0000;"))
    o("shfl.idx even/odd lanes (diverged)", "and.b32 %r2, %lane, 1; setp.eq.u32 %p1, %r2, 0; and.b32 %r1, %ub, 15; shl.b32 %r1, %r1, 1; "
      "or.b32 %r1, %r1, %r2; @!%p1 bra $L_odd; shfl.sync.idx.b32 %rs|%ps, %ua, %r1, 0x1f, 0x55555555; bra $L_j; "
      "$L_odd: shfl.sync.idx.b32 %rs|%ps, %ua, %r1, 0x1f, 0xaaaaaaaa; $L_j:")
    o("shfl.bfly even/odd lanes (diverged)", "and.b32 %r2, %lane, 1; setp.eq.u32 %p1, %r2, 0; and.b32 %r1, %ub, 15; shl.b32 %r1, %r1, 1; "
      "@!%p1 bra $L_odd; shfl.sync.bfly.b32 %rs|%ps, %ua, %r1, 0x1f, 0x55555555; bra $L_j; "
      "$L_odd: shfl.sync.bfly.b32 %rs|%ps, %ua, %r1, 0x1f, 0xaaaaaaaa; $L_j:")
    o("vote.all", "vote.sync.all.pred %ps, %pa, 0xffffffff; mov.u32 %rs, 0;")
    o("vote.any", "vote.sync.any.pred %ps, %pa, 0xffffffff; mov.u32 %rs, 0;")
    o("vote.uni", "vote.sync.uni.pred %ps, %pa, 0xffffffff; mov.u32 %rs, 0;")
    o("vote.any !p mask=%fm", "vote.sync.any.pred %ps, !%pb, %fm; mov.u32 %rs, 0;")
    o("vote.ballot", "vote.sync.ballot.b32 %rs, %pa, 0xffffffff;", "R32")
    o("vote.ballot !p", "vote.sync.ballot.b32 %rs, !%pa, 0xffffffff;", "R32")
    o("vote.ballot/all half-warps", _half("vote.sync.ballot.b32 %rs, %pb, 0x0000ffff; vote.sync.all.pred %ps, %pa, 0x0000ffff;",
                                          "vote.sync.ballot.b32 %rs, %pb, 0xffff0000; vote.sync.all.pred %ps, %pa, 0xffff0000;"))
    o("vote.ballot/uni subset (ballot mask)", "vote.sync.ballot.b32 %r3, %pb, 0xffffffff; @!%pb bra $L_no; "
      "vote.sync.ballot.b32 %rs, %pa, %r3; vote.sync.uni.pred %ps, %pa, %r3; bra $L_j; "
      "$L_no: mov.u32 %rs, 0x77777777; setp.eq.u32 %ps, %rs, 0; $L_j:")
    o("activemask", "activemask.b32 %rs;", "R32")
    o("activemask diverged", "and.b32 %r1, %ua, 0x100; setp.ne.u32 %p1, %r1, 0; @%p1 bra $L_t; activemask.b32 %rs; "
      "mov.u32 %rs2, 0; bra $L_j; $L_t: activemask.b32 %rs; mov.u32 %rs2, 1; $L_j:", "R32x2")
    o("elect.sync full", "elect.sync %rs|%ps, 0xffffffff;")
    o("elect.sync mask=%fm", "elect.sync %rs|%ps, %fm;")
    o("elect.sync half-warps", _half("elect.sync %rs|%ps, 0x0000ffff;", "elect.sync %rs|%ps, 0xffff0000;"))
    o("elect.sync subset", "vote.sync.ballot.b32 %r3, %pb, 0xffffffff; @!%pb bra $L_no; elect.sync %rs|%ps, %r3; bra $L_j; "
      "$L_no: mov.u32 %rs, 99; setp.eq.u32 %ps, %rs, 0; $L_j:")
    o("elect.sync _|p", "elect.sync _|%ps, 0xffffffff; mov.u32 %rs, 7;")
    o("bar.warp.sync + shared exchange", "mov.u32 %r5, sbuf; shl.b32 %r6, %tidx, 2; add.u32 %r6, %r5, %r6; st.shared.u32 [%r6], %ua; "
      "bar.warp.sync 0xffffffff; xor.b32 %r7, %lane, 5; sub.u32 %r8, %tidx, %lane; add.u32 %r8, %r8, %r7; shl.b32 %r8, %r8, 2; "
      "add.u32 %r8, %r5, %r8; ld.shared.u32 %rs, [%r8]; bar.warp.sync 0xffffffff; mov.u32 %rs2, 0;", "R32x2")
    o("bar.warp.sync half-warps + exchange", "mov.u32 %r5, sbuf; shl.b32 %r6, %tidx, 2; add.u32 %r6, %r5, %r6; st.shared.u32 [%r6], %ub; "
      "xor.b32 %r7, %lane, 3; sub.u32 %r8, %tidx, %lane; add.u32 %r8, %r8, %r7; shl.b32 %r8, %r8, 2; add.u32 %r8, %r5, %r8; " +
      _half("bar.warp.sync 0x0000ffff; ld.shared.u32 %rs, [%r8]; bar.warp.sync 0x0000ffff;",
            "bar.warp.sync 0xffff0000; ld.shared.u32 %rs, [%r8]; bar.warp.sync 0xffff0000;") + " mov.u32 %rs2, 0;", "R32x2")
    o("match.any.b32 4 values", "and.b32 %r1, %ua, 0x300; match.any.sync.b32 %rs, %r1, 0xffffffff;", "R32")
    o("match.any.b32 random", "match.any.sync.b32 %rs, %uc, 0xffffffff;", "R32")
    o("match.any.b64", "and.b64 %rd1, %xa, 0x300; shl.b64 %rd1, %rd1, 30; or.b64 %rd1, %rd1, 5; match.any.sync.b64 %rs, %rd1, 0xffffffff;", "R32")
    o("match.all.b32", "and.b32 %r1, %ua, 0x300; match.all.sync.b32 %rs|%ps, %r1, 0xffffffff;")
    o("match.all.b64", "and.b64 %rd1, %xa, 0x100; shl.b64 %rd1, %rd1, 40; match.all.sync.b64 %rs|%ps, %rd1, 0xffffffff;")
    o("match.all.b32 no pred", "and.b32 %r1, %ua, 0x200; match.all.sync.b32 %rs, %r1, 0xffffffff; mov.u32 %rs2, 0;", "R32x2")
    o("match.any half-warps", "and.b32 %r1, %ua, 0x300; " + _half("match.any.sync.b32 %rs, %r1, 0x0000ffff;",
                                                                 "match.any.sync.b32 %rs, %r1, 0xffff0000;") + " mov.u32 %rs2, 0;", "R32x2")
    for op, t in (("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"),
                  ("and", "b32"), ("or", "b32"), ("xor", "b32")):
        o(f"redux.sync.{op}.{t}", f"redux.sync.{op}.{t} %rs, %uc, 0xffffffff;", "R32")
    o("redux.sync.add.u32 small", "and.b32 %r1, %ua, 0xff; redux.sync.add.u32 %rs, %r1, 0xffffffff;", "R32")
    o("redux.sync.min.s32 half-warps", _half("redux.sync.min.s32 %rs, %ub, 0x0000ffff;", "redux.sync.min.s32 %rs, %ub, 0xffff0000;")
      + " mov.u32 %rs2, 0;", "R32x2")
    o("redux.sync.or.b32 mask=%fm", "redux.sync.or.b32 %rs, %ub, %fm;", "R32")
    return table


def ops_warp_partial():
    """For a 48-thread block (warp 1 has lanes 0..15): masks from activemask at entry (%fm),
    shuffle clamps <= 15 so no source lane is missing."""
    table, o = op_table("RSP")
    o("activemask at entry", "mov.u32 %rs, %fm; activemask.b32 %rs2;", "R32x2")
    o("vote.ballot mask=%fm", "vote.sync.ballot.b32 %rs, %pa, %fm;", "R32")
    o("vote.all/any mask=%fm", "vote.sync.all.pred %p1, %pb, %fm; vote.sync.any.pred %p2, %pb, %fm; selp.u32 %rs, 1, 0, %p1; "
      "selp.u32 %rs2, 1, 0, %p2;", "R32x2")
    o("vote.uni mask=%fm", "vote.sync.uni.pred %ps, %pa, %fm; mov.u32 %rs, 0;")
    for mode, c in (("idx", 0x0F), ("up", 0x00), ("down", 0x0F), ("bfly", 0x0F)):
        o(f"shfl.{mode} c=0x{c:x} mask=%fm", f"shfl.sync.{mode}.b32 %rs|%ps, %ua, %ub, 0x{c:x}, %fm;")
    o("elect.sync mask=%fm", "elect.sync %rs|%ps, %fm;")
    o("bar.warp.sync %fm + exchange", "mov.u32 %r5, sbuf; shl.b32 %r6, %tidx, 2; add.u32 %r6, %r5, %r6; st.shared.u32 [%r6], %ua; "
      "bar.warp.sync %fm; xor.b32 %r7, %lane, 5; sub.u32 %r8, %tidx, %lane; add.u32 %r8, %r8, %r7; shl.b32 %r8, %r8, 2; "
      "add.u32 %r8, %r5, %r8; ld.shared.u32 %rs, [%r8]; bar.warp.sync %fm; mov.u32 %rs2, 0;", "R32x2")
    o("redux.sync.add.u32 mask=%fm", "redux.sync.add.u32 %rs, %ua, %fm;", "R32")
    o("match.any.b32 mask=%fm", "and.b32 %r1, %ua, 0x300; match.any.sync.b32 %rs, %r1, %fm;", "R32")
    return table


def add_warp(bat: Battery) -> None:
    add_opblock(bat, "warp", ops_warp(), threads=256, shared_bytes=512, inputs=inputs_warp(bat.rng, 256),
                note="shfl.sync idx/up/down/bfly (random and standard c, per-thread c, immediates, half-warp and "
                     "even/odd diverged groups with partial masks), vote.sync all/any/uni/ballot (full, negated, "
                     "half-warps, ballot-made subsets), activemask (converged, diverged), elect.sync, bar.warp.sync "
                     "with shared exchange, match.any/all.sync b32/b64, redux.sync; slot = (result, predicate)")
    add_opblock(bat, "warp_partial", ops_warp_partial(), threads=48, block=48, shared_bytes=192,
                inputs=inputs_warp(bat.rng, 48),
                note="one CTA of 48 threads: warp 1 has 16 lanes; warp collectives with membermask = activemask at entry")


# ---- ldmatrix / stmatrix (32-byte slots) -----------------------------------------------------------

def ops_matrix():
    table = []
    lds = [("x1", False), ("x2", False), ("x4", False), ("x1", True), ("x2", True), ("x4", True)]
    for k, (num, trans) in enumerate(lds + [("x4", False), ("x4", True)]):
        generic = k >= 6
        n = int(num[1])
        regs = ", ".join(f"%r{2 + i}" for i in range(n))
        pad = " ".join(f"mov.u32 %r{2 + i}, 0;" for i in range(n, 4))
        addr = ("cvt.u64.u32 %rd2, %r1; cvta.shared.u64 %rd2, %rd2; " if generic else "")
        name = f"ldmatrix.m8n8.{num}{'.trans' if trans else ''}{' generic' if generic else ''}.b16"
        instr = (f"ldmatrix.sync.aligned.m8n8.{num}{'.trans' if trans else ''}{'' if generic else '.shared'}.b16 "
                 f"{{{regs}}}, [{'%rd2' if generic else '%r1'}];")
        table.append((name, f"shr.u64 %rd1, %xb, {8 * k}; cvt.u32.u64 %r1, %rd1; and.b32 %r1, %r1, 255; shl.b32 %r1, %r1, 4; "
                        f"add.u32 %r1, %r1, %rimg; {addr}{instr} {pad} st.global.v4.b32 [%o], {{%r2, %r3, %r4, %r5}};", "NONE"))
    sts = [("x1", False), ("x2", False), ("x4", False), ("x1", True), ("x2", True), ("x4", True), ("x4", False)]
    for j, (num, trans) in enumerate(sts):
        generic = j == 6
        n = int(num[1])
        regs = ", ".join(["%ua", "%uah", "%uc", "%uch"][:n])
        name = f"stmatrix.m8n8.{num}{'.trans' if trans else ''}{' generic' if generic else ''}.b16"
        # region of (warp, j): 1 KiB at %rst + (warp * 7 + j) * 1024; lane l supplies row (5 l + 7 j + 3 warp) % 64
        body = (f"mad.lo.u32 %r1, %warp, 7, {j}; shl.b32 %r1, %r1, 10; add.u32 %r1, %r1, %rst; "   # region base
                f"shl.b32 %r2, %lane, 5; add.u32 %r2, %r2, %r1; mad.lo.u32 %r3, %lane, 0x01010101, 0xEE00EE00; "
                f"add.u32 %r4, %r3, 0x10001; st.shared.v4.b32 [%r2], {{%r3, %r4, %r3, %r4}}; "
                f"st.shared.v4.b32 [%r2+16], {{%r4, %r3, %r4, %r3}}; bar.warp.sync 0xffffffff; "
                f"mad.lo.u32 %r5, %lane, 5, {7 * j}; mad.lo.u32 %r5, %warp, 3, %r5; and.b32 %r5, %r5, 63; shl.b32 %r5, %r5, 4; "
                f"add.u32 %r5, %r5, %r1; ")
        if generic:
            body += (f"cvt.u64.u32 %rd2, %r5; cvta.shared.u64 %rd2, %rd2; "
                     f"stmatrix.sync.aligned.m8n8.{num}{'.trans' if trans else ''}.b16 [%rd2], {{{regs}}}; ")
        else:
            body += f"stmatrix.sync.aligned.m8n8.{num}{'.trans' if trans else ''}.shared.b16 [%r5], {{{regs}}}; "
        body += ("bar.warp.sync 0xffffffff; ld.shared.v4.b32 {%r6, %r7, %r8, %r9}, [%r2]; st.global.v4.b32 [%o], {%r6, %r7, %r8, %r9}; "
                 "ld.shared.v4.b32 {%r6, %r7, %r8, %r9}, [%r2+16]; st.global.v4.b32 [%o+16], {%r6, %r7, %r8, %r9};")
        table.append((name, body, "NONE"))
    return table


MATRIX_PROLOGUE = """  .reg .b32 %rimg, %rst;
  mov.u32 %rimg, sbuf;
  add.u32 %rst, %rimg, 4096;
  // the 4 KiB image: thread t copies bytes 32t..32t+31 of m (distinct 16-bit values)
  ld.param.u64 %rd5, [pm];
  cvta.to.global.u64 %rd5, %rd5;
  mul.wide.u32 %rd6, %tidx, 32;
  add.u64 %rd5, %rd5, %rd6;
  ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd5];
  shl.b32 %r6, %tidx, 5;
  add.u32 %r6, %r6, %rimg;
  st.shared.v4.b32 [%r6], {%r2, %r3, %r4, %r5};
  ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd5+16];
  st.shared.v4.b32 [%r6+16], {%r2, %r3, %r4, %r5};
  bar.sync 0;"""


def add_matrix(bat: Battery) -> None:
    rng = bat.rng
    n = 128
    ops = ops_matrix()
    f = bat.ptx("matrix.ptx", opblock_ptx("matrix", ops, 32, 4096 + 4 * 7 * 1024, "", MATRIX_PROLOGUE))
    a, b, c = inputs64(rng, n)
    b = rng.integers(0, 2**63, n, dtype=np.uint64)            # 8 random row indices per lane (one byte each)
    img = rng.permutation(65536)[:2048].astype(np.uint16)      # distinct 16-bit elements
    m = np.zeros(n * 256, np.uint8)
    m[:4096] = img.view(np.uint8)
    names = [bat.npy(f"matrix_{x}.npy", arr) for x, arr in zip("abc", (a, b, c), strict=True)]
    mfile = bat.npy("matrix_m.npy", m)
    bat.case(name="matrix", ptx=f, kernel="matrix", grid=[1], block=[n],
             buffers=[buf_in("a", names[0]), buf_in("b", names[1]), buf_in("c", names[2]), buf_in("m", mfile),
                      buf_out("out", n * len(ops) * 32)],
             params=[p_buf("a"), p_buf("b"), p_buf("c"), p_buf("m"), p_buf("out")], ops=[o[0] for o in ops],
             sections=[{"name": "ops", "offset": 0, "bytes": n * len(ops) * 32, "dtype": "u32",
                        "shape": [n, len(ops), 8], "kind": "per_thread_ops", "inputs": names, "m": mfile}],
             note="ldmatrix .m8n8 .x1/.x2/.x4 with and without .trans (shared and generic addresses) from a 4 KiB "
                  "image of distinct 16-bit values, row of lane l = byte k of b (every register of every lane: "
                  "slot words 0..3); stmatrix .x1/.x2/.x4 (+.trans, generic) of registers (a.lo, a.hi, c.lo, c.hi) "
                  "into a pre-patterned 1 KiB region per warp, rows (5 lane + 7 op + 3 warp) % 64; each lane dumps "
                  "32 bytes of its warp's region (slot words 0..7)")


# ---- cp.async (32-byte slots; a 64-byte shared area per thread) ------------------------------------

def ops_cp_async():
    table, o = op_table("NONE")
    pre = ("mov.u32 %r9, 0xA5A5A5A5; st.shared.v4.b32 [%rsb], {%r9, %r9, %r9, %r9}; st.shared.v4.b32 [%rsb+16], {%r9, %r9, %r9, %r9}; "
           "st.shared.v4.b32 [%rsb+32], {%r9, %r9, %r9, %r9}; st.shared.v4.b32 [%rsb+48], {%r9, %r9, %r9, %r9}; ")
    dump = ("ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4}; "
            "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb+16]; st.global.v4.b32 [%o+16], {%r1, %r2, %r3, %r4};")
    o("ca 4/8/16 + cg 16, wait_all", pre + "cp.async.ca.shared.global [%rsb], [%mb], 4; cp.async.ca.shared.global [%rsb+8], [%mb+8], 8; "
      "cp.async.ca.shared.global [%rsb+16], [%mb+16], 16; cp.async.cg.shared.global [%rsb+48], [%mb+32], 16; cp.async.wait_all; " + dump)
    o("3 groups, wait_group 2 / 0", pre + "cp.async.ca.shared.global [%rsb], [%mb+48], 16; cp.async.commit_group; "
      "cp.async.cg.shared.global [%rsb+16], [%mb+64], 16; cp.async.commit_group; "
      "cp.async.ca.shared.global [%rsb+32], [%mb+80], 8; cp.async.ca.shared.global [%rsb+40], [%mb+92], 4; cp.async.commit_group; "
      "cp.async.wait_group 2; ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4}; "
      "cp.async.wait_group 0; ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb+16]; ld.shared.v4.b32 {%r5, %r6, %r7, %r8}, [%rsb+32]; "
      "xor.b32 %r1, %r1, %r5; xor.b32 %r2, %r2, %r6; xor.b32 %r3, %r3, %r7; xor.b32 %r4, %r4, %r8; "
      "st.global.v4.b32 [%o+16], {%r1, %r2, %r3, %r4};")
    o("src-size zero fill (ca 16/8/4, cg 16)", pre + "cvt.u32.u64 %r1, %xb; and.b32 %r2, %r1, 15; shr.u32 %r3, %r1, 8; and.b32 %r3, %r3, 7; "
      "shr.u32 %r4, %r1, 16; and.b32 %r4, %r4, 3; shr.u32 %r5, %r1, 24; and.b32 %r5, %r5, 15; "
      "cp.async.ca.shared.global [%rsb], [%mb+96], 16, %r2; cp.async.ca.shared.global [%rsb+16], [%mb+112], 8, %r3; "
      "cp.async.ca.shared.global [%rsb+28], [%mb+124], 4, %r4; cp.async.cg.shared.global [%rsb+32], [%mb+128], 16, %r5; "
      "cp.async.commit_group; cp.async.wait_group 0; " + dump.replace("[%rsb+16]", "[%rsb+16]") +
      " ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb+32]; xor.b32 %r1, %r1, %r4; st.global.u32 [%o+28], %r1;")
    o("src-size 0 and = cp-size", pre + "cp.async.ca.shared.global [%rsb], [%mb+144], 16, 0; cp.async.ca.shared.global [%rsb+16], [%mb+160], 16, 16; "
      "cp.async.ca.shared.global [%rsb+32], [%mb+176], 4, 0; cp.async.wait_all; " + dump)
    o("ignore-src predicate", pre + "cp.async.ca.shared.global [%rsb], [%mb+176], 16, %pa; cp.async.cg.shared.global [%rsb+16], [%mb+192], 16, %pb; "
      "cp.async.wait_all; " + dump)
    o("cg.L2::128B / ca.L2::256B prefetch", pre + "cp.async.cg.shared.global.L2::128B [%rsb], [%mb+208], 16; "
      "cp.async.ca.shared.global.L2::256B [%rsb+16], [%mb+224], 8; cp.async.ca.shared.global.L2::64B [%rsb+24], [%mb+232], 4; "
      "cp.async.wait_all; " + dump)
    o("cp.async.mbarrier.arrive.noinc", pre + "@!%pz mbarrier.init.shared::cta.b64 [%rbar], %rnt; bar.sync 0; "
      "cp.async.ca.shared.global [%rsb], [%mb+240], 16; cp.async.cg.shared.global [%rsb+16], [%mb], 16; "
      "cp.async.mbarrier.arrive.noinc.shared.b64 [%rbar]; mov.u32 %r10, 0; "
      "$L_w: mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rbar], 0, 20000; @%p1 bra $L_d; add.u32 %r10, %r10, 1; "
      f"setp.lt.u32 %p2, %r10, {WAIT_BOUND}; @%p2 bra $L_w; $L_d: selp.u32 %r11, 0, 0xBAD, %p1; " + dump +
      " st.global.u32 [%o+28], %r11; bar.sync 0;")
    o("cp.async.mbarrier.arrive (inc) + arrive", pre + "@!%pz mbarrier.init.shared::cta.b64 [%rbar+8], %rnt; bar.sync 0; "
      "cp.async.ca.shared.global [%rsb+32], [%mb+16], 16; cp.async.ca.shared.global [%rsb+48], [%mb+32], 8; "
      "cp.async.mbarrier.arrive.shared.b64 [%rbar+8]; mbarrier.arrive.shared::cta.b64 _, [%rbar+8]; mov.u32 %r10, 0; "
      "$L_w: mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rbar+8], 0, 20000; @%p1 bra $L_d; add.u32 %r10, %r10, 1; "
      f"setp.lt.u32 %p2, %r10, {WAIT_BOUND}; @%p2 bra $L_w; $L_d: selp.u32 %r11, 0, 0xBAD, %p1; "
      "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb+32]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4}; "
      "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb+48]; st.global.v4.b32 [%o+16], {%r1, %r2, %r3, %r11}; bar.sync 0;")
    o("cross-thread after wait_all + bar.sync", pre + "cp.async.ca.shared.global [%rsb], [%mb+48], 16; cp.async.cg.shared.global [%rsb+16], [%mb+80], 16; "
      "cp.async.wait_all; bar.sync 0; xor.b32 %r12, %tidx, 1; shl.b32 %r12, %r12, 6; mov.u32 %r13, sbuf; add.u32 %r12, %r12, %r13; "
      "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r12]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4}; "
      "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r12+16]; st.global.v4.b32 [%o+16], {%r1, %r2, %r3, %r4}; bar.sync 0;")
    o("shared::cta spelling", pre + "cp.async.ca.shared::cta.global [%rsb+8], [%mb+104], 8; cp.async.cg.shared::cta.global [%rsb+16], [%mb+112], 16; "
      "cp.async.commit_group; cp.async.wait_group 0; " + dump)
    return table


CPA_PROLOGUE = """  .reg .b32 %rbar, %rnt;
  .reg .pred %pz;
  mov.u32 %rsb, sbuf;
  mad.lo.u32 %rsb, %tidx, 64, %rsb;
  mov.u32 %rbar, bars;
  mov.u32 %rnt, %ntid.x;
  setp.ne.u32 %pz, %tidx, 0;"""


def add_cp_async(bat: Battery) -> None:
    add_opblock(bat, "cp_async", ops_cp_async(), slot=32, threads=256, shared_bytes=128 * 64,
                extra_decl=".shared .align 8 .b64 bars[2];\n", prologue=CPA_PROLOGUE, m_bytes_per_thread=256,
                note="cp.async.ca/.cg shared.global of 4/8/16 bytes into a pre-patterned 64-byte area per thread, commit "
                     "groups with wait_group 2/0 and wait_all, src-size < cp-size zero fill (per-thread sizes, 0, =cp-size), "
                     "ignore-src predicate, L2 prefetch hints, cp.async.mbarrier.arrive(.noinc) (word 7 = 0xBAD on timeout), "
                     "cross-thread visibility after wait_all + bar.sync")
