"""Negative cases: spellings the spec forbids and ptxas can see; each names the rule it breaks.

Every negative case is in every level (they are few and cheap). ``deviations`` records what a
known toolchain does instead (accepts it): the assembly tier then reports an expected failure,
so a toolchain change shows up (strict xfail).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generators.params import Case, Params
from generators.ptx import movement as M
from generators.ptx.kernel import KernelSpec
from generators.ptx.mma import MmaSpelling, mma_kernel
from generators.ptx.warp import WarpSparseSpelling, warp_sparse_kernel
from generators.variants.common import make_case


@dataclass(frozen=True)
class Negative:
    slug: str
    family: str
    section: str
    rule: str
    kernel: KernelSpec
    target: str = "sm_100a"
    ptx_version: tuple[int, int] | None = None
    deviations: tuple[tuple[str, str], ...] = ()


def _mma(slug, rule, target="sm_100a", version=None, deviations=(), text=None, **kw) -> Negative:
    sp = MmaSpelling(**kw)
    return Negative(slug, sp.family, sp.section, rule, mma_kernel(sp, text), target, version, deviations)


_SID = "§9.7.16.10.9.1: scale-input-d is only valid for .kind::tf32 and .kind::f16"
_BS = "tcgen05.mma.cta_group::1.kind::{k}{q} [%tm_d], %adesc, %bdesc, %idesc, [%tm_sfa], [%tm_sfb], %en_d;"


def _mma_negatives() -> list[Negative]:
    return [
        _mma("ws_with_cta_group_2", "Table 39: .ws with CTA group 2 is Invalid; syntax .mma.ws.cta_group::1 only",
             kind="f16", ws=True, cta_group=2),
        _mma("scale_input_d_with_f8f6f4", _SID, kind="f8f6f4", scale_input_d=1),
        _mma("scale_input_d_with_i8", _SID + " (the .kind::i8 forms have no scale-input-d)", kind="i8", scale_input_d=2,
             deviations=(("13.", "ptxas 13.0.88 and 13.5.37 accept scale-input-d with .kind::i8"),)),
        _mma("scale_input_d_16", "§9.7.16.10.9.1: the valid range of scale-input-d is [0, 15]", kind="f16", scale_input_d=16),
        _mma("scale_input_d_on_sm_110a", "Target ISA Notes: scale-input-d requires sm_100a / sm_100f family",
             target="sm_110a", kind="f16", scale_input_d=1),
        *[_mma(f"kind_i8_on_{t}", "Target ISA Notes: .kind::i8 is supported on sm_100a, sm_110a only", target=t, kind="i8")
          for t in ("sm_100f", "sm_103a", "sm_110f")],
        _mma("collector_a_fill_with_ashift", "§9.7.16.10.9.1: illegal to specify .collector::a::fill with .ashift",
             kind="f16", a_tmem=True, ashift=True, collector="a::fill"),
        _mma("collector_a_use_with_ashift", "§9.7.16.10.9.1: illegal to specify .collector::a::use with .ashift",
             kind="tf32", a_tmem=True, ashift=True, collector="a::use"),
        _mma("ashift_with_a_desc", "§9.7.16.10.9.1 syntax: .ashift only in the [a-tmem] forms", kind="f16", ashift=True),
        _mma("missing_block_scale_mxf8f6f4", "§9.7.16.10.9.1 syntax 2: .kind::mxf8f6f4 requires .block_scale",
             text=_BS.format(k="mxf8f6f4", q=""), kind="mxf8f6f4"),
        _mma("missing_block_scale_mxf4", "§9.7.16.10.9.1 syntax 2: .kind::mxf4 requires .block_scale",
             text=_BS.format(k="mxf4", q=""), kind="mxf4", version=(8, 8)),
        _mma("mxf4nvf4_without_scale_vectorsize", "§9.7.16.10.9.1: for .kind::mxf4nvf4 .scale_vectorsize must be specified",
             kind="mxf4nvf4", version=(8, 8)),
        _mma("scale_vec_2X_with_mxf8f6f4", "Table 55: mxf8f6f4 allows .scale_vec::1X/.block32 only",
             kind="mxf8f6f4", scale_vec="scale_vec::2X"),
        _mma("block16_with_mxf4", "Table 55: mxf4 allows .scale_vec::2X/.block32 only", kind="mxf4", scale_vec="block16"),
        _mma("scale_vec_1X_with_mxf4", "Table 55: mxf4 allows .scale_vec::2X/.block32 only", kind="mxf4", scale_vec="scale_vec::1X"),
        _mma("scale_vec_1X_on_sm_100f", "Target ISA Notes: .scale_vec::1X/2X/4X requires sm_100a",
             target="sm_100f", kind="mxf8f6f4", scale_vec="scale_vec::1X"),
        _mma("block32_with_ptx_8_7", "PTX ISA Notes: .block16/.block32 introduced in PTX ISA 8.8",
             version=(8, 7), kind="mxf8f6f4", scale_vec="block32"),
        _mma("mxf4nvf4_with_ptx_8_6", "PTX ISA Notes: .kind::mxf4nvf4 introduced in PTX ISA 8.7",
             version=(8, 6), kind="mxf4nvf4", scale_vec="scale_vec::4X"),
        _mma("sparse_mxf4_on_sm_100f", "Target ISA Notes (mma.sp): .kind::mxf4 not on the f families",
             target="sm_100f", kind="mxf4", sparse=True, scale_vec="block32"),
        _mma("dol_8_with_cta_group_1", "§9.7.16.10.9.1: disable-output-lane has 4 elements for cta_group::1",
             text="tcgen05.mma.cta_group::1.kind::f16 [%tm_d], %adesc, %bdesc, %idesc, "
                  "{%dol0, %dol1, %dol2, %dol3, %dol0, %dol1, %dol2, %dol3}, %en_d;", kind="f16", dol=True),
        _mma("dol_4_with_cta_group_2", "§9.7.16.10.9.1: disable-output-lane has 8 elements for cta_group::2",
             text="tcgen05.mma.cta_group::2.kind::f16 [%tm_d], %adesc, %bdesc, %idesc, {%dol0, %dol1, %dol2, %dol3}, %en_d;",
             kind="f16", cta_group=2, dol=True),
        _mma("dol_with_block_scale", "§9.7.16.10.9.1 syntax 2: block-scaled forms have no disable-output-lane",
             text="tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 [%tm_d], %adesc, %bdesc, %idesc, "
                  "[%tm_sfa], [%tm_sfb], {%dol0, %dol1, %dol2, %dol3}, %en_d;", kind="mxf8f6f4", scale_vec="block32", dol=True),
        _mma("collector_b0_without_ws", "§9.7.16.10.9.1: ::buffer = { ::a } for .mma", kind="f16", collector="b0::fill"),
        _mma("collector_a_with_ws", "§9.7.16.10.9.3: ::buffer = { ::b0, ::b1, ::b2, ::b3 } for .mma.ws",
             kind="f16", ws=True, collector="a::fill"),
        _mma("zero_column_mask_without_ws", "§9.7.16.10.9.1 syntax: no zero-column-mask-desc operand",
             text="tcgen05.mma.cta_group::1.kind::f16 [%tm_d], %adesc, %bdesc, %idesc, %en_d, %zcm;", kind="f16", zcm=True),
        _mma("ws_with_block_scale", "Table 39: .kind::mxf8f6f4 with .ws is Invalid",
             text="tcgen05.mma.ws.cta_group::1.kind::mxf8f6f4.block_scale.block32 [%tm_d], %adesc, %bdesc, %idesc, "
                  "[%tm_sfa], [%tm_sfb], %en_d;", kind="mxf8f6f4", scale_vec="block32"),
        _mma("tcgen05_on_sm_90a", "Target ISA Notes: tcgen05.mma is not supported on sm_90a", target="sm_90a", kind="f16"),
        Negative("mixed_cta_group", "mma", "9.7.16.10.9.1",
                 "§9.7.16.10.9.1: all tcgen05 instructions within a kernel must specify the same .cta_group",
                 mma_kernel(MmaSpelling("f16", cta_group=1), "tcgen05.mma.cta_group::2.kind::f16 [%tm_d], %adesc, %bdesc, %idesc, %en_d;")),
    ]


def _ld(slug, rule, text, nregs, target="sm_100a", red=False, family=None) -> Negative:
    return Negative(slug, family or ("ld.red" if red else "ld"), "9.7.16.8.3", rule, M.ld_kernel(text, nregs, red=red), target)


def _regs(n: int) -> str:
    return "{" + ", ".join(f"%v{i}" for i in range(n)) + "}"


def _movement_negatives() -> list[Negative]:
    red = "tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 {%v0, %v1}, %redval, [%ta];"
    return [
        _ld("ld_16x256b_x64", "Table 47: .16x256b.x64 is NA",
            f"tcgen05.ld.sync.aligned.16x256b.x64.b32 {_regs(128)}, [%ta];", 128),
        _ld("ld_16x128b_x128", "Table 47: .16x128b.x128 is NA",
            f"tcgen05.ld.sync.aligned.16x128b.x128.b32 {_regs(128)}, [%ta];", 128),
        _ld("ld_vector_size_mismatch", "Table 47: .32x32b.x4 takes 4 registers",
            f"tcgen05.ld.sync.aligned.32x32b.x4.b32 {_regs(3)}, [%ta];", 3),
        _ld("ld_16x32bx2_without_imm", "§9.7.16.8.3: .16x32bx2 takes immHalfSplitoff",
            f"tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {_regs(2)}, [%ta];", 2),
        *[_ld(f"ld_red_on_{t}", "Target ISA Notes: tcgen05.ld.red is not on sm_100a/sm_100f", red, 2, target=t, red=True)
          for t in ("sm_100a", "sm_100f")],
        _ld("ld_red_x1", "§9.7.16.8.3: with .red, .num must be at least .x2",
            "tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32 {%v0}, %redval, [%ta];", 1, target="sm_103a", red=True),
        _ld("ld_red_16x64b", "§9.7.16.8.3: .red shapes are .32x32b and .16x32bx2",
            "tcgen05.ld.red.sync.aligned.16x64b.x2.min.f32 {%v0, %v1}, %redval, [%ta];", 2, target="sm_103a", red=True),
        _ld("ld_red_abs_u32", "§9.7.16.8.3: .abs/.NaN only with .f32",
            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.u32 {%v0, %v1}, %redval, [%ta];", 2, target="sm_103a", red=True),
        Negative("st_16x256b_x64", "st", "9.7.16.8.4", "Table 48: .16x256b.x64 is NA",
                 M.st_kernel(f"tcgen05.st.sync.aligned.16x256b.x64.b32 [%ta], {_regs(128)};", 128)),
        *[Negative(f"cp_{slug}", "cp", "9.7.16.9.2", rule, M.cp_kernel(M.cp_instruction(1, shape, mc, None), 1))
          for slug, shape, mc, rule in (
              ("64x128b_without_multicast", "64x128b", None, "§9.7.16.9.2: .64x128b requires .warpx2::02_13 or .warpx2::01_23"),
              ("32x128b_with_warpx2", "32x128b", "warpx2::01_23", "§9.7.16.9.2: .32x128b requires .warpx4"),
              ("128x256b_with_warpx4", "128x256b", "warpx4", "§9.7.16.9.2: .warpx4 is for .32x128b"))],
        *[Negative(f"shift_on_{t}", "shift", "9.7.16.9.3", "Target ISA Notes: tcgen05.shift is on sm_100a, sm_103a, sm_110a only",
                   M.shift_kernel(M.shift_instruction(1), 1), target=t) for t in ("sm_100f", "sm_110f")],
        Negative("shift_without_down", "shift", "9.7.16.9.3", "§9.7.16.9.3 syntax: .down is mandatory",
                 M.shift_kernel("tcgen05.shift.cta_group::1 [%ta];", 1)),
        *[Negative(f"alloc_ncols_{n}", "alloc", "9.7.16.7.1", f"§9.7.16.7.1: nCols must be a power of 2 in [32, 512] ({why})",
                   _alloc_with(n)) for n, why in ((48, "not a power of 2"), (16, "below 32"), (1024, "above 512"))],
        Negative("dealloc_ncols_96", "alloc", "9.7.16.7.1", "§9.7.16.7.1: nCols must be a power of 2",
                 _alloc_with(96, op="dealloc"),
                 deviations=(("13.0", "ptxas 13.0.88 checks only 'multiple of 32' for tcgen05.dealloc"),)),
        Negative("commit_multicast_without_mask", "commit", "9.7.16.12.1",
                 "§9.7.16.12.1: .multicast::cluster takes the ctaMask operand",
                 M.commit_kernel("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%mbar];", 1)),
    ]


def _alloc_with(ncols: int, op: str = "alloc") -> KernelSpec:
    good = M.alloc_kernel(op, 1, 32, True)
    bad = good.instruction.replace(", 32;", f", {ncols};")
    steps = tuple(type(s)(tuple(line.replace(good.instruction, bad) for line in s.lines), s.regs, s.ops)
                  if hasattr(s, "lines") else s for s in good.steps)
    return KernelSpec(family="alloc", instruction=bad, steps=steps, cta_group=1, features=good.features)


def _warp_negatives() -> list[Negative]:
    f16 = dict(shape="m16n8k16", d_type="f32", a_type="f16", b_type="f16", c_type="f32", selector=0,
               a_regs=2, b_regs=2, c_regs=4, d_regs=4)
    fp8 = dict(shape="m16n8k64", d_type="f32", a_type="e4m3", b_type="e2m1", c_type="f32", selector=0,
               a_regs=4, b_regs=4, c_regs=4, d_regs=4, kind="f8f6f4")
    return [
        Negative("ordered_metadata_with_ptx_8_4", "warp.mma.sp", "9.7.14.6.1",
                 "PTX ISA Notes: mma.sp::ordered_metadata introduced in PTX ISA 8.5",
                 warp_sparse_kernel(WarpSparseSpelling(ordered=True, **f16)), target="sm_90", ptx_version=(8, 4)),
        Negative("kind_f8f6f4_on_sm_90", "warp.mma.sp", "9.7.14.6.1",
                 "Target ISA Notes: .kind::f8f6f4 mma.sp requires sm_120a",
                 warp_sparse_kernel(WarpSparseSpelling(ordered=True, **fp8)), target="sm_90", ptx_version=(8, 7)),
        Negative("e4m3_on_sm_80", "warp.mma.sp", "9.7.14.6.1", "Target ISA Notes: mma.sp with .e4m3 requires sm_89",
                 warp_sparse_kernel(WarpSparseSpelling(ordered=True, shape="m16n8k64", d_type="f32", a_type="e4m3",
                                                       b_type="e4m3", c_type="f32", selector=0, a_regs=4, b_regs=4,
                                                       c_regs=4, d_regs=4)), target="sm_80", ptx_version=(8, 5)),
    ]


def negatives() -> list[Negative]:
    return _mma_negatives() + _movement_negatives() + _warp_negatives()


def negative_cases(level: str, family: str | None = None) -> list[Case]:
    out = []
    for neg in negatives():
        if family is not None and neg.family != family:
            continue
        kernel = replace(neg.kernel, ptx_version=neg.ptx_version) if neg.ptx_version else neg.kernel
        head = neg.kernel.instruction.split(" ")[0]
        cid = f"{head}.invalid.{neg.slug}.{neg.target}"
        out.append(make_case(cid, neg.family, neg.section, kernel, Params.of(slug=neg.slug), legal=False,
                             rule=neg.rule, targets=(neg.target,), ptx_version=neg.ptx_version,
                             deviations=neg.deviations, features=neg.kernel.features or ("tcgen05.mma",)))
    return out
