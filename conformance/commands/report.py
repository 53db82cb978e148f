"""``tcgen05-cts report DIR... -o OUT``: JUnit per section, coverage matrix and dashboard.

Each ``DIR`` argument is one column of the dashboard; ``DIR1,DIR2`` merges directories (the
shards of one run) into one column (``--merge`` merges all arguments), and ``LABEL=DIR1,DIR2``
names the column.  A corrupt or
truncated log line is refused with a message naming file and line; every other line is still
reported, and the exit code is then 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

from results.report import ReportSummary, build_reports
from results.resultset import load_columns


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="build JUnit per section, coverage matrix and HTML dashboard from results directories",
        description=__doc__.split("\n\n", 1)[1])
    parser.add_argument("dirs", nargs="+", metavar="DIR",
                        help="results directory; DIR1,DIR2 merges shards; LABEL=DIRS names the column")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="output directory")
    parser.add_argument("--merge", action="store_true",
                        help="merge all DIRs into one column (the shards of one run)")
    parser.set_defaults(func=handle)


def report(dirs: list[str], output: Path, stream=None) -> ReportSummary:
    """Build the reports; print refused lines on stderr and the summary on ``stream``."""
    stream = stream or sys.stdout
    sets = load_columns(dirs)
    summary = build_reports(sets, output)
    for problem in summary.problems:
        print(f"tcgen05-cts report: refused {problem}", file=sys.stderr)
    for line in summary.lines():
        print(line, file=stream)
    return summary


def handle(args) -> int:
    dirs = [",".join(args.dirs)] if args.merge else args.dirs
    return 1 if report(dirs, Path(args.output)).problems else 0
