"""``tcgen05-cts mma``: the npz contract (issue 5, deliverable 4)."""

import subprocess
import sys

import numpy as np
import pytest

from conformance.commands.cli import main
from reference import formats as F
from tests.spec_texts import ROOT

pytestmark = pytest.mark.reference


def _write(path, **arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return str(path)


def _read(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture
def f16_case(tmp_path):
    rng = np.random.default_rng(0)
    a = F.encode("f16", rng.integers(-3, 4, (128, 16)))
    b = F.encode("f16", rng.integers(-3, 4, (16, 8)))
    c = F.encode("f32", rng.integers(-3, 4, (128, 8)))
    return _write(tmp_path / "in.npz", a=a, b=b, c=c), (a, b, c)


def test_spec_model_output(f16_case, tmp_path):
    path, (a, b, c) = f16_case
    out = str(tmp_path / "out.npz")
    assert main(["mma", "--kind", "f16", "--a-type", "f16", "--b-type", "f16", "--d-type", "f32", path, out]) == 0
    res = _read(out)
    assert set(res) == {"d", "d_value", "d_tol"}
    want = F.decode("f16", a) @ F.decode("f16", b) + F.decode("f32", c)
    assert res["d"].dtype == np.uint32 and res["d"].shape == (128, 8)
    np.testing.assert_array_equal(res["d_value"], want)
    np.testing.assert_array_equal(res["d"], F.encode("f32", want))
    assert res["d_tol"].dtype == np.float64 and np.all(res["d_tol"] == 0)


def test_hardware_model_and_qualifiers(f16_case, tmp_path):
    path, (a, b, c) = f16_case
    out = str(tmp_path / "out.npz")
    args = ["mma", "--kind", "f16", "--a-type", "f16", "--b-type", "f16", "--d-type", "f16", "--model", "hardware",
            "--negate-a", "--no-accumulate", path, out]
    # c must be f16 codes for an f16 D
    _write(path, a=a, b=b, c=F.encode("f16", np.zeros((128, 8))))
    assert main(args) == 0
    res = _read(out)
    assert set(res) == {"d"} and res["d"].dtype == np.uint16
    want = -(F.decode("f16", a) @ F.decode("f16", b))
    np.testing.assert_array_equal(F.decode("f16", res["d"]), want)


def test_block_scaled_and_scale_input_d(tmp_path):
    rng = np.random.default_rng(1)
    a = F.encode("e2m1", rng.choice([0, 1, -1, 2], (128, 64)))
    b = F.encode("e2m1", rng.choice([0, 1, -1, 2], (64, 16)))
    c = F.encode("f32", np.zeros((128, 16)))
    sa = F.encode("ue4m3", np.full((128, 4), 2.0))
    sb = F.encode("ue4m3", np.full((4, 16), 0.5))
    path = _write(tmp_path / "in.npz", a=a, b=b, c=c, scale_a=sa, scale_b=sb)
    out = str(tmp_path / "out.npz")
    assert main(["mma", "--kind", "mxf4nvf4", "--a-type", "e2m1", "--b-type", "e2m1", "--d-type", "f32",
                 "--scale-type", "ue4m3", "--scale-vec", "4X", "--model", "hardware", path, out]) == 0
    np.testing.assert_array_equal(F.decode("f32", _read(out)["d"]), F.decode("e2m1", a) @ F.decode("e2m1", b))


def test_scale_input_d(tmp_path):
    a = F.encode("tf32", np.ones((128, 8)))
    b = F.encode("tf32", np.ones((8, 8)))
    c = F.encode("f32", np.full((128, 8), 64.0))
    path = _write(tmp_path / "in.npz", a=a, b=b, c=c)
    out = str(tmp_path / "out.npz")
    assert main(["mma", "--kind", "tf32", "--a-type", "tf32", "--b-type", "tf32", "--d-type", "f32",
                 "--scale-input-d", "3", path, out]) == 0
    assert np.all(_read(out)["d_value"] == 8 + 8)


BAD = [
    (dict(a=np.zeros((128, 15), np.uint16)), ["--kind", "f16"], "K = 16"),
    (dict(a=np.zeros((128, 16), np.int16)), ["--kind", "f16"], "unsigned"),
    (dict(c=np.zeros((128, 9), np.uint32)), ["--kind", "f16"], "shape"),
    (dict(a=np.zeros((100, 16), np.uint16), c=np.zeros((100, 8), np.uint32)), ["--kind", "f16"], "Table 39"),
    ({}, ["--kind", "f16", "--a-type", "e4m3"], "Table 39"),
    ({}, ["--kind", "f16", "--scale-input-d", "16"], "15"),
    ({}, ["--kind", "f16", "--scale-type", "ue8m0"], "block-scaled"),
    (dict(c=np.full((128, 8), 0x1_0000_0000, np.uint64)), ["--kind", "f16"], "code"),
]


@pytest.mark.parametrize("override,flags,message", BAD, ids=[b[2] for b in BAD])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, override, flags, message):
    arrays = dict(a=np.zeros((128, 16), np.uint16), b=np.zeros((16, 8), np.uint16), c=np.zeros((128, 8), np.uint32))
    arrays.update(override)
    path = _write(tmp_path / "in.npz", **arrays)
    args = ["mma", "--a-type", "f16", "--b-type", "f16", "--d-type", "f32"] + flags + [path, str(tmp_path / "o.npz")]
    if "--a-type" in flags:
        args = ["mma", "--b-type", "f16", "--d-type", "f32"] + flags + [path, str(tmp_path / "o.npz")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err and err.startswith("tcgen05-cts mma: error:")


def test_missing_scale_arrays(tmp_path, capsys):
    path = _write(tmp_path / "in.npz", a=np.zeros((128, 32), np.uint8), b=np.zeros((32, 8), np.uint8),
                  c=np.zeros((128, 8), np.uint32))
    assert main(["mma", "--kind", "mxf8f6f4", "--a-type", "e4m3", "--b-type", "e4m3", "--d-type", "f32", path,
                 str(tmp_path / "o.npz")]) == 2
    assert "scale_a" in capsys.readouterr().err


def test_module_entry_point_one_line(tmp_path):
    """``python3 -m conformance.commands.cli`` (a second copy of the dispatcher module) still exits 2."""
    path = _write(tmp_path / "in.npz", a=np.zeros((128, 15), np.uint16), b=np.zeros((16, 8), np.uint16),
                  c=np.zeros((128, 8), np.uint32))
    proc = subprocess.run([sys.executable, "-m", "conformance.commands.cli", "mma", "--kind", "f16", "--a-type", "f16",
                           "--b-type", "f16", "--d-type", "f32", path, str(tmp_path / "o.npz")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "K = 16" in proc.stderr
