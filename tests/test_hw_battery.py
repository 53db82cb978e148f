"""ptxsim against an H100: the h100-battery (20 PTX kernels in 56 launches, seed 1), every output word.

``tests/data/hardware/h100-battery/seed1`` holds the kernels, inputs and manifest
(``conformance.battery.generate``); ``outputs_h100_seed1.npz`` what an H100 80GB HBM3 (sm_90,
driver 580.159.04, CUDA 13.0) wrote, measured 2026-11-26 (``hw_<case>``: the saved buffers
concatenated; ``meta``: per-case status).  Each case runs once on the simulator; one test per
comparison unit (``conformance.battery.diff``): per op block for the op-block kernels, per case
otherwise.  Where the H100 trapped (CUDA error 715, illegal instruction: the TMA copies whose
innermost box start is not a multiple of 16 bytes), the simulator must raise a SimError naming
that rule.

Known, still-open differences are listed in :data:`KNOWN` (strict xfail, with the reason): when a
fix lands, its entries start passing and strict xfail fails until the entry is deleted.
"""

from __future__ import annotations

import functools
import json
import os

import numpy as np
import pytest

from conformance.battery.diff import CASE_UNIT, CaseDiff, units
from conformance.battery.run_sim import run_case
from ptxsim.engine.machine import SMEM_FILL

DATA = os.path.join(os.path.dirname(__file__), "data", "hardware", "h100-battery")
FOLDER = os.path.join(DATA, "seed1")
HW = os.path.join(DATA, "outputs_h100_seed1.npz")
ILLEGAL_INSTRUCTION = "CUDA error 715"
SHOWN = 6                      # mismatches quoted in a failure message

with open(os.path.join(FOLDER, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
CASES = {c["name"]: c for c in MANIFEST["cases"]}

#: Shared memory the kernel never wrote, stored by a TMA store: its rows lie one 128-byte swizzle
#: span apart, so rows 4-7 of the box lie past the 512-byte image the (dense-layout) kernel copied
#: in.  Those bytes are stale: zeros on the H100, the simulator's 0xA5 fill.  The test compares the
#: other rows and checks that the stale ones hold the fill (the generator now writes the whole span).
STALE_SHARED = {"tma_store_bf16_sw128_32x8_narrow64": "rows 4-7 come from shared memory the kernel never wrote"}


#: The recorded device's SM count (%nsmid): NVIDIA H100 80GB HBM3 (SXM), 132 SMs; the simulator is
#: told the machine it reproduces (``SimDevice(sm_count=...)``).
H100_SMS = 132


def _table(*groups: tuple[str, tuple[str, ...]]) -> dict[str, str]:
    return {uid: reason for reason, uids in groups for uid in uids}


#: "case/op" -> reason: the differences still open (the branches alu and alu64 fix most of them);
#: delete an entry when its test starts passing (strict xfail fails it until then).
KNOWN: dict[str, str] = _table()


def _unit_id(case: str, unit: str) -> str:
    return f"{case}/{unit}" if unit != CASE_UNIT else case


@functools.lru_cache(maxsize=None)
def _hardware() -> tuple[dict, dict]:
    with np.load(HW) as npz:
        meta = json.loads(str(npz["meta"]))
        outputs = {k[3:]: npz[k] for k in npz.files if k.startswith("hw_")}
    return meta, outputs


@functools.lru_cache(maxsize=None)
def _simulated(case: str):
    return run_case(CASES[case], FOLDER, sm_count=H100_SMS)


def _params():
    out = []
    for name, case in CASES.items():
        for unit in units(case):
            uid = _unit_id(name, unit)
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN[uid])] if uid in KNOWN else []
            out.append(pytest.param(name, unit, id=uid, marks=marks))
    return out


def _trap_expected(case: str, rec: dict) -> None:
    assert rec["status"] == "error", (f"{case}: the H100 trapped (illegal instruction), so the simulator expects a "
                                      f"SimError, but the case ran ({rec['status']})")
    assert "innermost box start" in rec["error"] and "multiple of 16 bytes" in rec["error"], \
        f"{case}: the simulator's error expects to name the 16-byte innermost-start rule, but got {rec['error']}"
    assert "line " in rec["error"], f"{case}: the error expects to name the PTX line, but got {rec['error']}"


def _stale(case: str, mismatches: list) -> list:
    """The mismatches of ``case`` not explained by stale shared memory (see STALE_SHARED)."""
    if case not in STALE_SHARED:
        return mismatches
    fill = "0x" + f"{SMEM_FILL:02x}" * 2
    kept = [m for m in mismatches if not (m.where.startswith("tensor") and m.b == fill)]
    assert len(kept) < len(mismatches), f"{case}: expects stale shared-memory elements, but found none"
    return kept


@pytest.mark.parametrize(("case", "unit"), _params())
def test_h100_battery(case: str, unit: str) -> None:
    meta, hw = _hardware()
    status = meta["cases"][case]
    out, rec = _simulated(case)
    if status["status"] != "ok":
        assert ILLEGAL_INSTRUCTION in status["error"], status
        _trap_expected(case, rec)
        return
    assert out is not None, f"{case}: the H100 ran it, the simulator did not: {rec['status']}: {rec['error'][:600]}"
    if unit != CASE_UNIT and unit in rec["dropped_ops"]:
        pytest.fail(f"{case} op {unit!r}: the H100 ran it, the simulator did not: {rec['dropped_ops'][unit][:400]}")
    diffs = _stale(case, CaseDiff(CASES[case], FOLDER, hw[case], out).unit(unit))
    if diffs:
        shown = "\n  ".join(m.line("H100", "ptxsim") for m in diffs[:SHOWN])
        pytest.fail(f"{_unit_id(case, unit)}: {len(diffs)} words differ from the H100's, first {min(SHOWN, len(diffs))}:"
                    f"\n  {shown}")


def test_every_tma_start_rule_matches_the_h100() -> None:
    """The 16-byte innermost-start rule explains every TMA case: trapped iff misaligned."""
    meta, _ = _hardware()
    for name, case in CASES.items():
        maps = [p["tmap"] for p in case["params"] if "tmap" in p]
        if not maps:
            continue
        elem = {"uint8": 1, "uint16": 2, "float16": 2, "bfloat16": 2}.get(maps[0]["dtype"], 4)
        start = [p["value"] for p in case["params"] if p.get("ptype") == "s32"][0] * elem
        trapped = meta["cases"][name]["status"] != "ok"
        assert trapped == (start % 16 != 0), f"{name}: innermost start {start} bytes, H100 trapped: {trapped}"
