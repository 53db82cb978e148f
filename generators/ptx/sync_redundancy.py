"""When deleting a synchronization site provably changes nothing (issue 14, hazard score).

:func:`redundancy` returns a one-line reason when the site (``generators.ptx.sync_sites``) is
redundant by one of the small textual analyses below, else None. Each analysis is deliberately
narrow and sound only for what it states; "not provably redundant" is the default.

Loops: an analysis that reasons about "before" or "after" a site in text order holds only when no
branch after the site goes back to a label before it (:func:`in_loop`), since then program order
and text order agree around the site.

* ``wait::ld`` / ``wait::st`` (§9.7.16.6.2.1.2): the kernel has no ``tcgen05.ld`` (``.st``) at
  all; or the nearest tcgen05 instruction before it in straight-line code (no label or branch
  between) is the same wait, so no access was issued in between; or the very next instruction
  is the same wait.
* ``fence::before_thread_sync`` (§9.7.16.6.3): no tcgen05 operation before it (nothing to order);
  or the very next instruction is the same fence; or on every path reaching it (the control-flow
  graph, :func:`_covered_before`) another before-fence or an unguarded ``tcgen05.commit`` (which
  performs it implicitly, §9.7.16.6.4.2) comes after the last tcgen05 instruction: a before-fence
  orders the prior operations before *all* subsequent execution ordering operations.
* ``fence::after_thread_sync`` (§9.7.16.6.3): no tcgen05 operation after it; or the instruction
  right before it is the same fence; or another after-fence follows in straight-line code before
  any tcgen05 operation (it orders what follows it after every earlier synchronization); or the
  same holds on every path from it (:func:`_covered_after`).
* ``fence.proxy.async`` (§9.7.16.6.5): no async-proxy access of shared memory after it
  (``tcgen05.mma``, ``tcgen05.cp``, ``cp.async.bulk``, ``cp.reduce.async.bulk``), or no
  generic-proxy write that may reach shared memory before it (any ``st``/``atom``/``red`` not
  to ``.global``/``.local``/``.param``, ``stmatrix``, non-bulk ``cp.async``, ``mbarrier.init``).
* ``bar.sync`` / cluster barrier: nothing after it but register arithmetic, branches and the
  exit: no memory access, tcgen05 or synchronization instruction to order. A ``bar.sync`` right
  before an aligned cluster barrier (arrive + wait): that barrier synchronizes the CTA's threads
  too. A ``bar.sync`` followed by the same barrier with nothing between that touches memory it
  orders (:func:`_next_barrier`).
* aligned cluster barrier (arrive + wait; :func:`_cluster_pair`): right after another one (only register
  arithmetic between), or a later one follows that orders everything it did and nothing up to it
  touches the peer CTA but the CTA pair's alloc (sound under the checker's CTA-pair rules
  peer-launched / peer-active / peer-dealloc, §9.7.16.5, §9.7.16.7.1).
* ``tcgen05.commit`` and wait loops: never (a commit is what a later wait waits for; a wait loop
  is what orders an asynchronous completion).
"""

from __future__ import annotations

import re

from generators.ptx import sync_sites as S

TCGEN05_OPS = ("tcgen05.ld", "tcgen05.st", "tcgen05.mma", "tcgen05.cp", "tcgen05.shift", "tcgen05.alloc",
               "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.commit")
ASYNC_PROXY_SMEM = ("tcgen05.mma", "tcgen05.cp", "cp.async.bulk", "cp.reduce.async.bulk")
GENERIC_WRITES = ("st.", "stmatrix", "atom.", "red.", "cp.async.ca", "cp.async.cg", "mbarrier.init")
NOT_SHARED = ("st.global", "st.local", "st.param", "atom.global", "red.global")
_REGISTER_ONLY = ("mov", "add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr", "setp", "selp", "cvt",
                  "bra", "ret", "exit", "min", "max", "neg", "abs")


