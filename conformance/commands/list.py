"""``tcgen05-cts list``: the cases of a level as CSV or JSON.

Columns: case_id, section, family, targets (space-separated), legal, rule, instruction (the
instruction under test exactly as the kernel writes it), kernel (entry name shared by every
case with the same spelling).
"""

from __future__ import annotations

import csv
import json
import sys

from generators.variants import FAMILIES, LEVELS, cases

COLUMNS = ("case_id", "section", "family", "targets", "legal", "rule", "instruction", "kernel")


def register(subparsers) -> None:
    p = subparsers.add_parser("list", help="list the cases of a level (CSV or JSON)")
    p.add_argument("--level", choices=LEVELS, default="smoke")
    p.add_argument("--section", action="append", default=[], metavar="S", help="section prefix (repeatable)")
    p.add_argument("--family", action="append", default=[], choices=list(FAMILIES), metavar="F",
                   help="instruction family (repeatable): " + ", ".join(FAMILIES))
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("--legal-only", action="store_true", help="omit the negative cases")
    p.set_defaults(func=handler)


def row(case) -> dict:
    return {
        "case_id": case.case_id,
        "section": case.section,
        "family": case.family,
        "targets": " ".join(case.targets),
        "legal": case.legal,
        "rule": case.rule,
        "instruction": case.instruction,
        "kernel": case.kernel.name,
    }


def handler(args) -> int:
    selected = cases(args.level, sections=args.section, families=args.family, negatives=not args.legal_only)
    rows = [row(c) for c in selected]
    if args.format == "json":
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({**r, "legal": "true" if r["legal"] else "false"})
    return 0
