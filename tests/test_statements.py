"""Normative statements of §9.7.16 and §9.7.14.6.1 (issue 15): the data file covers every candidate
sentence of the spec texts, every statement is linked to cases or marked untestable, and every
link names cases of the default level."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from generators.sections import check_matches, matched_checks, statements_of
from generators.variants import cases
from reference.sections import SECTIONS
from reference.statements import (
    KINDS,
    candidates,
    load_statements,
    parse_statements,
    sentence_hash,
    spec_candidates,
    statement_sentences,
)
from results.coverage import section_coverage, statement_coverage
from results.outcome_log import Outcome
from results.status import Status
from tests.spec_texts import spec_dir

pytestmark = pytest.mark.reference


@lru_cache(maxsize=None)
def _default_cases():
    return tuple(cases("default"))


@lru_cache(maxsize=None)
def _matched_default() -> frozenset:
    return frozenset(m for c in _default_cases() for m in matched_checks(c))


def _spec_candidates():
    folder = spec_dir()
    if folder is None:
        pytest.skip("spec texts not found: expects ../shared/spec beside the checkout or TCGEN05_CTS_SPEC")
    return spec_candidates(folder)


def test_every_statement_is_linked_or_marked_untestable():
    data = load_statements()
    assert len(data.statements) >= 100
    for st in data.statements:
        assert bool(st.checks) != bool(st.untestable), st.id
        assert st.kind in KINDS and st.paraphrase and st.section in SECTIONS and st.anchors, st.id
        assert st.file and st.line > 0, st.id


def test_every_link_names_default_level_cases():
    matched = _matched_default()
    dead = [(st.id, n) for st in load_statements().statements for n, _ in enumerate(st.checks) if (st.id, n) not in matched]
    assert dead == []


def test_every_candidate_sentence_is_a_statement_or_marked_not_normative():
    found = _spec_candidates()
    assert len(found) > 300
    missing = load_statements().uncovered(found)
    assert [(c.file, c.line, c.text[:80]) for c in missing] == []


def test_every_anchor_is_in_the_spec_texts():
    anchors = {c.anchor for c in _spec_candidates()}
    data = load_statements()
    stale = [(st.id, a) for st in data.statements for a in st.anchors if a not in anchors]
    stale += [(a, "not_normative") for a in data.not_normative if a not in anchors]
    assert stale == []


def test_statement_sentences_come_from_the_texts():
    if spec_dir() is None:
        pytest.skip("spec texts not found beside the checkout")
    st = next(s for s in load_statements().statements if s.id == "mma.ashift_m")
    assert statement_sentences(st) == ["Qualifier .ashift is only allowed with M = 128 or M = 256."]


def test_candidates_keyword_rule_and_table_rows():
    text = ("### 9.7.16.1. Tensor Memory\n\nThe widget must be round. It is blue.\n\n"
            "Table 47 Things\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |\n\nAfter the table.\n")
    found = candidates(text, "x.md")
    assert [(c.line, c.text, c.table) for c in found] == [
        (3, "The widget must be round.", None), (9, "1 | 2", 47), (10, "3 | 4", 47)]
    assert found[0].anchor == sentence_hash("The  widget must be `round`.")


def test_cases_map_to_the_statements_they_check():
    by_slug = {c.params.get("slug"): c for c in _default_cases() if not c.legal}
    assert "mma.scale_input_d_range" in statements_of(by_slug["scale_input_d_16"])
    assert "alloc.ncols_range" in statements_of(by_slug["alloc_ncols_1024"])
    ashift = next(c for c in _default_cases() if c.legal and c.params.get("ashift"))
    assert {"mma.ashift_m", "shape.table39." + ashift.params["kind"]} <= set(statements_of(ashift))
    ld = next(c for c in _default_cases() if c.family == "ld")
    assert f"ld.table47.x{ld.params['num']}" in statements_of(ld) and "mma.ashift_m" not in statements_of(ld)


def test_check_where_and_legal_filters():
    data = parse_statements({"statements": [
        {"id": "x", "section": "9.7.16.10.9.1", "kind": "range", "paraphrase": "p", "anchors": ["a"],
         "checks": [{"section": "9.7.16.10.9.1", "detail": ".ashift", "legal": True, "where": {"m": [256]}}]}]})
    check = data.statements[0].checks[0]
    ashift = [c for c in _default_cases() if c.legal and c.family == "mma" and c.params.get("ashift")]
    assert any(check_matches(check, c) for c in ashift if c.params["m"] == 256)
    assert not any(check_matches(check, c) for c in ashift if c.params["m"] == 128)


@pytest.mark.parametrize("entry, message", [
    ({"id": "x", "section": "9.9", "kind": "must"}, "section expects"),
    ({"id": "x", "section": "9.7.16", "kind": "must"}, "either checks or untestable"),
    ({"id": "x", "section": "9.7.16", "kind": "must", "untestable": "r", "checks": [{"section": "9.7.16"}]}, "both"),
    ({"id": "x", "section": "9.7.16", "kind": "maybe", "untestable": "r"}, "kind expects"),
    ({"id": "x", "section": "9.7.16", "kind": "must", "checks": [{"section": "9.7.16", "where2": 1}]}, "a check expects"),
])
def test_bad_entries_are_refused(entry, message):
    with pytest.raises(ValueError, match=message):
        parse_statements({"statements": [entry]})


def test_duplicate_ids_are_refused():
    entry = {"id": "x", "section": "9.7.16", "kind": "must", "untestable": "r"}
    with pytest.raises(ValueError, match="unique"):
        parse_statements({"statements": [entry, entry]})


def test_coverage_counts_statements_per_section():
    outcomes = [Outcome("a", Status.PASS, section="9.7.16.10.9.1", statements=("mma.ashift_m",)),
                Outcome("b", Status.FAIL, section="9.7.16.10.9.1", statements=("mma.scale_input_d_range",))]
    rows = {r.section: r for r in section_coverage(outcomes)}
    row = rows["9.7.16.10.9.1"]
    total = [s for s in load_statements().statements if "9.7.16.10.9.1" in s.sections]
    assert row.statements_total == len(total) and row.statements_covered == 1
    assert row.statements_linked + row.statements_untestable == row.statements_total
    st = {r.id: r for r in statement_coverage(outcomes)}
    assert st["mma.ashift_m"].covered and not st["mma.scale_input_d_range"].covered
    assert st["mma.scale_input_d_range"].failed == 1
    assert json.dumps(st["mma.ashift_m"].as_dict())


def test_sections_side_by_side_aligns_columns():
    from results.coverage import sections_side_by_side
    from results.resultset import ResultSet

    a, b = ResultSet("a"), ResultSet("b")
    a.outcomes["x"] = Outcome("x", Status.PASS, section="9.7.16.10.9.1", statements=("mma.ashift_m",))
    b.outcomes["x"] = Outcome("x", Status.FAIL, section="9.7.16.10.9.1", statements=("mma.ashift_m",))
    b.outcomes["y"] = Outcome("y", Status.PASS, section="")             # unsectioned: a row in both columns
    data = sections_side_by_side([a, b], sentences=True)
    row = next(r for r in data["sections"] if r["section"] == "9.7.16.10.9.1")
    assert [c["passed"] for c in row["columns"]] == [1, 0] and [c["failed"] for c in row["columns"]] == [0, 1]
    st = next(s for s in data["statements"] if s["id"] == "mma.ashift_m")
    assert [c["covered"] for c in st["columns"]] == [True, False]
    assert len(data["sections"]) == len(SECTIONS) + 1 and data["sections"][-1]["columns"][1]["passed"] == 1
