"""``tcgen05-cts hazard-score``: how many deleted synchronization steps the simulator catches.

Runs the execution tier (pytest marker ``execute``, ``--device sim``, hazard checker on) once
unchanged, then, for each generated kernel (kernels are keyed by instruction spelling), deletes
each synchronization step of its PTX in turn -- ``tcgen05.wait::ld/st``, ``tcgen05.fence::*``,
``fence.proxy.async*``, ``bar.sync``/``barrier.sync``/cluster barriers, ``tcgen05.commit`` and
whole ``mbarrier.try_wait`` loops -- and runs that kernel's passing cases until one reports a
hazard, a mismatch, a timeout or a crash (the deletion is *caught*). Prints each deletion as it
is scored, the survivors again at the end (each with its reason when provably redundant), and
``caught X/Y`` as the last line, where Y counts every deletion but the provably redundant
survivors. ``-j N`` splits the kernels over N processes. ``--save FILE`` writes the result as
JSON; ``--rescore FILE`` carries over the deletions a saved run caught (same kernel text) and
scores only the rest -- for work on the checker, which only adds catches. Exit code 0 (a score is a measurement,
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
    parser = subparsers.add_parser("hazard-score", help="kernel mutation score: delete each synchronization step",
                                   description=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--level", choices=LEVELS, default="smoke", help="variant-matrix level (default smoke)")
    parser.add_argument("--tests", default=None, metavar="PATH",
                        help="test files or directory (default: the conformance package)")
    parser.add_argument("-m", dest="marker", default="execute", help="pytest marker expression (default execute)")
    parser.add_argument("-k", dest="keyword", metavar="EXPR", help="pytest -k expression")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="run N processes, each on every N-th kernel (default 1)")
    parser.add_argument("--run-redundant", action="store_true",
                        help="also run the deletions the redundancy analysis proves redundant")
    parser.add_argument("--quiet", action="store_true", help="print only the survivors and the score")
    parser.add_argument("--save", metavar="FILE", help="write the result as JSON (for --rescore)")
    parser.add_argument("--rescore", metavar="FILE", action="append",
                        help="carry over the deletions a saved result caught (same kernel PTX); score the rest "
                             "(repeat for results saved in parts)")
    parser.add_argument("--shard", help=argparse.SUPPRESS)           # set by -j for its workers: I/N of the kernels
    parser.add_argument("--json-out", help=argparse.SUPPRESS)        # worker result file
    parser.set_defaults(func=handle)


def _shard(text: str | None) -> tuple[int, int]:
    if not text:
        return (1, 1)
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise CliError(f"--shard expects I/N, but got {text!r}") from None
    if not 1 <= i <= n:
        raise CliError(f"--shard expects 1 <= I <= N, but got {text!r}")
    return (i, n)


def _worker_argv(args, tests: str, shard: str, out: Path) -> list[str]:
    argv = [sys.executable, "-m", "conformance.commands.cli", "hazard-score", "--level", args.level, "-m", args.marker,
            "--tests", tests, "--shard", shard, "--json-out", str(out)]
    if args.keyword:
        argv += ["-k", args.keyword]
    if args.run_redundant:
        argv.append("--run-redundant")
    for path in args.rescore or ():
        argv += ["--rescore", str(Path(path).resolve())]
    return argv


def report(result, out=print) -> None:
    """The closing lines: survivors, notes, ``caught X/Y`` last."""
    from conformance.harness.hazard_score import line

    survivors = [d for d in result.deletions if d.caught_by is None]
    redundant = sum(d.redundant is not None for d in survivors)
    unreached = sum(d.redundant is None and d.reached is False for d in survivors)
    out(f"survivors: {len(survivors)} ({redundant} provably redundant, {unreached} not reached by any case, "
        f"{len(survivors) - redundant - unreached} reached and not provably redundant)")
    for d in survivors:
        out("  " + line(d))
    if result.unscored_kernels:
        out(f"note: {len(result.unscored_kernels)} kernel(s) have no passing case and are left out "
            f"(first: {result.unscored_kernels[0]})")
    if result.baseline_other:
        first = result.baseline_other[0]
        out(f"note: {len(result.baseline_other)} case(s) do not pass unchanged and are left out "
            f"(first: {first[0]}: {first[1]})")
    if result.carried:
        unverified = f", {result.unverified} of them saved without a kernel hash" if result.unverified else ""
        out(f"rescore: {result.carried} caught deletion(s) carried over from the saved result, not run{unverified}")
    out(f"baseline: {result.baseline_pass} case(s) of {result.kernels} kernel(s) pass unchanged; "
        f"{len(result.deletions)} deletion(s), {redundant} provably redundant survivor(s) not scored")
    out(f"caught {result.caught}/{result.scored}")


def handle(args) -> int:
    from conformance.harness.hazard_score import HazardResult, hazard_score

    tests = args.tests or str(Path(conformance.__file__).resolve().parent)
    if not Path(tests).exists():
        raise CliError(f"--tests expects an existing path, but got {tests!r}")
    if args.jobs < 1:
        raise CliError(f"-j expects a positive number of processes, but got {args.jobs}")
    shard = _shard(args.shard)
    prior = None
    if args.rescore:
        from conformance.harness.hazard_score import Prior

        try:
            prior = Prior.load(args.rescore)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    if args.jobs > 1 and not args.shard:
        from conformance.commands.workers import run_workers

        tests = str(Path(tests).resolve())
        results = run_workers("hazard-score", args.jobs, lambda s, out: _worker_argv(args, tests, s, out))
        if isinstance(results, int):
            return results
        merged = HazardResult()
        for r in results:
            merged.merge(HazardResult.from_json(r))
        report(merged)
        _save(args.save, merged)
        return 0
    pytest_args = [tests, "-p", "conformance.plugin", "-p", "no:cacheprovider", "-p", "no:warnings", "-qq", "--no-header", "--tb=native",
                   "--device", "sim", "--sim-hazards", "on", "--level", args.level, "-m", args.marker, "-p", "no:randomly"]
    if args.keyword:
        pytest_args += ["-k", args.keyword]

    def progress(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    code, result = hazard_score(pytest_args, progress, shard, args.run_redundant, prior)
    if code not in (0, 1, 5):
        print(f"pytest exited with {code} (collection or usage error)", file=sys.stderr)
        return code
    if args.json_out:
        _write(args.json_out, result)
        return 0
    report(result)
    _save(args.save, result)
    return 0


def _write(path: str, result) -> None:
    Path(path).write_text(json.dumps(result.to_json()))


def _save(path: str | None, result) -> None:
    if path:
        _write(path, result)
        print(f"saved: {path}")
