"""The "Spec questions" table of a results directory: each question of ``reference.spec_questions``,
its readings, the suite's pick and the reading each result set's device showed on the question's
probe (outcomes of family ``probe``, ``variant.observed``; docs/spec-questions.md).
"""

from __future__ import annotations

from pathlib import Path

from reference.spec_questions import QUESTIONS
from results.resultset import ResultSet

PROBE_FAMILY = "probe"
NOT_RUN = "\u2014"


def observed_by_question(outcomes) -> dict[str, tuple[str, str]]:
    """``{QID: (observed reading or why not, raw data)}`` from the probe outcomes of one result set."""
    out = {}
    for o in outcomes:
        if o.family != PROBE_FAMILY:
            continue
        qid = str(o.variant.get("question") or o.case_id.removeprefix("probe."))
        seen = str(o.variant.get("observed") or "")
        if o.status.value not in ("Pass", "Flake"):
            seen = f"{o.status.value}: {o.details.splitlines()[0] if o.details else ''}".strip()
        out[qid] = (seen, str(o.variant.get("raw") or ""))
    return out


def spec_question_rows(sets: list[ResultSet]) -> list[dict]:
    """One row per question: id, title, sections, readings, pick, observed (one per set), raw."""
    seen = [observed_by_question(s.outcomes.values()) for s in sets]
    rows = []
    for qid, q in QUESTIONS.items():
        rows.append({"question": qid, "title": q.title, "sections": list(q.sections),
                     "readings": [r.id for r in q.readings], "pick": q.pick, "probe": q.probe,
                     "observed": [obs.get(qid, (NOT_RUN, ""))[0] for obs in seen],
                     "raw": [obs.get(qid, ("", ""))[1] for obs in seen]})
    return rows


def spec_questions_markdown(sets: list[ResultSet]) -> str:
    labels = [s.label for s in sets]
    head = ["question", "readings", "suite's pick"] + [f"{label}: device did" for label in labels]
    lines = ["# Spec questions", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in spec_question_rows(sets):
        cells = [f"{row['question']} ({row['title']})", ", ".join(row["readings"]), row["pick"]] + row["observed"]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def write_spec_questions(sets: list[ResultSet], path: Path) -> Path:
    path = Path(path)
    path.write_text(spec_questions_markdown(sets), encoding="utf-8")
    return path
