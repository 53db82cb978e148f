"""The outcome log: one JSON object per line, appended the moment a case finishes.

Files of one results directory (``<tag>`` is empty, or ``-shard<I>of<N>`` for a sharded run, so
shards may share a directory)::

    run<tag>.json                 run information (level, shard, start/end time, argv, ...)
    expected-cases<tag>.jsonl     the manifest: every case selected at collection time
    not-run<tag>.jsonl            legal variants not run at this level, and why
    outcomes<tag>-<writer>.jsonl  outcomes; one file per writing process

Concurrency: each process appends to its own file (``<writer>`` is the pytest-xdist worker id,
``main`` without xdist, ``controller`` for crash records written by the xdist controller), so no
two processes ever write one file; readers merge the files.  A worker replaced after a crash keeps
its id and appends to the same file after its dead predecessor.  Each record is one ``write()`` of
one complete line, followed by ``fsync`` (set ``TCGEN05_CTS_FSYNC=0`` to skip the fsync: a killed
process still loses nothing, only a crash of the whole machine could).

Reading never stops at a bad line: a corrupt or truncated line becomes a :class:`LogProblem`
naming file and line, and every other line is still returned.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from results.status import Status

SCHEMA = 1
T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """One finished case."""

    case_id: str
    status: Status
    section: str = ""
    family: str = ""
    duration: float = 0.0
    toolchain: str = ""
    driver: str = ""
    device: str = ""
    details: str = ""
    variant: dict[str, Any] = field(default_factory=dict)
    nodeid: str = ""
    raw_status: str = ""
    attempts: tuple[str, ...] = ()
    worker: str = ""
    time: float = 0.0
    sections: tuple[str, ...] = ()     # every section the case exercises, ``section`` first (absent in old logs)
    statements: tuple[str, ...] = ()   # ids of the normative statements it checks (reference/statements.json)

    def to_json(self) -> str:
        data = asdict(self)
        data["status"] = self.status.value
        data["attempts"] = list(self.attempts)
        data["sections"] = list(self.sections)
        data["statements"] = list(self.statements)
        data["variant"] = {str(k): plain_value(v) for k, v in self.variant.items()}
        data["v"] = SCHEMA
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        case_id = data.get("case_id")
        if not isinstance(case_id, str) or not case_id:
            raise ValueError(f"case_id expects a non-empty string, but got {case_id!r}")
        status = Status.parse(str(data.get("status")))
        variant = data.get("variant") or {}
        if not isinstance(variant, dict):
            raise ValueError(f"variant expects an object, but got {variant!r}")
        return cls(
            case_id=case_id, status=status, section=str(data.get("section") or ""),
            family=str(data.get("family") or ""), duration=float(data.get("duration") or 0.0),
            toolchain=str(data.get("toolchain") or ""), driver=str(data.get("driver") or ""),
            device=str(data.get("device") or ""), details=str(data.get("details") or ""),
            variant=variant, nodeid=str(data.get("nodeid") or ""),
            raw_status=str(data.get("raw_status") or ""),
            attempts=tuple(str(a) for a in data.get("attempts") or ()),
            worker=str(data.get("worker") or ""), time=float(data.get("time") or 0.0),
            sections=list_field(data, "sections"), statements=list_field(data, "statements"),
        )


@dataclass(frozen=True)
class ExpectedCase:
    """One manifest entry: a case selected at collection time."""

    case_id: str
    nodeid: str = ""
    section: str = ""
    family: str = ""
    variant: dict[str, Any] = field(default_factory=dict)
    sections: tuple[str, ...] = ()   # (statements are left out: a Missing case covers none)

    def to_json(self) -> str:
        data = asdict(self)
        data["variant"] = {str(k): plain_value(v) for k, v in self.variant.items()}
        data["sections"] = list(self.sections)
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExpectedCase:
        case_id = data.get("case_id")
        if not isinstance(case_id, str) or not case_id:
            raise ValueError(f"case_id expects a non-empty string, but got {case_id!r}")
        return cls(case_id, str(data.get("nodeid") or ""), str(data.get("section") or ""),
                   str(data.get("family") or ""), dict(data.get("variant") or {}),
                   list_field(data, "sections"))


@dataclass(frozen=True)
class NotRun:
    """A legal variant the level left out, and why (input from the variant enumeration)."""

    case_id: str
    section: str
    family: str
    reason: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NotRun:
        missing = [k for k in ("case_id", "section", "family", "reason") if not isinstance(data.get(k), str)]
        if missing:
            raise ValueError(f"not-run record expects string fields {', '.join(missing)}, but got {data!r}")
        return cls(data["case_id"], data["section"], data["family"], data["reason"])


@dataclass(frozen=True)
class LogProblem:
    """A line of a results file that was refused."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def list_field(data: dict[str, Any], key: str) -> tuple[str, ...]:
    """An optional list-of-strings field of a record (``sections``, ``statements``: logs written
    before they existed have none)."""
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ValueError(f"{key} expects a list of strings, but got {value!r}")
    return tuple(value)


