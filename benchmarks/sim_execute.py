"""Execution tier on the simulated device, outside pytest: cases/s per family and overall.

    python3 benchmarks/sim_execute.py --level default [--family mma] [--limit 400] [--batch 64] [--m 128 --n 256]

Runs the same path as ``pytest -m execute --device sim``: cases grouped by kernel, inputs
synthesized, one simulator launch per batch (``conformance.harness.execute_batch.ExecutionService``), the
expected sections computed and compared. ``--limit N`` keeps about N cases: whole kernel groups
(so batches stay as large as in a full run), evenly spread over the level (default: ~17,000 cases). Prints one line per family, then ``cases/s`` last.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.harness import execute_batch as EB  # noqa: E402
from conformance.harness.compare import ComparisonFailure  # noqa: E402
from conformance.harness.device import check_status  # noqa: E402
from conformance.harness.execute import execution_cases  # noqa: E402
from conformance.harness.execute_compare import compare_case  # noqa: E402
from conformance.harness.oracles import expected  # noqa: E402
from ptxsim import SimDevice  # noqa: E402


class _Config:
    def __init__(self, level: str, families: list[str]) -> None:
        self.opts = {"--level": level, "--section": [], "--family": families}

    def getoption(self, name: str):
        return self.opts.get(name)


def _param(case, name):
    return dict(case.params.items_).get(name)


class _Stages:
    """Seconds per stage: synthesis (wrapped), launch (the service's own clock), oracle, comparison."""

    def __init__(self) -> None:
        self.synthesis = self.oracle = self.comparison = 0.0
        synthesize = EB.synthesize

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return synthesize(*a, **k)
            finally:
                self.synthesis += time.perf_counter() - t0

        EB.synthesize = timed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="default", choices=("smoke", "default", "exhaustive"))
    ap.add_argument("--family", action="append", default=[])
    ap.add_argument("--limit", type=int, default=0, help="evenly spread sample of at most N cases (0: all)")
    ap.add_argument("--batch", type=int, default=64, help="cases per launch (the simulator runs 32 CTAs at once)")
    ap.add_argument("-k", dest="keyword", default="", help="only cases whose ID contains this text")
    ap.add_argument("--m", type=int, default=0, help="only cases whose params have this M (0: any)")
    ap.add_argument("--n", type=int, default=0, help="only cases whose params have this N (0: any)")
    ap.add_argument("--copies", type=int, default=1,
                    help="run each case this many times (own IDs and inputs, one kernel): full batches")
    args = ap.parse_args(argv)
    families = args.family or ["alloc", "ld", "ld.red", "st", "wait", "cp", "shift", "mma", "mma.sp", "mma.ws",
                               "mma.ws.sp", "fence", "commit", "sync", "warp.mma.sp"]
    xcases = execution_cases(_Config(args.level, families), families)
    if args.limit and len(xcases) > args.limit:          # whole kernel groups, evenly spread
        by_kernel: dict[str, list] = defaultdict(list)
        for xc in xcases:
            by_kernel[xc.case.kernel.name].append(xc)
        groups_list = list(by_kernel.values())
        step = len(xcases) / args.limit
        xcases = [xc for i, g in enumerate(groups_list) if int(i / step) != int((i + 1) / step) or step < 1 for xc in g]
    if args.keyword:
        xcases = [xc for xc in xcases if args.keyword in xc.case_id]
    for name, want in (("m", args.m), ("n", args.n)):
        if want:
            xcases = [xc for xc in xcases if _param(xc.case, name) == want]
    if args.copies > 1:
        xcases = [EB.ExecCase(replace(xc.case, case_id=f"{xc.case.case_id}.copy{i}"), xc.mode)
                  for xc in xcases for i in range(args.copies)]
    stages = _Stages()
    svc = EB.ExecutionService(None, SimDevice())
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for xc in xcases:
        groups[(xc.case.kernel.name, svc.target_for(xc.case))].append(xc)
    stats: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])      # cases, pass, other, seconds
    start, cpu_start = time.perf_counter(), time.process_time()
    for (_, target), members in groups.items():
        for i in range(0, len(members), args.batch):
            part = members[i:i + args.batch]
            t0 = time.perf_counter()
            runs = svc.launch(part, target)
            for xc in part:
                run = runs[xc.case_id]
                ok = run.error is None and run.skip is None and check_status(xc.case_id, run.status) is None
                if ok:
                    t1 = time.perf_counter()
                    want = expected(xc.case, run.inputs, mode=xc.mode)
                    t2 = time.perf_counter()
                    stages.oracle += t2 - t1
                    try:
                        compare_case(want, run.outputs, section_id="", case_id="", repro="")
                    except ComparisonFailure:
                        ok = False
                    stages.comparison += time.perf_counter() - t2
                s = stats[xc.case.family]
                s[0] += 1
                s[1 if ok else 2] += 1
            stats[part[0].case.family][3] += time.perf_counter() - t0
    total, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    for fam, (n, ok, other, secs) in sorted(stats.items()):
        print(f"{fam:12s} {int(n):6d} cases  {int(ok):6d} pass  {int(other):4d} other  {secs:8.1f} s  {n / secs if secs else 0:8.1f} cases/s")
    n = sum(int(s[0]) for s in stats.values())
    print(f"{n} cases in {total:.1f} s on one core ({svc.launches} launches)")
    if n:
        per = {"synthesis": stages.synthesis, "launch": svc.seconds, "oracle": stages.oracle,
               "comparison": stages.comparison}
        print("ms/case  " + "  ".join(f"{k} {1000 * v / n:.1f}" for k, v in per.items()))
        if svc.seconds:
            print(f"simulator launches alone: {n / svc.seconds:.1f} cases/s")
    print(f"cases/s per CPU second {n / cpu if cpu else 0:.1f} (this process's CPU time: the figure that does "
          "not depend on other load on the machine)")
    print(f"cases/s {n / total:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
