"""Sections per case (issue 15): every section, table row and rule a case exercises, derived from
its parameters (generators.sections), recorded in the outcome log and aggregated per section
(results.coverage.section_coverage)."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from conformance.harness.case_status import case_identity
from generators.sections import section_ids_of, sections_of
from generators.variants import cases
from reference.datapath_layouts import LAYOUT_SECTIONS
from reference.sections import SECTIONS, SectionRef, parent_section, refs_named_in
from results.coverage import section_coverage
from results.outcome_log import ExpectedCase, Outcome
from results.status import Status

pytestmark = pytest.mark.reference


@lru_cache(maxsize=None)
def _cases(level: str):
    return tuple(cases(level))


@lru_cache(maxsize=None)
def _ids(level: str):
    return {c.case_id: section_ids_of(c) for c in _cases(level)}


def _first(level="default", **params):
    for c in _cases(level):
        if c.legal and all(c.params.get(k) == v for k, v in params.items()):
            return c
    raise AssertionError(f"no {level} case with {params}")


def _details(case, section):
    return [r.detail for r in sections_of(case) if r.section == section]


def test_own_section_leads_and_decides_the_junit_file():
    for c in _cases("smoke"):
        assert section_ids_of(c)[0] == c.section
        assert all(isinstance(r, SectionRef) and r.section in SECTIONS for r in sections_of(c))


def test_shared_memory_operand_names_descriptor_layout_and_table_rows():
    c = _first(a_operand="sw128_k", kind="f16", a_type="f16")
    ids = section_ids_of(c)
    for sec in ("9.7.16.4.1", "9.7.16.3.3", "9.7.16.10.3", "9.7.16.10.6", "9.7.16.4.2", "9.7.16.2.1", "9.7.16.3.2"):
        assert sec in ids, sec
    assert "Table 52: 16-bit K-major 128B" in _details(c, "9.7.16.10.3")
    assert "Table 53: 128B K" in _details(c, "9.7.16.10.6")
    assert "Table 41: 128B" in _details(c, "9.7.16.4.1")
    assert "A sw128_k" in _details(c, "9.7.16.3.3")


def test_mn_major_8bit_b_names_table_50():
    c = _first(kind="f8f6f4", b_type="e4m3", b_layout="sw64_mn")
    assert "Table 50: 8-bit transposed B" in _details(c, "9.7.16.10.1")
    assert "Table 52: 8-bit MN-major 64B" in _details(c, "9.7.16.10.3")


@pytest.mark.parametrize("params, letter", [
    (dict(m=256, cta_group=2), "A"), (dict(m=128, cta_group=2, sparse=False), "B"),
    (dict(m=128, cta_group=2, sparse=True), "C"), (dict(m=128, cta_group=1), "D"),
    (dict(m=64, ws=True), "E"), (dict(m=64, ws=False), "F"), (dict(m=32), "G")])
def test_datapath_layout_letter(params, letter):
    c = _first(**params)
    assert f"layout {letter}" in _details(c, "9.7.16.10.5")
    assert LAYOUT_SECTIONS[letter] in section_ids_of(c)


def test_block_scaling_names_tables_54_55_and_scale_factor_layouts():
    c = _first(kind="mxf4nvf4", scale_vec="scale_vec::4X", k=64)
    ids = section_ids_of(c)
    assert {"9.7.16.10.7", "9.7.16.10.7.1", "9.7.16.10.7.2.3", "9.7.16.10.7.3.3"} <= set(ids)
    details = _details(c, "9.7.16.10.7.1")
    assert any(d.startswith("Table 54: .scale_vec::4X") for d in details)
    assert any(d.startswith("Table 55: kind::mxf4nvf4") for d in details)
    k96 = _first(kind="mxf4", k=96)
    assert "9.7.16.10.7.2.4" in section_ids_of(k96) and "9.7.16.2.1.1" in section_ids_of(k96)


def test_sparsity_names_kind_selector_and_metadata_layout():
    c = _first(kind="tf32", sparse=True, m=128)
    ids = section_ids_of(c)
    assert {"9.7.16.10.8", "9.7.16.10.8.1", "9.7.16.10.8.4", "9.7.16.10.8.4.4"} <= set(ids)
    half = _first(kind="f16", sparse=True, m=64, ws=False)
    assert "9.7.16.10.8.5" in section_ids_of(half)          # layout F: alignment restriction
    dense = _first(kind="f16", sparse=False)
    assert not any(s.startswith("9.7.16.10.8") for s in section_ids_of(dense))


def test_qualifiers_are_details_of_the_own_section():
    c = _first(ws=True, zcm="example2")
    assert "9.7.16.4.3" in section_ids_of(c)
    collector = _first(collector="a::fill")
    assert ".collector::a::fill" in _details(collector, collector.section)
    assert "9.7.16.5.1" in section_ids_of(_first(cta_group=2))


def test_movement_families():
    ld = _first(shape="16x32bx2", pack=True)
    assert {"9.7.16.2.3.1.5", "9.7.16.8.2", "9.7.16.8.5", "9.7.16.6.2.1.2"} <= set(section_ids_of(ld))
    cp = _first(decompress="b4x16_p64")
    assert {"9.7.16.9.1", "9.7.16.9.1.1", "9.7.16.4.1", "9.7.16.6.5"} <= set(section_ids_of(cp))
    commit = next(c for c in _cases("default") if c.family == "commit")
    assert "9.7.16.6.2.1.1" in section_ids_of(commit)
    fence = next(c for c in _cases("default") if c.family == "fence")
    assert "9.7.16.6.3" in section_ids_of(fence)


def test_negative_cases_name_only_their_rule():
    negs = [c for c in _cases("smoke") if not c.legal]
    assert negs
    for c in negs:
        assert set(section_ids_of(c)) <= {c.section} | {r.section for r in refs_named_in(c.rule)}
    table55 = next(c for c in negs if "Table 55" in c.rule)
    assert "9.7.16.10.7.1" in section_ids_of(table55)


def test_every_section_is_exercised_at_default_level():
    exercised = {s for ids in _ids("default").values() for s in ids}
    assert set(SECTIONS) - exercised == set()


def test_every_section_is_exercised_at_smoke_level():
    exercised = {s for ids in _ids("smoke").values() for s in ids}
    assert set(SECTIONS) - exercised == set()
    assert len(_ids("smoke")) <= 300


# --- outcome log and per-section aggregation --------------------------------------------------------

def test_outcome_records_sections_and_old_logs_still_load():
    o = Outcome("c1", Status.PASS, section="9.7.16.8.3", sections=("9.7.16.8.3", "9.7.16.8.5"), statements=("x",))
    back = Outcome.from_json(json.loads(o.to_json()))
    assert back.sections == ("9.7.16.8.3", "9.7.16.8.5") and back.statements == ("x",)
    old = json.loads(o.to_json())
    del old["sections"], old["statements"]
    assert Outcome.from_json(old).sections == ()
    e = ExpectedCase("c1", "n", "9.7.16.8.3", "ld", {}, ("9.7.16.8.3", "9.7.16.1"))
    assert ExpectedCase.from_json(json.loads(e.to_json())).sections == e.sections
    with pytest.raises(ValueError, match="sections expects a list"):
        Outcome.from_json({**old, "sections": "9.7.16"})


def test_case_identity_carries_sections_own_first():
    ident = case_identity("n", (), {"case_id": "c", "section": "9.7.16.8.3", "sections": ["9.7.16.1", "9.7.16.8.3"],
                                    "statements": ["s1"], "kind": "f16"})
    assert ident.sections == ("9.7.16.8.3", "9.7.16.1") and ident.statements == ("s1",)
    assert ident.variant == {"kind": "f16"}


def test_report_writes_section_coverage(tmp_path):
    from results.coverage import write_section_coverage

    path = write_section_coverage([Outcome("a", Status.PASS, section="9.7.16.8.3", sections=("9.7.16.8.3", "9.7.16"))],
                                  tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["summary"]["sections"] == len(SECTIONS) and data["summary"]["sections_tested"] == 2
    assert {r["section"] for r in data["sections"]} >= set(SECTIONS)


def test_section_coverage_lists_every_section():
    outcomes = [Outcome("a", Status.PASS, section="9.7.16.8.3", sections=("9.7.16.8.3", "9.7.16.8.5")),
                Outcome("b", Status.FAIL, section="9.7.16.8.5"),
                Outcome("c", Status.PASS, section="9.7.16.8.3")]           # an old record: own section only
    rows = {r.section: r for r in section_coverage(outcomes)}
    assert set(SECTIONS) <= set(rows)
    ld, wait = rows["9.7.16.8.3"], rows["9.7.16.8.5"]
    assert (ld.primary_cases, ld.other_cases, ld.passed, ld.pass_rate) == (2, 0, 2, 1.0)
    assert (wait.primary_cases, wait.other_cases, wait.passed, wait.failed, wait.pass_rate) == (1, 1, 1, 1, 0.5)
    assert rows["9.7.16.9.2"].untested and rows["9.7.16.9.2"].pass_rate is None
    assert rows["9.7.16.8"].subtree_cases == 4 and rows["9.7.16.8"].untested
    assert parent_section("9.7.16.8.5") == "9.7.16.8"
    assert rows["9.7.16.8.3"].as_dict()["untested"] is False


def test_list_command_shows_sections_and_filters_by_exercised_section(capsys):
    import csv
    import io

    from conformance.commands.cli import main

    assert main(["list", "--level", "smoke", "--exercising", "9.7.16.4.3", "--with-sections"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and all("9.7.16.4.3" in r["sections"].split() for r in rows)
    assert {r["family"] for r in rows} <= {"mma.ws", "mma.ws.sp"}
    assert all(r["sections"].split()[0] == r["section"] and r["statements"] for r in rows)
    assert main(["list", "--level", "smoke", "--exercising", "9.7.16.10.5.7", "--format", "json", "--with-sections"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data and all(any(ref.startswith("§9.7.16.10.5 layout G") for ref in r["refs"]) for r in data)
