"""Tensor Memory allocation rules as a checker over what a kernel does (§9.7.16.1.2, §9.7.16.7.1).

A kernel generator describes one CTA's tcgen05 activity, in execution order, as a sequence of
operations (the program is the same in every CTA; with ``cta_group::2`` the peer CTA runs it too).
:func:`check_allocations` returns the first violated rule (or None); :func:`require_valid_allocations`
raises it as a SpecError.

Operation vocabulary (tuples, or the dataclasses below)::

    ("alloc", ncols, cta_group, warp[, name])      tcgen05.alloc;  name defaults to "a<k>" (k-th alloc)
    ("dealloc", name, ncols, cta_group, warp)      tcgen05.dealloc of the allocation called name
    ("relinquish", cta_group, warp)                tcgen05.relinquish_alloc_permit
    (op, cta_group)   op in mma, cp, shift, commit  (cta_group 1 or 2)
    (op,)             op in ld, st, wait, fence     (no .cta_group qualifier)
    ("exit",)                                       the CTA exits (implied at the end)

``warp`` is the warp id (in the CTA) issuing the instruction; a tuple of ids means several warps
issued the same instance (a violation: one warp issues it, Table 46). Dataclass forms add
``peer=False`` for a ``cta_group::2`` alloc/dealloc/relinquish the peer CTA's warp does not join.

Rules, in the order checked for each operation:
  R1  nCols is a power of 2 in [32, 512]                                     §9.7.16.7.1
  R2  nCols does not increase between two allocations of the CTA             §9.7.16.7.1
  R3  no tcgen05.alloc after tcgen05.relinquish_alloc_permit                 §9.7.16.7.1
  R4  alloc/dealloc/relinquish are issued by one warp (::1), or by one warp
      in each CTA of the pair (::2)                                          §9.7.16.7.1, §9.7.16.5
  R5  every tcgen05 instruction of the kernel has the same .cta_group        §9.7.16.7.1
  R6  dealloc names a live allocation with its nCols (decision: whole
      allocations are freed; the text says only "must point to a previous
      Tensor Memory allocation")                                             §9.7.16.7.1
  R7  everything allocated is deallocated before the kernel exits            §9.7.16.1.2, §9.7.16.7.1
  R8  live allocations fit the 512 columns (else tcgen05.alloc blocks for
      ever: nothing of this CTA can free columns while it waits)             §9.7.16.1, §9.7.16.7.1
  R9  nothing after exit                                                     (trace well-formedness)
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.errors import SpecError, expects_but_got
from reference.tmem import COLUMNS

SECTION = "9.7.16.7.1"
ALLOC_COLUMNS: tuple[int, ...] = (32, 64, 128, 256, 512)
GROUPED_OPS: frozenset[str] = frozenset({"mma", "cp", "shift", "commit"})
UNGROUPED_OPS: frozenset[str] = frozenset({"ld", "st", "wait", "fence"})


@dataclass(frozen=True)
class Alloc:
    ncols: int
    cta_group: int = 1
    warp: int | tuple[int, ...] = 0
    name: str | None = None
    peer: bool = True


@dataclass(frozen=True)
class Dealloc:
    name: str
    ncols: int
    cta_group: int = 1
    warp: int | tuple[int, ...] = 0
    peer: bool = True


@dataclass(frozen=True)
class Relinquish:
    cta_group: int = 1
    warp: int | tuple[int, ...] = 0
    peer: bool = True


@dataclass(frozen=True)
class Use:
    """Any other tcgen05 instruction; ``cta_group`` None for ld/st/wait/fence."""

    op: str
    cta_group: int | None = None


@dataclass(frozen=True)
class Exit:
    pass


@dataclass(frozen=True)
class Violation:
    """The first rule a sequence breaks: ``index`` of the operation (len(ops) for end-of-kernel)."""

    index: int
    section: str
    rule: str
    detail: str

    def error(self) -> SpecError:
        return SpecError(self.section, self.rule, f"operation {self.index}: {self.detail}")


def parse_op(op) -> Alloc | Dealloc | Relinquish | Use | Exit:
    """Turn one tuple of the vocabulary into its dataclass (dataclasses pass through)."""
    if isinstance(op, (Alloc, Dealloc, Relinquish, Use, Exit)):
        return op
    if not isinstance(op, tuple) or not op or not isinstance(op[0], str):
        raise ValueError(expects_but_got("operation", "a tuple starting with its name", op))
    kind, args = op[0], op[1:]
    try:
        if kind == "alloc":
            return Alloc(*args)
        if kind == "dealloc":
            return Dealloc(*args)
        if kind == "relinquish":
            return Relinquish(*args)
        if kind == "exit" and not args:
            return Exit()
        if kind in GROUPED_OPS and len(args) == 1:
            return Use(kind, args[0])
        if kind in UNGROUPED_OPS and not args:
            return Use(kind)
    except TypeError:
        pass
    raise ValueError(expects_but_got("operation", "one of the forms in reference.tmem_alloc's docstring", op))


def _issuer_problem(op) -> str | None:
    warps = op.warp if isinstance(op.warp, tuple) else (op.warp,)
    if len(warps) != 1:
        return f"one warp per CTA, but got warps {list(warps)}"
    if op.cta_group == 2 and not op.peer:
        return "a warp in each CTA of the pair (.cta_group::2), but the peer CTA's warp does not join"
    return None


def check_allocations(ops) -> Violation | None:
    """The first violated allocation rule in ``ops`` (one CTA's tcgen05 operations), or None."""
    live: dict[str, int] = {}                 # name -> ncols
    last_ncols: int | None = None
    relinquished = False
    group: int | None = None
    allocs = 0
    ops = list(ops)
    for index, raw in enumerate(ops):
        op = parse_op(raw)

        def bad(section: str, rule: str, detail: str, _i: int = index) -> Violation:
            return Violation(_i, section, rule, detail)

        if isinstance(op, Exit):
            if live:
                name, ncols = next(iter(live.items()))
                return bad("9.7.16.1.2", "deallocate before exit", expects_but_got(
                    "Tensor Memory at exit", "all allocations deallocated", f"{name} ({ncols} columns) still allocated"))
            if index != len(ops) - 1:
                return Violation(index + 1, "9.7.16.7.1", "nothing after exit", "an operation follows the CTA's exit")
            return None
        grouped = getattr(op, "cta_group", None)
        if isinstance(op, Use) and op.op in UNGROUPED_OPS:
            grouped = None
        elif isinstance(op, Use) and op.cta_group not in (1, 2):
            return bad("9.7.16.5", "Table 46", expects_but_got(f".cta_group of tcgen05.{op.op}", "::1 or ::2", op.cta_group))
        if grouped is not None:
            if grouped not in (1, 2):
                return bad(SECTION, ".cta_group", expects_but_got(".cta_group", "::1 or ::2", grouped))
            if group is None:
                group = grouped
            elif grouped != group:
                return bad(SECTION, "one .cta_group per kernel", expects_but_got(
                    "every tcgen05 .cta_group of the kernel", f"::{group} (as the first)", f"::{grouped}"))
        if isinstance(op, (Alloc, Dealloc, Relinquish)):
            problem = _issuer_problem(op)
            if problem:
                return bad("9.7.16.5", "Table 46 issue granularity", f"{type(op).__name__.lower()} expects {problem}")
        if isinstance(op, (Alloc, Dealloc)) and op.ncols not in ALLOC_COLUMNS:
            return bad(SECTION, "nCols", expects_but_got("nCols", "a power of 2 in [32, 512]", op.ncols))
        if isinstance(op, Alloc):
            if relinquished:
                return bad(SECTION, "no alloc after relinquish_alloc_permit", expects_but_got(
                    "tcgen05.alloc", "no allocation after tcgen05.relinquish_alloc_permit", f"alloc of {op.ncols} columns"))
            if last_ncols is not None and op.ncols > last_ncols:
                return bad(SECTION, "nCols must not increase", expects_but_got(
                    "nCols of this allocation", f"at most {last_ncols} (the previous allocation)", op.ncols))
            if sum(live.values()) + op.ncols > COLUMNS:
                return bad(SECTION, "capacity", expects_but_got(
                    "columns allocated at once", f"at most {COLUMNS} (else tcgen05.alloc blocks for ever)",
                    sum(live.values()) + op.ncols))
            name = op.name if op.name is not None else f"a{allocs}"
            if name in live:
                return bad(SECTION, "allocation names", expects_but_got("allocation name", "a name not in use", name))
            live[name] = op.ncols
            last_ncols = op.ncols
            allocs += 1
        elif isinstance(op, Dealloc):
            if op.name not in live:
                return bad(SECTION, "dealloc of a previous allocation", expects_but_got(
                    "taddr of tcgen05.dealloc", "a live allocation (" + (", ".join(live) or "none") + ")", op.name))
            if live[op.name] != op.ncols:
                return bad(SECTION, "dealloc nCols", expects_but_got(
                    f"nCols of the dealloc of {op.name}", f"{live[op.name]} (as allocated)", op.ncols))
            del live[op.name]
        elif isinstance(op, Relinquish):
            relinquished = True
    if live:
        name, ncols = next(iter(live.items()))
        return Violation(len(ops), "9.7.16.1.2", "deallocate before exit", expects_but_got(
            "Tensor Memory at exit", "all allocations deallocated", f"{name} ({ncols} columns) still allocated"))
    return None


def require_valid_allocations(ops) -> None:
    """Raise the first violation of :func:`check_allocations` as a SpecError."""
    violation = check_allocations(ops)
    if violation is not None:
        raise violation.error()
