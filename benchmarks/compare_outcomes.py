"""Case-by-case verdict comparison of two results directories (a change must not move any verdict).

    python3 benchmarks/compare_outcomes.py BEFORE AFTER [--only-common]
    python3 benchmarks/compare_outcomes.py --example        # two tiny made-up directories, one difference

``BEFORE`` and ``AFTER`` are ``--results`` directories (``DIR1,DIR2`` merges shards, as for
``tcgen05-cts report``). Prints the status counts of each, then every case whose status differs
(``case_id: BEFORE -> AFTER``; a case only one side has reads ``absent``). With ``--only-common``
cases only one side reported (a shard against a whole run, a run still going: its ``Missing``
cases) are not differences. Exit code 0 when no case differs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from results.outcome_log import Outcome, OutcomeWriter  # noqa: E402
from results.resultset import load_columns  # noqa: E402
from results.status import Status  # noqa: E402

ABSENT = "absent"


def status_by_case(result_set, reported_only: bool = False) -> dict[str, str]:
    """``case_id -> status`` (``Missing`` for a case selected but never reported, unless
    ``reported_only``: then such a case is absent)."""
    return {cid: o.status.value for cid, o in result_set.outcomes.items()
            if not (reported_only and o.status == Status.MISSING)}


def write_example(root: Path) -> tuple[str, str]:
    """Two results directories of three cases, the third passing in one and failing in the other."""
    dirs = []
    for name, third in (("before", Status.PASS), ("after", Status.FAIL)):
        writer = OutcomeWriter(root / name / "outcomes-example.jsonl")
        for cid, status in (("case.a", Status.PASS), ("case.b", Status.SKIP), ("case.c", third)):
            writer.append(Outcome(case_id=cid, status=status))
        writer.close()
        dirs.append(str(root / name))
    return dirs[0], dirs[1]


def differences(before: dict[str, str], after: dict[str, str], only_common: bool = False) -> list[tuple[str, str, str]]:
    """``(case_id, before status, after status)`` of every case whose status differs, sorted."""
    ids = (before.keys() & after.keys()) if only_common else (before.keys() | after.keys())
    return sorted((cid, before.get(cid, ABSENT), after.get(cid, ABSENT)) for cid in ids
                  if before.get(cid, ABSENT) != after.get(cid, ABSENT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", nargs="?")
    ap.add_argument("after", nargs="?")
    ap.add_argument("--only-common", action="store_true", help="compare only cases both sides reported")
    ap.add_argument("--example", action="store_true", help="compare two tiny made-up directories")
    args = ap.parse_args(argv)
    if args.example:
        with tempfile.TemporaryDirectory() as tmp:
            return main(list(write_example(Path(tmp))))
    if args.before is None or args.after is None:
        ap.error("expects BEFORE and AFTER results directories (or --example)")
    sets = load_columns([args.before, args.after])
    maps = [status_by_case(s, args.only_common) for s in sets]
    for s, m in zip(sets, maps, strict=True):
        counts = {k: v for k, v in s.counts().items() if v}
        print(f"{s.label}: {len(m)} cases {counts}" + (f"; {len(s.problems)} log problem(s)" if s.problems else ""))
    diff = differences(maps[0], maps[1], args.only_common)
    for cid, a, b in diff:
        print(f"{cid}: {a} -> {b}")
    common = len(maps[0].keys() & maps[1].keys())
    print(f"{len(diff)} case(s) differ ({common} cases in both)")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
