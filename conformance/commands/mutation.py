"""``tcgen05-cts mutation-score``: how many injected hardware faults the execution tier catches.

Runs the execution tier (pytest marker ``execute``, ``--device sim``) on the simulated device once
without faults, then once per fault until the first case fails; prints ``caught NAME by CASE`` or
``survived NAME`` per fault and ``caught X/Y`` as the last line. Faults: the built-in catalogue
(``ptxsim.faults.catalogue``), or with ``--faults-from`` the ``FAULTS`` of those files
(``--with-builtin`` adds the catalogue). The fault-free baseline is also a dry run of every fault,
and a fault runs only in the cases where it changes a decoded value (``--exhaustive``: in all);
a survivor says how many cases it changes values in. ``-j N`` splits the cases into N stride shards run by N
processes (each: baseline, then every fault until its first failing case); a fault is caught when
any shard catches it (the lowest shard's case is printed). Exit code 0 (a score is a measurement,
not a verdict), 2 for bad input, pytest's collection error code when collection fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import conformance
from conformance.commands.cli import CliError
from conformance.plugin import LEVELS


def register(subparsers) -> None:
    parser = subparsers.add_parser("mutation-score", help="mutation score of the execution tier on the simulator",
                                   description=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--level", choices=LEVELS, default="smoke", help="variant-matrix level (default smoke)")
    parser.add_argument("--faults-from", action="append", default=[], metavar="FILE",
                        help="Python file defining FAULTS = [Fault(...)] (repeatable; replaces the catalogue)")
    parser.add_argument("--with-builtin", action="store_true", help="with --faults-from: keep the catalogue too")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated fault names to score")
    parser.add_argument("--tests", default=None, metavar="PATH",
                        help="test files or directory (default: the conformance package)")
    parser.add_argument("-m", dest="marker", default="execute", help="pytest marker expression (default execute)")
    parser.add_argument("-k", dest="keyword", metavar="EXPR", help="pytest -k expression")
    parser.add_argument("--numerics", choices=("spec", "hardware"), default="hardware",
                        help="numerics model of the numerics cases (default hardware: a mutation score "
                             "measures regression-detection power, and faults such as RNE-instead-of-RZ "
                             "are behaviours the spec tolerance allows but the bit-exact sm_100 model does not)")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="run N processes, each on a stride shard of the cases (default 1)")
    parser.add_argument("--exhaustive", action="store_true",
                        help="run every passing case under every fault, not only the cases the dry run "
                             "shows the fault changes a value in (for fault functions that keep state)")
    parser.add_argument("--shard", help=argparse.SUPPRESS)           # set by -j for its workers
    parser.add_argument("--json-out", help=argparse.SUPPRESS)        # worker result file
    parser.set_defaults(func=handle)


def select_faults(args):
    from ptxsim.faults.catalogue import FAULTS
    from ptxsim.faults.model import FaultSet, load_faults

    faults = [f for path in args.faults_from for f in load_faults(path)]
    if not args.faults_from or args.with_builtin:
        faults = list(FAULTS) + faults
    FaultSet(faults)                                     # duplicate names are an error
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {f.name: f for f in faults}
        missing = [n for n in names if n not in known]
        if missing:
            raise CliError(f"--only expects fault names of the selected faults, but got {', '.join(missing)}")
        faults = [known[n] for n in names]
    return faults


def _worker_argv(args, shard: str, out: Path) -> list[str]:
    argv = [sys.executable, "-m", "conformance.commands.cli", "mutation-score", "--level", args.level, "-m", args.marker,
            "--numerics", args.numerics, "--shard", shard, "--json-out", str(out)]
    for path in args.faults_from:
        argv += ["--faults-from", str(Path(path).resolve())]
    if args.with_builtin:
        argv.append("--with-builtin")
    if args.exhaustive:
        argv.append("--exhaustive")
    for flag, value in (("--only", args.only), ("--tests", args.tests), ("-k", args.keyword)):
        if value:
            argv += [flag, str(Path(value).resolve()) if flag == "--tests" else value]
    return argv


def _parallel(args, faults) -> int:
    """``-j N``: N worker processes on stride shards; merge their JSON results (module docstring)."""
    from conformance.commands.workers import run_workers

    results = run_workers("mutation-score", args.jobs, lambda shard, out: _worker_argv(args, shard, out))
    if isinstance(results, int):
        return results
    from conformance.harness.mutation import line

    caught = 0
    for f in faults:
        by = next((r["caught_by"][f.name] for r in results if r["caught_by"].get(f.name)), None)
        caught += by is not None
        counts = [r.get("triggered", {}).get(f.name) for r in results]
        print(line(f.name, by, None if None in counts else sum(counts)))
    passing = sum(r["baseline_pass"] for r in results)
    others = [o for r in results for o in r["baseline_other"]]
    if others:
        print(f"note: {len(others)} case(s) do not pass without faults and are left out of the score "
              f"(first: {others[0][0]}: {others[0][1]})")
    if not passing:
        print("note: no execution case passes on the fault-free simulator; nothing can catch a fault")
    print(f"baseline: {passing} case(s) pass without faults")
    print(f"caught {caught}/{len(faults)}")
    return 0


def handle(args) -> int:
    from conformance.harness.mutation import mutation_score

    faults = select_faults(args)
    tests = args.tests or str(Path(conformance.__file__).resolve().parent)
    if not Path(tests).exists():
        raise CliError(f"--tests expects an existing path, but got {tests!r}")
    if args.jobs < 1:
        raise CliError(f"-j expects a positive number of processes, but got {args.jobs}")
    if args.jobs > 1 and not args.shard:
        return _parallel(args, faults)
    pytest_args = [tests, "-p", "conformance.plugin", "-p", "no:cacheprovider", "-p", "no:warnings", "-qq", "--no-header",
                   "--device", "sim", "--level", args.level, "--numerics", args.numerics, "-m", args.marker,
                   "-p", "no:randomly"]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    if args.shard:
        pytest_args += ["--shard", args.shard]

    def progress(text: str) -> None:
        print(text, flush=True)

    code, result = mutation_score(pytest_args, faults, progress, exhaustive=args.exhaustive)
    if code not in (0, 1, 5):
        print(f"pytest exited with {code} (collection or usage error)", file=sys.stderr)
        return code
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"caught_by": result.caught_by, "triggered": result.triggered,
                                                   "baseline_pass": len(result.baseline_pass),
                                                   "baseline_other": result.baseline_other}))
    others = result.baseline_other
    if others:
        print(f"note: {len(others)} case(s) do not pass without faults and are left out of the score "
              f"(first: {others[0][0]}: {others[0][1]})")
    if not result.baseline_pass:
        print("note: no execution case passes on the fault-free simulator; nothing can catch a fault")
    if not args.json_out:
        print(f"baseline: {len(result.baseline_pass)} case(s) pass without faults")
    print(f"caught {result.caught}/{len(faults)}")
    return 0
