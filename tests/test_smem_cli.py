"""``tcgen05-cts layout``: the CLI contract (issue 3 item 5).

bit offsets are re-derived here in closed form from the printed descriptor (the §9.7.16.3.1-2
stride definitions and CuTe's Swizzle<B,M,S>), independently of reference.smem_layout.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conformance.commands.cli import main
from reference.smem_descriptor import SmemDescriptor

pytestmark = pytest.mark.reference

# swizzle -> (row bytes W, atom rows R, CuTe Swizzle<B,M,S>)
GEOMETRY = {"none": (16, 8, (0, 4, 3)), "32B": (32, 8, (1, 4, 3)), "64B": (64, 8, (2, 4, 3)),
            "128B": (128, 8, (3, 4, 3)), "128B_base32B": (128, 4, (2, 5, 2))}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8,
        "e2m3": 6, "e3m2": 6, "e2m1": 4}


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["layout", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def expected_bit(desc: dict, major: str, bits: int, per_unit: int, mn: int, k: int) -> int:
    """Closed form for a start address on a 1024-byte boundary (so the pattern is absolute)."""
    width, rows, (b, m, s) = GEOMETRY[desc["swizzle"]]
    lbo, sbo, none = desc["leading_byte_offset"], desc["stride_byte_offset"], desc["swizzle"] == "none"
    if major == "K":
        byte = (mn % 8) * width + (mn // 8) * sbo + (k // per_unit) * (lbo if none else 16)
        index = k % per_unit
    else:
        v, per_row = mn // per_unit, width // 16
        if none:
            byte = v * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            byte = (v % per_row) * 16 + (v // per_row) * lbo + (k % rows) * width + (k // rows) * sbo
        index = mn % per_unit
    absolute = desc["start_address"] + byte
    absolute ^= (absolute & (((1 << b) - 1) << (m + s))) >> s
    return (absolute - desc["start_address"]) * 8 + index * bits


CASES = [
    ("K", "none", "tf32", None, 16, 16), ("K", "32B", "tf32", None, 24, 8), ("K", "64B", "bf16", None, 64, 32),
    ("K", "128B", "e4m3", None, 128, 128), ("K", "128B", "e2m1", None, 32, 256), ("K", "none", "e2m1", "f8f6f4", 16, 64),
    ("K", "128B", "e3m2", None, 8, 128), ("K", "64B", "s8", None, 40, 64), ("K", "32B", "e2m3", "mxf8f6f4", 8, 32),
    ("MN", "none", "bf16", None, 16, 16), ("MN", "32B", "bf16", None, 32, 16), ("MN", "64B", "f16", None, 96, 24),
    ("MN", "128B", "e5m2", None, 256, 32), ("MN", "128B_base32B", "tf32", None, 64, 16), ("MN", "none", "u8", None, 48, 40),
]


@pytest.mark.parametrize("major,swizzle,dtype,kind,mn,k", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_json_contract(capsys, major, swizzle, dtype, kind, mn, k):
    argv = ["--major", major, "--swizzle", swizzle, "--dtype", dtype, "--mn", str(mn), "--k", str(k),
            "--start-address", "0x800"] + (["--kind", kind] if kind else [])
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert set(doc) == {"descriptor", "bit_offsets", "image_bytes"}
    desc = doc["descriptor"]
    assert desc == SmemDescriptor.decode(SmemDescriptor(**desc).encode()).to_json()
    assert list(desc) == ["start_address", "leading_byte_offset", "stride_byte_offset", "base_offset", "lbo_mode", "swizzle"]
    assert desc["start_address"] == 0x800 and desc["swizzle"] == swizzle and desc["base_offset"] == 0
    offsets = doc["bit_offsets"]
    assert len(offsets) == mn and all(len(row) == k for row in offsets)
    bits = BITS[dtype]
    per_unit = 16 if bits == 6 or (bits == 4 and kind) else 128 // bits
    for i in range(mn):
        for j in range(k):
            assert offsets[i][j] == expected_bit(desc, major, bits, per_unit, i, j), (i, j)
    units = {o // 128 for row in offsets for o in row}
    assert doc["image_bytes"] == 16 * (max(units) + 1) and min(units) == 0


def test_image_bytes_of_compact_tiles(capsys):
    """Full atoms pack densely: 128x64 bf16 K-major 128B = 16 KiB; padded e3m2 64x128 = 8 KiB."""
    for argv, size in ((["--major", "K", "--swizzle", "128B", "--dtype", "bf16", "--mn", "128", "--k", "64"], 16384),
                       (["--major", "K", "--swizzle", "128B", "--dtype", "e3m2", "--mn", "64", "--k", "128"], 8192),
                       (["--major", "K", "--swizzle", "none", "--dtype", "e2m1", "--mn", "64", "--k", "128"], 4096)):
        code, out, _ = run_cli(capsys, *argv)
        assert code == 0 and json.loads(out)["image_bytes"] == size


def test_table_format(capsys):
    code, out, _ = run_cli(capsys, "--major", "K", "--swizzle", "32B", "--dtype", "bf16", "--mn", "9", "--k", "16",
                           "--format", "table")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("#") and lines[1].split() == [str(j) for j in range(16)]
    grid = [line.split() for line in lines[2:]]
    assert [row[0] for row in grid] == [str(i) for i in range(9)]
    assert grid[0][1:] == [str(2 * j) for j in range(16)]
    assert grid[4][1:] == [str(128 + (2 * j) ^ 16) for j in range(16)]   # row 4: bit 7 set, chunks swap
    code, out, _ = run_cli(capsys, "--major", "K", "--swizzle", "none", "--dtype", "e2m1", "--mn", "8", "--k", "4",
                           "--format", "table")
    assert out.splitlines()[2].split() == ["0", "0", "0:4", "1", "1:4"]


@pytest.mark.parametrize("argv,fragment", [
    (["--major", "MN", "--swizzle", "32B", "--dtype", "tf32", "--mn", "32", "--k", "8"], "Table 52"),
    (["--major", "MN", "--swizzle", "none", "--dtype", "e2m1", "--mn", "32", "--k", "8"], "Table 52"),
    (["--major", "K", "--swizzle", "128B_base32B", "--dtype", "bf16", "--mn", "8", "--k", "8"], "Table 53"),
    (["--major", "K", "--swizzle", "128B", "--dtype", "bf16", "--mn", "8", "--k", "8", "--start-address", "0x408"], "16 bytes"),
    (["--major", "K", "--swizzle", "128B", "--dtype", "bf16", "--mn", "8", "--k", "128"], "128-byte row"),
    (["--major", "K", "--swizzle", "none", "--dtype", "e3m2", "--mn", "8", "--k", "8", "--kind", "mxf4"], "Tables 42-44"),
    (["--major", "K", "--swizzle", "none", "--dtype", "bf16", "--mn", "0", "--k", "8"], "positive"),
])
def test_errors_are_one_line(capsys, argv, fragment):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_module_entry_point_and_argparse_errors():
    cmd = [sys.executable, "-m", "conformance.commands.cli", "layout", "--major", "K", "--swizzle", "64B", "--dtype", "bf16",
           "--mn", "8", "--k", "32", "--start-address", "0x1000"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and json.loads(done.stdout)["descriptor"]["stride_byte_offset"] == 512
    bad = subprocess.run(cmd[:-1] + ["0xZZ"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    bad = subprocess.run(cmd[:7] + ["f64"] + cmd[8:], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "f64" in bad.stderr


def test_layout_takes_cute_atom_names(capsys):
    """``--atom Layout_MN_SW128_32B_Atom`` = ``--major MN --swizzle 128B_base32B`` (CuTe's names)."""
    code, by_atom, _ = run_cli(capsys, "--atom", "Layout_MN_SW128_32B_Atom", "--dtype", "tf32", "--mn", "32", "--k", "8")
    code2, by_words, _ = run_cli(capsys, "--major", "MN", "--swizzle", "128B_base32B", "--dtype", "tf32",
                                 "--mn", "32", "--k", "8")
    assert code == code2 == 0 and by_atom == by_words
    code, _, err = run_cli(capsys, "--atom", "Layout_K_SW64_Atom", "--major", "K", "--dtype", "f16",
                           "--mn", "8", "--k", "32")
    assert code == 2 and "--atom expects" in err
