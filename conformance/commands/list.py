"""``tcgen05-cts list``: the cases of a level as CSV or JSON.

Columns: case_id, section, family, targets (space-separated), legal, rule, instruction (the
instruction under test exactly as the kernel writes it), kernel (entry name shared by every
case with the same spelling). ``--with-sections`` adds ``sections`` (every section the case
exercises, its own first, space-separated; JSON also ``refs``: each section with the table row,
rule or qualifier it exercises there) and ``statements`` (the normative statements it checks),
see ``generators.sections``. ``--exercising S`` keeps the cases exercising a section with prefix S
(``--section`` selects by the case's own section).
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
    p.add_argument("--with-sections", action="store_true",
                   help="add the sections each case exercises and the statements it checks")
    p.add_argument("--exercising", action="append", default=[], metavar="S",
                   help="only cases exercising a section with this prefix, as their own or another (repeatable)")
    p.set_defaults(func=handler)


def _exercises(case, prefixes) -> bool:
    from generators.sections import section_ids_of

    return any(s == p or s.startswith(p.rstrip(".") + ".") for s in section_ids_of(case) for p in prefixes)


def section_columns(case, json_refs: bool) -> dict:
    from generators.sections import section_ids_of, sections_of, statements_of

    out = {"sections": " ".join(section_ids_of(case)), "statements": " ".join(statements_of(case))}
    if json_refs:
        out["refs"] = [str(r) for r in sections_of(case)]
    return out


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
    if args.exercising:
        selected = [c for c in selected if _exercises(c, args.exercising)]
    rows = [row(c) for c in selected]
    columns = COLUMNS
    if args.with_sections:
        rows = [{**r, **section_columns(c, args.format == "json")} for r, c in zip(rows, selected, strict=True)]
        columns = COLUMNS + ("sections", "statements")
    if args.format == "json":
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({**r, "legal": "true" if r["legal"] else "false"})
    return 0
