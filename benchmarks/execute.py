"""Execution tier outside pytest, on any device: cases/s per family, launches alone and end to end.

    python3 benchmarks/execute.py [--device sim|cuda] [--load cubin|ptx] --level default [--family mma]
                                  [--limit 400] [--batch N] [--m 128 --n 256]

Runs the same path as ``pytest -m execute --device D``: cases grouped by kernel, inputs
synthesized, one launch per batch (``conformance.harness.execute_batch.ExecutionService`` over the
harness's device: ``SimBackend`` for ``sim``; PyCUDA, or any module of its shape first on
``PYTHONPATH`` such as tests/fake_cuda, for ``cuda``), the expected sections computed and compared.
Cases no kernel target of the device runs are counted as NotSupported and not timed.
``--limit N`` keeps about N cases: whole kernel groups (so batches stay as large as in a full run),
evenly spread over the level (default: ~17,000 cases).

Prints one line per family, the host milliseconds per case by stage, then ``launch alone`` and
``end to end`` cases/s; ``cases/s`` is the last line.
"""

from __future__ import annotations

import argparse
import gc
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

FAMILIES = ["alloc", "ld", "ld.red", "st", "wait", "cp", "shift", "mma", "mma.sp", "mma.ws", "mma.ws.sp", "fence",
            "commit", "sync", "warp.mma.sp"]


class _Config:
    """The pytest options the harness reads, for use outside pytest."""

    def __init__(self, level: str, families: list[str], load: str = "cubin", ptxas: list[str] | None = None) -> None:
        self.opts = {"--level": level, "--section": [], "--family": families, "load": load,
                     "--ptxas": list(ptxas or [])}

    def getoption(self, name: str, default=None):
        return self.opts.get(name, default)


def select_cases(level: str, families: list[str], limit: int = 0) -> list:
    """The execution cases of ``level``; with ``limit``, about that many: whole kernel groups, evenly spread."""
    xcases = execution_cases(_Config(level, families), families)
    if limit and len(xcases) > limit:
        by_kernel: dict[str, list] = defaultdict(list)
        for xc in xcases:
            by_kernel[xc.case.kernel.name].append(xc)
        groups = list(by_kernel.values())
        step = len(xcases) / limit
        xcases = [xc for i, g in enumerate(groups) if int(i / step) != int((i + 1) / step) or step < 1 for xc in g]
    return xcases


def _param(case, name):
    return dict(case.params.items_).get(name)


def open_benchmark_device(kind: str):
    from conformance.harness.devices import open_device

    device, why = open_device(kind)
    if device is None:
        print(f"benchmarks/execute.py: error: --device {kind}: {why}", file=sys.stderr)
        raise SystemExit(2)
    return device


CPU = time.thread_time      # host stages: CPU seconds of this thread (the machine may be shared)


