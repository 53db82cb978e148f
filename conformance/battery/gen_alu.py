"""Op blocks of 64-bit integer, f64, integer cvt, misc and ld/st instruction forms."""

from __future__ import annotations

from conformance.battery.gen_opblock import add_opblock, op_table
from conformance.battery.spec import Battery


def ops_alu64():
    table, o = op_table("R64")
    for op in ("add.s64", "sub.s64", "mul.lo.u64", "mul.lo.s64", "mul.hi.u64", "mul.hi.s64", "min.u64", "min.s64",
               "max.u64", "max.s64", "and.b64", "or.b64", "xor.b64", "div.u64", "div.s64", "rem.u64", "rem.s64"):
        o(op, f"{op} %rr, %xa, %xb;")
    o("add.u64.imm", "add.u64 %rr, %xa, 0xFFFFFFFFFFFFFFF9;")
    for op in ("mad.lo.u64", "mad.lo.s64", "mad.hi.u64", "mad.hi.s64"):
        o(op, f"{op} %rr, %xa, %xb, %xc;")
    o("mul.wide.u32", "mul.wide.u32 %rr, %ua, %ub;")
    o("mul.wide.s32", "mul.wide.s32 %rr, %ua, %ub;")
    o("mad.wide.u32", "mad.wide.u32 %rr, %ua, %ub, %xc;")
    o("mad.wide.s32", "mad.wide.s32 %rr, %ua, %ub, %xc;")
    o("mul.wide.u16", "mul.wide.u16 %rs, %ha, %hb;", "R32")
    o("mul.wide.s16", "mul.wide.s16 %rs, %ha, %hb;", "R32")
    o("div.u64.small", "shr.u64 %rd1, %xb, 40; div.u64 %rr, %xa, %rd1;")
    o("div.s64.small", "shr.s64 %rd1, %xb, 40; div.s64 %rr, %xa, %rd1;")
    o("rem.s64.small", "shr.s64 %rd1, %xb, 40; rem.s64 %rr, %xa, %rd1;")
    o("rem.u64.small", "shr.u64 %rd1, %xb, 50; rem.u64 %rr, %xa, %rd1;")
    for op in ("abs.s64", "neg.s64", "not.b64", "cnot.b64"):
        o(op, f"{op} %rr, %xa;")
    for op in ("shl.b64", "shr.u64", "shr.s64"):
        o(op, f"{op} %rr, %xa, %uc;")
        o(op + ".and63", f"and.b32 %r1, %uc, 63; {op} %rr, %xa, %r1;")
    o("shl.b64.imm13", "shl.b64 %rr, %xa, 13;")
    o("shr.s64.imm63", "shr.s64 %rr, %xa, 63;")
    o("popc.b64", "popc.b64 %rs, %xa;", "R32")
    o("clz.b64", "clz.b64 %rs, %xa;", "R32")
    o("bfe.u64", "bfe.u64 %rr, %xa, %ub, %uc;")
    o("bfe.s64", "bfe.s64 %rr, %xa, %ub, %uc;")
    o("bfi.b64", "bfi.b64 %rr, %xa, %xb, %ub, %uc;")
    o("brev.b64", "brev.b64 %rr, %xa;")
    o("bfind.u64", "bfind.u64 %rs, %xa;", "R32")
    o("bfind.s64", "bfind.s64 %rs, %xa;", "R32")
    o("bfind.shiftamt.u64", "bfind.shiftamt.u64 %rs, %xa;", "R32")
    o("sad.u64", "sad.u64 %rr, %xa, %xb, %xc;")
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        o(f"setp.{cmp}.s64", f"setp.{cmp}.s64 %ps, %xa, %xb;", "RP")
    for cmp in ("lo", "ls", "hi", "hs"):
        o(f"setp.{cmp}.u64", f"setp.{cmp}.u64 %ps, %xa, %xb;", "RP")
    o("setp.lt.u64.imm", "setp.lt.u64 %ps, %xa, 0x8000000000000000;", "RP")
    o("add.cc.u64+addc", "add.cc.u64 %rd1, %xa, %xb; addc.u64 %rr, %xc, 0;")
    o("sub.cc.u64+subc", "sub.cc.u64 %rd1, %xa, %xb; subc.u64 %rr, %xc, 0;")
    o("add.cc.u64 3-limb", "add.cc.u64 %rd1, %xa, %xb; addc.cc.u64 %rd2, %xc, %xa; addc.u64 %rr, 0, 0; xor.b64 %rr, %rr, %rd2;")
    o("add.cc.u32 64-bit", "add.cc.u32 %r1, %ua, %ub; addc.cc.u32 %rs, %uah, %ubh; addc.u32 %rs2, 0, 0;", "R32x2")
    o("sub.cc.u32 64-bit", "sub.cc.u32 %r1, %ua, %ub; subc.cc.u32 %rs, %uah, %ubh; subc.u32 %rs2, 0, 0;", "R32x2")
    o("mad.lo.cc.u32+madc.hi", "mad.lo.cc.u32 %rs, %ua, %ub, %uc; madc.hi.u32 %rs2, %ua, %ub, 0;", "R32x2")
    o("mad.lo.cc+madc.hi.cc+addc", "mad.lo.cc.u32 %r1, %ua, %ub, %uc; madc.hi.cc.u32 %rs, %ua, %ub, %uah; addc.u32 %rs2, 0, 0;", "R32x2")
    o("mad.lo.cc.u64+madc.hi.u64", "mad.lo.cc.u64 %rd1, %xa, %xb, %xc; madc.hi.u64 %rr, %xa, %xb, 0;")
    o("mad.hi.cc.s32+madc.lo", "mad.hi.cc.s32 %rs, %ua, %ub, %uc; madc.lo.s32 %rs2, %ua, %ub, %uah;", "R32x2")
    o("sub.cc.s32+subc.cc", "sub.cc.s32 %rs, %ua, %ub; subc.cc.s32 %rs2, %uah, %ubh; subc.s32 %r3, 0, 0; xor.b32 %rs2, %rs2, %r3;", "R32x2")
    return table


