"""Synchronization sites of a PTX kernel, and deleting one of them (issue 14).

A *site* is one synchronization step a kernel takes, found textually in its PTX:

================================  ======================================================  ==============
kind                              what is deleted                                         rule it serves
================================  ======================================================  ==============
``tcgen05.wait::ld``/``::st``     the line                                                §9.7.16.6.2.1.2
``tcgen05.fence::before/after``   the line                                                §9.7.16.6.3
``fence.proxy.async``             the line                                                §9.7.16.6.5
``bar.sync``                      the line (``bar.sync``, ``barrier.sync``, ``.cta``)     §9.7.16.6.3
``barrier.cluster``               an ``arrive`` with the ``wait`` right after it, or a    §9.7.16.6.3
                                  lone ``wait``
``tcgen05.commit``                the line                                                §9.7.16.6.2.1.1
``mbarrier.try_wait loop``        the whole wait loop: every non-label line from the      §9.7.16.6.2.1.1
                                  loop head to the loop's exit label (the code falls
                                  through as if the wait had succeeded at once)
================================  ======================================================  ==============

Labels are never deleted (a label nothing branches to is harmless; one something still
branches to must stay). A site's ``key`` (``<step>.<kind>.<n>``: the suite kernels' ``// ----
Step ----`` comment before it, the kind, its ordinal among the step's sites of that kind) is
stable across targets and `.version`s, so :func:`delete_site` takes a key and re-finds the site
in whatever rendering it is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PRED = re.compile(r"^@!?%?\w+\s+")          # a guard: @%p1, @!%p1, and inline asm's @!complete
_LABEL = re.compile(r"^(\$?[\w$]+):\s*$")
_STEP = re.compile(r"^//\s*-+\s*(\w[\w .-]*?)\s*-+\s*$")
_BRANCH = re.compile(r"^bra(\.uni)?\s+([\w$]+)\s*;")

WAIT_LD, WAIT_ST = "tcgen05.wait::ld", "tcgen05.wait::st"
BEFORE, AFTER = "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync"
PROXY, BAR, CLUSTER = "fence.proxy.async", "bar.sync", "barrier.cluster"
COMMIT, LOOP = "tcgen05.commit", "mbarrier.try_wait loop"
LOOP_SPAN = 32          # a wait loop's back branch lies within this many lines of its try_wait
KINDS = (WAIT_LD, WAIT_ST, BEFORE, AFTER, PROXY, BAR, CLUSTER, COMMIT, LOOP)


@dataclass(frozen=True)
class SyncSite:
    """One deletable synchronization step: its kind, the 0-based indices of the lines deleted,
    the enclosing step name (``""`` outside the suite's kernels) and its stable key."""

    kind: str
    lines: tuple[int, ...]
    step: str
    key: str

    @property
    def line(self) -> int:
        """1-based number of the site's first line."""
        return self.lines[0] + 1

    def describe(self, text_lines: list[str]) -> str:
        where = f" ({self.step})" if self.step else ""
        return f"{self.kind}{where} at line {self.line}: `{text_lines[self.lines[0]].strip()}`"


def statement(line: str) -> str:
    """The instruction of a PTX line without its predicate guard and comment (``""`` for none)."""
    s = line.split("//", 1)[0].strip()
    return _PRED.sub("", s)


def label_of(line: str) -> str | None:
    m = _LABEL.match(line.split("//", 1)[0].strip())
    return m.group(1) if m else None


def branch_target(line: str) -> str | None:
    m = _BRANCH.match(statement(line))
    return m.group(2) if m else None


def _kind(op: str) -> str | None:
    if op.startswith(("tcgen05.wait::ld", "tcgen05.wait::st")):
        return op[:16]
    if op.startswith(BEFORE):
        return BEFORE
    if op.startswith(AFTER):
        return AFTER
    if op.startswith(PROXY):
        return PROXY
    if re.match(r"^(bar|barrier)(\.cta)?\.sync\b", op):
        return BAR
    if op.startswith(COMMIT + "."):
        return COMMIT
    return None


def _label_at(labels: dict[str, list[int]], name: str | None, *, upto: int | None = None,
              after: int | None = None) -> int | None:
    """The line of label ``name`` nearest at or before ``upto`` (or first after ``after``): inline-asm
    blocks reuse a label name in their own scopes (Triton's ``{ waitLoop: ... }``), so a branch goes
    to the definition in its block, the nearest one."""
    lines = labels.get(name or "", [])
    if upto is not None:
        lines = [i for i in lines if i <= upto]
        return lines[-1] if lines else None
    lines = [i for i in lines if i > after]
    return lines[0] if lines else None


def _loop_lines(lines: list[str], t: int, labels: dict[str, list[int]]) -> tuple[int, ...] | None:
    """The lines of the wait loop around the try_wait at ``t`` (module docstring), or None."""
    back = head = exit_ = None
    for j in range(t + 1, min(len(lines), t + 1 + LOOP_SPAN)):
        head = _label_at(labels, branch_target(lines[j]), upto=t)
        if head is not None:
            back = j
            break
    if back is None:
        return None
    for j in range(t + 1, back):
        exit_ = _label_at(labels, branch_target(lines[j]), after=back)
        if exit_ is not None:
            break
    end = exit_ if exit_ is not None else back + 1
    return tuple(i for i in range(head, end) if label_of(lines[i]) is None and statement(lines[i]))


def sync_sites(ptx: str) -> tuple[SyncSite, ...]:
    """Every synchronization site of ``ptx`` in program (text) order."""
    lines = ptx.split("\n")
    labels: dict[str, list[int]] = {}
    for i, ln in enumerate(lines):
        if (name := label_of(ln)) is not None:
            labels.setdefault(name, []).append(i)
    found: list[tuple[str, tuple[int, ...], str]] = []
    step, skip = "", set()
    for i, ln in enumerate(lines):
        m = _STEP.match(ln.strip())
        if m:
            step = m.group(1).split(":")[0].strip()
            continue
        if i in skip:
            continue
        op = statement(ln)
        if op.startswith("mbarrier.try_wait"):
            loop = _loop_lines(lines, i, labels)
            if loop:
                found.append((LOOP, loop, step))
                skip.update(loop)
            continue
        if op.startswith("barrier.cluster.arrive"):
            nxt = next((j for j in range(i + 1, len(lines)) if statement(lines[j]) or label_of(lines[j])), None)
            if nxt is not None and statement(lines[nxt]).startswith("barrier.cluster.wait"):
                found.append((CLUSTER, (i, nxt), step))
                skip.add(nxt)
            continue
        if op.startswith("barrier.cluster.wait"):
            found.append((CLUSTER, (i,), step))
            continue
        kind = _kind(op)
        if kind:
            found.append((kind, (i,), step))
    counts: dict[tuple[str, str], int] = {}
    out = []
    for kind, idx, st in found:
        n = counts.get((st, kind), 0)
        counts[(st, kind)] = n + 1
        out.append(SyncSite(kind, idx, st, f"{st + '.' if st else ''}{kind}.{n}"))
    return tuple(out)


def find_site(ptx: str, key: str) -> SyncSite:
    for site in sync_sites(ptx):
        if site.key == key:
            return site
    keys = ", ".join(s.key for s in sync_sites(ptx)) or "(none)"
    raise ValueError(f"synchronization site expects one of {keys}, but got {key!r}")


def delete_site(ptx: str, key: str) -> str:
    """``ptx`` with the site ``key`` deleted (its lines become comments; line numbers are kept)."""
    return _rewrite(ptx, find_site(ptx, key), "")


def trap_site(ptx: str, key: str) -> str:
    """``ptx`` with the site's first line replaced by an unconditional ``trap;`` (the rest deleted):
    a run that does not trap never reached the site."""
    return _rewrite(ptx, find_site(ptx, key), "trap; ")


def _rewrite(ptx: str, site: SyncSite, first: str) -> str:
    lines = ptx.split("\n")
    for n, i in enumerate(site.lines):
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        lines[i] = f"{indent}{first if n == 0 else ''}// deleted: {lines[i].strip()}"
    return "\n".join(lines)
