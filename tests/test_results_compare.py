"""Comparison helpers: what a failure message says, and the artifacts saved for a case."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance.harness.compare import (
    ComparisonFailure,
    artifact_dir,
    check_written,
    compare_exact,
    compare_tolerance,
    reproduction_command,
    save_artifacts,
)

pytestmark = pytest.mark.reference

CTX = dict(section="9.7.16.4.1", case_id="tcgen05.mma.kind::f16.m128n64", repro="python3 -m pytest x")


def _message(fn, *args, **kw) -> str:
    with pytest.raises(ComparisonFailure) as info:
        fn(*args, **{**CTX, **kw})
    return str(info.value)


def test_exact_codes_message():
    expected = np.arange(12, dtype=np.uint8).reshape(3, 4)
    actual = expected.copy()
    actual[1, 2] = 0xFF
    actual[2, 0] = 0x80
    text = _message(compare_exact, expected, actual)
    lines = text.splitlines()
    assert lines[0] == "§9.7.16.4.1 tcgen05.mma.kind::f16.m128n64: 2 of 12 elements differ"
    assert lines[1] == "  (row 1, col 2): expected 0x06 (6), actual 0xff (255)"
    assert lines[2] == "  (row 2, col 0): expected 0x08 (8), actual 0x80 (128)"
    assert lines[-1] == "  reproduce: python3 -m pytest x"
    assert "max abs error" not in text  # codes: no numeric error
    compare_exact(expected, expected.copy(), **CTX)


def test_exact_floats_compare_bits_and_report_errors():
    expected = np.array([[1.0, -0.0], [np.nan, 2.0]], dtype=ml_dtypes.bfloat16)
    compare_exact(expected, expected.copy(), **CTX)  # NaN equals itself bit for bit
    actual = expected.copy()
    actual[0, 1] = 0.0  # +0.0 vs -0.0: same value, different bits
    actual[1, 1] = 2.5
    text = _message(compare_exact, expected, actual)
    assert "2 of 4 elements differ" in text
    assert "(row 0, col 1): expected 0x8000 (-0.0), actual 0x0000 (0.0)" in text
    assert "(row 1, col 1): expected 0x4000 (2.0), actual 0x4020 (2.5)" in text
    assert "max abs error 0.5, max rel error 0.25" in text
    assert "result dtype expects" in _message(compare_exact, expected, actual.astype(np.float32))


def test_tolerance_comparison():
    expected = np.array([1.0, 2.0, np.inf, np.nan, 100.0], dtype=np.float32)
    tol = np.array([0.1, 0.1, 0.0, 0.0, 1.0])
    compare_tolerance(expected, np.array([1.05, 1.95, np.inf, np.nan, 100.9], np.float32), tol, **CTX)
    text = _message(compare_tolerance, expected, np.array([1.5, 2.0, -np.inf, 0.0, 99.5], np.float32), tol)
    assert "3 of 5 elements differ" in text
    assert "(index 0): expected 0x3f800000 (1.0), actual 0x3fc00000 (1.5)" in text
    assert "(index 2): expected 0x7f800000 (inf), actual 0xff800000 (-inf)" in text
    assert "max abs error 0.5, max rel error 0.5" in text  # over elements finite in both
    assert "result shape expects (5,)" in _message(compare_tolerance, expected, expected[:4], tol[:4])


def test_many_mismatches_are_summarised():
    text = _message(compare_exact, np.zeros((4, 8), np.uint32), np.ones((4, 8), np.uint32))
    assert "32 of 32 elements differ" in text and "... and 24 more" in text
    assert text.count("(row ") == 8


def test_unwritten_outputs():
    expected = np.array([1, 0xDEADBEEF, 3, 4], dtype=np.uint32)
    check_written(np.array([1, 0xDEADBEEF, 3, 9], np.uint32), expected, **CTX)  # poison where expected is fine
    text = _message(check_written, np.array([1, 0xDEADBEEF, 0xDEADBEEF, 4], np.uint32), expected)
    assert "1 of 4 output words were not written (still the poison 0xdeadbeef)" in text
    assert "(index 2): expected 0x00000003 (3), actual 0xdeadbeef" in text


def test_reproduction_command_quotes():
    assert reproduction_command("conformance/test_mma.py::test_case[a b]", ["--level=smoke"]) == \
        "python3 -m pytest 'conformance/test_mma.py::test_case[a b]' --level=smoke"


def test_artifacts(tmp_path):
    case = "tcgen05.mma.cta_group::1.kind::f16/m128"
    directory = save_artifacts(tmp_path, case, ptx=".version 8.8", cubin=b"\x7fELF",
                               inputs=np.arange(4), outputs=np.ones(2, np.uint32))
    assert directory == artifact_dir(tmp_path, case) and directory.parent == tmp_path / "artifacts"
    assert (directory / "kernel.ptx").read_text() == ".version 8.8"
    assert (directory / "kernel.cubin").read_bytes() == b"\x7fELF"
    assert (directory / "case_id.txt").read_text().strip() == case
    with np.load(directory / "case.npz") as data:
        assert data["inputs"].tolist() == [0, 1, 2, 3] and data["outputs"].dtype == np.uint32
    assert artifact_dir(tmp_path, "a/b") != artifact_dir(tmp_path, "a_b")  # sanitised names do not collide
