"""``tcgen05-cts mutation-score``: how many injected hardware faults the execution tier catches.

Runs the execution tier (pytest marker ``execute``, ``--device sim``) on the simulated device once
without faults, then once per fault until the first case fails; prints ``caught NAME by CASE`` or
``survived NAME`` per fault and ``caught X/Y`` as the last line. Faults: the built-in catalogue
(``conformance.sim.fault_catalogue``), or with ``--faults-from`` the ``FAULTS`` of those files
(``--with-builtin`` adds the catalogue). Exit code 0 (a score is a measurement, not a verdict),
2 for bad input, pytest's collection error code when collection fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import conformance
from conformance.cli import CliError
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
    parser.set_defaults(func=handle)


def select_faults(args):
    from conformance.sim.fault_catalogue import FAULTS
    from conformance.sim.faults import FaultSet, load_faults

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


def handle(args) -> int:
    from conformance.mutation import mutation_score

    faults = select_faults(args)
    tests = args.tests or str(Path(conformance.__file__).resolve().parent)
    if not Path(tests).exists():
        raise CliError(f"--tests expects an existing path, but got {tests!r}")
    pytest_args = [tests, "-p", "conformance.plugin", "-p", "no:cacheprovider", "-p", "no:warnings", "-qq", "--no-header",
                   "--device", "sim", "--level", args.level, "--numerics", args.numerics, "-m", args.marker,
                   "-p", "no:randomly"]
    if args.keyword:
        pytest_args += ["-k", args.keyword]

    def progress(text: str) -> None:
        print(text, flush=True)

    code, result = mutation_score(pytest_args, faults, progress)
    if code not in (0, 1, 5):
        print(f"pytest exited with {code} (collection or usage error)", file=sys.stderr)
        return code
    others = result.baseline_other
    if others:
        print(f"note: {len(others)} case(s) do not pass without faults and are left out of the score "
              f"(first: {others[0][0]}: {others[0][1]})")
    if not result.baseline_pass:
        print("note: no execution case passes on the fault-free simulator; nothing can catch a fault")
    print(f"caught {result.caught}/{len(faults)}")
    return 0
