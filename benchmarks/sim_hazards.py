"""Cost of the hazard checker: the execution tier's simulator launches with hazards on vs off.

    python3 benchmarks/sim_hazards.py [--level default] [--limit 1500] [--repeat 2]

Selects cases as ``benchmarks/execute.py`` does (whole kernel groups evenly spread over the
level), launches every batch with ``SimDevice(hazards=False)`` and ``hazards=True`` (through the harness SimBackend)
alternately (same inputs, ``--repeat`` rounds, the best of each), and prints the CPU seconds of
the launches alone, then ``overhead N %`` last (target: <= 30 %, issue 14).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.execute import FAMILIES, select_cases  # noqa: E402
from conformance.harness import execute_batch as EB  # noqa: E402
from conformance.harness.device_sim import SimBackend  # noqa: E402


def select(level: str, limit: int):
    return select_cases(level, FAMILIES, limit)


def launch_all(xcases, hazards: bool, batch: int) -> tuple[float, int]:
    """CPU seconds spent in simulator launches, and the number of cases that reported a hazard."""
    svc = EB.ExecutionService(None, SimBackend(hazards=hazards))
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for xc in xcases:
        groups[(xc.case.kernel.name, svc.target_for(xc.case))].append(xc)
    cpu, hazards_seen = 0.0, 0
    for (_, target), members in groups.items():
        for i in range(0, len(members), batch):
            part = members[i:i + batch]
            t0 = time.process_time()
            runs = svc.launch(part, target)
            cpu += time.process_time() - t0
            hazards_seen += sum("HazardError" in str(r.error or "") for r in runs.values())
    return cpu, hazards_seen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="default", choices=("smoke", "default", "exhaustive"))
    ap.add_argument("--limit", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    xcases = select(args.level, args.limit)
    best = {False: float("inf"), True: float("inf")}
    seen = 0
    for _ in range(args.repeat):
        for hz in (False, True):
            cpu, n = launch_all(xcases, hz, args.batch)
            best[hz] = min(best[hz], cpu)
            seen = max(seen, n)
    print(f"{len(xcases)} cases ({args.level}), best of {args.repeat}: launches {best[False]:.2f} s CPU with "
          f"hazards off, {best[True]:.2f} s with hazards on; cases reporting a hazard: {seen}")
    print(f"overhead {100 * (best[True] / best[False] - 1):.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
