"""CuTe encoding oracle (issue 17): host programs that print CuTe's encodings, parsed into records.

The programs live in ``conformance/clients/cute_src/*.cu`` (our own code; they call CuTe's public
functions and print what they return, one line per grid point: ``<record> key=value ...``).
:func:`oracle_records` compiles one against the wheels' headers (host code only, so g++ alone:
:func:`conformance.clients.cute_build.run_host` with ``host_only``; cached on disk; a file lock keeps
parallel test workers from compiling the same program twice) and parses every line into a dict (decimal and ``0x`` values become ints).  ``tests/test_cute_encodings.py``
compares the records with ``reference/`` (docs/clients-cute.md lists the grids and the findings).
"""

from __future__ import annotations

import fcntl
from functools import lru_cache
from pathlib import Path

from conformance.clients.cute_build import cache_dir, run_host

SOURCES = Path(__file__).resolve().parent / "cute_src"
PROGRAMS = ("idesc", "smem", "tmem", "sf")


def _value(text: str):
    try:
        return int(text, 0)
    except ValueError:
        return text


def parse_line(line: str) -> tuple[str, dict]:
    """``"idesc kind=f16 m=128 value=0x10"`` -> ``("idesc", {"kind": "f16", "m": 128, "value": 16})``."""
    head, *pairs = line.split()
    record = {}
    for pair in pairs:
        key, sep, val = pair.partition("=")
        if not sep:
            raise ValueError(f"expects key=value pairs after the record name, but got {pair!r} in {line!r}")
        record[key] = _value(val)
    return head, record


def program_output(name: str) -> str:
    """Stdout of host program ``cute_src/<name>.cu`` (compiled once, cached; serialized by a file lock)."""
    if name not in PROGRAMS:
        raise ValueError(f"expects one of {', '.join(PROGRAMS)}, but got {name!r}")
    source = (SOURCES / f"{name}.cu").read_text()
    lock_dir = cache_dir()
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return run_host(source, host_only=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@lru_cache(maxsize=None)
def oracle_records(name: str) -> dict[str, list[dict]]:
    """Records of program ``name`` grouped by record name (lines that are not records are ignored:
    CuTe prints an ERROR line on the host when a descriptor asks for a shared-memory address)."""
    out: dict[str, list[dict]] = {}
    for line in program_output(name).splitlines():
        if not line or line.startswith("ERROR") or "=" not in line:
            continue
        head, record = parse_line(line)
        out.setdefault(head, []).append(record)
    return out
