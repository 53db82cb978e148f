"""Reports from synthetic outcome logs: JUnit per section, coverage matrix, the report command."""

from __future__ import annotations

import csv
import json

import pytest
from junitparser import Error, Failure, JUnitXml, Properties, Skipped

from conformance.commands.cli import main
from results.junit import junit_file_name
from results.report import build_reports
from results.resultset import load_columns
from results.status import Status
from tests.results_samples import A, B, C, write_sample

pytestmark = pytest.mark.reference


@pytest.fixture
def sample(tmp_path):
    return write_sample(tmp_path / "run")


def _suite(path):
    suites = list(JUnitXml.fromfile(str(path)))
    assert len(suites) == 1
    return suites[0]


def test_junit_one_file_per_section_reparsed(sample, tmp_path):
    summary = build_reports(load_columns([str(sample)]), tmp_path / "out")
    junit = tmp_path / "out" / "junit"
    assert sorted(p.name for p in junit.iterdir()) == sorted([junit_file_name(A), junit_file_name(B)])
    assert sorted(summary.junit[str(sample)]) == sorted(junit.iterdir())

    a = _suite(junit / junit_file_name(A))  # Pass, Pass, Fail, NotSupported, Crash
    assert (a.tests, a.failures, a.errors, a.skipped) == (5, 1, 1, 1)
    assert a.name == "§9.7.16.4.1 Shared memory descriptor"
    props = {p.name: p.value for p in a.properties()}
    assert props == {"section": A, "toolchain": "ptxas 13.0", "driver": "580.1", "device": "NVIDIA B200"}
    cases = {c.name: c for c in a}
    assert isinstance(cases["a.desc.3"].result[0], Failure)
    assert isinstance(cases["a.mma.1"].result[0], Error)
    assert isinstance(cases["a.desc.4"].result[0], Skipped)
    assert cases["a.desc.1"].is_passed and cases["a.desc.1"].classname == "desc"
    case_props = {p.name: p.value for p in cases["a.desc.3"].child(Properties)}
    assert case_props["status"] == "Fail" and case_props["variant.m"] == "128"
    assert case_props["variant.kind"] == "f16" and case_props["toolchain"] == "ptxas 13.0"
    assert "Fail details of a.desc.3" in cases["a.desc.3"].result[0].text

    b = _suite(junit / junit_file_name(B))  # Pass, ExpectedFail, Skip, Missing
    assert (b.tests, b.failures, b.errors, b.skipped) == (4, 0, 1, 2)
    assert {c.name for c in b if c.is_error} == {"b.alloc.missing"}


def test_coverage_matrix_counts(sample, tmp_path):
    build_reports(load_columns([str(sample)]), tmp_path / "out")
    with open(tmp_path / "out" / "coverage.csv", newline="") as handle:
        rows = {(r["section"], r["family"]): r for r in csv.DictReader(handle)}
    assert set(rows) == {(A, "desc"), (A, "mma"), (B, "alloc"), (C, "shift")}
    desc = rows[(A, "desc")]
    assert (desc["Pass"], desc["Fail"], desc["NotSupported"], desc["run"], desc["not_run"]) == ("2", "1", "1", "4", "0")
    mma = rows[(A, "mma")]
    assert (mma["Crash"], mma["run"], mma["not_run"], mma["total"]) == ("1", "1", "2", "3")
    alloc = rows[(B, "alloc")]
    assert (alloc["Pass"], alloc["ExpectedFail"], alloc["Skip"], alloc["Missing"], alloc["run"]) == ("1", "1", "1", "1", "4")
    assert (rows[(C, "shift")]["run"], rows[(C, "shift")]["not_run"]) == ("0", "1")
    data = json.loads((tmp_path / "out" / "coverage.json").read_text())
    assert data["not_run_by_reason"] == {"pairwise coverage at this level": 2, "exhaustive level only": 1}
    mma_json = next(r for r in data["rows"] if (r["section"], r["family"]) == (A, "mma"))
    assert mma_json["not_run_reasons"] == {"pairwise coverage at this level": 2}


def test_report_command_refuses_a_corrupt_line_and_reports_the_rest(sample, tmp_path, capsys):
    log = sample / "outcomes-gw0.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:1] + ['{"case_id": "a.desc.3", "sta'] + lines[1:]) + "\n")
    truncated = sample / "outcomes-gw1.jsonl"
    truncated.write_text(truncated.read_text() + '{"case_id": "late", "status": "Pa')
    out = tmp_path / "out"
    assert main(["report", str(sample), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{log}:2: corrupt line refused" in err
    assert f"{truncated}:5: truncated line refused" in err
    assert (out / "dashboard.html").is_file()
    summary = json.loads((out / "summary.json").read_text())
    counts = summary["columns"][str(sample)]["counts"]
    assert counts["Pass"] == 3 and counts["Missing"] == 1 and counts["Crash"] == 1
    assert len(summary["refused_lines"]) == 2


def test_report_command_bad_directory_is_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "absent"), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "expects an existing directory" in err


def test_several_columns_get_their_own_subdirectories(tmp_path):
    write_sample(tmp_path / "r1")
    write_sample(tmp_path / "r2")
    summary = build_reports(load_columns([f"old={tmp_path / 'r1'}", f"new={tmp_path / 'r2'}"]), tmp_path / "out")
    assert list(summary.counts) == ["old", "new"]
    for name in ("old", "new"):
        assert (tmp_path / "out" / name / "coverage.csv").is_file()
        assert (tmp_path / "out" / name / "junit" / junit_file_name(A)).is_file()


def test_merge_makes_one_column_of_shards(tmp_path, capsys):
    write_sample(tmp_path / "s1")
    write_sample(tmp_path / "s2", {"a.desc.3": Status.PASS})  # same cases: the more severe record stands
    assert main(["report", "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (counts,) = [c["counts"] for c in summary["columns"].values()]
    assert (counts["Pass"], counts["Fail"], counts["Missing"]) == (3, 1, 1)
    assert (tmp_path / "out" / "junit").is_dir()