def _ops(lines: list[str]) -> list[tuple[int, str]]:
    return [(i, op) for i, ln in enumerate(lines) if (op := S.statement(ln))]


def in_loop(lines: list[str], i: int) -> bool:
    """Whether a branch after line ``i`` goes back to a label at or before it."""
    labels = {name: j for j, ln in enumerate(lines) if (name := S.label_of(ln)) is not None}
    return any((t := S.branch_target(ln)) in labels and labels[t] <= i for ln in lines[i + 1:])


def _generic_smem_write(op: str) -> bool:
    """A generic-proxy store that may reach shared memory (generic addressing counts)."""
    return op.startswith(GENERIC_WRITES) and not op.startswith(NOT_SHARED)


def _is_tcgen05(op: str) -> bool:
    return op.startswith(TCGEN05_OPS)


def _neighbour(lines: list[str], i: int, step: int) -> str | None:
    """The instruction right before (step -1) or after (+1) line ``i`` in straight-line code."""
    j = i + step
    while 0 <= j < len(lines):
        if S.label_of(lines[j]) is not None:
            return None
        op = S.statement(lines[j])
        if op:
            return op
        j += step
    return None


def _same(op: str | None, kind: str) -> bool:
    return op is not None and op.startswith(kind)


def _wait(lines: list[str], site: S.SyncSite) -> str | None:
    access = "tcgen05.ld" if site.kind == S.WAIT_LD else "tcgen05.st"
    ops = _ops(lines)
    if not any(op.startswith(access + ".") for _, op in ops):
        return f"the kernel has no {access}: nothing to wait for"
    i = site.lines[0]
    j = i - 1
    while j >= 0 and S.label_of(lines[j]) is None:
        op = S.statement(lines[j])
        if op and (S.branch_target(lines[j]) is not None):
            break
        if op and _is_tcgen05(op):
            break
        if _same(op, site.kind):
            return f"follows the {site.kind} of line {j + 1} with no {access} between: nothing new to wait for"
        j -= 1
    if _same(_neighbour(lines, i, +1), site.kind):
        return f"the next instruction is the same {site.kind}, which waits for everything this one does"
    return None


def _before(lines: list[str], site: S.SyncSite) -> str | None:
    i = site.lines[0]
    if not in_loop(lines, i) and not any(_is_tcgen05(op) for j, op in _ops(lines) if j < i):
        return "no tcgen05 operation precedes it: nothing to order before the thread synchronization"
    if _same(_neighbour(lines, i, +1), S.BEFORE):
        return "the next instruction is the same fence"
    return _covered_before(lines, i)


def _after(lines: list[str], site: S.SyncSite) -> str | None:
    i = site.lines[0]
    if not in_loop(lines, i) and not any(_is_tcgen05(op) for j, op in _ops(lines) if j > i):
        return "no tcgen05 operation follows it: nothing to order after the thread synchronization"
    if _same(_neighbour(lines, i, -1), S.AFTER):
        return "the instruction before it is the same fence"
    for j in range(i + 1, len(lines)):                 # straight-line code up to the next after-fence
        op = S.statement(lines[j])
        if S.label_of(lines[j]) is not None or S.branch_target(lines[j]) is not None or op.startswith(("ret", "exit")):
            return _covered_after(lines, i)
        if op.startswith(S.AFTER):
            return (f"another fence::after_thread_sync follows at line {j + 1} before any tcgen05 operation: it orders "
                    "everything after it behind every synchronization before it, this one's included")
        if _is_tcgen05(op):
            return _covered_after(lines, i)
    return _covered_after(lines, i)


# -- the control-flow graph of a kernel's lines (for the path analyses of the two fences) --------------

_ENDS = ("ret", "exit", "trap")


def _guarded(line: str) -> bool:
    return S._PRED.match(line.split("//", 1)[0].strip()) is not None


