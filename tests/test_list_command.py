"""``tcgen05-cts list``: columns, formats, filters, errors."""

import csv
import io
import json

import pytest

from conformance.commands.cli import main
from generators.variants import FAMILIES

pytestmark = pytest.mark.reference

COLUMNS = ["case_id", "section", "family", "targets", "legal", "rule", "instruction"]


def _run(capsys, *argv):
    rc = main(["list", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_csv_has_the_columns_and_every_family(capsys):
    rc, out, _ = _run(capsys, "--level", "smoke", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rc == 0 and set(COLUMNS) <= set(rows[0])
    assert {r["family"] for r in rows} == set(FAMILIES)
    assert {r["legal"] for r in rows} == {"true", "false"}
    mma = next(r for r in rows if r["family"] == "mma" and r["legal"] == "true")
    assert mma["instruction"].startswith("tcgen05.mma.cta_group::") and mma["instruction"].endswith(";")
    assert mma["case_id"].startswith(mma["instruction"].split(" ")[0])


def test_json_and_filters(capsys):
    rc, out, _ = _run(capsys, "--level", "smoke", "--family", "ld.red", "--format", "json")
    rows = json.loads(out)
    assert rc == 0 and rows and {r["family"] for r in rows} == {"ld.red"}
    assert all("sm_100a" not in r["targets"].split() for r in rows if r["legal"])
    rc, out, _ = _run(capsys, "--level", "smoke", "--section", "9.7.14", "--format", "json", "--legal-only")
    rows = json.loads(out)
    assert rows and all(r["section"].startswith("9.7.14") and r["legal"] for r in rows)


def test_bad_level_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["list", "--level", "huge"])
    assert exc.value.code == 2
