"""Loading results directories: merge outcome files, add ``Missing`` cases from the manifest.

A *column* is one set of results shown side by side with others (e.g. one toolchain or one
driver); it may merge several directories (the shards of one run).  On the command line a column
is ``DIR``, ``DIR1,DIR2,...`` (merged) or ``LABEL=DIR1,DIR2``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from results.outcome_log import (
    ExpectedCase,
    LogProblem,
    NotRun,
    Outcome,
    read_manifest,
    read_not_run,
    read_outcomes,
)
from results.status import SEVERITY, Status


@dataclass(frozen=True)
class Column:
    label: str
    dirs: tuple[Path, ...]


def parse_column(spec: str) -> Column:
    """``DIR``, ``DIR1,DIR2`` or ``LABEL=DIR1,DIR2`` -> :class:`Column`."""
    label, sep, rest = spec.partition("=")
    if not sep:
        label, rest = "", spec
    dirs = tuple(Path(part) for part in rest.split(",") if part.strip())
    if not dirs:
        raise ValueError(f"a results column expects DIR, DIR1,DIR2 or LABEL=DIR1,DIR2, but got {spec!r}")
    return Column(label or ",".join(str(d) for d in dirs), dirs)


@dataclass
class ResultSet:
    """The merged results of one column."""

    label: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    not_run: list[NotRun] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[LogProblem] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for outcome in self.outcomes.values():
            counts[outcome.status.value] += 1
        return counts

    def cases_per_second(self) -> float | None:
        """Finished cases per second of wall time, over the runs that recorded both ends."""
        wall = sum(max(0.0, r["end"] - r["start"]) for r in self.runs
                   if isinstance(r.get("start"), (int, float)) and isinstance(r.get("end"), (int, float)))
        executed = sum(1 for o in self.outcomes.values() if o.status != Status.MISSING)
        return executed / wall if wall > 0 else None


_RANK = {status: rank for rank, status in enumerate(SEVERITY)}


def _merge_duplicate(old: Outcome, new: Outcome) -> Outcome:
    """Two records of one case (a worker that died after reporting, two shards overlapping):
    the more severe one stands, and says it was reported more than once."""
    keep, other = (old, new) if _RANK[old.status] <= _RANK[new.status] else (new, old)
    note = f"[reported more than once; also {other.status}]"
    details = keep.details if note in keep.details else f"{note} {keep.details}".strip()
    return replace(keep, details=details)


def _missing(expected: ExpectedCase) -> Outcome:
    return Outcome(case_id=expected.case_id, status=Status.MISSING, section=expected.section,
                   family=expected.family, variant=dict(expected.variant), nodeid=expected.nodeid,
                   sections=expected.sections,
                   details="selected at collection time, but never reported (run killed or worker lost)")


def load_result_set(column: Column) -> ResultSet:
    """Read every results file of the column's directories."""
    result = ResultSet(column.label)
    manifest: list[ExpectedCase] = []
    not_run: dict[str, NotRun] = {}
    for directory in column.dirs:
        if not directory.is_dir():
            raise ValueError(f"results directory expects an existing directory, but got {str(directory)!r}")
        found = False
        for path in sorted(directory.glob("run*.json")):
            found = True
            try:
                info = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(info, dict):
                    raise ValueError("expects a JSON object")
                result.runs.append(info)
            except ValueError as exc:
                result.problems.append(LogProblem(path, 1, f"bad run information refused ({exc})"))
        for path in sorted(directory.glob("outcomes*.jsonl")):
            found = True
            outcomes, problems = read_outcomes(path)
            result.problems.extend(problems)
            for outcome in outcomes:
                old = result.outcomes.get(outcome.case_id)
                result.outcomes[outcome.case_id] = outcome if old is None else _merge_duplicate(old, outcome)
        for path in sorted(directory.glob("expected-cases*.jsonl")):
            found = True
            entries, problems = read_manifest(path)
            result.problems.extend(problems)
            manifest.extend(entries)
        for path in sorted(directory.glob("not-run*.jsonl")):
            rows, problems = read_not_run(path)
            result.problems.extend(problems)
            for row in rows:
                not_run.setdefault(row.case_id, row)
        if not found:
            raise ValueError(f"results directory {str(directory)!r} expects run*.json, expected-cases*.jsonl "
                             "or outcomes*.jsonl files, but has none")
    reported_nodeids = {o.nodeid for o in result.outcomes.values() if o.nodeid}
    for expected in manifest:
        if expected.case_id not in result.outcomes and expected.nodeid not in reported_nodeids:
            result.outcomes[expected.case_id] = _missing(expected)
    result.not_run = [row for cid, row in sorted(not_run.items()) if cid not in result.outcomes]
    return result


def load_columns(specs: list[str]) -> list[ResultSet]:
    """Load each ``DIR`` / ``DIR1,DIR2`` / ``LABEL=DIRS`` argument as one column."""
    sets = [load_result_set(parse_column(spec)) for spec in specs]
    labels = [s.label for s in sets]
    for index, s in enumerate(sets):
        if labels.count(s.label) > 1:
            s.label = f"{s.label} #{index + 1}"
    return sets
