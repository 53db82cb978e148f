"""Coverage matrix: spec section x instruction family -> case counts by status, plus the legal
variants this level did not run and why (that list comes from the variant enumeration).

``coverage.csv`` columns: ``section, family, <one per status>, run, not_run, total``; ``run`` is
the number of cases with an outcome (including Missing), ``not_run`` the legal variants left out.
``coverage.json`` holds the same rows plus, per row, the not-run counts by reason, and the list of
not-run cases.

Per section (issue 15): :func:`section_coverage` gives one :class:`SectionRow` for *every* section
of the spec texts (``reference.sections.SECTIONS``), with the cases exercising it as their own
section (``primary``) or as another section they exercise (``other``, from the outcome's
``sections`` list), their pass rate, and the normative statements of the section
(``reference/statements.json``) covered by a passing case. :func:`statement_coverage` gives the
same per statement. Outcomes of logs without a ``sections`` list count under their own section only.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from reference.sections import SECTIONS, parent_section
from results.junit import UNSECTIONED
from results.outcome_log import NotRun, Outcome
from results.status import FAILING, NOT_EXECUTED, PASSING, Status

STATUS_COLUMNS = tuple(s.value for s in Status)


@dataclass
class CoverageRow:
    section: str
    family: str
    counts: Counter = field(default_factory=Counter)
    not_run: Counter = field(default_factory=Counter)  # reason -> count

    @property
    def run(self) -> int:
        return sum(self.counts.values())

    @property
    def not_run_total(self) -> int:
        return sum(self.not_run.values())

    def as_dict(self) -> dict:
        return {"section": self.section, "family": self.family,
                "counts": {s: self.counts.get(s, 0) for s in STATUS_COLUMNS},
                "run": self.run, "not_run": self.not_run_total, "total": self.run + self.not_run_total,
                "not_run_reasons": dict(sorted(self.not_run.items()))}


def coverage_matrix(outcomes: Iterable[Outcome], not_run: Iterable[NotRun]) -> list[CoverageRow]:
    """Rows sorted by (section, family)."""
    rows: dict[tuple[str, str], CoverageRow] = {}

    def row(section: str, family: str) -> CoverageRow:
        key = (section or UNSECTIONED, family or "unknown")
        if key not in rows:
            rows[key] = CoverageRow(*key)
        return rows[key]

    for outcome in outcomes:
        row(outcome.section, outcome.family).counts[outcome.status.value] += 1
    for entry in not_run:
        row(entry.section, entry.family).not_run[entry.reason] += 1
    return [rows[key] for key in sorted(rows)]


def write_coverage(rows: list[CoverageRow], not_run: list[NotRun], out_dir: Path) -> tuple[Path, Path]:
    """Write ``coverage.csv`` and ``coverage.json``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / "coverage.csv", out_dir / "coverage.json"
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["section", "family", *STATUS_COLUMNS, "run", "not_run", "total"])
        for r in rows:
            writer.writerow([r.section, r.family, *(r.counts.get(s, 0) for s in STATUS_COLUMNS),
                             r.run, r.not_run_total, r.run + r.not_run_total])
    by_reason: dict[str, int] = defaultdict(int)
    for entry in not_run:
        by_reason[entry.reason] += 1
    data = {"statuses": list(STATUS_COLUMNS), "rows": [r.as_dict() for r in rows],
            "not_run_by_reason": dict(sorted(by_reason.items())),
            "not_run_cases": [{"case_id": e.case_id, "section": e.section, "family": e.family,
                               "reason": e.reason} for e in not_run]}
    json_path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return csv_path, json_path


# --- per section and per statement (issue 15) ------------------------------------------------------

