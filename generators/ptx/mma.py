"""tcgen05.mma / .mma.sp / .mma.ws / .mma.ws.sp spellings and their kernels (§9.7.16.10.9).

:class:`MmaSpelling` holds exactly the axes that change the instruction text (what ptxas sees);
everything else (M, N, types, layouts, transpose/negate, selector, scale ids, masks) lives in
the instruction/shared-memory/zero-column-mask descriptors and TMEM addresses of the case record.

Operand order (syntax blocks of §9.7.16.10.9.1-4)::

    tcgen05.mma{.ws}{.sp}.cta_group::N.kind::K{.block_scale{.vec}}{.ashift}{.collector::B::OP}
        [d], (a-desc | [a-tmem]), b-desc, {[sp-meta]}, idesc,
        block-scaled: [scale-A], [scale-B], enable-input-d
        .ws:          enable-input-d {, zero-column-mask-desc}
        otherwise:    {{disable-output-lane}}, enable-input-d {, scale-input-d}
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.ptx import record as R
from generators.ptx.kernel import KernelSpec, rec
from generators.ptx.steps import Alloc, Dealloc, Issue, Preload, Readback, StageSmem, WaitMbarrier
from reference.tables import BLOCK_SCALED_KINDS


@dataclass(frozen=True)
class MmaSpelling:
    """The assembly-visible axes of one MMA instruction."""

    kind: str
    cta_group: int = 1
    sparse: bool = False
    ws: bool = False
    scale_vec: str | None = None      # block-scaled kinds only; None = qualifier omitted
    collector: str | None = None      # "a::fill", "b2::use", ...; None = omitted
    ashift: bool = False
    a_tmem: bool = False
    dol: bool = False                 # disable-output-lane operand present
    scale_input_d: int | None = None  # immediate, None = operand omitted
    zcm: bool = False                 # zero-column-mask-desc operand present (.ws)

    @property
    def block_scaled(self) -> bool:
        return self.kind in BLOCK_SCALED_KINDS

    @property
    def family(self) -> str:
        return "mma" + (".ws" if self.ws else "") + (".sp" if self.sparse else "")

    @property
    def section(self) -> str:
        return {"mma": "9.7.16.10.9.1", "mma.sp": "9.7.16.10.9.2", "mma.ws": "9.7.16.10.9.3",
                "mma.ws.sp": "9.7.16.10.9.4"}[self.family]

    def opcode(self) -> str:
        """Opcode with qualifiers, e.g. ``tcgen05.mma.cta_group::1.kind::f16.collector::a::fill``."""
        text = "tcgen05." + self.family + f".cta_group::{self.cta_group}.kind::{self.kind}"
        if self.block_scaled:
            text += ".block_scale" + (f".{self.scale_vec}" if self.scale_vec else "")
        if self.ashift:
            text += ".ashift"
        if self.collector:
            text += f".collector::{self.collector}"
        return text

    def operands(self) -> list[str]:
        ops = ["[%tm_d]", "[%tm_a]" if self.a_tmem else "%adesc", "%bdesc"]
        if self.sparse:
            ops.append("[%tm_meta]")
        ops.append("%idesc")
        if self.block_scaled:
            return ops + ["[%tm_sfa]", "[%tm_sfb]", "%en_d"]
        if self.ws:
            return ops + ["%en_d"] + (["%zcm"] if self.zcm else [])
        if self.dol:
            ops.append("{" + ", ".join(f"%dol{i}" for i in range(4 * self.cta_group)) + "}")
        ops.append("%en_d")
        if self.scale_input_d is not None:
            ops.append(str(self.scale_input_d))
        return ops

    def instruction(self) -> str:
        return f"{self.opcode()} " + ", ".join(self.operands()) + ";"

    def features(self) -> tuple[str, ...]:
        """Target-ISA features of the spelling (reference.targets.FEATURES names)."""
        out = ["tcgen05." + self.family]
        if self.kind == "i8":
            out.append("kind::i8")
        if self.kind == "mxf4nvf4":
            out.append("kind::mxf4nvf4")
        if self.sparse and self.kind in ("mxf4", "mxf4nvf4"):
            out.append("sparse kind::mxf4")
        if self.scale_input_d is not None:
            out.append("scale-input-d")
        if self.block_scaled:
            # omitted qualifier: .block32 by the text for mxf4 and by ptxas for mxf8f6f4
            vec = self.scale_vec or "block32"
            out.append("scale_vec::NX" if vec.startswith("scale_vec") else "block16/block32")
        return tuple(out)


def mma_setup(sp: MmaSpelling) -> tuple[str, ...]:
    lines = [
        f"ld.global.u32 %idesc, {rec('idesc')};",
        f"ld.global.u32 %r12, {rec('tm_d')};",
        "add.u32 %tm_d, %tbase, %r12;",
        "and.b32 %r13, %flags, 1;",
        f"setp.ne.u32 %en_d, %r13, {0};",
        "shr.u32 %r12, %sbase, 4;",
        "cvt.u64.u32 %rd4, %r12;",
        "shl.b64 %rd5, %rd4, 16;",
        f"ld.global.u64 %bdesc, {rec('b_desc')};",
        "add.s64 %bdesc, %bdesc, %rd4;",
        f"and.b32 %r13, %flags, {R.FLAG_B_LBO_ABSOLUTE};",
        "setp.ne.u32 %p7, %r13, 0;",
        "@%p7 add.s64 %bdesc, %bdesc, %rd5;",
    ]
    if sp.a_tmem:
        lines += [f"ld.global.u32 %r12, {rec('tm_a')};", "add.u32 %tm_a, %tbase, %r12;"]
    else:
        lines += [
            f"ld.global.u64 %adesc, {rec('a_desc')};",
            "add.s64 %adesc, %adesc, %rd4;",
            f"and.b32 %r13, %flags, {R.FLAG_A_LBO_ABSOLUTE};",
            "setp.ne.u32 %p7, %r13, 0;",
            "@%p7 add.s64 %adesc, %adesc, %rd5;",
        ]
    for name in (["tm_meta"] if sp.sparse else []) + (["tm_sfa", "tm_sfb"] if sp.block_scaled else []):
        lines += [f"ld.global.u32 %r12, {rec(name)};", f"add.u32 %{name}, %tbase, %r12;"]
    if sp.dol and not sp.block_scaled and not sp.ws:
        lines += [f"ld.global.u32 %dol{i}, {rec('dol', i)};" for i in range(4 * sp.cta_group)]
    if sp.zcm:
        lines.append(f"ld.global.u64 %zcm, {rec('zcm_desc')};")
    return tuple(lines)


def mma_regs(sp: MmaSpelling) -> list[tuple[str, str]]:
    regs = [("idesc", ".b32"), ("tm_d", ".b32"), ("en_d", ".pred"), ("bdesc", ".b64"), ("sbase", ".b32")]
    regs.append(("tm_a", ".b32") if sp.a_tmem else ("adesc", ".b64"))
    regs += [(n, ".b32") for n in (["tm_meta"] if sp.sparse else []) + (["tm_sfa", "tm_sfb"] if sp.block_scaled else [])]
    regs += [(f"dol{i}", ".b32") for i in range(4 * sp.cta_group)] if sp.dol else []
    regs += [("zcm", ".b64")] if sp.zcm else []
    return regs


@dataclass(frozen=True)
class Declare:
    """Declares registers used by the issue block (no lines, no TMEM operations)."""

    regs: tuple[tuple[str, str], ...]

    def render(self, ctx) -> list[str]:
        for name, typ in self.regs:
            ctx.reg(name, typ)
        return []

    def tmem_ops(self, ctx) -> tuple:
        return ()


def mma_kernel(sp: MmaSpelling, instruction: str | None = None) -> KernelSpec:
    """Stage smem, allocate 512 columns, preload TMEM (D, A, scales, metadata), issue the MMA and
    commit, bounded wait, read back, deallocate. ``instruction`` overrides the text (negative
    cases: spellings no MmaSpelling produces); the operands of ``sp`` are still set up."""
    text = instruction or sp.instruction()
    steps = (
        Declare(tuple(mma_regs(sp))),
        StageSmem(),
        Alloc(512),
        Preload(),
        Issue(mma_setup(sp), text, op="mma"),
        WaitMbarrier(),
        Readback(),
        Dealloc(512),
    )
    return KernelSpec(family=sp.family, instruction=text, steps=steps, cta_group=sp.cta_group,
                      cluster=sp.cta_group, features=sp.features(), dynamic_smem=R.DYNAMIC_SMEM_BYTES)
