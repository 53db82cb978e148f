"""Coverage matrix: spec section x instruction family -> case counts by status, plus the legal
variants this level did not run and why (that list comes from the variant enumeration).

``coverage.csv`` columns: ``section, family, <one per status>, run, not_run, total``; ``run`` is
the number of cases with an outcome (including Missing), ``not_run`` the legal variants left out.
``coverage.json`` holds the same rows plus, per row, the not-run counts by reason, and the list of
not-run cases.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from results.junit import UNSECTIONED
from results.outcome_log import NotRun, Outcome
from results.status import Status

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