# ---- f64 ------------------------------------------------------------------------------------------

def ops_f64():
    table, o = op_table("RD")
    for rnd in ("rn", "rz", "rm", "rp"):
        o(f"add.{rnd}.f64", f"add.{rnd}.f64 %ds, %da, %db;")
        o(f"sub.{rnd}.f64", f"sub.{rnd}.f64 %ds, %da, %db;")
        o(f"mul.{rnd}.f64", f"mul.{rnd}.f64 %ds, %da, %db;")
        o(f"fma.{rnd}.f64", f"fma.{rnd}.f64 %ds, %da, %db, %dc;")
        o(f"div.{rnd}.f64", f"div.{rnd}.f64 %ds, %da, %db;")
        o(f"rcp.{rnd}.f64", f"rcp.{rnd}.f64 %ds, %da;")
        o(f"sqrt.{rnd}.f64", f"sqrt.{rnd}.f64 %ds, %da;")
        o(f"cvt.{rnd}.f32.f64", f"cvt.{rnd}.f32.f64 %fs, %da;", "RF")
        o(f"cvt.{rnd}.f16.f64", f"cvt.{rnd}.f16.f64 %hs, %da;", "RH")
        o(f"cvt.{rnd}i.s64.f64", f"cvt.{rnd}i.s64.f64 %rr, %da;", "R64")
        o(f"cvt.{rnd}i.u64.f64", f"cvt.{rnd}i.u64.f64 %rr, %da;", "R64")
        o(f"cvt.{rnd}i.s32.f64", f"cvt.{rnd}i.s32.f64 %rs, %da;", "R32")
        o(f"cvt.{rnd}i.u32.f64", f"cvt.{rnd}i.u32.f64 %rs, %da;", "R32")
        o(f"cvt.{rnd}.f64.s64", f"cvt.{rnd}.f64.s64 %ds, %xa;")
        o(f"cvt.{rnd}.f64.u64", f"cvt.{rnd}.f64.u64 %ds, %xa;")
        o(f"cvt.{rnd}i.f64.f64", f"cvt.{rnd}i.f64.f64 %ds, %da;")
    o("add.f64 (default rn)", "add.f64 %ds, %da, %db;")
    o("fma.rn.f64 error term", "mul.rn.f64 %d1, %da, %db; neg.f64 %d1, %d1; fma.rn.f64 %ds, %da, %db, %d1;")
    o("cvt.f64.f32", "cvt.f64.f32 %ds, %fa;")
    o("cvt.ftz.f64.f32", "cvt.ftz.f64.f32 %ds, %fa;")
    o("cvt.f64.f16", "cvt.f64.f16 %ds, %ha;")
    o("cvt.rn.f64.s32", "cvt.rn.f64.s32 %ds, %ua;")
    o("cvt.rn.f64.u32", "cvt.rn.f64.u32 %ds, %ua;")
    o("cvt.sat.f64.f64", "cvt.sat.f64.f64 %ds, %da;")
    for op in ("min.f64", "max.f64"):
        o(op, f"{op} %ds, %da, %db;")
    for op in ("abs.f64", "neg.f64"):
        o(op, f"{op} %ds, %da;")
    o("copysign.f64", "copysign.f64 %ds, %da, %db;")
    for cmp in ("lt", "le", "gt", "ge", "eq", "ne", "equ", "neu", "ltu", "geu", "num", "nan"):
        o(f"setp.{cmp}.f64", f"setp.{cmp}.f64 %ps, %da, %db;", "RP")
    for t in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
        o(f"testp.{t}.f64", f"testp.{t}.f64 %ps, %da;", "RP")
    o("mov.f64 NaN imm", "mov.f64 %ds, 0d7FF8000000000001;")
    o("selp.f64", "selp.f64 %ds, %da, %db, %pc;")
    return table