@dataclass(frozen=True)
class SectionRow:
    """Coverage of one section of the spec texts in one result set.

    ``counts``: status -> cases exercising the section (primary or other); ``passed`` / ``failed``:
    those with a passing / failing status (``results.status.PASSING`` / ``FAILING``); ``pass_rate``:
    passed / executed (all but Skip and NotSupported, as on the dashboard), None when nothing
    executed; ``statements_*``: the section's normative
    statements in total, linked to cases, marked untestable, and linked to a case that passed here.
    """

    section: str
    title: str
    depth: int
    parent: str | None
    primary_cases: int
    other_cases: int
    counts: dict[str, int]
    primary_counts: dict[str, int]
    passed: int
    failed: int
    statements_total: int
    statements_linked: int
    statements_untestable: int
    statements_covered: int
    subtree_cases: int

    @property
    def cases(self) -> int:
        return self.primary_cases + self.other_cases

    @property
    def executed(self) -> int:
        return sum(n for status, n in self.counts.items() if Status(status) not in NOT_EXECUTED)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.executed if self.executed else None

    @property
    def tested(self) -> bool:
        """Some case exercises this section itself."""
        return self.cases > 0

    @property
    def untested(self) -> bool:
        return not self.tested

    def as_dict(self) -> dict:
        return {"section": self.section, "title": self.title, "depth": self.depth, "parent": self.parent,
                "primary_cases": self.primary_cases, "other_cases": self.other_cases, "cases": self.cases,
                "counts": dict(self.counts), "primary_counts": dict(self.primary_counts),
                "passed": self.passed, "failed": self.failed, "executed": self.executed, "pass_rate": self.pass_rate,
                "statements_total": self.statements_total, "statements_linked": self.statements_linked,
                "statements_untestable": self.statements_untestable,
                "statements_covered": self.statements_covered, "subtree_cases": self.subtree_cases,
                "untested": self.untested}


@dataclass(frozen=True)
class StatementRow:
    """One normative statement in one result set: the cases that check it and how they did."""

    id: str
    section: str
    kind: str
    paraphrase: str
    untestable: str
    file: str
    line: int
    cases: int
    passed: int
    failed: int
    sentences: tuple[str, ...] = ()

    @property
    def covered(self) -> bool:
        return self.passed > 0

    def as_dict(self) -> dict:
        return {"id": self.id, "section": self.section, "kind": self.kind, "paraphrase": self.paraphrase,
                "untestable": self.untestable, "file": self.file, "line": self.line, "cases": self.cases,
                "passed": self.passed, "failed": self.failed, "covered": self.covered,
                "sentences": list(self.sentences)}


def outcome_sections(outcome: Outcome) -> tuple[str, ...]:
    """Every section an outcome exercises, its own first (just its own for logs without the list)."""
    own = outcome.section or UNSECTIONED
    return (own,) + tuple(s for s in outcome.sections if s != own)


def _statement_tally(outcomes: Iterable[Outcome]) -> dict[str, Counter]:
    tally: dict[str, Counter] = defaultdict(Counter)
    for outcome in outcomes:
        for sid in outcome.statements:
            tally[sid]["cases"] += 1
            if outcome.status in PASSING:
                tally[sid]["passed"] += 1
            elif outcome.status in FAILING:
                tally[sid]["failed"] += 1
    return tally


def statement_coverage(result, *, sentences: bool = False, statements=None) -> list[StatementRow]:
    """One row per statement of ``reference/statements.json`` for a ResultSet (or an iterable of
    outcomes); ``sentences=True`` adds the spec's own sentences when the texts are beside the checkout."""
    from reference.statements import load_statements, statement_sentences

    data = statements or load_statements()
    outcomes = list(result.outcomes.values()) if hasattr(result, "outcomes") else list(result)
    tally = _statement_tally(outcomes)
    rows = []
    for st in data.statements:
        t = tally.get(st.id, Counter())
        rows.append(StatementRow(st.id, st.section, st.kind, st.paraphrase, st.untestable, st.file, st.line,
                                 t["cases"], t["passed"], t["failed"],
                                 tuple(statement_sentences(st)) if sentences else ()))
    return rows


