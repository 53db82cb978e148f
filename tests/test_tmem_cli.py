"""The CLI contract of tmem-fragment / tmem-layout, checked through its JSON output only."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conformance.commands.cli import main

pytestmark = pytest.mark.reference

# Tables 47/48 as printed in the spec (registers for .x1 .. .x128; None = NA).
TABLE = {
    "32x32b": [1, 2, 4, 8, 16, 32, 64, 128], "16x64b": [1, 2, 4, 8, 16, 32, 64, 128],
    "16x32bx2": [1, 2, 4, 8, 16, 32, 64, 128], "16x128b": [2, 4, 8, 16, 32, 64, 128, None],
    "16x256b": [4, 8, 16, 32, 64, 128, None, None],
}
NUMS = [1, 2, 4, 8, 16, 32, 64, 128]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


@pytest.mark.parametrize("op,table", [("ld", "Table 47"), ("st", "Table 48")])
def test_register_counts_and_na(capsys, op, table):
    for shape, counts in TABLE.items():
        for num, regs in zip(NUMS, counts, strict=True):
            code, doc, err = _run(capsys, "tmem-fragment", "--shape", "." + shape, "--num", f"x{num}", "--op", op)
            if regs is None:
                assert code != 0 and table in err and len(err.strip().splitlines()) == 1
            else:
                assert code == 0 and doc["registers"] == regs and len(doc["map"]) == 32 * regs


def test_32x32b_map_is_thread_lane_register_column(capsys):
    _, doc, _ = _run(capsys, "tmem-fragment", "--shape", "32x32b", "--num", "x4")
    assert sorted(map(tuple, doc["map"])) == [(t, i, t, i, 0) for t in range(32) for i in range(4)]


@pytest.mark.parametrize("shape", list(TABLE))
def test_maps_are_bijections(capsys, shape):
    for extra in ([], ["--pack16"]):
        _, doc, _ = _run(capsys, "tmem-fragment", "--shape", shape, "--num", "x2", *extra)
        rows = doc["map"]
        halves = 2 if extra else 1
        assert len({(t, r, h) for t, r, _, _, h in rows}) == len(rows) == 32 * doc["registers"] * halves
        assert len({(lane, col) for _, _, lane, col, _ in rows}) == len(rows)
        assert {h for *_, h in rows} == set(range(halves))


def test_half_split_option(capsys):
    _, doc, _ = _run(capsys, "tmem-fragment", "--shape", "16x32bx2", "--num", "x1", "--half-split", "0x40")
    assert [0, 0, 0, 0, 0] in doc["map"] and [16, 0, 0, 64, 0] in doc["map"]


@pytest.mark.parametrize("m,g,flags,n", [(256, 2, [], 64), (128, 2, [], 32), (128, 2, ["--sparse"], 32),
                                         (128, 1, [], 24), (64, 1, ["--ws"], 64), (64, 1, [], 16), (32, 1, ["--ws"], 128)])
def test_layout_places_each_element_once(capsys, m, g, flags, n):
    code, doc, _ = _run(capsys, "tmem-layout", "--m", str(m), "--cta-group", str(g), *flags, "--n", str(n))
    cells = doc["cells"]
    assert code == 0 and len(cells) == m * n
    assert {(r, c) for r, c, *_ in cells} == {(r, c) for r in range(m) for c in range(n)}
    assert len({(cta, lane, col) for _, _, cta, lane, col in cells}) == m * n
    assert all(0 <= lane < 128 and 0 <= col < n and cta < g for _, _, cta, lane, col in cells)


def test_layout_errors(capsys):
    code, _, err = _run(capsys, "tmem-layout", "--m", "64", "--cta-group", "2", "--n", "64")
    assert code == 2 and "9.7.16.10.5" in err
    code, _, err = _run(capsys, "tmem-layout", "--m", "128", "--cta-group", "1", "--n", "20")
    assert code == 2 and "Table 39" in err


def test_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "conformance.commands.cli", "tmem-fragment", "--shape", "16x64b", "--num", "x1"],
                          capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout)["registers"] == 1


@pytest.mark.parametrize("mn,sf,sid,reading", [(40, 2, 2, None), (128, 4, 0, None), (192, 3, 3, None),
                                               (16, 3, 2, "group-of-4"), (16, 3, 2, "compact"), (256, 6, 2, None)])
def test_scale_factors_name_the_bytes_pack_writes(capsys, mn, sf, sid, reading):
    """tmem-scale-factors (§9.7.16.10.7): every (x, s, quarter) names the cell byte where
    pack_scale_factors (the writer, not the reader the command uses) put scale factor s of row x."""
    import numpy as np

    from reference import tmem_mma_operands as TO
    from reference.spec_questions import following

    argv = ["tmem-scale-factors", "--mn", str(mn), "--sf", str(sf), "--scale-id", str(sid)]
    code, doc, _ = _run(capsys, *argv, *(["--reading", f"Q-K96-SFW={reading}"] if reading else []))
    assert code == 0
    rows = np.array(doc["cells"])
    assert len(rows) == 4 * mn * sf
    codes = (np.arange(mn * sf).reshape(mn, sf) % 251) + 1
    with following({"Q-K96-SFW": reading} if reading else {}):
        cells = TO.pack_scale_factors(codes, sid)
    assert doc["span"] == cells.shape[1]
    x, s, _q, lane, col, byte = rows.T
    assert ((cells[lane, col] >> (8 * byte).astype(np.uint32)) & 0xFF == codes[x, s]).all()
    assert (lane % 32 == x % 32).all()


def test_scale_factors_reject_bad_count(capsys):
    code, _, err = _run(capsys, "tmem-scale-factors", "--mn", "64", "--sf", "5")
    assert code != 0 and "9.7.16.10.7" in err and len(err.strip().splitlines()) == 1