# ---- cvt among integer widths -------------------------------------------------------------------

INT_T = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")


def _reg(t, src):
    bits = int(t[1:])
    if bits <= 16:
        return ("%ha" if src else "%hs"), "RH"
    if bits == 32:
        return ("%ua" if src else "%rs"), "R32"
    return ("%xa" if src else "%rr"), "R64"


def ops_cvt():
    table = []
    for d in INT_T:
        for s_ in INT_T:
            if d == s_:
                continue
            dreg, kind = _reg(d, False)
            sreg, _ = _reg(s_, True)
            table.append((f"cvt.{d}.{s_}", f"cvt.{d}.{s_} {dreg}, {sreg};", kind))
            narrowing = int(d[1:]) < int(s_[1:]) or (d[0] != s_[0] and not (d[0] == 's' and int(d[1:]) > int(s_[1:])))
            if narrowing:
                table.append((f"cvt.sat.{d}.{s_}", f"cvt.sat.{d}.{s_} {dreg}, {sreg};", kind))
    # wider registers than the instruction type
    table += [("cvt.u8.u32 (r32 dst)", "cvt.u8.u32 %rs, %ua;", "R32"),
          ("cvt.s8.s32 (r32 dst)", "cvt.s8.s32 %rs, %ua;", "R32"),
          ("cvt.s8.u32 (r32 dst)", "cvt.s8.u32 %rs, %ua;", "R32"),
          ("cvt.sat.s8.s32 (r32 dst)", "cvt.sat.s8.s32 %rs, %ua;", "R32"),
          ("cvt.s16.s32 (r32 dst)", "cvt.s16.s32 %rs, %ua;", "R32"),
          ("cvt.u16.s64 (r32 dst)", "cvt.u16.s64 %rs, %xa;", "R32"),
          ("cvt.s32.s8 (r32 src)", "cvt.s32.s8 %rs, %ua;", "R32"),
          ("cvt.u32.u8 (r32 src)", "cvt.u32.u8 %rs, %ua;", "R32"),
          ("cvt.s64.s16 (r32 src)", "cvt.s64.s16 %rr, %ua;", "R64"),
          ("cvt.s8.s64 (r64 dst)", "cvt.s8.s64 %rr, %xa;", "R64"),
          ("cvt.s16.s8 (r16)", "cvt.s16.s8 %hs, %ha;", "RH"),
          ("cvt.u16.u8 (r16)", "cvt.u16.u8 %hs, %ha;", "RH")]
    return table


# ---- misc: prmt, selp, slct, mov pack/unpack, 16-bit ints, set, predicates, special registers ----

