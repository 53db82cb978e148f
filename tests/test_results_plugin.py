"""The pytest side of the outcome log: statuses from real pytest runs, a worker killed under
pytest-xdist, baselines, skips/flakes files, flake reruns, shards and the manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import conformance.harness.device as device_module
from conformance.harness.case_status import case_identity, phase_status
from results.resultset import load_result_set, parse_column
from results.status import Status

pytestmark = pytest.mark.reference
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ["-p", "conformance.plugin", "-p", "conformance.outcomes_plugin", "-p", "no:cacheprovider"]
# plugins that only slow the start of each xdist worker (blocking an absent plugin is harmless)
QUIET = ["-p", "no:hypothesispytest", "-p", "no:benchmark"]

SYNTHETIC = '''
import enum, os, pathlib, pytest
from conformance.harness.case_status import cts_case
from conformance.harness.device import CaseCrash, CaseTimeout, request_worker_restart

SECTION = "9.7.16.4.1"
FAMILY = "desc"
COUNTER = pathlib.Path(__file__).with_name("attempts")

Kind = enum.Enum("Kind", "f16 tf32")

@cts_case(kind=Kind.f16, m=128)  # variant values need not be plain data
def test_pass(): pass
def test_fail(): assert 1 == 2, "wrong"
def test_expected(): assert 0, "known bug"
def test_unexpected_pass(): pass
def test_worker_killed():
    os._exit(3)
def test_after_kill(): pass
@cts_case(case_id="tcgen05.alloc.cta_group::1", section="9.7.16.7.1", family="alloc", ncols=32)
def test_not_supported(): pytest.skip("NotSupported: needs sm_100a, found none")
def test_listed_in_skips(): assert 0
def test_known_flake(): assert 0
def test_device_crash(): raise CaseCrash(["x"], "illegal memory access")
def test_device_timeout(): raise CaseTimeout(["x"], "mbarrier wait timed out")
def test_flaky():
    n = int(COUNTER.read_text()) if COUNTER.exists() else 0
    COUNTER.write_text(str(n + 1))
    assert n > 0
@pytest.mark.xfail(reason="spec erratum", strict=False)
def test_xfail(): assert 0
def test_custom_id(record_property):
    record_property("case_id", "custom.case")
    record_property("variant", {"n": 64})
def test_restart():
    request_worker_restart("context could not be rebuilt")
    raise CaseCrash(["r"], "launch failed")
def test_last(): pass
'''

EXPECTED = {
    "test_pass": Status.PASS, "test_fail": Status.FAIL, "test_expected": Status.EXPECTED_FAIL,
    "test_unexpected_pass": Status.UNEXPECTED_PASS, "test_worker_killed": Status.CRASH,
    "test_after_kill": Status.PASS, "tcgen05.alloc.cta_group::1": Status.NOT_SUPPORTED,
    "test_listed_in_skips": Status.SKIP, "test_known_flake": Status.FLAKE, "test_device_crash": Status.CRASH,
    "test_device_timeout": Status.TIMEOUT, "test_flaky": Status.FLAKE, "test_xfail": Status.EXPECTED_FAIL,
    "custom.case": Status.PASS, "test_restart": Status.CRASH, "test_last": Status.PASS,
}


def _short(case_id: str) -> str:
    return case_id.rsplit("::", 1)[-1] if case_id.startswith("test_synth.py::") else case_id


@pytest.fixture(scope="module")
def xdist_run(tmp_path_factory):
    """One pytest-xdist run (2 workers) of the synthetic file; one worker is killed mid-test."""
    root = tmp_path_factory.mktemp("xdist")
    (root / "test_synth.py").write_text(SYNTHETIC)
    (root / "fails.csv").write_text("test_synth.py::test_expected,Fail\ntest_synth.py::test_unexpected_pass,Fail\n")
    (root / "skips.txt").write_text("test_listed_in_skips$\n")
    (root / "flakes.txt").write_text("known_flake\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(root / "test_synth.py"), *PLUGINS, *QUIET, "--rootdir", str(root),
         "-n", "2", "--results", str(root / "out"), "--baseline", str(root / "fails.csv"),
         "--skips", str(root / "skips.txt"), "--flakes", str(root / "flakes.txt"), "--flake-reruns", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    return root, proc


def test_every_case_is_reported_once_with_its_status(xdist_run):
    root, proc = xdist_run
    result = load_result_set(parse_column(str(root / "out")))
    assert result.problems == []
    got = {_short(cid): o.status for cid, o in result.outcomes.items()}
    assert got == EXPECTED, proc.stdout[-3000:]
    lines = [json.loads(line) for p in (root / "out").glob("outcomes-*.jsonl") for line in p.read_text().splitlines()]
    assert len(lines) == len(EXPECTED)  # no duplicates: the restarted worker's case is not recorded twice
    assert proc.returncode == 1  # Fail, UnexpectedPass and the crashes fail the run


def test_worker_crash_is_attributed_by_the_controller(xdist_run):
    root, proc = xdist_run
    records = [json.loads(line) for line in (root / "out" / "outcomes-controller.jsonl").read_text().splitlines()]
    assert [r["case_id"] for r in records] == ["test_synth.py::test_worker_killed"]
    assert records[0]["section"] == "9.7.16.4.1" and records[0]["family"] == "desc"  # from the manifest
    assert "crashed while running" in records[0]["details"]
    assert "restarting worker" in proc.stderr


def test_record_fields_and_details(xdist_run):
    root, _ = xdist_run
    outcomes = load_result_set(parse_column(str(root / "out"))).outcomes
    ns = outcomes["tcgen05.alloc.cta_group::1"]
    assert (ns.section, ns.family, ns.variant) == ("9.7.16.7.1", "alloc", {"ncols": 32})
    assert ns.details == "NotSupported: needs sm_100a, found none"
    assert outcomes["custom.case"].variant == {"n": 64}
    assert outcomes["test_synth.py::test_pass"].variant == {"kind": "Kind.f16", "m": 128}
    expected = outcomes["test_synth.py::test_expected"]
    assert expected.raw_status == "Fail" and "fails.csv:1" in expected.details
    unexpected = outcomes["test_synth.py::test_unexpected_pass"]
    assert unexpected.raw_status == "Pass" and "update the baseline" in unexpected.details
    assert outcomes["test_synth.py::test_flaky"].attempts == ("Fail", "Pass")
    assert outcomes["test_synth.py::test_fail"].attempts == ("Fail", "Fail")
    assert "wrong" in outcomes["test_synth.py::test_fail"].details
    assert "skips.txt:1" in outcomes["test_synth.py::test_listed_in_skips"].details
    assert all(o.worker for o in outcomes.values())
    run = json.loads((root / "out" / "run.json").read_text())
    assert run["end"] >= run["start"] and run["exitstatus"] == 1 and run["flake_reruns"] == 1


def test_shard_selects_a_stride_and_the_manifest_lists_it(pytester):
    pytester.makepyfile(test_many="\n".join(f"def test_{i:02d}(): pass" for i in range(7)))
    result = pytester.runpytest(*PLUGINS, *QUIET, "--shard", "2/3", "--results", "out")
    result.assert_outcomes(passed=2, deselected=5)
    manifest = (pytester.path / "out" / "expected-cases-shard2of3.jsonl").read_text().splitlines()
    assert [json.loads(line)["case_id"] for line in manifest] == ["test_many.py::test_01", "test_many.py::test_04"]
    assert (pytester.path / "out" / "outcomes-shard2of3-main.jsonl").is_file()


def test_bad_options_are_usage_errors(pytester):
    pytester.makepyfile(test_one="def test_one(): pass")
    (pytester.path / "b.csv").write_text("a,Fail\nbroken\n")
    result = pytester.runpytest(*PLUGINS, *QUIET, "--baseline", "b.csv")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*b.csv:2: a baseline row expects 'case_id,Status'*"])
    result = pytester.runpytest(*PLUGINS, *QUIET, "--shard", "0/2")
    result.stderr.fnmatch_lines(["*--shard expects I/N with 1 <= I <= N, but got '0/2'*"])


def test_restart_without_xdist_stops_and_the_rest_is_missing(pytester, monkeypatch):
    monkeypatch.setattr(device_module, "_RESTART", [])
    pytester.makepyfile(test_dev='''
from conformance.harness.device import CaseCrash, request_worker_restart
def test_a(): pass
def test_b():
    request_worker_restart("context lost")
    raise CaseCrash(["b"], "launch failed")
def test_c(): pass
''')
    pytester.runpytest(*PLUGINS, *QUIET, "--results", "out")
    result = load_result_set(parse_column(str(pytester.path / "out")))
    assert {cid.split("::")[1]: o.status for cid, o in result.outcomes.items()} == {
        "test_a": Status.PASS, "test_b": Status.CRASH, "test_c": Status.MISSING}


class _Rep:
    def __init__(self, outcome, when="call", longrepr=None, **attrs):
        self.outcome, self.when, self.longrepr = outcome, when, longrepr
        self.longreprtext = str(longrepr or "")
        self.__dict__.update(attrs)


@pytest.mark.parametrize("report, status", [
    (_Rep("passed"), Status.PASS),
    (_Rep("passed", when="setup"), None),
    (_Rep("skipped", longrepr=("f.py", 1, "Skipped: NotSupported: needs sm_100a; device is sm_90")),
     Status.NOT_SUPPORTED),
    (_Rep("skipped", when="setup", longrepr=("f.py", 1, "Skipped: no ptxas")), Status.SKIP),
    (_Rep("skipped", wasxfail="erratum"), Status.EXPECTED_FAIL),
    (_Rep("passed", wasxfail="erratum"), Status.UNEXPECTED_PASS),
    (_Rep("failed", longrepr="[XPASS(strict)] erratum"), Status.UNEXPECTED_PASS),
    (_Rep("failed", longrepr="AssertionError"), Status.FAIL),
    (_Rep("failed", when="teardown", longrepr="E"), Status.FAIL),
    (_Rep("failed", longrepr="Failed: Timeout >10.0s"), Status.TIMEOUT),
    (_Rep("failed", when="???", longrepr="worker crashed"), Status.CRASH),
    (_Rep("failed", cts_kind="Timeout"), Status.TIMEOUT),
])
def test_phase_status(report, status):
    assert phase_status(report) == status


def test_case_identity_order():
    marker = {"case_id": "m.id", "section": "9.7.16.4.1", "family": "desc", "swizzle": 128}
    ident = case_identity("f.py::t", [("case_id", "prop.id"), ("variant", {"n": 8})], marker, {"SECTION": "x"})
    assert (ident.case_id, ident.section, ident.family) == ("prop.id", "9.7.16.4.1", "desc")
    assert ident.variant == {"swizzle": 128, "n": 8}
    plain = case_identity("f.py::t", (), None, {"SECTION": "9.7.16.8.3", "FAMILY": "ld"})
    assert (plain.case_id, plain.section, plain.family, plain.variant) == ("f.py::t", "9.7.16.8.3", "ld", {})


def test_synthetic_file_is_valid_python():
    compile(textwrap.dedent(SYNTHETIC), "synthetic", "exec")
