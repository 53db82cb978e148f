"""``tcgen05-cts run``: run the conformance suite with pytest, then build the reports.

A thin wrapper: ``python -m pytest <conformance package> -p conformance.plugin
-p conformance.outcomes_plugin --results DIR ...`` in a subprocess (so a crash of the suite
cannot take the report step down), then ``tcgen05-cts report DIR -o DIR``.  Without a GPU the
reference and assembly tiers run and execution cases are skipped as NotSupported.  Arguments after
``--`` go to pytest unchanged.

Exit code: pytest's (0 when no case was collected), or 1 when the report holds a failing status
or refused log lines while pytest said 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import conformance
from conformance.commands.cli import CliError
from conformance.commands.report import report
from conformance.plugin import LEVELS
from results.baseline import parse_baseline, parse_pattern_files, parse_shard

PYTEST_NO_TESTS = 5


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="run the conformance suite (pytest) and build the reports",
                                   description=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--level", choices=LEVELS, default="smoke", help="variant-matrix level (default smoke)")
    parser.add_argument("--results", default="results-out", metavar="DIR",
                        help="results directory (default results-out)")
    parser.add_argument("-n", "--numprocesses", default="auto", metavar="N",
                        help="pytest-xdist workers: a number, 'auto', or 0 for none (default auto)")
    parser.add_argument("--device", choices=("cuda", "sim", "none"), default="cuda",
                        help="execution backend (default cuda: execution cases skip where no GPU fits)")
    parser.add_argument("--numerics", choices=("spec", "hardware"), default="spec")
    parser.add_argument("--load", choices=("cubin", "ptx"), default="cubin",
                        help="with --device cuda: cubins assembled for the GPU (default) or the driver's PTX JIT")
    parser.add_argument("--baseline", metavar="FILE", help="CSV case_id,Status of expected failures")
    parser.add_argument("--skips", action="append", default=[], metavar="FILE", help="regexes of cases not to run")
    parser.add_argument("--flakes", action="append", default=[], metavar="FILE", help="regexes of known flakes")
    parser.add_argument("--flake-reruns", type=int, default=0, metavar="N", help="rerun failures N times")
    parser.add_argument("--shard", metavar="I/N", help="run shard I of N (1-based stride sharding)")
    parser.add_argument("--section", action="append", default=[], metavar="S", help="only this spec section")
    parser.add_argument("--family", action="append", default=[], metavar="F", help="only this family")
    parser.add_argument("--ptxas", action="append", default=[], metavar="PATH", help="ptxas to assemble with")
    parser.add_argument("--sim-reading", action="append", default=[], metavar="QID=R",
                        help="with --device sim: the simulated device follows reading R of spec question QID")
    parser.add_argument("--reading", action="append", default=[], metavar="QID=R",
                        help="expected values follow reading R of spec question QID (docs/spec-questions.md)")
    parser.add_argument("-k", dest="keyword", metavar="EXPR", help="pytest -k expression")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- then arguments passed to pytest")
    parser.set_defaults(func=handle)


def _validate(args) -> None:
    """Refuse bad input before starting pytest, naming the argument or file and line."""
    if args.shard:
        parse_shard(args.shard)
    if args.baseline:
        if not Path(args.baseline).is_file():
            raise CliError(f"--baseline expects an existing file, but got {args.baseline!r}")
        parse_baseline(Path(args.baseline))
    for option, paths in (("--skips", args.skips), ("--flakes", args.flakes)):
        for path in paths:
            if not Path(path).is_file():
                raise CliError(f"{option} expects an existing file, but got {path!r}")
        parse_pattern_files([Path(p) for p in paths])
    from reference.errors import SpecError
    from reference.spec_questions import parse_assignment

    for option, values in (("--sim-reading", args.sim_reading), ("--reading", args.reading)):
        for value in values:
            try:
                parse_assignment(value)
            except SpecError as exc:
                raise CliError(f"{option}: {exc}") from None
    if args.flake_reruns < 0:
        raise CliError(f"--flake-reruns expects N >= 0, but got {args.flake_reruns}")
    n = str(args.numprocesses)
    if n not in ("auto", "logical") and not n.isdigit():
        raise CliError(f"-n expects a number, 'auto' or 'logical', but got {n!r}")


def pytest_command(args, results: Path) -> list[str]:
    """The pytest command line for ``args`` (results directory already absolute)."""
    suite = Path(conformance.__file__).resolve().parent
    cmd = [sys.executable, "-m", "pytest", str(suite), "-p", "conformance.plugin", "-p", "conformance.outcomes_plugin",
           "--results", str(results), "--level", args.level, "--device", args.device, "--numerics", args.numerics,
           "--load", args.load, "--flake-reruns", str(args.flake_reruns)]
    if str(args.numprocesses) != "0":
        cmd += ["-n", str(args.numprocesses)]
    if args.baseline:
        cmd += ["--baseline", str(Path(args.baseline).resolve())]
    for option, values in (("--skips", args.skips), ("--flakes", args.flakes)):
        for value in values:
            cmd += [option, str(Path(value).resolve())]
    for option, values in (("--section", args.section), ("--family", args.family), ("--ptxas", args.ptxas),
                           ("--sim-reading", args.sim_reading), ("--reading", args.reading)):
        for value in values:
            cmd += [option, value]
    if args.shard:
        cmd += ["--shard", args.shard]
    if args.keyword:
        cmd += ["-k", args.keyword]
    extra = list(args.pytest_args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    return cmd + extra


def handle(args) -> int:
    _validate(args)
    results = Path(args.results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    cmd = pytest_command(args, results)
    print("tcgen05-cts run:", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if rc == PYTEST_NO_TESTS:
        print("tcgen05-cts run: no conformance case was collected at this level", flush=True)
        rc = 0
    if not any(results.glob("run*.json")):
        print(f"tcgen05-cts run: pytest ended with {rc} before the run started; no reports", file=sys.stderr)
        return rc or 2
    summary = report([str(results)], results)
    for label, rate in summary.cases_per_second.items():
        if rate:
            print(f"{label}: {rate:.1f} cases/s", flush=True)
    if rc == 0 and (summary.problems or summary.failing):
        rc = 1
    return rc
