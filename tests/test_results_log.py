"""Outcome log: writing, reading, refusing bad lines, the manifest and Missing cases."""

from __future__ import annotations

import json

import pytest

from results.outcome_log import (
    ExpectedCase,
    Outcome,
    OutcomeWriter,
    clear_run,
    manifest_path,
    outcome_path,
    read_outcomes,
    run_tag,
    write_jsonl_exclusive,
)
from results.resultset import load_result_set, parse_column
from results.status import Status, worst

pytestmark = pytest.mark.reference


def _outcome(case_id: str, status: Status, **kw) -> Outcome:
    return Outcome(case_id=case_id, status=status, section=kw.pop("section", "9.7.16.4.1"),
                   family=kw.pop("family", "desc"), **kw)


def test_each_record_is_one_complete_json_line(tmp_path):
    path = outcome_path(tmp_path, "", "gw0")
    writer = OutcomeWriter(path)
    writer.append(_outcome("a", Status.PASS, duration=0.5, variant={"m": 128, "kind": "f16"}))
    # a second writer on the same file (a replaced worker) appends after the first
    OutcomeWriter(path).append(_outcome("b", Status.FAIL, details="line1\nline2"))
    writer.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and path.read_text().endswith("\n")
    first = json.loads(lines[0])
    assert (first["case_id"], first["status"], first["duration"], first["variant"]) == ("a", "Pass", 0.5,
                                                                                          {"m": 128, "kind": "f16"})
    assert {"case_id", "section", "family", "status", "duration", "toolchain", "driver", "device", "details",
            "variant"} <= set(first)
    outcomes, problems = read_outcomes(path)
    assert problems == []
    assert [(o.case_id, o.status, o.details) for o in outcomes] == [("a", Status.PASS, ""),
                                                                     ("b", Status.FAIL, "line1\nline2")]


def test_truncated_and_corrupt_lines_are_refused_with_file_and_line(tmp_path):
    path = tmp_path / "outcomes-gw1.jsonl"
    good = _outcome("ok", Status.PASS).to_json()
    bad_status = json.dumps({"case_id": "x", "status": "Passed"})
    path.write_text("\n".join([good, "{not json", bad_status, good.replace('"ok"', '"ok2"'), '{"case_id": "cut'])
                    + "", encoding="utf-8")
    outcomes, problems = read_outcomes(path)
    assert [o.case_id for o in outcomes] == ["ok", "ok2"]
    assert [(p.path, p.line) for p in problems] == [(path, 2), (path, 3), (path, 5)]
    assert str(problems[0]).startswith(f"{path}:2: corrupt line refused")
    assert "status expects one of" in str(problems[1]) and "'Passed'" in str(problems[1])
    assert str(problems[2]).startswith(f"{path}:5: truncated line refused")


def test_missing_cases_come_from_the_manifest(tmp_path):
    manifest = [ExpectedCase("c1", "t.py::a", "9.7.16.4.1", "desc"),
                ExpectedCase("t.py::b", "t.py::b", "9.7.16.4.1", "desc"),  # reported under a custom case_id
                ExpectedCase("c3", "t.py::c", "9.7.16.7.1", "alloc", {"n": 32})]
    assert write_jsonl_exclusive(manifest_path(tmp_path, ""), manifest)
    assert not write_jsonl_exclusive(manifest_path(tmp_path, ""), manifest[:1])  # first writer wins
    writer = OutcomeWriter(outcome_path(tmp_path, "", "main"))
    writer.append(_outcome("c1", Status.PASS, nodeid="t.py::a"))
    writer.append(_outcome("custom.b", Status.FAIL, nodeid="t.py::b"))
    writer.close()
    result = load_result_set(parse_column(str(tmp_path)))
    assert {cid: o.status for cid, o in result.outcomes.items()} == {
        "c1": Status.PASS, "custom.b": Status.FAIL, "c3": Status.MISSING}
    missing = result.outcomes["c3"]
    assert (missing.section, missing.family, missing.variant) == ("9.7.16.7.1", "alloc", {"n": 32})


def test_duplicate_records_keep_the_most_severe(tmp_path):
    OutcomeWriter(outcome_path(tmp_path, "", "gw0")).append(_outcome("a", Status.TIMEOUT))
    OutcomeWriter(outcome_path(tmp_path, "", "controller")).append(_outcome("a", Status.CRASH))
    result = load_result_set(parse_column(str(tmp_path)))
    assert result.outcomes["a"].status == Status.CRASH
    assert "reported more than once; also Timeout" in result.outcomes["a"].details


def test_shards_merge_and_clear_only_their_own_files(tmp_path):
    for shard in ((1, 2), (2, 2)):
        OutcomeWriter(outcome_path(tmp_path, run_tag(shard), "main")).append(_outcome(f"s{shard[0]}", Status.PASS))
    OutcomeWriter(outcome_path(tmp_path, "", "main")).append(_outcome("whole", Status.PASS))
    clear_run(tmp_path, run_tag((1, 2)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outcomes-main.jsonl", "outcomes-shard2of2-main.jsonl"]
    clear_run(tmp_path, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outcomes-shard2of2-main.jsonl"]


def test_column_spec_and_bad_directories(tmp_path):
    column = parse_column(f"gcc={tmp_path}/a,{tmp_path}/b")
    assert column.label == "gcc" and [d.name for d in column.dirs] == ["a", "b"]
    with pytest.raises(ValueError, match="expects an existing directory"):
        load_result_set(parse_column(str(tmp_path / "nope")))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="has none"):
        load_result_set(parse_column(str(tmp_path / "empty")))


def test_worst_follows_severity():
    assert worst([Status.PASS, Status.SKIP]) == Status.SKIP
    assert worst([Status.FAIL, Status.CRASH, Status.PASS]) == Status.CRASH
    assert worst([]) is None
    with pytest.raises(ValueError, match="status expects one of"):
        Status.parse("pass")
