"""Op blocks of atomics/reductions and of divergent control flow."""

from __future__ import annotations

import numpy as np

from conformance.battery.gen_opblock import OPERAND_LOADS, STORE, add_opblock, inputs64, op_table
from conformance.battery.spec import HEADER, Battery, buf_in, buf_out, p_buf

# ---- atomics: one 8 KiB region per op (global or shared); returns per thread --------------------

def ops_atomics():
    """(name, body, kind, space, init) with init(rng) -> uint64[1024] for the op's region.
    Global ops act on %g (the region); shared ops on %s (1 KiB per CTA) whose 128 words start from
    the region's words 0..127 and end in words 128 + 128 ctaid .. ; distinct-address ops use word
    gid (global) or tid (shared) and return the old value (slot)."""
    table = []
    def o(name, body, kind="NONE", space="g", init=None):
        table.append((name, body, kind, space, init))
    zero = lambda rng: np.zeros(1024, np.uint64)                                   # noqa: E731
    rnd = lambda rng: rng.integers(0, 2**63, 1024, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, 1024, dtype=np.uint64)  # noqa: E731
    def const(v):
        return lambda rng: np.full(1024, v, np.uint64)
    def f32s(rng):          # random f32 words incl. subnormals, NaN, inf, in the low halves
        sp = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00001, 1, 0x807FFFFF, 0x00800000,
                       0x7F7FFFFF, 0x3F800000], np.uint64)
        v = rng.integers(0, 2**32, 1024, dtype=np.uint64)
        k = rng.integers(0, 4, 1024)
        v = np.where(k == 0, sp[rng.integers(0, len(sp), 1024)], v)
        v = np.where(k == 1, rng.integers(0, 2**23, 1024, dtype=np.uint64) | (rng.integers(0, 2, 1024, dtype=np.uint64) << np.uint64(31)), v)
        return v
    def f64s(rng):
        v = inputs64(rng, 1024)[0]
        return v
    def small(rng):
        return rng.integers(0, 100, 1024).astype(np.uint64)
    D = "mul.wide.u32 %rd1, %gid, 8; add.u64 %rd1, %g, %rd1; "          # distinct global word
    S = "shl.b32 %r9, %tidx, 3; add.u32 %r9, %s, %r9; "                   # distinct shared word
    # -- global, many threads -> one word (returns discarded): order-independent end states
    o("g red.add.u32", "and.b32 %r1, %ua, 0xffff; red.global.add.u32 [%g], %r1;", init=rnd)
    o("g atom.add.u32 (ret unused)", "and.b32 %r1, %ua, 0xff; atom.global.add.u32 %r2, [%g], %r1;", init=rnd)
    o("g red.add.u64", "red.global.add.u64 [%g], %xa;", init=rnd)
    o("g red.add.s32", "red.global.add.s32 [%g], %ua;", init=rnd)
    for op in ("min", "max"):
        for t in ("u32", "s32", "u64", "s64"):
            src = "%xa" if t.endswith("64") else "%ua"
            o(f"g atom.{op}.{t}", f"atom.global.{op}.{t} %{'rd2' if t.endswith('64') else 'r2'}, [%g], {src};", init=rnd)
    for op in ("and", "or", "xor"):
        o(f"g red.{op}.b32", f"red.global.{op}.b32 [%g], %ua;", init=rnd)
        o(f"g atom.{op}.b64", f"atom.global.{op}.b64 %rd2, [%g], %xa;", init=rnd)
    o("g atom.inc.u32 bound 1000", "atom.global.inc.u32 %r2, [%g], 1000;", init=const(900))
    o("g atom.dec.u32 bound 1000", "atom.global.dec.u32 %r2, [%g], 1000;", init=const(100))
    o("g red.add.f32 small ints", "and.b32 %r1, %ua, 7; cvt.rn.f32.u32 %f1, %r1; red.global.add.f32 [%g], %f1;",
      init=const(np.float32(3.0).view(np.uint32)))
    o("g red.add.f64 small ints", "and.b32 %r1, %ua, 7; cvt.rn.f64.u32 %d1, %r1; red.global.add.f64 [%g], %d1;",
      init=const(np.float64(-5.0).view(np.uint64)))
    o("g atom.add.u32 histogram (8 words)", "and.b32 %r1, %ua, 7; mul.wide.u32 %rd1, %r1, 4; add.u64 %rd1, %g, %rd1; "
      "atom.global.add.u32 %r2, [%rd1], 1;", init=zero)
    o("g sem/scope qualifiers", "atom.acq_rel.gpu.global.add.u32 %r2, [%g], 3; red.relaxed.gpu.global.add.u32 [%g+4], 5; "
      "atom.relaxed.sys.global.add.u64 %rd2, [%g+8], %xa; red.release.cta.global.or.b32 [%g+16], %ub; "
      "atom.acquire.gpu.global.max.s32 %r2, [%g+20], %uc;", init=rnd)
    o("g red.add.noftz.f16 small ints", "and.b32 %r1, %ua, 3; cvt.rn.f16.u32 %h1, %r1; red.global.add.noftz.f16 [%g], %h1;", init=zero)
    # -- global, distinct words, returns stored
    o("g atom.exch.b32", D + "atom.global.exch.b32 %rs, [%rd1], %ub;", "R32", init=rnd)
    o("g atom.exch.b64", D + "atom.global.exch.b64 %rr, [%rd1], %xb;", "R64", init=rnd)
    o("g atom.cas.b32 (even: match)", D + "ld.global.u32 %r3, [%rd1]; and.b32 %r4, %gid, 1; setp.eq.u32 %p1, %r4, 0; "
      "selp.b32 %r3, %r3, %ub, %p1; atom.global.cas.b32 %rs, [%rd1], %r3, %uc;", "R32", init=rnd)
    o("g atom.cas.b64 (even: match)", D + "ld.global.u64 %rd3, [%rd1]; and.b32 %r4, %gid, 1; setp.eq.u32 %p1, %r4, 0; "
      "selp.b64 %rd3, %rd3, %xb, %p1; atom.global.cas.b64 %rr, [%rd1], %rd3, %xc;", "R64", init=rnd)
    o("g atom.add.u32 distinct", D + "atom.global.add.u32 %rs, [%rd1], %ub;", "R32", init=rnd)
    o("g atom.add.f32 distinct (ftz?)", D + "atom.global.add.f32 %fs, [%rd1], %fb;", "RF", init=f32s)
    o("g atom.add.f64 distinct", D + "atom.global.add.f64 %ds, [%rd1], %db;", "RD", init=f64s)
    o("g atom.min.s32 distinct", D + "atom.global.min.s32 %rs, [%rd1], %ub;", "R32", init=rnd)
    o("g atom.max.u64 distinct", D + "atom.global.max.u64 %rr, [%rd1], %xb;", "R64", init=rnd)
    o("g atom.inc.u32 distinct", D + "and.b32 %r1, %ub, 127; atom.global.inc.u32 %rs, [%rd1], %r1;", "R32", init=small)
    o("g atom.dec.u32 distinct", D + "and.b32 %r1, %ub, 127; atom.global.dec.u32 %rs, [%rd1], %r1;", "R32", init=small)
    o("g atom.xor.b64 distinct", D + "atom.global.xor.b64 %rr, [%rd1], %xb;", "R64", init=rnd)
    o("g atom.add.noftz.f16x2 distinct", D + "atom.global.add.noftz.f16x2 %rs, [%rd1], %ub;", "R32", init=f32s)
    o("g atom.add.noftz.bf16x2 distinct", D + "atom.global.add.noftz.bf16x2 %rs, [%rd1], %ub;", "R32", init=f32s)
    o("g atom.cas.b16 distinct", D + "ld.global.u16 %h3, [%rd1]; and.b32 %r4, %gid, 1; setp.eq.u32 %p1, %r4, 0; "
      "selp.b16 %h3, %h3, %hb, %p1; atom.global.cas.b16 %hs, [%rd1], %h3, %hc;", "RH", init=rnd)
    # -- shared
    o("s atom.add.u32 many->one", "and.b32 %r1, %ua, 0xff; atom.shared.add.u32 %r2, [%s], %r1;", space="s", init=rnd)
    o("s red.add.u64 many->one", "red.shared.add.u64 [%s], %xa;", space="s", init=rnd)
    o("s atom.min.s32/max.u32/min.s64 many->one", "atom.shared.min.s32 %r2, [%s], %ua; atom.shared.max.u32 %r2, [%s+4], %ub; "
      "atom.shared.min.s64 %rd2, [%s+8], %xc;", space="s", init=rnd)
    o("s atom.and/or/xor.b32 many->one", "atom.shared.and.b32 %r2, [%s], %ua; atom.shared.or.b32 %r2, [%s+4], %ua; "
      "atom.shared.xor.b32 %r2, [%s+8], %ua; atom.shared.xor.b64 %rd2, [%s+16], %xb;", space="s", init=rnd)
    o("s red.add.f32 small ints", "and.b32 %r1, %ua, 7; cvt.rn.f32.u32 %f1, %r1; red.shared.add.f32 [%s], %f1;", space="s",
      init=const(np.float32(1.0).view(np.uint32)))
    o("s atom.add.u32 histogram (16 words)", "and.b32 %r1, %ua, 15; shl.b32 %r1, %r1, 2; add.u32 %r1, %s, %r1; "
      "atom.shared.add.u32 %r2, [%r1], 1;", space="s", init=zero)
    o("s atom.inc.u32 bound 100 many->one", "atom.shared.inc.u32 %r2, [%s], 100;", space="s", init=const(50))
    o("s atom.exch.b32 distinct", S + "atom.shared.exch.b32 %rs, [%r9], %ub;", "R32", space="s", init=rnd)
    o("s atom.cas.b32 distinct", S + "ld.shared.u32 %r3, [%r9]; and.b32 %r4, %tidx, 1; setp.eq.u32 %p1, %r4, 0; "
      "selp.b32 %r3, %r3, %ub, %p1; atom.shared.cas.b32 %rs, [%r9], %r3, %uc;", "R32", space="s", init=rnd)
    o("s atom.cas.b64 distinct", S + "ld.shared.u64 %rd3, [%r9]; and.b32 %r4, %tidx, 1; setp.eq.u32 %p1, %r4, 0; "
      "selp.b64 %rd3, %rd3, %xb, %p1; atom.shared.cas.b64 %rr, [%r9], %rd3, %xc;", "R64", space="s", init=rnd)
    o("s atom.add.f32 distinct (ftz?)", S + "atom.shared.add.f32 %fs, [%r9], %fb;", "RF", space="s", init=f32s)
    o("s atom.add.u64 distinct", S + "atom.shared.add.u64 %rr, [%r9], %xb;", "R64", space="s", init=rnd)
    return table