def _successors(lines: list[str], labels: dict[str, int], j: int) -> list[int]:
    """The lines control may reach right after line ``j`` (no successor past a ``ret``/``exit``)."""
    op, target = S.statement(lines[j]), S.branch_target(lines[j])
    out = [labels[target]] if target is not None and target in labels else []
    if target is not None and target not in labels:
        return [-1]                                 # a branch out of the lines: unknown
    stops = (target is not None or op.startswith(_ENDS)) and not _guarded(lines[j])
    return out if stops else out + [j + 1]


def _graph(lines: list[str]) -> tuple[list[list[int]], list[list[int]]]:
    """(successors, predecessors) per line; -1 stands for "unknown" (a branch to no known label)."""
    labels = {name: j for j, ln in enumerate(lines) if (name := S.label_of(ln)) is not None}
    succ = [[k for k in _successors(lines, labels, j) if k < len(lines)] for j in range(len(lines))]
    pred: list[list[int]] = [[] for _ in lines]
    for j, ks in enumerate(succ):
        for k in ks:
            if k >= 0:
                pred[k].append(j)
    return succ, pred


def _all_paths(start: int, step: list[list[int]], stop, block) -> bool:
    """Whether every path from ``start`` along ``step`` (successors or predecessors) reaches a line
    where ``stop(j)`` holds before one where ``block(j)`` does; a path may also end (no next line)
    only when ``step`` is the successors.  Coming back to ``start`` or to an unknown line fails."""
    seen, todo = {start}, list(step[start])
    while todo:
        j = todo.pop()
        if j < 0 or j == start:
            return False
        if j in seen:
            continue
        seen.add(j)
        if stop(j):
            continue
        if block(j):
            return False
        todo.extend(step[j])
    return True


def _tcgen05_line(lines: list[str], j: int) -> bool:
    op = S.statement(lines[j])
    return _is_tcgen05(op) or op.startswith("tcgen05.wait::")


def _covered_before(lines: list[str], i: int) -> str | None:
    """A before-fence is redundant when every path reaching it passes, after its last tcgen05
    instruction, an unguarded before-fence or ``tcgen05.commit`` (§9.7.16.6.3: "an asynchronous
    tcgen05 operation prior to a tcgen05.fence::before_thread_sync is ordered before all subsequent
    tcgen05 and the execution ordering operations"; §9.7.16.6.4.2: the commit performs the fence)."""
    _, pred = _graph(lines)

    def cover(j: int) -> bool:
        op = S.statement(lines[j])
        return not _guarded(lines[j]) and (op.startswith(S.BEFORE) or op.startswith("tcgen05.commit"))

    def block(j: int) -> bool:                      # a tcgen05 instruction, or the kernel's entry
        return _tcgen05_line(lines, j) or not pred[j]
    if not _all_paths(i, pred, cover, block):
        return None
    return ("on every path reaching it a fence::before_thread_sync or tcgen05.commit (which performs it) follows "
            "the last tcgen05 instruction: that fence already orders the prior operations before all subsequent "
            "synchronization")


#: what may stand between an after-fence and the later one that stands in for it: no tcgen05 operation and
#: no release (an arrival, a barrier, a store) that would pass on what the thread acquired before it
_NO_RELEASE = ("ld.", "mbarrier.try_wait", "mbarrier.test_wait", "tcgen05.fence::", "tcgen05.wait::", "ret", "exit",
               ".", "{", "}")


def _covered_after(lines: list[str], i: int) -> str | None:
    """An after-fence is redundant when every path from it reaches another unguarded after-fence
    (or the exit) with only loads, mbarrier waits, tcgen05 fences/waits and register arithmetic
    between: §9.7.16.6.3, the later fence orders every subsequent operation after all prior
    execution ordering operations, this fence's included.  A release between (an arrival, a
    barrier, a store) would hand what the thread acquired to another thread, which the checker
    (like the §9.7.16.6.4.4 composed example) forwards only through this thread's own after-fence."""
    succ, _ = _graph(lines)

    def cover(j: int) -> bool:
        return not _guarded(lines[j]) and S.statement(lines[j]).startswith(S.AFTER)

    def block(j: int) -> bool:
        op = S.statement(lines[j])
        return bool(op) and S.label_of(lines[j]) is None and not (_register_only(op) or op.startswith(_NO_RELEASE))
    if not _all_paths(i, succ, cover, block):
        return None
    return ("on every path from it another fence::after_thread_sync comes before any tcgen05 operation: it orders "
            "everything after it behind every synchronization before it, this one's included")


