"""``tcgen05-cts coverage-fields --level L [--results DIR]``: field and value coverage (issue 15).

For every bit of the instruction, shared-memory and zero-column-mask descriptors (§9.7.16.4) and
of the tcgen05 operands (Tensor Memory addresses, disable-output-lane, scale-input-d): whether some
case sets it to 0 and some to 1; for every operand element type, the value classes its inputs
contain. Without ``--results`` every generated case of the level counts (as the execution tier
would run it); with it, only the cases that passed there. Each hole is justified
(``conformance/harness/field_justifications.py``) or UNEXPLAINED; the last line is
``holes: N unexplained``. Exit status 0 (1 with ``--strict`` when a hole is unexplained).
"""

from __future__ import annotations

from conformance.commands.cli import CliError
from generators.variants import LEVELS


def register(subparsers) -> None:
    p = subparsers.add_parser("coverage-fields", help="field and value coverage of a level: holes, justified or not")
    p.add_argument("--level", choices=LEVELS, default="smoke")
    p.add_argument("--results", metavar="DIR", action="append", default=[],
                   help="results directory (repeatable): count only the cases that passed there")
    p.add_argument("--unexplained-only", action="store_true", help="list only the unexplained holes")
    p.add_argument("--strict", action="store_true", help="exit 1 when a hole is unexplained")
    p.set_defaults(func=handler)


def _passing(dirs: list[str]) -> set[str]:
    from pathlib import Path

    from results.resultset import Column, load_result_set
    from results.status import PASSING

    try:
        rs = load_result_set(Column(",".join(dirs), tuple(Path(d) for d in dirs)))
    except ValueError as exc:
        raise CliError(f"--results {exc}") from None
    return {cid for cid, o in rs.outcomes.items() if o.status in PASSING}


def handler(args) -> int:
    from conformance.harness.field_report import level_tally, report_lines

    passing = _passing(args.results) if args.results else None
    source = (f"passing in {', '.join(args.results)}" if passing is not None
              else "no results given: every generated case counts as passing")
    lt = level_tally(args.level, passing)
    lines = report_lines(lt, args.level, source, show_justified=not args.unexplained_only)
    print("\n".join(lines))
    return 1 if args.strict and not lines[-1].startswith("holes: 0 ") else 0