def atomics_ptx(ops) -> str:
    blocks = []
    sidx = 0
    for k, (name, body, kind, space, _) in enumerate(ops):
        if space == "s":
            pre = (f"mov.u32 %s, sbuf; add.u32 %s, %s, {sidx * 1024}; "
                   f"setp.lt.u32 %p6, %tidx, 128; @!%p6 bra $L_c1; shl.b32 %r9, %tidx, 3; add.u32 %r10, %s, %r9; "
                   f"mul.wide.u32 %rd9, %tidx, 8; add.u64 %rd10, %g, %rd9; ld.global.u64 %rd11, [%rd10]; st.shared.u64 [%r10], %rd11; "
                   f"$L_c1: bar.sync 0; ")
            post = (" bar.sync 0; @!%p6 bra $L_c2; mov.u32 %r11, %ctaid.x; mad.lo.u32 %r11, %r11, 128, %tidx; add.u32 %r11, %r11, 128; "
                    "mul.wide.u32 %rd9, %r11, 8; add.u64 %rd10, %g, %rd9; ld.shared.u64 %rd11, [%r10]; st.global.u64 [%rd10], %rd11; "
                    "$L_c2: bar.sync 0;")
            sidx += 1
        else:
            pre = post = ""
        text = (pre + body + " " + STORE[kind] + post).replace("$L_", f"$L{k}_")
        blocks.append(f"  // @op {k} {name}\n  {{\n  add.u64 %o, %obase, {k * 8};\n  add.u64 %g, %gbase, {k * 8192};\n  {text}\n  }}\n"
                      f"  // @end {k}")
    nl = "\n"
    return HEADER + f"""
.shared .align 16 .b8 sbuf[{max(sidx, 1) * 1024}];

.visible .entry atomics(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pg, .param .u64 po)
{{
  .reg .pred %p<8>, %pa, %pb, %pc, %ps;
  .reg .b16 %h<8>, %ha, %hb, %hc, %hz, %hs;
  .reg .b32 %r<16>, %ua, %ub, %uc, %uah, %gid, %tidx, %rs, %rs2, %s;
  .reg .f32 %f<8>, %fa, %fb, %fs;
  .reg .b64 %rd<16>, %xa, %xb, %xc, %rr, %o, %obase, %g, %gbase;
  .reg .f64 %d<8>, %da, %db, %ds;
  mov.u32 %tidx, %tid.x;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mad.lo.u32 %gid, %r1, %r2, %tidx;
{OPERAND_LOADS}
  ld.param.u64 %gbase, [pg];
  cvta.to.global.u64 %gbase, %gbase;
  ld.param.u64 %obase, [po];
  cvta.to.global.u64 %obase, %obase;
  mul.wide.u32 %rd4, %gid, {len(ops) * 8};
  add.u64 %obase, %obase, %rd4;
  mov.b64 {{%ua, %uah}}, %xa;
  mov.b64 {{%ub, %r3}}, %xb;
  mov.b64 {{%uc, %r3}}, %xc;
  mov.b64 %da, %xa;
  mov.b64 %db, %xb;
  mov.b32 %fa, %ua;
  mov.b32 %fb, %ub;
  mov.b32 {{%ha, %h7}}, %ua;
  mov.b32 {{%hb, %h7}}, %ub;
  mov.b32 {{%hc, %h7}}, %uc;
  mov.b16 %hz, 0;
{nl.join(blocks)}
  ret;
}}
"""


