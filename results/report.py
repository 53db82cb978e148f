"""Build every report from loaded result sets.

Layout of the output directory ``OUT``:

* one column: ``OUT/junit/section-<id>.xml``, ``OUT/coverage.csv``, ``OUT/coverage.json``;
* several columns: the same under ``OUT/<column label, sanitised>/``;
* always ``OUT/dashboard.html`` (all columns side by side) and ``OUT/summary.json``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from results.coverage import coverage_matrix, write_coverage, write_section_coverage
from results.dashboard import write_dashboard
from results.junit import write_junit
from results.outcome_log import LogProblem
from results.resultset import ResultSet
from results.spec_questions import spec_question_rows, write_spec_questions
from results.status import FAILING


@dataclass
class ReportSummary:
    out_dir: Path
    dashboard: Path
    junit: dict[str, list[Path]] = field(default_factory=dict)
    coverage: dict[str, tuple[Path, Path]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    cases_per_second: dict[str, float | None] = field(default_factory=dict)
    problems: list[LogProblem] = field(default_factory=list)

    @property
    def failing(self) -> bool:
        """Whether any column holds a failing status (Fail, Crash, Timeout, UnexpectedPass, Missing)."""
        return any(n and status in {s.value for s in FAILING}
                   for counts in self.counts.values() for status, n in counts.items())

    def lines(self) -> list[str]:
        out = []
        for label, counts in self.counts.items():
            shown = ", ".join(f"{status} {n}" for status, n in counts.items() if n) or "no cases"
            out.append(f"{label}: {shown}")
        out.append(f"dashboard: {self.dashboard}")
        return out


def _subdir(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "column"


def build_reports(sets: list[ResultSet], out_dir: Path) -> ReportSummary:
    """Write JUnit per section, coverage matrix and dashboard for ``sets`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = ReportSummary(out_dir, out_dir / "dashboard.html")
    used: set[str] = set()
    for s in sets:
        target = out_dir
        if len(sets) > 1:
            name = _subdir(s.label)
            while name in used:
                name += "_"
            used.add(name)
            target = out_dir / name
        outcomes = list(s.outcomes.values())
        summary.junit[s.label] = write_junit(outcomes, target / "junit")
        summary.coverage[s.label] = write_coverage(coverage_matrix(outcomes, s.not_run), s.not_run, target)
        write_section_coverage(outcomes, target)
        summary.counts[s.label] = s.counts()
        summary.cases_per_second[s.label] = s.cases_per_second()
        summary.problems.extend(s.problems)
    write_dashboard(sets, summary.dashboard)
    write_spec_questions(sets, out_dir / "spec-questions.md")
    data = {"columns": {label: {"counts": counts, "cases_per_s": summary.cases_per_second[label]}
                        for label, counts in summary.counts.items()},
            "refused_lines": [str(p) for p in summary.problems],
            "spec_questions": spec_question_rows(sets)}
    (out_dir / "summary.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    return summary
