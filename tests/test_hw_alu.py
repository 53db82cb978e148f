"""The h100-alu battery: what an H100 computed, word for word, against ptxsim.

``tests/data/hardware/h100-alu`` (copied unchanged from the shared hardware folder; its README is
``docs/sim.md`` "Hardware behaviours adopted" and the shared ``hardware/README.md``) holds one
kernel, ``diff.ptx``: 8,192 threads each load three 32-bit words a, b, c and run 179 instruction
sequences, sequence k storing its result at ``out[thread * 179 + k]``; ``outputs_h100.npz`` is what
an H100 (sm_90, driver 580.159.04) wrote.  The kernel runs once per session on the simulator with
the recorded inputs; every sequence is one test comparing all 8,192 of its output words.

Expected values come from the hardware, never from the simulator.  Sequences with a known, still
open difference are listed in :data:`KNOWN` (strict xfail: they fail the day they start to agree).
Approximate instructions (:data:`APPROXIMATE`) are checked against the PTX ISA's error bound
instead of bit for bit: both the H100's and the simulator's results must lie within it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from ptxsim import SimDevice
from ptxsim.errors import UnimplementedError

pytestmark = pytest.mark.reference

DATA = Path(__file__).parent / "data" / "hardware" / "h100-alu"
NAMES: list[str] = json.loads((DATA / "ops.json").read_text())
BLOCK = re.compile(r"^\s*\{ .* \}\s*$")

#: sequences with a known difference, and why (strict xfail: remove the row when it agrees).
#: None today: every sequence the H100 ran is modelled and agrees (approximate ones within the bound).
KNOWN: dict[str, str] = {}


@dataclass(frozen=True)
class Bound:
    """An approximate instruction's PTX ISA error bound: ``fn`` the exact function (float64),
    ``dtype``/``lanes`` the result format, ``rel`` the maximum relative error for results in the
    normal range of ``dtype``; outside it (NaN, infinities, overflow, subnormal and zero results)
    the results must agree bit for bit."""

    fn: Callable
    dtype: type
    lanes: int
    rel: float
    source: str


#: approximate sequences: checked against the bound, not bit for bit (the hardware's bits are
#: not derivable from public information; docs/sim.md "Hardware behaviours adopted").
APPROXIMATE: dict[str, Bound] = {
    "ex2.approx.f16x2": Bound(np.exp2, np.float16, 2, 2.0 ** -9.9,
                              "PTX ISA ex2 (half precision): maximum relative error 2^-9.9 for .f16/.f16x2"),
}


@dataclass
class Battery:
    inputs: dict[str, np.ndarray]      # "a", "b", "c": uint32 (threads,)
    hw: np.ndarray                     # uint32 (threads, sequences)
    sim: np.ndarray                    # uint32 (threads, sequences)
    blocks: list[str]                  # the PTX text of each sequence
    refused: dict[int, str]            # sequence -> the simulator's refusal


def _sequence_lines(lines: list[str]) -> list[int]:
    """0-based line index of each sequence's ``{ ... }`` block, in ops.json order."""
    found = [i for i, line in enumerate(lines) if BLOCK.match(line)]
    assert len(found) == len(NAMES), f"diff.ptx expects {len(NAMES)} sequence blocks, but has {len(found)}"
    return found


def run_battery() -> Battery:
    """Load and run diff.ptx once.  A sequence the simulator refuses at load is blanked (its
    words stay 0) and recorded with the refusal, so the others still run."""
    lines = (DATA / "diff.ptx").read_text().split("\n")
    where = _sequence_lines(lines)
    blocks = [lines[i].strip() for i in where]
    refused: dict[int, str] = {}
    while True:
        dev = SimDevice()
        try:
            module = dev.load("\n".join(lines))
            break
        except UnimplementedError as exc:
            for item in exc.items:
                line = int(re.search(r"line (\d+)", item).group(1)) - 1
                assert line in where, f"the refusal {item!r} is outside every sequence block"
                refused[where.index(line)] = item
                lines[line] = "  // refused by the simulator"
    inputs = dict(np.load(DATA / "inputs.npz"))
    hw = np.load(DATA / "outputs_h100.npz")["out"]
    n = len(inputs["a"])
    bufs = []
    for key in "abc":
        ptr = dev.memory.alloc(4 * n)
        dev.memory.write(ptr, inputs[key].astype(np.uint32).tobytes())
        bufs.append(ptr)
    out = dev.memory.alloc(4 * n * len(NAMES))
    dev.run(module, "diff", [*bufs, out, np.uint32(n)], (n // 128, 1, 1), (128, 1, 1))
    sim = dev.memory.read_array(out, 4 * n * len(NAMES)).view(np.uint32).reshape(n, len(NAMES))
    return Battery(inputs, hw, sim, blocks, refused)


@pytest.fixture(scope="module")
def battery() -> Battery:
    return run_battery()


def _params():
    for k, name in enumerate(NAMES):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[name])] if name in KNOWN else []
        yield pytest.param(k, id=f"{k:03d}-{name}", marks=marks)