def plain_value(value: Any) -> Any:
    """``value`` as JSON-safe data (str, numbers, bools, None, lists); anything else as ``str``."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return str(value)


# --- file names ---------------------------------------------------------------------------------

def run_tag(shard: tuple[int, int] | None) -> str:
    """File-name tag of a run: ``""``, or ``"-shard3of8"`` for shard 3 of 8."""
    return "" if shard is None else f"-shard{shard[0]}of{shard[1]}"


def outcome_path(results_dir: Path, tag: str, writer: str) -> Path:
    return Path(results_dir) / f"outcomes{tag}-{writer}.jsonl"


def manifest_path(results_dir: Path, tag: str) -> Path:
    return Path(results_dir) / f"expected-cases{tag}.jsonl"


def not_run_path(results_dir: Path, tag: str) -> Path:
    return Path(results_dir) / f"not-run{tag}.jsonl"


def run_info_path(results_dir: Path, tag: str) -> Path:
    return Path(results_dir) / f"run{tag}.json"


def clear_run(results_dir: Path, tag: str) -> None:
    """Remove the files a previous run with the same tag left in ``results_dir``."""
    d = Path(results_dir)
    for pattern in (f"outcomes{tag}-*.jsonl", f"expected-cases{tag}.jsonl", f"not-run{tag}.jsonl",
                    f"run{tag}.json"):
        for path in d.glob(pattern):
            if tag or "-shard" not in path.name:
                path.unlink(missing_ok=True)


# --- writing ------------------------------------------------------------------------------------

def _fsync_wanted() -> bool:
    return os.environ.get("TCGEN05_CTS_FSYNC", "1") != "0"


class OutcomeWriter:
    """Appends outcomes to one file: one ``write()`` per complete line, then ``fsync``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._fsync = _fsync_wanted()

    def append(self, outcome: Outcome) -> None:
        data = (outcome.to_json() + "\n").encode("utf-8")
        view = memoryview(data)
        while view:  # a regular file takes it in one go; loop for the letter of POSIX
            view = view[os.write(self._fd, view):]
        if self._fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def write_jsonl_exclusive(path: Path, records: Iterable[Any]) -> bool:
    """Write ``records`` (objects with ``to_json``) to ``path`` unless it already exists.

    The file appears complete or not at all (written aside, then hard-linked into place), so
    several workers may race to write the same manifest.  Returns whether this call wrote it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return False
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for record in records:
                out.write(record.to_json() + "\n")
            out.flush()
            if _fsync_wanted():
                os.fsync(out.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(tmp)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1, sort_keys=True)
    os.replace(tmp, path)


# --- reading ------------------------------------------------------------------------------------

def read_jsonl(path: Path, parse: Callable[[dict[str, Any]], T]) -> tuple[list[T], list[LogProblem]]:
    """Parse each line of ``path`` with ``parse``; bad lines become problems, the rest is returned."""
    path = Path(path)
    items: list[T] = []
    problems: list[LogProblem] = []
    with open(path, "rb") as handle:
        raw = handle.read()
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        last_unterminated = number == len(lines)  # the file does not end with a newline
        try:
            data = json.loads(line.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"a record expects a JSON object, but got {type(data).__name__}")
            items.append(parse(data))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            kind = "truncated" if last_unterminated else "corrupt"
            problems.append(LogProblem(path, number, f"{kind} line refused ({exc}): {_clip(line)}"))
        except (ValueError, TypeError) as exc:
            problems.append(LogProblem(path, number, f"bad record refused ({exc}): {_clip(line)}"))
    return items, problems


def _clip(line: bytes, limit: int = 80) -> str:
    text = line.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_outcomes(path: Path) -> tuple[list[Outcome], list[LogProblem]]:
    return read_jsonl(path, Outcome.from_json)


def read_manifest(path: Path) -> tuple[list[ExpectedCase], list[LogProblem]]:
    return read_jsonl(path, ExpectedCase.from_json)


def read_not_run(path: Path) -> tuple[list[NotRun], list[LogProblem]]:
    return read_jsonl(path, NotRun.from_json)