def ops_misc():
    table, o = op_table("R32")
    for sel in (0x3210, 0x0123, 0x5410, 0x7632, 0x1032, 0x4444, 0x7654, 0xBA98, 0x89AB, 0xCDEF, 0x0FF0, 0x8888):
        o(f"prmt.b32 0x{sel:04x}", f"prmt.b32 %rs, %ua, %ub, 0x{sel:04x};")
    o("prmt.b32 random", "prmt.b32 %rs, %ua, %ub, %uc;")
    o("prmt.b32 random|0x8888", "or.b32 %r1, %uc, 0x8888; prmt.b32 %rs, %ua, %ub, %r1;")
    for mode in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        o(f"prmt.b32.{mode}", f"prmt.b32.{mode} %rs, %ua, %ub, %uc;")
    o("selp.b32", "selp.b32 %rs, %ua, %ub, %pc;")
    o("selp.s32 imm", "selp.s32 %rs, -1, 7, %pc;")
    o("selp.b64", "selp.b64 %rr, %xa, %xb, %pc;", "R64")
    o("selp.f32", "selp.f32 %fs, %fa, %fb, %pc;", "RF")
    o("selp.b16", "selp.b16 %hs, %ha, %hb, %pc;", "RH")
    o("slct.s32.s32", "slct.s32.s32 %rs, %ua, %ub, %uc;")
    o("slct.f32.s32", "slct.f32.s32 %fs, %fa, %fb, %uc;", "RF")
    o("slct.b32.f32", "slct.b32.f32 %rs, %ua, %ub, %fc;")
    o("slct.ftz.b32.f32", "slct.ftz.b32.f32 %rs, %ua, %ub, %fc;")
    o("slct.u64.s32", "slct.u64.s32 %rr, %xa, %xb, %uc;", "R64")
    o("slct.f64.f32", "slct.f64.f32 %ds, %da, %db, %fc;", "RD")
    o("mov.b64 unpack/swap", "mov.b64 {%r1, %r2}, %xa; mov.b64 %rr, {%r2, %r1};", "R64")
    o("mov.b64 4x16 shuffle", "mov.b64 {%h1, %h2, %h3, %h4}, %xa; mov.b64 %rr, {%h3, %h1, %h4, %h2};", "R64")
    o("mov.b32 2x16 swap", "mov.b32 {%h1, %h2}, %ua; mov.b32 %rs, {%h2, %h1};")
    o("mov.b64 unpack f64 reg", "mov.b64 {%rs, %rs2}, %da;", "R32x2")
    o("mov.b32 unpack f32 reg", "mov.b32 {%h1, %h2}, %fa; mov.b32 %rs, {%h2, %hz};")
    for op in ("add.u16", "sub.s16", "mul.lo.u16", "mul.hi.s16", "mul.hi.u16", "min.s16", "max.u16", "min.u16",
               "max.s16", "and.b16", "or.b16", "xor.b16", "div.s16", "div.u16", "rem.s16", "rem.u16"):
        o(op, f"{op} %hs, %ha, %hb;", "RH")
    o("mad.lo.s16", "mad.lo.s16 %hs, %ha, %hb, %hc;", "RH")
    for op in ("abs.s16", "neg.s16", "not.b16", "cnot.b16"):
        o(op, f"{op} %hs, %ha;", "RH")
    for op in ("shl.b16", "shr.s16", "shr.u16"):
        o(op, f"and.b32 %r1, %uc, 31; {op} %hs, %ha, %r1;", "RH")
    o("setp.lt.s16", "setp.lt.s16 %ps, %ha, %hb;", "RP")
    o("setp.hi.u16", "setp.hi.u16 %ps, %ha, %hb;", "RP")
    o("set.lt.u32.s32", "set.lt.u32.s32 %rs, %ua, %ub;")
    o("set.eq.f32.u32", "and.b32 %r1, %ub, 3; and.b32 %r2, %ua, 3; set.eq.f32.u32 %fs, %r1, %r2;", "RF")
    o("set.ne.and.u32.s32", "set.ne.and.u32.s32 %rs, %ua, %ub, %pc;")
    o("set.gt.s32.u64", "set.gt.s32.u64 %rs, %xa, %xb;")
    o("setp.lt.and.s32", "setp.lt.and.s32 %ps, %ua, %ub, %pc;", "RP")
    o("setp.ge.or.u32", "setp.ge.or.u32 %ps, %ua, %ub, %pc;", "RP")
    o("setp.lt.xor.s32 p|q", "setp.lt.xor.s32 %p1|%p2, %ua, %ub, %pc; selp.u32 %rs, 1, 0, %p1; selp.u32 %rs2, 1, 0, %p2;", "R32x2")
    o("setp.lt.and.s32 !c", "setp.lt.and.s32 %ps, %ua, %ub, !%pc;", "RP")
    o("and/or/xor/not.pred", "and.pred %p1, %pa, %pb; or.pred %p2, %pa, %pc; xor.pred %p3, %pb, %pc; not.pred %p4, %pa; "
      "selp.u32 %r1, 1, 0, %p1; selp.u32 %r2, 2, 0, %p2; selp.u32 %r3, 4, 0, %p3; selp.u32 %r4, 8, 0, %p4; "
      "or.b32 %rs, %r1, %r2; or.b32 %rs, %rs, %r3; or.b32 %rs, %rs, %r4;")
    for lut in (0x00, 0x01, 0x80, 0xFF, 0x3C, 0x5A, 0xCA, 0xF8, 0x1E, 0x6A, 0xB4, 0xFE, 0x7F):
        o(f"lop3.b32 0x{lut:02x}", f"lop3.b32 %rs, %ua, %ub, %uc, 0x{lut:02x};")
    for sreg in ("%laneid", "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%tid.x",
                 "%tid.y", "%ntid.x", "%ntid.z", "%ctaid.x", "%nctaid.x", "%nctaid.y", "%cluster_ctarank",
                 "%cluster_nctarank", "%clusterid.x", "%nclusterid.x", "%cluster_ctaid.x", "%cluster_nctaid.x",
                 "%dynamic_smem_size", "%total_smem_size", "%nwarpid", "%nsmid"):
        o(f"mov.u32 {sreg}", f"mov.u32 %rs, {sreg};")
    o("%is_explicit_cluster", "mov.pred %ps, %is_explicit_cluster;", "RP")
    o("mul24.lo.s32 / mul24.hi.s32", "mul24.lo.s32 %rs, %ua, %ub; mul24.hi.s32 %rs2, %ua, %ub;", "R32x2")
    o("bfe.u32 pos/len edges", "and.b32 %r1, %ub, 63; and.b32 %r2, %uc, 63; bfe.u32 %rs, %ua, %r1, %r2; bfe.s32 %rs2, %ua, %r1, %r2;", "R32x2")
    o("bfi.b32 pos/len edges", "and.b32 %r1, %ub, 63; and.b32 %r2, %uc, 63; bfi.b32 %rs, %ua, %uah, %r1, %r2;")
    o("popc/clz.b32", "popc.b32 %rs, %ua; clz.b32 %rs2, %ua;", "R32x2")
    o("min/max.s32 imm", "min.s32 %rs, %ua, -5; max.u32 %rs2, %ua, 0x80000000;", "R32x2")
    return table