def _proxy(lines: list[str], site: S.SyncSite) -> str | None:
    i = site.lines[0]
    if in_loop(lines, i):
        return None
    ops = _ops(lines)
    if not any(op.startswith(ASYNC_PROXY_SMEM) for j, op in ops if j > i):
        return "no async-proxy access of shared memory (tcgen05.mma/cp, bulk copy) follows it"
    if not any(_generic_smem_write(op) for j, op in ops if j < i):
        return "no generic-proxy write of shared memory precedes it"
    return None


def _barrier(lines: list[str], site: S.SyncSite) -> str | None:
    i = site.lines[-1]
    if in_loop(lines, i):
        return None
    later = [op for j, op in _ops(lines) if j > i and op not in ("{", "}") and not op.startswith(".")]
    if all(_register_only(op) or op.startswith(("ret", "exit")) for op in later):
        return "only register arithmetic, branches and the exit follow it: nothing to order"
    nxt = _neighbour(lines, i, +1)
    if site.kind == S.BAR and nxt is not None and nxt.startswith("barrier.cluster.arrive") and ".aligned" in nxt:
        j = next(k for k in range(i + 1, len(lines)) if S.statement(lines[k]) == nxt)
        if (_neighbour(lines, j, +1) or "").startswith("barrier.cluster.wait"):
            return ("a cluster barrier (arrive + wait) follows directly: it synchronizes every thread of the cluster, "
                    "this CTA's included")
    if site.kind == S.CLUSTER and len(site.lines) == 2:
        return _cluster_pair(lines, site)
    return _next_barrier(lines, site)


# -- cluster barriers: what only the CTA pair needs (§9.7.16.5 peer launched / active, §9.7.16.7.1) ----

CLUSTER_ARRIVE, CLUSTER_WAIT = "barrier.cluster.arrive", "barrier.cluster.wait"
#: ``.cta_group::2`` operations whose only cross-CTA need is the peer's launch and life (checker rules
#: peer-launched / peer-active): under the checker's model each CTA's collective alloc returns its own columns
ALLOC_ONLY = ("tcgen05.alloc.cta_group::2", "tcgen05.relinquish_alloc_permit.cta_group::2")
_LOCAL_WRITES = ("st.shared.", "st.shared::cta", "st.local", "st.param", "atom.shared.", "atom.shared::cta",
                 "red.shared.", "red.shared::cta")


def cross_cta(op: str) -> bool:
    """An instruction that touches another CTA, or memory another CTA may read: anything
    ``.cta_group::2``, a ``.shared::cluster`` address, a multicast, ``mapa``, a bulk copy, a
    store/atomic/reduction outside this CTA's shared memory (global or generic)."""
    return ("cta_group::2" in op or "shared::cluster" in op or "multicast" in op or op.startswith("mapa")
            or op.startswith(("cp.async.bulk", "cp.reduce.async.bulk"))
            or (op.startswith(("st.", "atom.", "red.")) and not op.startswith(_LOCAL_WRITES)))


def _aligned_cluster_barrier(lines: list[str], i: int) -> int | None:
    """The index of the ``wait`` when line ``i`` is an aligned ``barrier.cluster.arrive`` followed
    directly by an aligned ``barrier.cluster.wait`` (else None)."""
    op = S.statement(lines[i])
    if not (op.startswith(CLUSTER_ARRIVE) and ".aligned" in op and ".relaxed" not in op):
        return None
    j = i + 1
    while j < len(lines) and not S.statement(lines[j]) and S.label_of(lines[j]) is None:
        j += 1
    nxt = S.statement(lines[j]) if j < len(lines) else ""
    return j if nxt.startswith(CLUSTER_WAIT) and ".aligned" in nxt else None


