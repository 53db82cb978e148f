"""Baselines, skips/flakes lists, attempts and shards (pure logic; the pytest side is in
test_results_plugin.py)."""

from __future__ import annotations

import pytest

from results.baseline import (
    apply_expectations,
    attempts_verdict,
    parse_baseline,
    parse_patterns,
    parse_shard,
    shard_select,
)
from results.status import Status

pytestmark = pytest.mark.reference


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_baseline_file_like_deqp_runner_fails_files(tmp_path):
    path = _write(tmp_path, "fails.csv", "# known bugs\n\ntcgen05.mma.a,Fail\n\"odd,id\",Crash\ntcgen05.ld.b,Timeout\n")
    baseline = parse_baseline(path)
    assert len(baseline) == 3
    assert baseline.get("tcgen05.mma.a").status == Status.FAIL
    assert baseline.get("tcgen05.mma.a").source == f"{path}:3"
    assert baseline.get("odd,id").status == Status.CRASH
    assert baseline.get("other") is None


@pytest.mark.parametrize("text, line, message", [
    ("a,Fail\nb\n", 2, "expects 'case_id,Status'"),
    ("a,Fail,extra\n", 1, "expects 'case_id,Status'"),
    ("a,Pass\n", 1, "baseline status expects one of Crash, Fail, Timeout, but got 'Pass'"),
    ("a,fail\n", 1, "but got 'fail'"),
    ("a,Fail\na,Crash\n", 2, "listed again with Crash"),
])
def test_malformed_baseline_rows_name_file_and_line(tmp_path, text, line, message):
    path = _write(tmp_path, "b.csv", text)
    with pytest.raises(ValueError) as info:
        parse_baseline(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and message in str(info.value)


def test_pattern_files(tmp_path):
    path = _write(tmp_path, "skips.txt", "# comment\n^tcgen05\\.cp\\.\nkind::mxf4$\n")
    patterns = parse_patterns(path)
    assert patterns.match("tcgen05.cp.128x256b") == f"{path}:2 (^tcgen05\\.cp\\.)"
    assert patterns.match("x.tcgen05.cp.y") is None  # anchored
    assert patterns.match("tcgen05.mma.kind::mxf4") == f"{path}:3 (kind::mxf4$)"
    bad = _write(tmp_path, "bad.txt", "ok\n(unclosed\n")
    with pytest.raises(ValueError, match=rf"^{bad}:2: bad regular expression '\(unclosed'"):
        parse_patterns(bad)


def test_expected_failure_unexpected_pass_and_other_statuses(tmp_path):
    baseline = parse_baseline(_write(tmp_path, "b.csv", "f,Fail\nc,Crash\n"))
    flakes = parse_patterns(_write(tmp_path, "flakes.txt", "^flaky\\.\n"))
    assert apply_expectations("f", Status.FAIL, baseline, flakes).status == Status.EXPECTED_FAIL
    verdict = apply_expectations("f", Status.PASS, baseline, flakes)
    assert verdict.status == Status.UNEXPECTED_PASS and "b.csv:1 expects Fail" in verdict.note
    changed = apply_expectations("c", Status.FAIL, baseline, flakes)  # expected Crash, got Fail: stands
    assert changed.status == Status.FAIL and "expects Crash" in changed.note
    assert apply_expectations("n", Status.FAIL, baseline, flakes).status == Status.FAIL
    assert apply_expectations("n", Status.PASS, baseline, flakes).status == Status.PASS
    assert apply_expectations("flaky.x", Status.TIMEOUT, baseline, flakes).status == Status.FLAKE
    assert apply_expectations("flaky.x", Status.PASS, baseline, flakes).status == Status.PASS
    assert apply_expectations("n", Status.SKIP, None, None).status == Status.SKIP
    assert Status.EXPECTED_FAIL.failing is False and Status.UNEXPECTED_PASS.failing is True
    assert Status.FLAKE.failing is False


def test_attempts_verdict():
    assert attempts_verdict([Status.FAIL, Status.PASS]) == Status.FLAKE
    assert attempts_verdict([Status.CRASH, Status.FAIL]) == Status.FLAKE
    assert attempts_verdict([Status.FAIL, Status.FAIL, Status.FAIL]) == Status.FAIL
    assert attempts_verdict([Status.PASS]) == Status.PASS
    with pytest.raises(ValueError):
        attempts_verdict([])


def test_shards_partition_in_stride_order():
    items = [f"case{i}" for i in range(10)]
    shards = [shard_select(items, (i, 3)) for i in (1, 2, 3)]
    assert shards == [["case0", "case3", "case6", "case9"], ["case1", "case4", "case7"], ["case2", "case5", "case8"]]
    assert sorted(sum(shards, [])) == sorted(items)
    assert shard_select(items, (1, 1)) == items
    assert parse_shard(" 2/8 ") == (2, 8)


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "a/b", "3", "", "1/2/3", "-1/2"])
def test_bad_shard_spec_names_the_argument(text):
    with pytest.raises(ValueError, match=r"^--shard expects I/N"):
        parse_shard(text)
