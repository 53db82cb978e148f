"""Baselines, skip/flake lists and stride sharding (the conventions of Mesa's deqp-runner).

* Baseline file (``--baseline FILE``): CSV lines ``case_id,Status`` listing expected failures,
  e.g. ``tcgen05.mma.cta_group::1.kind::f16...,Fail``.  ``#`` starts a comment line; blank lines
  are ignored; no header.  A listed case that ends with exactly the listed status is
  ``ExpectedFail`` (does not fail the run); a listed case that passes is ``UnexpectedPass`` (fails
  the run, so baselines stay honest); any other status stands as it is.
* Skips / flakes files (``--skips FILE``, ``--flakes FILE``): one Python regular expression per
  line, matched anywhere in the case ID (``re.search``; anchor with ``^``/``$``).  Skipped cases
  are not run (status ``Skip``); a known flake that fails is ``Flake`` (does not fail the run).
* Flake reruns: a failing case is rerun up to N times; if the statuses of the attempts differ,
  the case is ``Flake``.
* Shards (``--shard I/N``): shard I (1-based) of N runs the cases at positions I-1, I-1+N,
  I-1+2N, ... of the collection order: stable for a given level and filter set.

Bad input raises ``ValueError`` naming the file and line (or the argument).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, TypeVar

from results.status import RAW_FAILURES, Status

T = TypeVar("T")

#: Statuses a baseline may list.
BASELINE_STATUSES = tuple(sorted(s.value for s in RAW_FAILURES))


@dataclass(frozen=True)
class Expectation:
    """A baseline entry: the status a case is expected to end with, and where it was written."""

    status: Status
    source: str  # "file:line"


@dataclass(frozen=True)
class Baseline:
    """Expected failures by case ID."""

    entries: dict[str, Expectation]

    def get(self, case_id: str) -> Expectation | None:
        return self.entries.get(case_id)

    def __len__(self) -> int:
        return len(self.entries)


def _content_lines(path: Path) -> list[tuple[int, str]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: expects UTF-8 text, but got undecodable bytes ({exc.reason})") from None
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((number, line.rstrip("\r\n")))
    return lines


def parse_baseline(path: Path) -> Baseline:
    """Read a ``case_id,Status`` baseline file."""
    entries: dict[str, Expectation] = {}
    for number, line in _content_lines(path):
        where = f"{path}:{number}"
        row = next(csv.reader([line]))
        if len(row) != 2 or not row[0].strip():
            raise ValueError(f"{where}: a baseline row expects 'case_id,Status', but got {line!r}")
        case_id, text = row[0].strip(), row[1].strip()
        if text not in BASELINE_STATUSES:
            raise ValueError(f"{where}: baseline status expects one of {', '.join(BASELINE_STATUSES)}, "
                             f"but got {text!r}")
        status = Status(text)
        previous = entries.get(case_id)
        if previous is not None and previous.status != status:
            raise ValueError(f"{where}: {case_id} is listed again with {status} "
                             f"(already {previous.status} at {previous.source})")
        entries.setdefault(case_id, Expectation(status, where))
    return Baseline(entries)


@dataclass(frozen=True)
class PatternList:
    """Regular expressions from skips/flakes files, each with its source line."""

    patterns: tuple[tuple[re.Pattern[str], str], ...] = ()

    def match(self, case_id: str) -> str | None:
        """The ``file:line (pattern)`` of the first pattern found in ``case_id``, or ``None``."""
        for pattern, source in self.patterns:
            if pattern.search(case_id):
                return f"{source} ({pattern.pattern})"
        return None

    def __add__(self, other: PatternList) -> PatternList:
        return PatternList(self.patterns + other.patterns)


def parse_patterns(path: Path) -> PatternList:
    """Read a file of regular expressions, one per line."""
    patterns = []
    for number, line in _content_lines(path):
        text = line.strip()
        try:
            patterns.append((re.compile(text), f"{path}:{number}"))
        except re.error as exc:
            raise ValueError(f"{path}:{number}: bad regular expression {text!r}: {exc}") from None
    return PatternList(tuple(patterns))


def parse_pattern_files(paths: Sequence[Path]) -> PatternList:
    result = PatternList()
    for path in paths:
        result = result + parse_patterns(path)
    return result


# --- applying expectations ----------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """The final status of a case, and a note saying why it differs from the raw one."""

    status: Status
    note: str = ""


def apply_expectations(case_id: str, raw: Status, baseline: Baseline | None,
                       flakes: PatternList | None) -> Verdict:
    """The final status of a case that ended with ``raw``, given the baseline and flakes list."""
    expected = baseline.get(case_id) if baseline is not None else None
    if expected is not None:
        if raw == expected.status:
            return Verdict(Status.EXPECTED_FAIL, f"expected {expected.status} ({expected.source})")
        if raw == Status.PASS:
            return Verdict(Status.UNEXPECTED_PASS,
                           f"passed, but {expected.source} expects {expected.status}: update the baseline")
    if raw in RAW_FAILURES and flakes is not None:
        source = flakes.match(case_id)
        if source is not None:
            return Verdict(Status.FLAKE, f"{raw} of a known flake, {source}")
    if expected is not None and raw in RAW_FAILURES:
        return Verdict(raw, f"{expected.source} expects {expected.status}")
    return Verdict(raw)


def attempts_verdict(attempts: Sequence[Status]) -> Status:
    """Status of a case run several times: ``Flake`` when the attempts disagree, else the last."""
    if not attempts:
        raise ValueError("attempts expects at least one status, but got none")
    return Status.FLAKE if len(set(attempts)) > 1 else attempts[-1]


# --- sharding -----------------------------------------------------------------------------------

def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``--shard I/N`` (1 <= I <= N)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if match is None:
        raise ValueError(f"--shard expects I/N (e.g. 2/8), but got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"--shard expects I/N with 1 <= I <= N, but got {text!r}")
    return index, count


def shard_select(items: Sequence[T], shard: tuple[int, int]) -> list[T]:
    """The items of shard ``(I, N)``: every N-th item, starting at position I-1."""
    index, count = shard
    return list(items[index - 1::count])