# ---- vector ld/st, cache and ordering qualifiers, shared/local/const/generic spaces (16-byte slots)

def ops_ldst():
    table, o = op_table("NONE")
    o("ld.u8 -> r32", "ld.global.u8 %r1, [%mb+3]; st.global.u32 [%o], %r1;")
    o("ld.s8 -> r32", "ld.global.s8 %r1, [%mb+5]; st.global.u32 [%o], %r1;")
    o("ld.s8 -> r64", "ld.global.s8 %rd1, [%mb+6]; st.global.b64 [%o], %rd1;")
    o("ld.s16 -> r64", "ld.global.s16 %rd1, [%mb+8]; st.global.b64 [%o], %rd1;")
    o("ld.b8 -> r32", "ld.global.b8 %r1, [%mb+7]; st.global.u32 [%o], %r1;")
    o("ld.u16 -> r32", "ld.global.u16 %r1, [%mb+10]; st.global.u32 [%o], %r1;")
    o("ld.s16 -> r32", "ld.global.s16 %r1, [%mb+12]; st.global.u32 [%o], %r1;")
    o("ld.u32 -> r64", "ld.global.u32 %rd1, [%mb+12]; st.global.b64 [%o], %rd1;")
    o("ld.s32 -> r64", "ld.global.s32 %rd1, [%mb+16]; st.global.b64 [%o], %rd1;")
    o("ld.v2.u8 -> r32", "ld.global.v2.u8 {%r1, %r2}, [%mb+10]; st.global.v2.u32 [%o], {%r1, %r2};")
    o("ld.v4.u8 -> r16", "ld.global.v4.u8 {%h1, %h2, %h3, %h4}, [%mb+20]; st.global.v4.b16 [%o], {%h1, %h2, %h3, %h4};")
    o("ld.v4.s8 -> r32", "ld.global.v4.s8 {%r1, %r2, %r3, %r4}, [%mb+24]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("ld.v2.s16 -> r32", "ld.global.v2.s16 {%r1, %r2}, [%mb+28]; st.global.v2.b32 [%o], {%r1, %r2};")
    o("ld.v4.b16", "ld.global.v4.b16 {%h1, %h2, %h3, %h4}, [%mb+32]; st.global.v4.b16 [%o+8], {%h4, %h3, %h2, %h1};")
    o("ld.v2.b32", "ld.global.v2.b32 {%r1, %r2}, [%mb+40]; st.global.v2.b32 [%o+8], {%r2, %r1};")
    o("ld.v4.b32", "ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%mb+48]; st.global.v4.b32 [%o], {%r4, %r1, %r3, %r2};")
    o("ld.v2.b64", "ld.global.v2.b64 {%rd1, %rd2}, [%mb+64]; st.global.v2.b64 [%o], {%rd2, %rd1};")
    o("ld.v2.f64", "ld.global.v2.f64 {%d1, %d2}, [%mb+80]; st.global.v2.f64 [%o], {%d1, %d2};")
    o("ld.v4.f32", "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%mb+96]; st.global.v4.f32 [%o], {%f1, %f2, %f3, %f4};")
    o("ld.v2.f32 -> st.b64 pack", "ld.global.v2.f32 {%f1, %f2}, [%mb+104]; mov.b64 %rd1, {%f1, %f2}; st.global.b64 [%o+8], %rd1;")
    o("ld.nc.v4.b32", "ld.global.nc.v4.b32 {%r1, %r2, %r3, %r4}, [%mb+112]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("ld.nc.L1::no_allocate.v2.b64", "ld.global.nc.L1::no_allocate.v2.b64 {%rd1, %rd2}, [%mb+128]; st.global.v2.b64 [%o], {%rd1, %rd2};")
    o("ld.L1::evict_last.v4.b32", "ld.global.L1::evict_last.v4.b32 {%r1, %r2, %r3, %r4}, [%mb+144]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("ld.L1::evict_first.u32", "ld.global.L1::evict_first.u32 %r1, [%mb+160]; st.global.u32 [%o+12], %r1;")
    o("ld.L2::256B.b64", "ld.global.L2::256B.b64 %rd1, [%mb+168]; st.global.b64 [%o], %rd1;")
    o("ld.ca/cg/cs/lu", "ld.global.ca.u32 %r1, [%mb+176]; ld.global.cg.u32 %r2, [%mb+180]; ld.global.cs.u32 %r3, [%mb+184]; "
      "ld.global.lu.u32 %r4, [%mb+188]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("ld.cv/volatile/relaxed/acquire", "ld.global.cv.u32 %r1, [%mb+192]; ld.volatile.global.u32 %r2, [%mb+196]; "
      "ld.relaxed.gpu.global.u32 %r3, [%mb+200]; ld.acquire.gpu.global.u32 %r4, [%mb+204]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("ld.relaxed.sys.u64", "ld.relaxed.sys.global.u64 %rd1, [%mb+208]; st.global.b64 [%o+8], %rd1;")
    o("ldu.v4.b32 (warp-uniform)", "and.b32 %r5, %gid, 0xFFFFFFE0; mul.wide.u32 %rd3, %r5, 256; ld.param.u64 %rd2, [pm]; "
      "cvta.to.global.u64 %rd2, %rd2; add.u64 %rd2, %rd2, %rd3; ldu.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd2+224]; "
      "st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("ld.L2::cache_hint + createpolicy", "createpolicy.fractional.L2::evict_last.b64 %rd9, 1.0; "
      "ld.global.L1::evict_last.L2::cache_hint.v4.b32 {%r1, %r2, %r3, %r4}, [%mb+240], %rd9; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("predicated ld keeps old value", "mov.b32 %r1, 0xDEADBEEF; mov.b32 %r2, 0xCAFEF00D; @%pa ld.global.v2.b32 {%r1, %r2}, [%mb+136]; "
      "@!%pb ld.global.u32 %r3, [%mb+144]; @%pb mov.b32 %r3, 0x12345678; st.global.v2.b32 [%o], {%r1, %r2}; st.global.u32 [%o+8], %r3;")
    o("st.b8 truncation", "st.global.b8 [%o], %ha; st.global.b8 [%o+5], %ua; st.global.b8 [%o+15], %ub; st.global.u8 [%o+9], %uc;")
    o("st.v4.b8", "st.global.v4.b8 [%o+4], {%ua, %ub, %uc, %uah};")
    o("st.v2.b16 / v4.b16", "st.global.v2.b16 [%o+4], {%ha, %hb}; st.global.v4.b16 [%o+8], {%hc, %ha, %hz, %hb};")
    o("st.v2.b32 / st.b16 from r32", "st.global.v2.b32 [%o+8], {%ub, %ua}; st.global.u16 [%o], %uc; st.global.b16 [%o+6], %ua;")
    o("st.v4.b32", "st.global.v4.b32 [%o], {%uah, %ua, %ubh, %ub};")
    o("st.v2.b64", "st.global.v2.b64 [%o], {%xb, %xc};")
    o("st.v4.f32", "st.global.v4.f32 [%o], {%fa, %fc, %fb, %fa};")
    o("st.v2.f64", "st.global.v2.f64 [%o], {%dc, %da};")
    o("st.wt/cs/cg/wb", "st.global.wt.u32 [%o], %ua; st.global.cs.u32 [%o+4], %ub; st.global.cg.u32 [%o+8], %uc; st.global.wb.u32 [%o+12], %uah;")
    o("st.L1::no_allocate/evict_last", "st.global.L1::no_allocate.v2.u32 [%o], {%ua, %ub}; st.global.L1::evict_last.v2.u32 [%o+8], {%uc, %ubh};")
    o("st.relaxed/release/volatile", "st.relaxed.gpu.global.u32 [%o], %ua; st.release.gpu.global.u32 [%o+4], %ub; "
      "st.volatile.global.u32 [%o+8], %uc; st.relaxed.sys.global.u32 [%o+12], %uch;")
    o("st overlapping same thread", "st.global.v4.b32 [%o], {%ua, %ub, %uc, %uah}; st.global.b8 [%o+3], %ubh; st.global.v2.b16 [%o+8], {%hc, %hb}; st.global.b16 [%o+14], %ha;")
    o("generic ld/st (cvta.global)", "cvta.global.u64 %rd1, %mb; ld.v2.b32 {%r1, %r2}, [%rd1+216]; cvta.global.u64 %rd2, %o; "
      "st.v2.b32 [%rd2+8], {%r2, %r1};")
    o("shared v4.b32 -> v2.b64", "st.shared.v4.b32 [%rsb], {%ua, %ub, %uc, %uah}; ld.shared.v2.b64 {%rd1, %rd2}, [%rsb]; "
      "st.global.v2.b64 [%o], {%rd1, %rd2};")
    o("shared v2.b64 -> v4.b32", "st.shared.v2.b64 [%rsb+16], {%xa, %xb}; ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%rsb+16]; "
      "st.global.v4.b32 [%o], {%r3, %r4, %r1, %r2};")
    o("shared b8/b16 -> v4.b8", "st.shared.v2.b16 [%rsb+32], {%ha, %hb}; st.shared.b8 [%rsb+33], %uc; st.shared.v4.b8 [%rsb+36], {%ub, %ua, %uc, %ubh}; "
      "ld.shared.v4.u8 {%h1, %h2, %h3, %h4}, [%rsb+32]; ld.shared.v2.s8 {%r1, %r2}, [%rsb+36]; ld.shared.s16 %r3, [%rsb+38]; "
      "st.global.v4.b16 [%o], {%h1, %h2, %h3, %h4}; st.global.v2.b32 [%o+8], {%r1, %r2}; st.global.b16 [%o+4], %r3;")
    o("shared::cta / shared::cluster", "st.shared::cta.u32 [%rsb+48], %ua; ld.shared::cta.u32 %r1, [%rsb+48]; "
      "ld.shared::cluster.u32 %r2, [%rsb+48]; st.shared::cluster.u32 [%rsb+52], %ub; ld.shared.u32 %r3, [%rsb+52]; "
      "st.global.v2.b32 [%o], {%r1, %r2}; st.global.u32 [%o+8], %r3;")
    o("generic shared (cvta.shared)", "cvta.shared.u64 %rd1, %rdsb; st.v2.b32 [%rd1+56], {%ua, %ub}; ld.v2.u32 {%r1, %r2}, [%rd1+56]; "
      "cvta.to.shared.u64 %rd2, %rd1; cvt.u32.u64 %r3, %rd2; ld.shared.u32 %r4, [%r3+60]; st.global.v4.b32 [%o], {%r1, %r2, %r4, %ua};")
    o("shared cross-thread after bar.sync", "st.shared.v4.b32 [%rsb], {%ua, %ub, %uc, %uah}; bar.sync 0; mad.lo.u32 %r5, %tidx, 37, 5; "
      "and.b32 %r5, %r5, 127; shl.b32 %r5, %r5, 6; mov.u32 %r6, sbuf; add.u32 %r5, %r5, %r6; "
      "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r5]; bar.sync 0; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    o("local v4.b32 -> v2.b64 + generic", "st.local.v4.b32 [lbuf], {%ua, %ub, %uc, %uah}; st.local.u32 [lbuf+16], %ubh; "
      "ld.local.v2.b64 {%rd1, %rd2}, [lbuf]; cvta.local.u64 %rd3, lbuf; ld.u32 %r1, [%rd3+16]; xor.b64 %rd1, %rd1, %rd2; "
      "st.global.b64 [%o], %rd1; st.global.u32 [%o+8], %r1;")
    o("const v4.b32 indexed", "and.b32 %r5, %gid, 3; mul.wide.u32 %rd2, %r5, 16; mov.u64 %rd1, ctab; add.u64 %rd1, %rd1, %rd2; "
      "ld.const.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1]; st.global.v4.b32 [%o], {%r1, %r2, %r3, %r4};")
    return table


LDST_DECL = (".const .align 16 .b32 ctab[16] = {0x03020100, 0x07060504, 0x0B0A0908, 0x0F0E0D0C, 0xDEADBEEF, 0xCAFEF00D, "
             "0x8BADF00D, 0xFEEDFACE, 0x00000000, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678, 0x9ABCDEF0, 0x0F1E2D3C, "
             "0x4B5A6978};\n")
LDST_PROLOGUE = """  .local .align 16 .b8 lbuf[64];
  mov.u32 %rsb, sbuf;
  mad.lo.u32 %rsb, %tidx, 64, %rsb;
  cvt.u64.u32 %rdsb, %rsb;"""


def add_alu(bat: Battery) -> None:
    add_opblock(bat, "alu64", ops_alu64(), threads=1024,
                note="64-bit integer arithmetic/logic/shifts/bit ops, carry chains (add.cc/addc, mad.cc/madc in 32 and 64 "
                     "bits), mul.wide/mad.wide, div/rem (incl. by zero: whatever the device returns), setp on 64-bit")
    add_opblock(bat, "f64", ops_f64(), threads=1024,
                note="f64 add/sub/mul/fma/div/rcp/sqrt in rn/rz/rm/rp, cvt f64<->f32/f16/s32/u32/s64/u64 in every "
                     "rounding mode, cvt.rXi.f64.f64, min/max/abs/neg/copysign, setp/testp on f64")
    add_opblock(bat, "cvt_int", ops_cvt(), threads=512,
                note="cvt between every pair of u8/s8/u16/s16/u32/s32/u64/s64, plain and .sat, destination register "
                     "contents in full (16-bit registers for 8-bit types: high byte shown), plus wider-register forms")
    add_opblock(bat, "misc", ops_misc(), threads=512,
                note="prmt (default mode, immediate and random selectors, f4e/b4e/rc8/ecl/ecr/rc16), selp, slct, mov "
                     "vector pack/unpack, 16-bit integer ops, set/setp with .and/.or/.xor and p|q, predicate logic, lop3 "
                     "LUTs, special registers (the ones that differ by machine, %nsmid, %nwarpid, %total_smem_size, are "
                     "informative), mul24, bfe/bfi edges")
    add_opblock(bat, "ldst", ops_ldst(), slot=16, threads=256, shared_bytes=128 * 64, extra_decl=LDST_DECL,
                prologue=LDST_PROLOGUE, m_bytes_per_thread=256,
                note="ld/st widths and sign/zero extension into wider registers, .v2/.v4 of b8..b64/f32/f64, cache and "
                     "ordering qualifiers, ldu, predicated loads, st truncation, generic/shared/shared::cluster/local/"
                     "const spaces, cross-thread shared exchange after bar.sync; 16-byte slot per op")
