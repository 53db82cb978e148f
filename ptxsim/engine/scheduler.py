"""Run a machine: groups of threads sharing a program counter, executed in lock step.

Threads start as one group.  A branch that splits a group makes two; groups meeting at the same
program counter merge again.  The scheduler always runs the group with the lowest program
counter ("min-PC" reconvergence): for structured code laid out in program order this rejoins the
two sides of an ``if`` at the instruction after it and keeps loop iterations together, so
warps stay converged exactly where PTX's ``.aligned`` instructions require it.

Two refinements keep producer/consumer code from livelocking under min-PC:

* a thread that fails a wait (``mbarrier.try_wait``/``test_wait`` returning false) *yields*: its
  group is set aside until no other group can run, so the thread it waits for gets to run even
  when that thread's code comes later in the program;
* when no group can run, :meth:`Machine.progress` first lets one pending asynchronous copy land
  (the latest legal moment, so a missing wait reads stale data);
* blocking instructions (``bar.sync``, ``barrier.cluster.wait``, ...) park their group until the
  instruction's ``ready`` releases it; when every live thread is parked the launch is a
  :class:`~ptxsim.errors.Deadlock`.
"""

from __future__ import annotations

import numpy as np

from ptxsim.engine.machine import Machine, Sel
from ptxsim.errors import Deadlock, Livelock, SimError, SpecViolation, StepLimit, where
from ptxsim.ptx.registry import Block, Branch, Exit, IndirectBranch, Plain
from reference.errors import SpecError

RUN, YIELD, BLOCKED = 0, 1, 2
_STATE = {RUN: "running", YIELD: "spinning", BLOCKED: "blocked"}


class Group:
    __slots__ = ("pc", "sel", "state")

    def __init__(self, pc: int, sel: Sel, state: int = RUN) -> None:
        self.pc = pc
        self.sel = sel
        self.state = state


def _union(m: Machine, a: Sel, b: Sel) -> Sel:
    """The threads of two groups, in thread order. Every thread is in one group, so the two are
    disjoint and a sort of the concatenation is their union (``np.union1d`` hashes: 4% of a
    launch); a repeated thread would be a scheduler bug, and is still removed."""
    idx = np.sort(np.concatenate((a.idx, b.idx)))
    if idx.size > 1 and (idx[1:] == idx[:-1]).any():
        idx = np.unique(idx)
    return m.sel_of(idx)


def _release_blocked(m: Machine, groups: list[Group]) -> None:
    for g in list(groups):
        if g.state != BLOCKED:
            continue
        op = m.prog.code[g.pc]
        ok = np.asarray(op.ready(m, g.sel), dtype=bool)
        if ok.all():
            g.pc += 1
            g.state = RUN
        elif ok.any():
            groups.append(Group(g.pc + 1, g.sel.narrow(ok), RUN))
            g.sel = g.sel.narrow(~ok)


def _merge(m: Machine, groups: list[Group]) -> list[Group]:
    by_pc: dict[int, Group] = {}
    out = []
    for g in groups:
        if g.state == BLOCKED:
            out.append(g)
            continue
        other = by_pc.get(g.pc)
        if other is None:
            by_pc[g.pc] = g
            out.append(g)
        else:
            other.sel = _union(m, other.sel, g.sel)
            other.state = RUN if RUN in (other.state, g.state) else YIELD
    return out


def _pick(m: Machine, groups: list[Group]) -> Group | None:
    runnable = [g for g in groups if g.state == RUN]
    if not runnable:
        m.progress()                       # nobody can run: an asynchronous copy lands (ops_bulk)
        spinning = [g for g in groups if g.state == YIELD]
        for g in spinning:
            g.state = RUN
        runnable = spinning
    if not runnable:
        if groups:
            raise Deadlock("every live thread waits: " + "; ".join(
                f"{g.sel.n} thread(s) of CTA(s) {sorted(set(m.cta_of[g.sel.ix].tolist()))[:4]} at "
                f"{where(m.prog.code[g.pc].instr)}" for g in groups))
        return None
    return min(runnable, key=lambda g: g.pc)