class _Stages:
    """Seconds per stage: synthesis, record packing and the assembly/module cache (wrapped), launch
    (the service's own clock), oracle, comparison. Every stage but the launch is this thread's CPU
    time (:data:`CPU`): other load on the machine does not count, and neither do child processes
    (ptxas)."""

    def __init__(self) -> None:
        self.synthesis = self.oracle = self.comparison = self.packing = self.modules = 0.0
        EB.synthesize = self.timed(EB.synthesize, "synthesis")
        EB.case_record = self.timed(EB.case_record, "packing")

    def timed(self, fn, stage: str):
        def wrapper(*a, **k):
            t0 = CPU()
            try:
                return fn(*a, **k)
            finally:
                setattr(self, stage, getattr(self, stage) + CPU() - t0)

        return wrapper


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="sim", choices=("sim", "cuda"))
    ap.add_argument("--load", default="cubin", choices=("cubin", "ptx"), help="with --device cuda (default cubin)")
    ap.add_argument("--level", default="default", choices=("smoke", "default", "exhaustive"))
    ap.add_argument("--family", action="append", default=[])
    ap.add_argument("--limit", type=int, default=0, help="evenly spread sample of at most N cases (0: all)")
    ap.add_argument("--batch", type=int, default=0, help="cases per launch (default: the harness's, 64 sim / 4096 cuda)")
    ap.add_argument("-k", dest="keyword", default="", help="only cases whose ID contains this text")
    ap.add_argument("--m", type=int, default=0, help="only cases whose params have this M (0: any)")
    ap.add_argument("--n", type=int, default=0, help="only cases whose params have this N (0: any)")
    ap.add_argument("--copies", type=int, default=1,
                    help="run each case this many times (own IDs and inputs, one kernel): full batches")
    args = ap.parse_args(argv)
    families = args.family or FAMILIES
    xcases = select_cases(args.level, families, args.limit)
    if args.keyword:
        xcases = [xc for xc in xcases if args.keyword in xc.case_id]
    for name, want in (("m", args.m), ("n", args.n)):
        if want:
            xcases = [xc for xc in xcases if _param(xc.case, name) == want]
    if args.copies > 1:
        xcases = [EB.ExecCase(replace(xc.case, case_id=f"{xc.case.case_id}.copy{i}"), xc.mode)
                  for xc in xcases for i in range(args.copies)]
    # as the pytest plugin does once collection is done (conformance/plugin.py): the selected cases
    # live to the end, so move them out of the collector's reach instead of walking them again
    gc.collect()
    gc.freeze()
    device = open_benchmark_device(args.device)
    batch = args.batch or EB.MAX_BATCH.get(device.kind, 64)
    stages = _Stages()
    svc = EB.ExecutionService(_Config(args.level, families, args.load), device)
    svc.module = stages.timed(svc.module, "modules")
    print(f"device: {device.name} ({device.kind}, {device.driver_version})"
          + (f", load {svc.load_mode}" if device.kind == "cuda" else ""))
    groups: dict[tuple[str, str], list] = defaultdict(list)
    unsupported = 0
    for xc in xcases:
        target = svc.target_for(xc.case)
        if target is None:
            unsupported += 1
        else:
            groups[(xc.case.kernel.name, target)].append(xc)
    stats: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])      # cases, pass, other, seconds
    start, cpu_start = time.perf_counter(), time.process_time()
    for (_, target), members in groups.items():
        for i in range(0, len(members), batch):
            part = members[i:i + batch]
            t0 = time.perf_counter()
            runs = svc.launch(part, target)
            for xc in part:
                run = runs[xc.case_id]
                ok = run.error is None and run.skip is None and check_status(xc.case_id, run.status) is None
                if ok:
                    t1 = CPU()
                    want = expected(xc.case, run.inputs, mode=xc.mode)
                    t2 = CPU()
                    stages.oracle += t2 - t1
                    try:
                        compare_case(want, run.outputs, section_id="", case_id="", repro="")
                    except ComparisonFailure:
                        ok = False
                    stages.comparison += CPU() - t2
                s = stats[xc.case.family]
                s[0] += 1
                s[1 if ok else 2] += 1
            stats[part[0].case.family][3] += time.perf_counter() - t0
    total, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    for fam, (n, ok, other, secs) in sorted(stats.items()):
        print(f"{fam:12s} {int(n):6d} cases  {int(ok):6d} pass  {int(other):4d} other  {secs:8.1f} s  {n / secs if secs else 0:8.1f} cases/s")
    n = sum(int(s[0]) for s in stats.values())
    print(f"{n} cases in {total:.1f} s ({svc.launches} launches), {unsupported} NotSupported on this device")
    if n:
        host = stages.synthesis + stages.oracle + stages.comparison
        per = {"synthesis": stages.synthesis, "packing": stages.packing, "modules (assembly cache)": stages.modules,
               "launch": svc.seconds, "oracle": stages.oracle, "comparison": stages.comparison}
        print("ms/case (launch: device clock; the others: CPU)  "
              + "  ".join(f"{k} {1000 * v / n:.2f}" for k, v in per.items())
              + f"  host (synthesis+oracle+comparison) {1000 * host / n:.2f}")
        print(f"launch alone: {n / svc.seconds if svc.seconds else 0:.1f} cases/s")
        print(f"end to end: {n / total if total else 0:.1f} cases/s")
    print(f"cases/s per CPU second {n / cpu if cpu else 0:.1f} (this process's CPU time: the figure that does "
          "not depend on other load on the machine)")
    print(f"cases/s {n / total if total else 0:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