def add_atomics(bat: Battery) -> None:
    rng = bat.rng
    ops = ops_atomics()
    threads, block = 512, 128
    f = bat.ptx("atomics.ptx", atomics_ptx(ops))
    a, b, c = inputs64(rng, threads)
    names = [bat.npy(f"atomics_{x}.npy", arr) for x, arr in zip("abc", (a, b, c), strict=True)]
    region = np.concatenate([(init(rng) if init else np.zeros(1024, np.uint64)) for (_, _, _, _, init) in ops])
    gfile = bat.npy("atomics_regions.npy", region.astype(np.uint64))
    nops = len(ops)
    bat.case(name="atomics", ptx=f, kernel="atomics", grid=[threads // block], block=[block],
             buffers=[buf_in("a", names[0]), buf_in("b", names[1]), buf_in("c", names[2]), buf_in("g", gfile, save=True),
                      buf_out("out", threads * nops * 8)],
             params=[p_buf("a"), p_buf("b"), p_buf("c"), p_buf("g"), p_buf("out")], ops=[o[0] for o in ops],
             sections=[{"name": "regions", "offset": 0, "bytes": nops * 8192, "dtype": "u64", "shape": [nops, 1024],
                        "kind": "per_op_regions", "initial": gfile},
                       {"name": "returns", "offset": nops * 8192, "bytes": threads * nops * 8, "dtype": "u64",
                        "shape": [threads, nops, 1], "kind": "per_thread_ops", "inputs": names}],
             note="atom/red with order-independent end states: many threads -> one word (add u32/u64/s32/f32/f64 "
                  "with small integers, min/max u32/s32/u64/s64, and/or/xor, inc/dec with one bound, a histogram, "
                  "sem/scope spellings, f16 red) and distinct words with returned old values (exch, cas match/mismatch "
                  "b16/b32/b64, add u32/u64/f32/f64 incl. f32 subnormals/NaN, min/max, inc/dec, xor, f16x2/bf16x2); "
                  "global and shared (shared results land in region words 128 + 128*ctaid ..); regions = one 8 KiB "
                  "region per op (u64 words), returns[thread][op] (distinct-address ops only)")


# ---- control flow --------------------------------------------------------------------------------

def ops_ctrl():
    table, o = op_table("R32")
    o("loop, data-dependent trip count", "and.b32 %r1, %ua, 15; mov.u32 %rs, %ub; mov.u32 %r2, 0; $L_top: setp.ge.u32 %p1, %r2, %r1; "
      "@%p1 bra $L_end; mad.lo.u32 %rs, %rs, 0x01000193, %r2; add.u32 %r2, %r2, 1; bra $L_top; $L_end:")
    o("nested if/else (8 leaves)", "and.b32 %r1, %ub, 1; setp.ne.u32 %p1, %r1, 0; and.b32 %r1, %ub, 2; setp.ne.u32 %p2, %r1, 0; "
      "and.b32 %r1, %ub, 4; setp.ne.u32 %p3, %r1, 0; mov.u32 %rs, 0; @%p1 bra $L_a; @%p2 bra $L_b; @%p3 bra $L_c; "
      "mov.u32 %rs, 10; bra $L_end; $L_c: mov.u32 %rs, 11; bra $L_end; $L_b: @%p3 bra $L_d; mov.u32 %rs, 12; bra $L_end; "
      "$L_d: mov.u32 %rs, 13; bra $L_end; $L_a: @%p2 bra $L_e; @%p3 bra $L_f; mov.u32 %rs, 14; bra $L_end; "
      "$L_f: mov.u32 %rs, 15; bra $L_end; $L_e: @!%p3 bra $L_g; mov.u32 %rs, 16; bra $L_end; $L_g: mov.u32 %rs, 17; "
      "$L_end: add.u32 %rs, %rs, %ua;")
    o("loop with break", "mov.u32 %rs, %ua; mov.u32 %rs2, 0; $L_top: mad.lo.u32 %rs, %rs, 1664525, 1013904223; add.u32 %rs2, %rs2, 1; "
      "and.b32 %r3, %rs, 0xff; setp.lt.u32 %p1, %r3, 16; @%p1 bra $L_end; setp.lt.u32 %p2, %rs2, 64; @%p2 bra $L_top; $L_end:", "R32x2")
    o("brx.idx switch (5 targets)", "rem.u32 %rs2, %ua, 5; $L_tbl: .branchtargets $L_0, $L_1, $L_2, $L_3, $L_4; brx.idx %rs2, $L_tbl; "
      "$L_0: mul.lo.u32 %rs, %ub, 3; bra $L_end; $L_1: xor.b32 %rs, %ub, 0x55; bra $L_end; $L_2: add.u32 %rs, %ub, 1000; bra $L_end; "
      "$L_3: shl.b32 %rs, %ub, 3; bra $L_end; $L_4: not.b32 %rs, %ub; $L_end:", "R32x2")
    o("brx.idx in a loop", "mov.u32 %rs, %ub; mov.u32 %r2, 0; mov.u32 %r3, %ua; $L_top: and.b32 %r4, %r3, 3; shr.u32 %r3, %r3, 2; "
      "$L_tbl: .branchtargets $L_0, $L_1, $L_2, $L_3; brx.idx %r4, $L_tbl; $L_0: add.u32 %rs, %rs, 7; bra $L_next; "
      "$L_1: mul.lo.u32 %rs, %rs, 5; bra $L_next; $L_2: xor.b32 %rs, %rs, 0xF0F0; bra $L_next; $L_3: shr.u32 %rs, %rs, 1; "
      "$L_next: add.u32 %r2, %r2, 1; setp.lt.u32 %p1, %r2, 6; @%p1 bra $L_top;")
    o("diverge, reconverge, bfly shuffle", "and.b32 %r1, %ua, 15; mov.u32 %rs, %ub; mov.u32 %r2, 0; $L_top: setp.ge.u32 %p1, %r2, %r1; "
      "@%p1 bra $L_end; add.u32 %rs, %rs, %r2; add.u32 %r2, %r2, 1; bra $L_top; $L_end: bar.warp.sync 0xffffffff; "
      "shfl.sync.bfly.b32 %rs2, %rs, 1, 0x1f, 0xffffffff;", "R32x2")
    o("diverge, reconverge, ballot", "@%pa bra $L_t; mul.lo.u32 %rs, %ub, 3; bra $L_j; $L_t: add.u32 %rs, %ub, 3; $L_j: "
      "and.b32 %r1, %rs, 1; setp.ne.u32 %p1, %r1, 0; vote.sync.ballot.b32 %rs2, %p1, 0xffffffff;", "R32x2")
    o("loop with diverged if + shfl.idx each iteration", "mov.u32 %rs, %ua; mov.u32 %r2, 0; $L_top: and.b32 %r3, %rs, 1; "
      "setp.ne.u32 %p1, %r3, 0; @%p1 bra $L_odd; shr.u32 %rs, %rs, 1; bra $L_j; $L_odd: mad.lo.u32 %rs, %rs, 3, 1; $L_j: "
      "add.u32 %r4, %r2, 7; and.b32 %r4, %r4, 31; shfl.sync.idx.b32 %r5, %rs, %r4, 0x1f, 0xffffffff; xor.b32 %rs, %rs, %r5; "
      "add.u32 %r2, %r2, 1; setp.lt.u32 %p2, %r2, 4; @%p2 bra $L_top;")
    o("predicated execution", "@%pa add.u32 %rs, %ua, %ub; @!%pa mul.lo.u32 %rs, %ua, %ub; @%pb xor.b32 %rs, %rs, %uc;")
    o("bra.uni uniform loop", "mov.u32 %r1, 0; mov.u32 %rs, %ua; $L_top: add.u32 %rs, %rs, %r1; add.u32 %r1, %r1, 1; "
      "setp.lt.u32 %p1, %r1, 10; @%p1 bra.uni $L_top;")
    o("uniform loop with bar.sync", "mov.u32 %r1, 0; mov.u32 %rs, %ua; $L_top: bar.sync 0; add.u32 %rs, %rs, %r1; add.u32 %r1, %r1, 1; "
      "setp.lt.u32 %p1, %r1, 3; @%p1 bra $L_top;")
    o("early exit (1/8 of threads)", "and.b32 %r1, %ua, 7; setp.eq.u32 %p1, %r1, 0; @%p1 bra $L_x; mov.u32 %rs, 1; bra $L_end; "
      "$L_x: mov.u32 %rs, 2; cvt.u64.u32 %rr, %rs; st.global.b64 [%o], %rr; exit; $L_end:")
    o("after exit: activemask + ballot", "activemask.b32 %rs; vote.sync.ballot.b32 %rs2, %pb, %rs;", "R32x2")
    return table


def add_ctrl(bat: Battery) -> None:
    add_opblock(bat, "ctrl", ops_ctrl(), threads=256,
                note="bra divergence and reconvergence: data-dependent loops, nested if/else, break, brx.idx jump tables "
                     "(also in a loop), shfl/vote after reconvergence, predicated execution, bra.uni, bar.sync in a "
                     "uniform loop, predicated exit of 1/8 of the threads then activemask/ballot among the survivors "
                     "(informative: survivors' convergence is not guaranteed)")
