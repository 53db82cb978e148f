"""Comparing device results with the reference, and saving what a failure needs to be reproduced.

* :func:`compare_exact`: arrays of codes (bit patterns, packed words); every element must match.
* :func:`compare_tolerance`: values with a per-element tolerance ``|actual - expected| <= tol``
  (NaN matches NaN, infinities must match exactly).
* :func:`check_written`: output words still equal to the poison pattern were never written.

A mismatch raises :class:`ComparisonFailure` (an ``AssertionError``, so pytest reports ``Fail``)
whose message gives the spec section, case ID, number of mismatching elements, the first few
``(row, col)`` with expected and actual bits and values, max abs/rel error, and a one-line
reproduction command.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path
from typing import Sequence

import numpy as np

from conformance.harness.device import POISON

SHOW = 8


class ComparisonFailure(AssertionError):
    """Results differ from the reference."""


def reproduction_command(nodeid: str, options: Sequence[str] = ()) -> str:
    """``python3 -m pytest '<nodeid>' <options>``: one line that reruns the case."""
    return " ".join(["python3", "-m", "pytest", shlex.quote(nodeid), *(shlex.quote(o) for o in options)])


def _bits(value) -> str:
    """Hex bit pattern of one element, at the width of its dtype (bfloat16 -> 4 hex digits)."""
    arr = np.asarray(value).reshape(1)
    size = arr.dtype.itemsize
    try:
        raw = int(arr.view(f"u{size}")[0])
    except (TypeError, ValueError):
        return "?"
    return f"0x{raw:0{size * 2}x}"


def _value(value) -> str:
    arr = np.asarray(value)
    if arr.dtype.kind in "iub":
        return str(int(arr))
    try:
        return repr(float(arr.astype(np.float64)))
    except (TypeError, ValueError):
        return "?"


def _position(index: tuple[int, ...]) -> str:
    if len(index) == 2:
        return f"(row {index[0]}, col {index[1]})"
    return f"(index {', '.join(str(i) for i in index)})"


def _errors(expected: np.ndarray, actual: np.ndarray) -> tuple[float, float] | None:
    """Max abs and rel error over the elements finite in both (``None`` when there are none)."""
    try:
        e = expected.astype(np.float64)
        a = actual.astype(np.float64)
    except (TypeError, ValueError):
        return None
    ok = np.isfinite(e) & np.isfinite(a)
    if not ok.any():
        return None
    diff = np.abs(a[ok] - e[ok])
    rel = diff / np.maximum(np.abs(e[ok]), np.finfo(np.float64).tiny)
    return float(diff.max()), float(rel.max())


def mismatch_message(*, section: str, case_id: str, expected: np.ndarray, actual: np.ndarray,
                     mismatch: np.ndarray, what: str, repro: str, numeric: bool) -> str:
    count = int(mismatch.sum())
    lines = [f"§{section} {case_id}: {count} of {mismatch.size} {what} differ"]
    for index in list(zip(*np.nonzero(mismatch), strict=True))[:SHOW]:
        index = tuple(int(i) for i in index)
        e, a = expected[index], actual[index]
        lines.append(f"  {_position(index)}: expected {_bits(e)} ({_value(e)}), actual {_bits(a)} ({_value(a)})")
    if count > SHOW:
        lines.append(f"  ... and {count - SHOW} more")
    if numeric:
        errors = _errors(expected, actual)
        if errors is not None:
            lines.append(f"  max abs error {errors[0]:.6g}, max rel error {errors[1]:.6g}")
    lines.append(f"  reproduce: {repro}")
    return "\n".join(lines)


def _same_shape(expected: np.ndarray, actual: np.ndarray, section: str, case_id: str) -> None:
    if expected.shape != actual.shape:
        raise ComparisonFailure(f"§{section} {case_id}: result shape expects {expected.shape}, but got {actual.shape}")


def compare_exact(expected, actual, *, section: str, case_id: str, repro: str, what: str = "elements") -> None:
    """Every element of ``actual`` equals ``expected`` (codes compared bit for bit)."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    _same_shape(expected, actual, section, case_id)
    numeric = expected.dtype.kind not in "iub"
    if numeric:  # floats (numpy or ml_dtypes) compare by their bits: -0.0 != +0.0, NaN payloads count
        if actual.dtype != expected.dtype:
            raise ComparisonFailure(f"§{section} {case_id}: result dtype expects {expected.dtype}, but got {actual.dtype}")
        unsigned = f"u{expected.dtype.itemsize}"
        mismatch = expected.view(unsigned) != actual.view(unsigned)
    else:
        mismatch = np.asarray(expected != actual, dtype=bool)
    if mismatch.any():
        raise ComparisonFailure(mismatch_message(section=section, case_id=case_id, expected=expected, actual=actual,
                                                 mismatch=mismatch, what=what, repro=repro, numeric=numeric))


def compare_tolerance(expected, actual, tol, *, section: str, case_id: str, repro: str,
                      what: str = "elements") -> None:
    """``|actual - expected| <= tol`` element-wise; NaN matches NaN; infinities exactly."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    _same_shape(expected, actual, section, case_id)
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    t = np.broadcast_to(np.asarray(tol, dtype=np.float64), e.shape)
    both_nan = np.isnan(e) & np.isnan(a)
    inf = np.isinf(e) | np.isinf(a)
    with np.errstate(invalid="ignore"):
        close = np.abs(a - e) <= t
    ok = both_nan | np.where(inf, e == a, close)
    mismatch = ~ok
    if mismatch.any():
        raise ComparisonFailure(mismatch_message(section=section, case_id=case_id, expected=expected, actual=actual,
                                                 mismatch=mismatch, what=what, repro=repro, numeric=True))


def check_written(output_words, expected_words, *, section: str, case_id: str, repro: str) -> None:
    """Fail if any output word still holds the poison where the expected word is not the poison."""
    out = np.asarray(output_words, dtype=np.uint32)
    exp = np.asarray(expected_words, dtype=np.uint32)
    _same_shape(exp, out, section, case_id)
    unwritten = (out == POISON) & (exp != POISON)
    if unwritten.any():
        message = mismatch_message(section=section, case_id=case_id, expected=exp, actual=out, mismatch=unwritten,
                                   what="output words", repro=repro, numeric=False)
        raise ComparisonFailure(message.replace(" differ", " were not written (still the poison 0xdeadbeef)", 1))


def artifact_dir(results_dir: Path, case_id: str) -> Path:
    """``<results>/artifacts/<case id, sanitised>-<hash>``: one directory per case."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", case_id)[:120].strip("._") or "case"
    digest = hashlib.sha1(case_id.encode("utf-8")).hexdigest()[:10]
    return Path(results_dir) / "artifacts" / f"{safe}-{digest}"


def save_artifacts(results_dir: Path, case_id: str, *, ptx: str | None = None, cubin: bytes | None = None,
                   **arrays: np.ndarray) -> Path:
    """Save the PTX, cubin and arrays (inputs, expected, outputs as ``case.npz``) of a case."""
    directory = artifact_dir(results_dir, case_id)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "case_id.txt").write_text(case_id + "\n", encoding="utf-8")
    if ptx is not None:
        (directory / "kernel.ptx").write_text(ptx, encoding="utf-8")
    if cubin is not None:
        (directory / "kernel.cubin").write_bytes(bytes(cubin))
    if arrays:
        np.savez_compressed(directory / "case.npz", **{k: np.asarray(v) for k, v in arrays.items()})
    return directory