def _straight(lines: list[str], i: int, step: int, skip=()) -> tuple[int, str] | None:
    """The first instruction from line ``i`` on (direction ``step``) that is not register arithmetic
    or one of ``skip``, in straight-line code (a label or branch first: None)."""
    j = i
    while 0 <= j < len(lines):
        if S.label_of(lines[j]) is not None:
            return None
        op = S.statement(lines[j])
        if op and not op.startswith(("{", "}", ".")):
            if S.branch_target(lines[j]) is not None:
                return None
            if not (_register_only(op) or op.startswith(skip)):
                return j, op
        j += step
    return None


def _cluster_pair(lines: list[str], site: S.SyncSite) -> str | None:
    """An aligned cluster barrier (arrive + wait) is redundant when

    * the previous instruction that is not register arithmetic, in straight-line code, is the wait
      of another aligned cluster barrier: that one orders everything this one does; or
    * another aligned cluster barrier B' follows that every thread reaches (forward branches landing
      before it, no exit), and
      - cross-CTA: from the kernel start to B' nothing touches another CTA (:func:`cross_cta`) but a
        ``.cta_group::2`` alloc/relinquish before this barrier (their peer-launched need is met before
        them; their peer-active need by B', which the peer passes before it exits); no dealloc;
      - within the CTA: nothing between the two touches memory, or a ``bar.sync 0`` directly precedes
        this barrier (it synchronizes the CTA's threads; tcgen05 fences may stand before it);
      - tcgen05: no tcgen05 operation precedes this barrier, or B' is enclosed by
        ``fence::before_thread_sync`` (after this barrier) and ``fence::after_thread_sync`` (what a
        tcgen05 operation after B' needs from before this barrier, B' then gives).
    """
    arrive, wait = site.lines
    if in_loop(lines, wait):
        return None
    prev = _straight(lines, arrive - 1, -1)
    if prev is not None and prev[1].startswith(CLUSTER_WAIT) and ".aligned" in prev[1]:
        k = _straight(lines, prev[0] - 1, -1)
        if k is not None and _aligned_cluster_barrier(lines, k[0]) == prev[0]:
            return (f"the cluster barrier of line {k[0] + 1} comes right before it (only register arithmetic between): "
                    "it orders everything this one does")
    targets, touches = [], False
    for j in range(wait + 1, len(lines)):
        op = S.statement(lines[j])
        if not op or S.label_of(lines[j]) is not None or op.startswith((".", "{", "}")):
            continue
        w = _aligned_cluster_barrier(lines, j)
        if w is not None:
            return _cluster_pair_sound(lines, arrive, wait, j, w, targets, touches)
        if (t := S.branch_target(lines[j])) is not None:
            targets.append(t)
            continue
        if op.startswith(("ret", "exit", "trap", CLUSTER_ARRIVE, CLUSTER_WAIT)) or cross_cta(op):
            return None
        touches |= not (_register_only(op) or op.startswith(("tcgen05.fence::", "fence.")))
    return None


def _cluster_pair_sound(lines, arrive, wait, j, w, targets, touches) -> str | None:
    """The conditions of :func:`_cluster_pair` on the barrier pair (arrive, wait) and the later one (j, w)."""
    if not all(t in _labels_between(lines, wait, j) for t in targets) or in_loop(lines, w):
        return None
    before = [(k, op) for k, op in _ops(lines) if k < arrive and not op.startswith((".", "{", "}"))]
    for _, op in before:
        if cross_cta(op) and not op.startswith(ALLOC_ONLY):
            return None
    if touches:
        bar = _straight(lines, arrive - 1, -1, skip=())
        if bar is None or not re.match(r"^(bar\.sync|barrier\.sync(\.aligned)?)\s+0\s*;", bar[1]):
            return None
    if any(_is_tcgen05(op) for _, op in before):
        fb = _straight(lines, j - 1, -1, skip=("bar.sync", "barrier.sync"))
        fa = _straight(lines, w + 1, +1)
        if fb is None or not fb[1].startswith(S.BEFORE) or fb[0] <= wait or fa is None or not fa[1].startswith(S.AFTER):
            return None
    return (f"the aligned cluster barrier of line {j + 1} follows, every thread reaches it, nothing before it touches "
            "the peer CTA but the CTA pair's alloc (launched/active needs met), a bar.sync 0 right before this one "
            "orders the CTA's threads, and the tcgen05 fence pattern around the later one carries what this one did")


