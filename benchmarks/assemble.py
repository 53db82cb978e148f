"""Benchmark of the assembly tier: enumerate a level, assemble every kernel for every target,
synthesise every case's inputs; cold (empty cache) then warm (cache hit).

    python benchmarks/assemble.py --level default [--ptxas PATH] [--workers N] [--no-sass]

Prints, per family, the number of cases and of distinct kernels (and kernel x target
assemblies), then the cold and warm wall times; the last line is ``cases/s``.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.harness.assembly import deviation_for, job_for  # noqa: E402
from conformance.harness.toolchain import Assembler, find_ptxas, find_tool  # noqa: E402
from generators import variants  # noqa: E402
from generators.inputs import Untestable, case_record, synthesize  # noqa: E402
from generators.variants import mma as mma_variants  # noqa: E402


def _clear_caches() -> None:
    variants._MMA.clear()
    mma_variants.covering_rows.cache_clear()


def run_once(level: str, assembler: Assembler, families: tuple[str, ...] = ()) -> dict:
    t0 = time.perf_counter()
    cases = variants.cases(level, families=families)
    t1 = time.perf_counter()
    jobs = {}
    for case in cases:
        for target in case.targets:
            key = (case.kernel.name, target)
            if key not in jobs:
                jobs[key] = job_for(case, target)
    t2 = time.perf_counter()
    results = assembler.assemble(jobs.values())
    t3 = time.perf_counter()
    for case in cases:
        if case.legal:
            try:
                case_record(case, synthesize(case))
            except Untestable:
                pass
    t4 = time.perf_counter()
    bad = sum(1 for c in cases for t in c.targets
              if results[(c.kernel.name, t)].ok != c.legal and not deviation_for(c, assembler.ptxas))
    return {"cases": cases, "jobs": len(jobs), "enumerate": t1 - t0, "render": t2 - t1, "assemble": t3 - t2,
            "synthesise": t4 - t3, "total": t4 - t0, "unexpected": bad}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="default", choices=variants.LEVELS)
    ap.add_argument("--family", action="append", default=[], help="only this instruction family (repeatable)")
    ap.add_argument("--ptxas", default=None)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--no-sass", action="store_true", help="skip nvdisasm")
    ap.add_argument("--cache", default=None, help="cache directory (default: a fresh temporary one)")
    args = ap.parse_args(argv)
    tools = find_ptxas([args.ptxas] if args.ptxas else [])
    if not tools:
        print("no ptxas found", file=sys.stderr)
        return 2
    nvdisasm = None if args.no_sass else find_tool("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="tcgen05-cts-bench-") as tmp:
        cache = Path(args.cache or tmp)
        print(f"ptxas {tools[0].version} ({tools[0].path}); nvdisasm {nvdisasm.version if nvdisasm else 'off'}; "
              f"workers {args.workers}; cache {cache}")
        cold_asm = Assembler(tools[0], nvdisasm, cache=cache, batch_size=args.batch_size, workers=args.workers)
        cold = run_once(args.level, cold_asm, tuple(args.family))
        by_family = collections.defaultdict(lambda: [0, set(), set()])
        for c in cold["cases"]:
            entry = by_family[c.family]
            entry[0] += 1
            entry[1].add(c.kernel.name)
            entry[2].update((c.kernel.name, t) for t in c.targets)
        print(f"{'family':<14}{'cases':>8}{'kernels':>9}{'assemblies':>12}")
        for fam, (n, kernels, pairs) in by_family.items():
            print(f"{fam:<14}{n:>8}{len(kernels):>9}{len(pairs):>12}")
        ncases = len(cold["cases"])
        nkernels = len({c.kernel.name for c in cold["cases"]})
        print(f"{'total':<14}{ncases:>8}{nkernels:>9}{cold['jobs']:>12}")
        _clear_caches()
        warm_asm = Assembler(tools[0], nvdisasm, cache=cache, batch_size=args.batch_size, workers=args.workers)
        warm = run_once(args.level, warm_asm, tuple(args.family))
        for name, r in (("cold", cold), ("warm", warm)):
            print(f"{name}: {r['total']:.1f} s (enumerate {r['enumerate']:.1f}, render {r['render']:.1f}, "
                  f"assemble {r['assemble']:.1f}, synthesise {r['synthesise']:.1f}); "
                  f"ptxas runs {(cold_asm if name == 'cold' else warm_asm).stats['ptxas_runs']}; "
                  f"unexpected outcomes {r['unexpected']}")
        print(f"cases/s: cold {ncases / cold['total']:.0f}, warm {ncases / warm['total']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
