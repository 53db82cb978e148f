"""Static HTML dashboard: one self-contained file (inline CSS and JS, no network access).

The page embeds the raw cases as JSON and computes every number (status counts, pass rates per
section and column, coverage matrix) in the browser, so what a reader sees is what the script
computed.  Several result sets are shown side by side, aligned on case IDs; ``#section=<id>`` in
the address opens the cases of that section.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter
from importlib import resources
from pathlib import Path

from reference.sections import SECTIONS
from reference.tables import ELEMENT_BITS
from results.coverage import section_coverage
from results.junit import UNSECTIONED
from results.resultset import ResultSet
from results.spec_questions import spec_question_rows
from results.status import SEVERITY

DETAILS_LIMIT = 2000
_PLACEHOLDER = "/*CTS_DATA*/"


def _first(values) -> str:
    found = sorted({v for v in values if v})
    return "; ".join(found)


def _section_rows(s: ResultSet) -> list[list]:
    """Per section of the spec texts (``results.coverage.section_coverage``): [section, primary
    cases, other cases, passed, failed, statements covered, statements total]."""
    return [[r.section, r.primary_cases, r.other_cases, r.passed, r.failed, r.statements_covered,
             r.statements_total] for r in section_coverage(s)]


def _layout_of(slot: str) -> tuple[str, str] | None:
    """``"sw128_k"`` -> (``"sw128"``, ``"K"``); None for an operand in Tensor Memory."""
    if not isinstance(slot, str) or "_" not in slot:
        return None
    swizzle, major = slot.rsplit("_", 1)
    return swizzle, major.upper()


def _pictures(s: ResultSet) -> dict:
    """Status counts per Table 39 cell (kind, M, N) and per shared-memory layout (major-ness,
    swizzle, element bits) of the MMA cases (from each outcome's variant)."""
    grid: dict[tuple, Counter] = {}
    layouts: dict[tuple, Counter] = {}
    for o in s.outcomes.values():
        v = o.variant
        if not {"kind", "m", "n"} <= set(v):
            continue
        grid.setdefault((str(v["kind"]), int(v["m"]), int(v["n"])), Counter())[o.status.value] += 1
        for slot, typ in (("a_operand", "a_type"), ("b_layout", "b_type")):
            lay = _layout_of(v.get(slot))
            bits = ELEMENT_BITS.get(v.get(typ))
            if lay and bits:
                layouts.setdefault((lay[1], lay[0], bits), Counter())[o.status.value] += 1
    return {"table39": [[*k, dict(c)] for k, c in sorted(grid.items())],
            "layouts": [[*k, dict(c)] for k, c in sorted(layouts.items())]}


def dashboard_data(sets: list[ResultSet], generated: str | None = None) -> dict:
    """The JSON the page embeds: columns, section titles and cases aligned on case ID."""
    columns = []
    for s in sets:
        outcomes = s.outcomes.values()
        level = _first(str(r.get("level", "")) for r in s.runs)
        rate = s.cases_per_second()
        not_run = Counter((r.section or UNSECTIONED, r.family or "unknown") for r in s.not_run)
        columns.append({
            "label": s.label, "toolchain": _first(o.toolchain for o in outcomes),
            "driver": _first(o.driver for o in outcomes), "device": _first(o.device for o in outcomes),
            "level": level, "cases_per_s": rate, "problems": len(s.problems),
            "not_run": [[sec, fam, n] for (sec, fam), n in sorted(not_run.items())],
            "spec_sections": _section_rows(s), "pictures": _pictures(s),
        })
    ids = sorted({cid for s in sets for cid in s.outcomes})
    cases = []
    for cid in ids:
        first = next(s.outcomes[cid] for s in sets if cid in s.outcomes)
        cells = []
        for s in sets:
            o = s.outcomes.get(cid)
            cells.append(None if o is None else [o.status.value, round(o.duration, 6), o.details[:DETAILS_LIMIT]])
        cases.append([cid, first.section or UNSECTIONED, first.family or "unknown", cells])
    return {
        "generated": generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "statuses": [s.value for s in SEVERITY],
        "columns": columns,
        "sections": {sec: title for sec, title in SECTIONS.items()},
        "cases": cases,
        "spec_questions": spec_question_rows(sets),
    }


def render_dashboard(data: dict) -> str:
    template = resources.files("results").joinpath("dashboard.html").read_text(encoding="utf-8")
    # JSON inside <script>: escape <, > and & so no text can close the element or open a comment.
    blob = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    blob = blob.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return template.replace(_PLACEHOLDER, blob, 1)


def write_dashboard(sets: list[ResultSet], path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_dashboard(dashboard_data(sets)), encoding="utf-8")
    return path
