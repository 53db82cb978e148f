"""The coverage matrix's "not run" rows: legal variants of the next level that a run's level leaves
out, kept on disk between runs.

``--results`` at ``--level default`` lists every exhaustive variant the default level does not
run: enumerating the exhaustive level (182,000 cases) took ~20 s of CPU in the first xdist worker
of every run, for a list that depends only on the level, the section and family filters, the
readings in force and the generators' and reference's code. So it is computed once per such key
and kept in ``not-run/<key>.jsonl`` of the toolchain cache (``$TCGEN05_CTS_CACHE`` or
``~/.cache/tcgen05-cts``, beside the assembler's cubins and the simulator's parse trees).
``key`` is the SHA-256 of those inputs and of every ``generators/`` and ``reference/`` source file
(an edited generator misses every old entry). An entry is written aside and renamed into place; one
that cannot be read or does not parse is computed again and rewritten; an unwritable cache only
costs the enumeration.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from results.outcome_log import NotRun

NEXT_LEVEL = {"smoke": "default", "default": "exhaustive"}
_ROOT = Path(__file__).resolve().parents[2]
_SOURCES = ("generators", "reference")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of the variant enumeration's code: every ``.py`` of generators/ and reference/,
    the Python and numpy versions."""
    h = hashlib.sha256(f"python {sys.version_info[:3]} numpy {np.__version__}".encode())
    for package in _SOURCES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            h.update(str(path.relative_to(_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def entry_path(directory: Path, level: str, sections: Sequence[str], families: Sequence[str]) -> Path:
    from reference.spec_questions import defaults

    key = json.dumps([code_fingerprint(), level, sorted(sections), sorted(families), sorted(defaults().items())])
    return directory / "not-run" / f"{hashlib.sha256(key.encode()).hexdigest()}.jsonl"


def compute(level: str, sections: Sequence[str], families: Sequence[str]) -> list[NotRun]:
    """The legal cases of the level after ``level`` that ``level`` does not hold (enumerated)."""
    from generators.variants import cases

    here = {c.case_id for c in cases(level, sections=sections, families=families)}
    bigger = NEXT_LEVEL[level]
    return [NotRun(c.case_id, c.section, c.family, f"in level {bigger}, not in {level}")
            for c in cases(bigger, sections=sections, families=families, negatives=False) if c.case_id not in here]


def not_run(level: str, sections: Sequence[str] = (), families: Sequence[str] = (),
            directory: Path | None = None) -> list[NotRun]:
    """:func:`compute`'s rows, from the cache in ``directory`` (default: the toolchain cache) when
    it holds them; [] for a level that has no next one."""
    if level not in NEXT_LEVEL:
        return []
    if directory is None:
        from conformance.harness.toolchain import cache_dir

        directory = cache_dir()
    path = entry_path(Path(directory), level, sections, families)
    try:
        return [NotRun.from_json(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):        # missing, unreadable or corrupt (json errors are ValueErrors)
        pass
    rows = compute(level, sections, families)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(row.to_json() + "\n" for row in rows)
        os.replace(tmp, path)
    except OSError:
        pass
    return rows