def run(m: Machine) -> None:
    """Execute every thread of ``m`` to its end (or raise a :class:`SimError`)."""
    groups = [Group(0, m.all)]
    code = m.prog.code
    with np.errstate(all="ignore"):
        while True:
            _release_blocked(m, groups)
            groups = _merge(m, groups)
            g = _pick(m, groups)
            if g is None:
                return
            others = [o for o in groups if o is not g and o.state != BLOCKED]
            limit = min((o.pc for o in others if o.state == RUN), default=len(code))
            stops = {o.pc for o in others}
            try:
                _step(m, g, groups, code, limit, stops)
            except SpecError as exc:
                raise SpecViolation(f"{where(code[g.pc].instr)}: {exc}") from exc
            except SimError as exc:
                _locate(exc, code[g.pc].instr)
                raise
            except Exception as exc:               # a handler bug: still a SimError naming the line
                raise SimError(f"{where(code[g.pc].instr)}: the simulator failed on this instruction "
                               f"({type(exc).__name__}: {exc})") from exc
            groups = [x for x in groups if x.sel is not None and x.sel.n > 0]


def _note_yield(m: Machine) -> None:
    """Count failed waits in a row during which nothing observable happened; past
    ``m.livelock_spins`` no thread can ever satisfy the waits (only registers change)."""
    if m.epoch != m.yield_epoch:
        m.yield_epoch, m.fruitless = m.epoch, 0
        return
    m.fruitless += 1
    if m.fruitless > m.livelock_spins:
        raise Livelock(f"every live thread keeps failing its wait ({m.fruitless} tries in a row with no store, "
                       "arrival or exit anywhere): nothing can complete it; a GPU's bounded wait would time out")


def _locate(exc: SimError, instr) -> None:
    if not getattr(exc, "located", False) and exc.args:
        exc.args = (f"{where(instr)}: {exc.args[0]}",) + exc.args[1:]
        exc.located = True


def _step(m: Machine, g: Group, groups: list[Group], code, limit: int, stops: set) -> None:
    """Run group ``g`` until it splits, parks, yields, exits, or reaches another group's pc."""
    pc = g.pc
    alone = not stops
    try:
        _loop(m, g, groups, code, limit, stops, pc, alone)
    except BaseException:
        if g.sel is not None and g.state != BLOCKED:
            g.pc = m.current_pc
        raise


def _loop(m: Machine, g: Group, groups: list[Group], code, limit: int, stops: set, pc: int, alone: bool) -> None:
    tally = m.tally
    while True:
        m.current_pc = pc
        if not alone and (pc >= limit or pc in stops):
            g.pc = pc
            return
        op = code[pc]
        m.steps += 1
        if m.steps > m.max_steps:
            g.pc = pc
            raise StepLimit(f"more than {m.max_steps} instructions executed (an unbounded loop?)")
        if tally is not None:
            tally[pc] += g.sel.n
        kind = type(op)
        if kind is Plain:
            op.fn(m, g.sel)
            pc += 1
            if m.yield_request:
                m.yield_request = False
                _note_yield(m)
                if alone:              # nobody else to run: an async copy may land, keep spinning
                    m.progress()
                    continue
                g.pc, g.state = pc, YIELD
                return
            continue
        if op.guard is None:
            taken = g.sel
        else:
            mask = m.P[op.guard, g.sel.ix]
            if op.neg:
                mask = ~mask
            taken = g.sel.narrow(mask)
        if kind is Branch:
            if taken is g.sel:
                pc = op.pc
            elif taken is None:
                pc += 1
            else:
                rest = g.sel.narrow(~mask)              # the threads the guard did not take
                groups.append(Group(op.pc, taken))
                g.sel, g.pc = rest, pc + 1
                return
        elif kind is IndirectBranch:
            if taken is None:
                pc += 1
                continue
            index = np.broadcast_to(np.asarray(op.index(m, taken)).astype(np.int64), (taken.n,))
            if ((index < 0) | (index >= op.pcs.size)).any():
                bad = int(index[(index < 0) | (index >= op.pcs.size)][0])
                raise SimError(f"brx.idx index {bad} is outside the {op.pcs.size}-label list {op.table} "
                               "(undefined behaviour, PTX ISA §9.7.12 brx.idx)")
            targets = op.pcs[index]
            first, *others = np.unique(targets).tolist()
            if not others and taken is g.sel:
                pc = first
                continue
            if taken is not g.sel:
                groups.append(Group(pc + 1, g.sel.narrow(~mask)))    # the threads the guard did not take
            for target in others:
                groups.append(Group(target, taken.narrow(targets == target)))
            g.sel, g.pc = taken.narrow(targets == first), first
            return
        elif kind is Exit:
            if taken is None:
                pc += 1
                continue
            g.pc = pc
            m.exit_threads(taken)
            if taken is g.sel:
                g.sel = None
            else:
                g.sel = g.sel.narrow(~mask)
                g.pc = pc + 1
            return
        elif kind is Block:
            g.pc = pc
            op.arrive(m, g.sel)
            g.state = BLOCKED
            return
        else:
            raise SimError(f"unknown op kind {kind.__name__}")