def section_coverage(result, *, statements=None, extra: tuple[str, ...] = ()) -> list[SectionRow]:
    """One row per section of the spec texts (all of ``reference.sections.SECTIONS``, in index
    order, then any other section the outcomes name or ``extra`` lists, sorted) for a ResultSet or
    an iterable of outcomes."""
    from reference.statements import load_statements

    data = statements or load_statements()
    outcomes = list(result.outcomes.values()) if hasattr(result, "outcomes") else list(result)
    primary: dict[str, Counter] = defaultdict(Counter)
    every: dict[str, Counter] = defaultdict(Counter)
    for outcome in outcomes:
        secs = outcome_sections(outcome)
        primary[secs[0]][outcome.status.value] += 1
        for sec in secs:
            every[sec][outcome.status.value] += 1
    tally = _statement_tally(outcomes)
    by_section = data.by_section()
    order = list(SECTIONS) + sorted((set(every) | set(extra)) - set(SECTIONS))
    subtree: Counter = Counter()
    for sec in order:
        n = sum(every[sec].values())
        if n:
            node: str | None = sec
            while node is not None:
                subtree[node] += n
                node = parent_section(node) if node in SECTIONS else None
    rows = []
    for sec in order:
        counts, own = every.get(sec, Counter()), primary.get(sec, Counter())
        sts = by_section.get(sec, [])
        rows.append(SectionRow(
            section=sec, title=SECTIONS.get(sec, ""), depth=sec.count(".") if sec in SECTIONS else 0,
            parent=parent_section(sec) if sec in SECTIONS else None,
            primary_cases=sum(own.values()), other_cases=sum(counts.values()) - sum(own.values()),
            counts={k: counts.get(k, 0) for k in STATUS_COLUMNS}, primary_counts={k: own.get(k, 0) for k in STATUS_COLUMNS},
            passed=sum(counts.get(s.value, 0) for s in PASSING), failed=sum(counts.get(s.value, 0) for s in FAILING),
            statements_total=len(sts), statements_linked=sum(1 for st in sts if st.checks),
            statements_untestable=sum(1 for st in sts if st.untestable),
            statements_covered=sum(1 for st in sts if tally.get(st.id, Counter())["passed"] > 0),
            subtree_cases=subtree[sec]))
    return rows


def write_section_coverage(result, out_dir: Path) -> Path:
    """Write ``coverage-sections.json``: every section's row (:class:`SectionRow`) and every
    statement's (:class:`StatementRow`, with the spec's sentences when the texts are beside the
    checkout); returns its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = section_coverage(result)
    statements = statement_coverage(result, sentences=True)
    data = {"sections": [r.as_dict() for r in sections], "statements": [r.as_dict() for r in statements],
            "summary": {"sections": sum(1 for r in sections if r.section in SECTIONS),
                        "sections_tested": sum(1 for r in sections if r.section in SECTIONS and r.tested),
                        "statements": len(statements), "statements_linked": sum(1 for r in statements if not r.untestable),
                        "statements_untestable": sum(1 for r in statements if r.untestable),
                        "statements_covered": sum(1 for r in statements if r.covered)}}
    path = out_dir / "coverage-sections.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def sections_side_by_side(sets, *, sentences: bool = False) -> dict:
    """Dashboard data for several result sets (columns): every section once with one
    :class:`SectionRow` dict per column, and every statement once with one :class:`StatementRow`
    dict per column (``sentences`` adds the spec's sentences, once per statement)."""
    named = {sec for s in sets for o in s.outcomes.values() for sec in outcome_sections(o)} - set(SECTIONS)
    per_set = [section_coverage(s, extra=tuple(sorted(named))) for s in sets]
    st_per_set = [statement_coverage(s) for s in sets]
    sections = []
    for rows in zip(*per_set, strict=True):
        first = rows[0]
        sections.append({"section": first.section, "title": first.title, "depth": first.depth, "parent": first.parent,
                         "statements_total": first.statements_total, "columns": [r.as_dict() for r in rows]})
    statements = []
    if st_per_set:
        from reference.statements import load_statements, statement_sentences

        by_id = {st.id: st for st in load_statements().statements}
        for rows in zip(*st_per_set, strict=True):
            first = rows[0]
            entry = {"id": first.id, "section": first.section, "sections": list(by_id[first.id].sections),
                     "kind": first.kind, "paraphrase": first.paraphrase, "untestable": first.untestable,
                     "location": f"{first.file}:{first.line}",
                     "columns": [{"cases": r.cases, "passed": r.passed, "failed": r.failed, "covered": r.covered}
                                 for r in rows]}
            if sentences:
                entry["sentences"] = statement_sentences(by_id[first.id])
            statements.append(entry)
    return {"sections": sections, "statements": statements}
