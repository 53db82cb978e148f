"""``tcgen05-cts statements``: the normative statements of §9.7.16 / §9.7.14.6.1 (issue 15).

    tcgen05-cts statements list [--level L] [--section S] [--sentences]
    tcgen05-cts statements extract [--spec DIR]

``list`` prints one JSON object per statement of ``reference/statements.json``: id, section,
kind, paraphrase, untestable reason or the number of cases of level L that check it, and with
``--sentences`` the spec's own sentences (read from the texts beside the checkout).
``extract`` finds the candidate normative sentences and table rows of the spec texts
(``reference.statements.candidates``: keyword rule) that no statement anchors yet and prints a
skeleton entry for each (section, file, line, anchor, the sentence): the semi-automatic step
of adding statements. Exit status 1 when some candidate is uncovered.
"""

from __future__ import annotations

import json
from pathlib import Path

from reference.statements import load_statements, spec_candidates, spec_dir, statement_sentences


def register(subparsers) -> None:
    p = subparsers.add_parser("statements", help="normative statements of the spec and the cases that check them",
                              description="Normative statements of §9.7.16 and §9.7.14.6.1 (reference/statements.json).")
    sub = p.add_subparsers(dest="statements_command", required=True)
    ls = sub.add_parser("list", help="one JSON line per statement, with the cases of a level that check it")
    ls.add_argument("--level", default="default", choices=("smoke", "default", "exhaustive"))
    ls.add_argument("--section", default=None, metavar="S", help="only statements of this section (prefix)")
    ls.add_argument("--sentences", action="store_true", help="add the spec's sentences (needs the spec texts)")
    ls.set_defaults(func=run_list)
    ex = sub.add_parser("extract", help="candidate normative sentences no statement anchors yet")
    ex.add_argument("--spec", default=None, metavar="DIR", help="folder of the spec texts (default: beside the checkout)")
    ex.set_defaults(func=run_extract)


def run_list(args) -> int:
    from generators.sections import statements_of
    from generators.variants import cases

    counts: dict[str, int] = {}
    for case in cases(args.level):
        for sid in statements_of(case):
            counts[sid] = counts.get(sid, 0) + 1
    for st in load_statements().statements:
        if args.section and not any(s == args.section or s.startswith(args.section.rstrip(".") + ".") for s in st.sections):
            continue
        row = {"id": st.id, "section": st.section, "also": list(st.also), "kind": st.kind,
               "paraphrase": st.paraphrase, "location": f"{st.file}:{st.line}"}
        row.update({"untestable": st.untestable} if st.untestable else {"cases": counts.get(st.id, 0)})
        if args.sentences:
            row["sentences"] = statement_sentences(st)
        print(json.dumps(row, ensure_ascii=False))
    return 0


def run_extract(args) -> int:
    folder = Path(args.spec) if args.spec else spec_dir()
    if folder is None or not folder.is_dir():
        raise ValueError(f"--spec expects the folder of the spec texts, but got {args.spec or 'none found beside the checkout'}")
    missing = load_statements().uncovered(spec_candidates(folder))
    for c in missing:
        print(json.dumps({"section": c.section, "file": c.file, "line": c.line, "anchors": [c.anchor],
                          "table": c.table, "sentence": c.text}, ensure_ascii=False))
    return 1 if missing else 0
