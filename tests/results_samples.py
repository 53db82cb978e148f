"""Synthetic results directories for the results/report self-tests (statuses chosen by hand)."""

from __future__ import annotations

from pathlib import Path

from results.outcome_log import (
    ExpectedCase,
    NotRun,
    Outcome,
    OutcomeWriter,
    manifest_path,
    not_run_path,
    outcome_path,
    run_info_path,
    write_json_atomic,
    write_jsonl_exclusive,
)
from results.status import Status

A, B, C = "9.7.16.4.1", "9.7.16.7.1", "9.7.16.9.3"

#: (case_id, section, family, status) of the sample run; "b.alloc.missing" never reports.
SAMPLE = [
    ("a.desc.1", A, "desc", Status.PASS),
    ("a.desc.2", A, "desc", Status.PASS),
    ("a.desc.3", A, "desc", Status.FAIL),
    ("a.desc.4", A, "desc", Status.NOT_SUPPORTED),
    ("a.mma.1", A, "mma", Status.CRASH),
    ("b.alloc.1", B, "alloc", Status.PASS),
    ("b.alloc.2", B, "alloc", Status.EXPECTED_FAIL),
    ("b.alloc.3", B, "alloc", Status.SKIP),
]
MISSING = ("b.alloc.missing", B, "alloc")
NOT_RUN = [NotRun("a.mma.2", A, "mma", "pairwise coverage at this level"),
           NotRun("a.mma.3", A, "mma", "pairwise coverage at this level"),
           NotRun("c.shift.1", C, "shift", "exhaustive level only")]


def write_sample(directory: Path, statuses: dict[str, Status] | None = None, toolchain: str = "ptxas 13.0",
                 start: float = 1000.0, end: float = 1002.0) -> Path:
    """Write the sample run (``statuses`` overrides some cases' statuses) into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_info_path(directory, ""), {"level": "smoke", "start": start, "end": end})
    entries = [ExpectedCase(cid, f"t.py::{cid}", sec, fam) for cid, sec, fam, _ in SAMPLE]
    entries.append(ExpectedCase(MISSING[0], f"t.py::{MISSING[0]}", MISSING[1], MISSING[2]))
    write_jsonl_exclusive(manifest_path(directory, ""), entries)
    write_jsonl_exclusive(not_run_path(directory, ""), NOT_RUN)
    writers = [OutcomeWriter(outcome_path(directory, "", w)) for w in ("gw0", "gw1")]
    for index, (cid, sec, fam, status) in enumerate(SAMPLE):
        status = (statuses or {}).get(cid, status)
        writers[index % 2].append(Outcome(
            case_id=cid, status=status, section=sec, family=fam, duration=0.25, toolchain=toolchain,
            driver="580.1", device="NVIDIA B200", details=f"{status.value} details of {cid}",
            variant={"m": 128, "kind": "f16"}, nodeid=f"t.py::{cid}"))
    for writer in writers:
        writer.close()
    return directory
