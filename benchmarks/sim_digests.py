"""Digests of the simulator's launches: a check that a simulator speed change keeps every result.

    python3 benchmarks/sim_digests.py [--level default] [--limit 1500] [--batch 64] > digests.txt

Selects cases as ``benchmarks/execute.py`` does (whole kernel groups evenly spread over the level),
launches them batch by batch through ``conformance.harness.execute_batch.ExecutionService`` on the
simulated device (``SimBackend``, hazard checker on, as ``--device sim``) and prints one line per
case: the case ID, sha256 of its output words and status words (shape, dtype and bytes), and sha256
of the launch's report (the crash, timeout or hazard error's type and text, or the skip reason) or
``-`` when there is none.  Run it before and after a change and ``diff`` the outputs: they must be
identical (byte-identical outputs, status words, hazard reports and SimErrors).

``--deletions N`` then adds up to N launches (evenly spread over every kernel's synchronization
sites, ``generators.ptx.sync_sites``) of a kernel's first batch with one synchronization step
deleted, as the hazard score deletes them: lines ``<case ID>~<site key>``, whose reports are mostly
the hazard checker's (the normal cases report nothing).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.execute import FAMILIES, select_cases  # noqa: E402
from conformance.harness import execute_batch as EB  # noqa: E402
from conformance.harness.device_sim import SimBackend  # noqa: E402
from generators.ptx.sync_sites import delete_site, sync_sites  # noqa: E402


def words_digest(*arrays) -> str:
    """sha256 (16 hex digits) of arrays' shapes, dtypes and bytes; ``None`` entries count as absent."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(b"none" if a is None else f"{a.shape}{a.dtype}".encode() + a.tobytes())
    return h.hexdigest()[:16]


def report_digest(run) -> str:
    """sha256 (16 hex digits) of what the launch reported about the case, or ``-`` for nothing."""
    if run.error is None and run.skip is None:
        return "-"
    text = f"skip {run.skip}" if run.error is None else f"{type(run.error).__name__}: {run.error}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _groups(svc, xcases) -> dict[tuple[str, str], list]:
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for xc in xcases:
        target = svc.target_for(xc.case)
        if target is not None:
            groups[(xc.case.kernel.name, target)].append(xc)
    return groups


def _lines(runs, part, suffix: str = ""):
    for xc in part:
        run = runs[xc.case_id]
        yield xc.case_id + suffix, words_digest(run.outputs, run.status), report_digest(run)


def digests(xcases, batch: int):
    """``(case ID, words digest, report digest)`` per case, in launch order."""
    svc = EB.ExecutionService(None, SimBackend())
    for (_, target), members in _groups(svc, xcases).items():
        for i in range(0, len(members), batch):
            part = members[i:i + batch]
            yield from _lines(svc.launch(part, target), part)


def deletion_digests(xcases, batch: int, limit: int):
    """The lines of up to ``limit`` launches with one synchronization site deleted (module doc)."""
    svc = EB.ExecutionService(None, SimBackend())
    todo = []
    for (name, target), members in _groups(svc, xcases).items():
        ptx = svc.source_unedited(members[0].case, target)[0]
        todo.extend((name, target, members[:batch], site.key) for site in sync_sites(ptx))
    step = max(len(todo) / limit, 1.0) if limit else 1.0
    for name, target, part, key in [todo[int(i * step)] for i in range(min(limit or len(todo), len(todo)))]:
        with EB.edit_sources({name: lambda ptx, key=key: delete_site(ptx, key)}):
            yield from _lines(svc.launch(part, target), part, f"~{key}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="default", choices=("smoke", "default", "exhaustive"))
    ap.add_argument("--limit", type=int, default=0, help="evenly spread sample of at most N cases (0: all)")
    ap.add_argument("--batch", type=int, default=64, help="cases per launch (the harness's sim batch)")
    ap.add_argument("--deletions", type=int, default=0,
                    help="also up to N launches with one synchronization site deleted (0: none)")
    args = ap.parse_args(argv)
    xcases = select_cases(args.level, FAMILIES, args.limit)
    for case_id, words, report in digests(xcases, args.batch):
        print(case_id, words, report)
    if args.deletions:
        for case_id, words, report in deletion_digests(xcases, args.batch, args.deletions):
            print(case_id, words, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
