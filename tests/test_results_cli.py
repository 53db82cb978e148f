"""``tcgen05-cts run``: argument checks and one end-to-end run that builds every report."""

from __future__ import annotations

import json
import sys

import pytest

from conformance.commands.cli import build_parser, main
from conformance.commands.run import pytest_command

pytestmark = pytest.mark.reference


@pytest.mark.parametrize("argv, message", [
    (["run", "--shard", "0/2"], "--shard expects I/N with 1 <= I <= N, but got '0/2'"),
    (["run", "--baseline", "/nonexistent/fails.csv"], "--baseline expects an existing file"),
    (["run", "-n", "many"], "-n expects a number, 'auto' or 'logical', but got 'many'"),
    (["run", "--flake-reruns", "-1"], "--flake-reruns expects N >= 0"),
])
def test_bad_arguments_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_bad_baseline_row_names_file_and_line(tmp_path, capsys):
    (tmp_path / "fails.csv").write_text("a,Fail\nb,Maybe\n")
    assert main(["run", "--baseline", str(tmp_path / "fails.csv")]) == 2
    assert f"{tmp_path / 'fails.csv'}:2: baseline status expects one of" in capsys.readouterr().err


def test_pytest_command_carries_every_option(tmp_path):
    args = build_parser().parse_args(["run", "--level", "default", "-n", "4", "--device", "none", "--shard", "2/8",
                                      "--section", "9.7.16.4", "--family", "mma", "--ptxas", "/opt/ptxas",
                                      "--flake-reruns", "2", "-k", "f16", "--load", "ptx", "--", "-x"])
    cmd = pytest_command(args, tmp_path)
    assert cmd[:3] == [sys.executable, "-m", "pytest"] and cmd[3].endswith("conformance")
    text = " ".join(cmd[4:])
    for part in ("-p conformance.plugin", "-p conformance.outcomes_plugin", f"--results {tmp_path}",
                 "--level default", "--device none", "-n 4", "--shard 2/8", "--section 9.7.16.4",
                 "--family mma", "--ptxas /opt/ptxas", "--flake-reruns 2", "-k f16", "--load ptx"):
        assert part in text
    assert cmd[-1] == "-x"


def test_run_builds_the_reports(tmp_path, capsys):
    out = tmp_path / "res"
    # select no conformance case (-k), so the test stays fast whatever the suite holds
    rc = main(["run", "-n", "0", "--results", str(out), "--device", "none", "-k", "no_case_has_this_name",
               "--", "-p", "no:hypothesispytest", "-p", "no:benchmark", "-q"])
    assert rc == 0, capsys.readouterr()
    for name in ("run.json", "expected-cases.jsonl", "dashboard.html", "coverage.csv", "coverage.json",
                 "summary.json"):
        assert (out / name).is_file(), name
    run = json.loads((out / "run.json").read_text())
    assert run["level"] == "smoke" and run["device_option"] == "none" and run["exitstatus"] == 5
