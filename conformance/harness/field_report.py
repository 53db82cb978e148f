"""The field and value coverage report of a level (``tcgen05-cts coverage-fields``).

:func:`level_tally` synthesises the inputs of every legal case of the level and of the numerics
companions (what the execution tier runs, ``conformance.harness.execute``), optionally only those
whose case ID passed in a results directory; :func:`report_lines` renders the holes, each
justified (``field_justifications``) or not, and ends with ``holes: N unexplained``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from conformance.harness.execute import numerics_companions
from conformance.harness.execute_batch import ExecCase
from conformance.harness.field_coverage import WORDS, Hole, Tally, field_holes
from conformance.harness.field_justifications import justify
from generators.inputs import Untestable, synthesize
from generators.variants import cases


@dataclass(frozen=True)
class LevelTally:
    tally: Tally
    untestable: int          # cases input synthesis refused (Skip in the execution tier)
    excluded: int            # cases left out because they did not pass in the results given


def level_tally(level: str, passing: Collection[str] | None = None) -> LevelTally:
    """Tally of the execution tier's cases at ``level`` (only IDs in ``passing`` when given)."""
    legal = [c for c in cases(level) if c.legal]
    runs = [ExecCase(c) for c in legal] + numerics_companions(legal)
    tally, untestable, excluded = Tally(), 0, 0
    for xc in runs:
        if passing is not None and xc.case_id not in passing:
            excluded += 1
            continue
        try:
            inputs = synthesize(xc.case, xc.mode)
        except Untestable:
            untestable += 1
            continue
        tally.add_case(xc.case, inputs)
    return LevelTally(tally, untestable, excluded)


@dataclass(frozen=True)
class HoleGroup:
    """Consecutive holes of one field with the same verdict (one report row)."""

    holes: tuple[Hole, ...]
    reason: str | None
    section: str

    @property
    def label(self) -> str:
        first, last = self.holes[0], self.holes[-1]
        if first.what == "class":
            return ", ".join(h.item for h in self.holes)
        lo, hi = first.item.split()[1], last.item.split()[1]
        return f"bit {lo}" if lo == hi else f"bits {lo}-{hi}"


def _bit(h: Hole) -> int:
    return int(h.item.split()[1]) if h.what == "bit" else -1


def group_holes(holes: Iterable[Hole]) -> list[HoleGroup]:
    out: list[HoleGroup] = []
    for hole in holes:
        verdict = justify(hole)
        reason, section = verdict if verdict else (None, hole.section)
        prev = out[-1] if out else None
        if (prev and prev.reason == reason and (prev.holes[-1].word, prev.holes[-1].field, prev.holes[-1].missing)
                == (hole.word, hole.field, hole.missing)
                and (hole.what == "class" or _bit(hole) == _bit(prev.holes[-1]) + 1)):
            out[-1] = HoleGroup(prev.holes + (hole,), reason, section)
        else:
            out.append(HoleGroup((hole,), reason, section))
    return out


def word_summary(tally: Tally) -> list[str]:
    """One line per word: bits seen both ways, out of its bits."""
    out = []
    for name in WORDS:
        if name not in tally.ones:
            out.append(f"  {name:34} no case")
            continue
        width = WORDS[name].bits
        both = bin(tally.ones[name] & tally.zeros[name]).count("1")
        out.append(f"  {name:34} {both}/{width} bits seen as 0 and as 1")
    return out


def report_lines(lt: LevelTally, level: str, source: str, show_justified: bool = True) -> list[str]:
    tally = lt.tally
    holes = field_holes(tally)
    groups = group_holes(holes)
    lines = [f"field and value coverage, level {level}: {tally.cases} cases ({source}); "
             f"{lt.untestable} untestable left out" + (f", {lt.excluded} not passing left out" if lt.excluded else ""),
             "", "words:", *word_summary(tally), "",
             "values (operand type: classes seen):"]
    for (operand, fmt), seen in sorted(tally.classes.items()):
        lines.append(f"  {operand + ' ' + fmt:14} {', '.join(sorted(seen)) or '-'}")
    lines += ["", "holes (word | field | never | status):"]
    for g in groups:
        h = g.holes[0]
        status = f"justified: {g.reason} (§{g.section})" if g.reason else f"UNEXPLAINED (§{g.section})"
        if g.reason and not show_justified:
            continue
        kind = f"{g.label} ({h.field})" if h.what == "bit" else g.label
        lines.append(f"  {h.word} | {kind} | never {h.missing} | {status}")
    unexplained = sum(len(g.holes) for g in groups if not g.reason)
    lines.append(f"holes: {unexplained} unexplained ({len(holes) - unexplained} justified, {len(holes)} in all)")
    return lines
