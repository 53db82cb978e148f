"""Warp-level sparse MMA (``mma.sp`` / ``mma.sp::ordered_metadata``, PTX ISA §9.7.14.6) kernels.

The only kernels of the suite a Hopper (sm_90) or Ampere GPU can run. Same ABI as every other
kernel (case table, one CTA per case, status words); one warp (32 threads) per CTA, no Tensor
Memory. Each thread loads its A, B, C fragments, metadata and scale words from
``in + regs_src + tid * nwords * 4`` (order: A, B, C, E, then scale-A, scale-B data), runs the
instruction under test, and stores its D fragment.

Syntax (public PTX ISA §9.7.14.6.3)::

    mma.sp{::ordered_metadata}.sync.aligned.<shape>.row.col{.satfinite}{.kind{.block_scale{.vec}}}
        .<dtype>.<atype>.<btype>.<ctype>{.<stype>}  d, a, b, c, e, <selector>
        {, scale-a, {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}}
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.ptx.kernel import KernelSpec, rec
from generators.ptx.steps import DumpRegs, LoadRegs, Raw, Warps


@dataclass(frozen=True)
class WarpSparseSpelling:
    """Assembly-visible axes of one warp-level mma.sp instruction and its fragment sizes."""

    shape: str
    d_type: str
    a_type: str
    b_type: str
    c_type: str
    ordered: bool
    selector: int
    a_regs: int
    b_regs: int
    c_regs: int
    d_regs: int
    satfinite: bool = False
    kind: str | None = None
    scale_vec: str | None = None
    scale_type: str | None = None

    @property
    def block_scaled(self) -> bool:
        return self.kind is not None and self.kind.startswith("mx")

    def opcode(self) -> str:
        text = "mma.sp" + ("::ordered_metadata" if self.ordered else "") + f".sync.aligned.{self.shape}.row.col"
        if self.satfinite:
            text += ".satfinite"
        if self.kind:
            text += f".kind::{self.kind}"
            if self.block_scaled:
                text += ".block_scale" + (f".{self.scale_vec}" if self.scale_vec else "")
        text += f".{self.d_type}.{self.a_type}.{self.b_type}.{self.c_type}"
        if self.scale_type:
            text += f".{self.scale_type}"
        return text

    def registers(self) -> dict[str, tuple[str, ...]]:
        return {
            "d": tuple(f"%d{i}" for i in range(self.d_regs)),
            "a": tuple(f"%a{i}" for i in range(self.a_regs)),
            "b": tuple(f"%b{i}" for i in range(self.b_regs)),
            "c": tuple(f"%c{i}" for i in range(self.c_regs)),
        }

    def instruction(self) -> str:
        r = self.registers()
        vec = lambda regs: "{" + ", ".join(regs) + "}"  # noqa: E731
        ops = [vec(r["d"]), vec(r["a"]), vec(r["b"]), vec(r["c"]), "%e", f"{self.selector:#x}"]
        if self.block_scaled:
            ops += ["%sfa", "{%bida, %tida}", "%sfb", "{%bidb, %tidb}"]
        return f"{self.opcode()} " + ", ".join(ops) + ";"

    def features(self) -> tuple[str, ...]:
        out = ["mma.sp::ordered_metadata" if self.ordered else "mma.sp"]
        if self.kind:
            out.append("mma.sp kind::f8f6f4")
        elif self.a_type in ("e4m3", "e5m2"):
            out.append("mma.sp e4m3/e5m2")
        return tuple(out)


def _reg_type(type_word: str) -> str:
    return ".f32" if type_word == "f32" else ".b32"


def warp_sparse_kernel(sp: WarpSparseSpelling) -> KernelSpec:
    r = sp.registers()
    decls = [(x[1:], _reg_type(sp.d_type)) for x in r["d"]] + [(x[1:], _reg_type(sp.c_type)) for x in r["c"]]
    decls += [(x[1:], ".b32") for x in r["a"] + r["b"]] + [("e", ".b32")]
    inputs = r["a"] + r["b"] + r["c"] + ("%e",)
    setup: tuple[str, ...] = ()
    if sp.block_scaled:
        decls += [("sfa", ".b32"), ("sfb", ".b32")] + [(n, ".b16") for n in ("bida", "tida", "bidb", "tidb")]
        inputs += ("%sfa", "%sfb")
        setup = tuple(line for i, n in enumerate(("bida", "tida", "bidb", "tidb"))
                      for line in (f"ld.global.u32 %r12, {rec('aux', i)};", f"cvt.u16.u32 %{n}, %r12;"))
    steps = (Raw((), regs=tuple(decls)), LoadRegs(inputs), Warps(setup + (sp.instruction(),)), DumpRegs(r["d"]))
    return KernelSpec(family="warp.mma.sp", instruction=sp.instruction(), steps=steps, cta_group=None, cluster=1,
                      threads=32, features=sp.features(), tmem_columns=0)
