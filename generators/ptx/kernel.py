"""The one template mechanism: a kernel is a skeleton around a sequence of steps.

:class:`KernelSpec` says what a kernel does (family, the instruction under test, the steps); it
is keyed by the instruction spelling, never by case: shapes, types, layouts, descriptors and
addresses are read at run time from the case record (``record.py``). :func:`render` turns a
spec into PTX for one target and `.version`.

Skeleton (docs/kernel-abi.md)::

    .entry NAME(.param .u64 case_table, .param .u32 ncases)
      prologue   case index (%clusterid.x or %ctaid.x), exit if >= ncases, load the common record
                 words, per-CTA block offsets, check the record (error 3), cluster sync (::2)
      steps      family-defined (staging, alloc, preload, instruction under test, bounded
                 commit/mbarrier wait, readback, register dump, dealloc)
      status     thread 0 of each CTA: 0x600D0000|stage, error, spins, 0

Each step is a frozen dataclass with ``render(ctx) -> list[str]`` and ``tmem_ops(ctx)`` (the
Tensor Memory operations it performs, for the allocation-rules checker, see ``hooks.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

from generators.ptx import record as R
from generators.ptx.sync_sites import delete_site
from reference.targets import version_text

WAIT_BOUND = 1 << 20          # iterations of the bounded mbarrier wait before error code 1
STATUS_OK = 0x600D0000
ERR_TIMEOUT, ERR_ALLOC, ERR_RECORD = 1, 2, 3


@dataclass(frozen=True)
class KernelSpec:
    """What one kernel does; equal specs are one kernel (and one assembly per target).

    ``family``: instruction family; ``instruction``: the instruction under test exactly as the
    kernel writes it; ``steps``: the step sequence; ``cta_group``: the kernel's single
    ``.cta_group`` (None: no tcgen05 instruction with one); ``cluster``: CTAs per cluster;
    ``threads``: threads per CTA; ``features``: Target-ISA features of the spelling;
    ``dynamic_smem``: dynamic shared memory bytes the launch must provide; ``ptx_version``:
    a forced `.version` (part of the identity: such a kernel has its own entry name).
    """

    family: str
    instruction: str
    steps: tuple = ()
    cta_group: int | None = 1
    cluster: int = 1
    threads: int = 128
    features: tuple[str, ...] = ()
    dynamic_smem: int = 0
    tmem_columns: int = 512
    ptx_version: tuple[int, int] | None = None    # forced `.version` (negative version cases)
    #: a synchronization site deleted after rendering (``generators.ptx.sync_sites`` key): the
    #: broken forms of the synchronization patterns (negative execution cases, issue 14)
    without: str = field(default="", repr=False)

    @cached_property
    def name(self) -> str:
        """Stable entry name: family slug + hash of the spec (computed once per spec: the
        execution service indexes every collected case by it)."""
        ident = repr(self) + (f"without={self.without!r}" if self.without else "")
        digest = hashlib.sha256(ident.encode()).hexdigest()[:12]
        slug = "".join(c if c.isalnum() else "_" for c in self.family)
        return f"tc_{slug}_{digest}"


@dataclass
class Ctx:
    """Render context: the spec being rendered and a label counter."""

    spec: KernelSpec
    target: str
    labels: int = 0
    decls: dict = field(default_factory=dict)

    def label(self, stem: str) -> str:
        self.labels += 1
        return f"$L_{stem}_{self.labels}"

    def reg(self, name: str, ptx_type: str = ".b32") -> str:
        """Declare (once) and return a named register ``%name``."""
        self.decls.setdefault(name, ptx_type)
        return "%" + name

    @property
    def cg(self) -> int | None:
        return self.spec.cta_group


def rec(field_name: str, index: int = 0) -> str:
    """Address expression of a case-record field: ``[%rec+OFF]``."""
    return f"[%rec+{R.offset(field_name, index)}]"


_PROLOGUE_REGS = {
    "tix": ".b32", "wid": ".b32", "lid": ".b32", "cidx": ".b32", "crank": ".b32", "err": ".b32",
    "spins": ".b32", "stage": ".b32", "out_words": ".b32", "flags": ".b32", "tbase": ".b32",
    "rec": ".b64", "in": ".b64", "out": ".b64", "status": ".b64", "outoff": ".b64",
}


def _prologue(ctx: Ctx) -> list[str]:
    spec = ctx.spec
    lines = [
        "// ---- prologue: case record ----",
        "mov.u32 %tix, %tid.x;",
        "shr.u32 %wid, %tix, 5;",
        "and.b32 %lid, %tix, 31;",
    ]
    if spec.cluster > 1:
        lines += ["mov.u32 %cidx, %clusterid.x;", "mov.u32 %crank, %cluster_ctarank;"]
    else:
        lines += ["mov.u32 %cidx, %ctaid.x;", "mov.u32 %crank, 0;"]
    lines += [
        "ld.param.u32 %r0, [ncases];",
        "setp.ge.u32 %p0, %cidx, %r0;",
        "@%p0 bra $L_exit;",
        "ld.param.u64 %rd0, [case_table];",
        "cvta.to.global.u64 %rd0, %rd0;",
        f"mul.wide.u32 %rd1, %cidx, {R.RECORD_BYTES};",
        "add.s64 %rec, %rd0, %rd1;",
        f"ld.global.u64 %rd2, {rec('in_ptr')};",
        "cvta.to.global.u64 %in, %rd2;",
        f"ld.global.u64 %rd2, {rec('out_ptr')};",
        "cvta.to.global.u64 %out, %rd2;",
        f"ld.global.u64 %rd2, {rec('status_ptr')};",
        "cvta.to.global.u64 %status, %rd2;",
        f"ld.global.u32 %out_words, {rec('out_words')};",
        f"ld.global.u32 %flags, {rec('flags')};",
        "// per-CTA blocks of a CTA pair",
        f"ld.global.u32 %r1, {rec('in_cta_stride')};",
        "mul.wide.u32 %rd3, %crank, %r1;",
        "add.s64 %in, %in, %rd3;",
        "mul.lo.u32 %r2, %out_words, %crank;",
        "mul.wide.u32 %rd3, %r2, 4;",
        "add.s64 %out, %out, %rd3;",
        f"mul.wide.u32 %rd3, %crank, {4 * R.STATUS_WORDS};",
        "add.s64 %status, %status, %rd3;",
        "mov.u64 %outoff, 0;",
        "mov.u32 %err, 0;",
        "mov.u32 %spins, 0;",
        "mov.u32 %stage, 1;",
        "mov.u32 %tbase, 0;",
        "// bad record: staging past the end of the buffer",
        f"ld.global.u32 %r3, {rec('smem_bytes')};",
        f"ld.global.u32 %r4, {rec('smem_dst')};",
        "add.u32 %r3, %r3, %r4;",
        f"setp.gt.u32 %p1, %r3, {R.SMEM_CAPACITY};",
        f"@%p1 mov.u32 %err, {ERR_RECORD};",
        "@%p1 bra $L_status;",
    ]
    if spec.cluster > 1:
        lines += ["barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"]
    return lines


def _status(ctx: Ctx) -> list[str]:
    return [
        "// ---- status words (thread 0 of each CTA) ----",
        "$L_status:",
        "setp.ne.u32 %p0, %tix, 0;",
        "@%p0 bra $L_exit;",
        f"or.b32 %r0, %stage, {STATUS_OK:#x};",
        "st.global.u32 [%status], %r0;",
        "st.global.u32 [%status+4], %err;",
        "st.global.u32 [%status+8], %spins;",
        "st.global.u32 [%status+12], 0;",
        "$L_exit:",
        "ret;",
    ]


def render(spec: KernelSpec, target: str, version: tuple[int, int]) -> str:
    """PTX module text of ``spec`` for ``target`` with `.version` ``version`` (or the spec's own)."""
    version = spec.ptx_version or version
    ctx = Ctx(spec, target)
    for name, typ in _PROLOGUE_REGS.items():
        ctx.reg(name, typ)
    body: list[str] = _prologue(ctx)
    for step in spec.steps:
        body += [f"// ---- {type(step).__name__} ----"] + step.render(ctx)
    body += _status(ctx)
    directives = [f".reqntid {spec.threads}, 1, 1"]
    if spec.cluster > 1:
        directives.append(f".reqnctapercluster {spec.cluster}, 1, 1")
    decls = [
        ".reg .pred %p<8>;", ".reg .b32 %r<16>;", ".reg .b64 %rd<8>;", ".reg .b16 %h<4>;",
    ] + [f".reg {typ} %{name};" for name, typ in ctx.decls.items()]
    out = [
        f"// tcgen05-cts kernel: {spec.family}",
        f"// instruction under test: {spec.instruction}",
        f".version {version_text(version)}",
        f".target {target}",
        ".address_size 64",
        "",
    ]
    if spec.dynamic_smem:
        out.append(".extern .shared .align 1024 .b8 tc_smem[];")
    out += [
        f".visible .entry {spec.name}(",
        "    .param .u64 case_table,",
        "    .param .u32 ncases",
        ")",
    ] + directives + ["{"]
    out += ["    " + d for d in decls]
    out += ["    .shared .align 8 .b64 tc_mbar;", "    .shared .align 8 .b64 tc_mbar2;", "    .shared .align 8 .b32 tc_slot;"]
    out += [("    " + line if not line.startswith("$L") else line) for line in body]
    out.append("}")
    text = "\n".join(out) + "\n"
    return delete_site(text, spec.without) if spec.without else text


def tmem_ops(spec: KernelSpec) -> tuple:
    """The Tensor Memory operations of ``spec`` in program order (for the allocation checker)."""
    ctx = Ctx(spec, "")
    ops: list = []
    for step in spec.steps:
        ops.extend(step.tmem_ops(ctx))
    return tuple(ops)