def _register_only(op: str) -> bool:
    return re.split(r"[.\s;]", op)[0] in _REGISTER_ONLY and not op.startswith(("ret", "exit"))


def _symbol_of(lines: list[str], j: int, reg: str) -> str | None:
    """The symbol ``reg`` holds at line ``j``: the last ``mov.u32 reg, SYMBOL;`` before it in
    straight-line code (None when it comes from anything else)."""
    for k in range(j - 1, -1, -1):
        if S.label_of(lines[k]) is not None:
            return None
        m = re.match(rf"^mov\.u(32|64)\s+{re.escape(reg)}\s*,\s*([A-Za-z_]\w*)\s*;", S.statement(lines[k]))
        if m:
            return m.group(2)
        if re.search(rf"^\S+\s+{re.escape(reg)}\s*,", S.statement(lines[k])):
            return None
    return None


def _next_barrier(lines: list[str], site: S.SyncSite) -> str | None:
    """The same barrier follows, every thread reaches it (forward branches landing before it, no
    exit), and nothing between touches memory but ``tcgen05.alloc``/``relinquish_alloc_permit`` at a
    symbol the kernel does not name before the site (and no tcgen05 operation precedes the site):
    the later barrier orders everything this one did."""
    first = S.statement(lines[site.lines[0]])
    if site.kind != S.BAR:
        return None
    i = site.lines[-1]
    before = " ".join(op for k, op in _ops(lines) if k < site.lines[0] and not op.startswith("."))  # not declarations
    targets = []
    for j in range(i + 1, len(lines)):
        op = S.statement(lines[j])
        if not op or S.label_of(lines[j]) is not None:
            continue
        if op == first:
            if all(t in _labels_between(lines, i, j) for t in targets) and not in_loop(lines, j):
                return (f"the same barrier follows at line {j + 1} and nothing between touches memory this one "
                        "orders: every thread reaches it first")
            return None
        if (t := S.branch_target(lines[j])) is not None:
            targets.append(t)
            continue
        if _register_only(op) or op.startswith(("tcgen05.fence::", "fence.proxy.async")):
            continue
        if op.startswith(("tcgen05.alloc", "tcgen05.relinquish_alloc_permit")):
            if any(_is_tcgen05(o) for k, o in _ops(lines) if k < site.lines[0]):
                return None
            addr = re.search(r"\[(%\w+)\]", op)
            sym = _symbol_of(lines, j, addr.group(1)) if addr else "-"
            if addr and (sym is None or re.search(rf"\b{sym}\b", before)):
                return None
            continue
        return None
    return None


def _labels_between(lines: list[str], i: int, j: int) -> set[str]:
    return {name for k in range(i + 1, j) if (name := S.label_of(lines[k])) is not None}


_ANALYSES = {S.WAIT_LD: _wait, S.WAIT_ST: _wait, S.BEFORE: _before, S.AFTER: _after, S.PROXY: _proxy,
             S.BAR: _barrier, S.CLUSTER: _barrier}


def redundancy(ptx: str, site: S.SyncSite) -> str | None:
    """Why deleting ``site`` from ``ptx`` provably changes nothing, or None (module docstring)."""
    analysis = _ANALYSES.get(site.kind)
    return analysis(ptx.split("\n"), site) if analysis else None