def _describe(b: Battery, k: int, threads: np.ndarray, what: str, limit: int = 6) -> str:
    name = NAMES[k]
    rows = [f"sequence {k} `{name}`: expects the H100's words, but {len(threads)} of {len(b.hw)} threads "
            f"{what}", f"  PTX: {b.blocks[k]}"]
    for t in threads[:limit]:
        a, bb, c = (int(b.inputs[x][t]) for x in "abc")
        rows.append(f"  thread {t}: a=0x{a:08x} b=0x{bb:08x} c=0x{c:08x}  "
                    f"H100=0x{int(b.hw[t, k]):08x}  ptxsim=0x{int(b.sim[t, k]):08x}")
    if len(threads) > limit:
        rows.append(f"  ... and {len(threads) - limit} more")
    return "\n".join(rows)


def _lanes(words: np.ndarray, bound: Bound) -> np.ndarray:
    """(threads, lanes) values of the packed result words."""
    width = 32 // bound.lanes
    udt = {16: np.uint16, 32: np.uint32}[width]
    return np.stack([((words >> np.uint32(width * i)) & np.uint32((1 << width) - 1)).astype(udt)
                     for i in range(bound.lanes)], axis=1).view(bound.dtype)


def outside_bound(b: Battery, k: int, bound: Bound) -> np.ndarray:
    """Threads where the H100's or the simulator's result breaks ``bound``: beyond the relative
    error for exact results in the normal range, else not bit-identical to each other."""
    x = _lanes(b.inputs["a"], bound).astype(np.float64)
    with np.errstate(all="ignore"):
        exact = bound.fn(x)
    info = np.finfo(bound.dtype)
    normal = np.isfinite(exact) & (np.abs(exact) >= float(info.tiny)) & (np.abs(exact) <= float(info.max))
    bad = np.zeros(x.shape, dtype=bool)
    for words in (b.hw[:, k], b.sim[:, k]):
        got = _lanes(words, bound).astype(np.float64)
        with np.errstate(all="ignore"):
            err = np.abs(got - exact) / np.abs(exact)
        bad |= normal & ~(err <= bound.rel)
    same_bits = _lanes(b.hw[:, k], bound).view(np.uint16 if bound.lanes == 2 else np.uint32) == \
        _lanes(b.sim[:, k], bound).view(np.uint16 if bound.lanes == 2 else np.uint32)
    bad |= ~normal & ~same_bits
    return np.nonzero(bad.any(axis=1))[0]


@pytest.mark.parametrize("k", _params())
def test_sequence_matches_h100(battery, k):
    """Every output word of sequence k equals the H100's (approximate sequences: within the ISA's
    error bound, both the H100's and the simulator's, and bit-identical outside the normal range)."""
    name = NAMES[k]
    if k in battery.refused:
        pytest.fail(f"sequence {k} `{name}` is refused by the simulator at load: {battery.refused[k]}")
    if name in APPROXIMATE:
        bound = APPROXIMATE[name]
        bad = outside_bound(battery, k, bound)
        assert len(bad) == 0, _describe(battery, k, bad, f"break the bound ({bound.source})")
        return
    bad = np.nonzero(battery.sim[:, k] != battery.hw[:, k])[0]
    assert len(bad) == 0, _describe(battery, k, bad, "differ")


def test_battery_is_complete():
    """The data and the sequence table agree: 179 names, 8,192 threads, inputs for each, and every
    table row names a sequence of the battery."""
    hw = np.load(DATA / "outputs_h100.npz")["out"]
    inputs = np.load(DATA / "inputs.npz")
    assert hw.shape == (8192, len(NAMES)) == (8192, 179)
    assert all(inputs[x].shape == (8192,) for x in "abc")
    assert set(KNOWN) <= set(NAMES) and set(APPROXIMATE) <= set(NAMES)
