"""Word-by-word differences between two runs of one battery case.

A case's output bytes (its saved buffers, concatenated) are cut into the manifest's ``sections``.
The unit of comparison is an *op* for the op-block kernels (every op-block section's slice of op
``k``: the ``per_thread_ops`` column, the ``per_op_regions`` / ``per_op_words`` row) and the case's
other sections together (unit ``""``); a case without op blocks is one unit.  Each difference
names where (section, thread/op/word, shared-memory line and chunk, tensor row and element), the
thread's inputs for per-thread ops, and both values.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np

DTYPES = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64}
OP_KINDS = ("per_thread_ops", "per_op_regions", "per_op_words")
CASE_UNIT = ""


@dataclass(frozen=True)
class Mismatch:
    where: str        # "ops thread 17 word 0", "smem byte 1232 (128-byte line 9, chunk 5)", ...
    inputs: str       # the thread's inputs ("a=0x.. b=0x.. c=0x..") or ""
    a: str
    b: str

    def line(self, name_a: str = "A", name_b: str = "B") -> str:
        inputs = f" | inputs {self.inputs}" if self.inputs else ""
        return f"{self.where}{inputs} | {name_a} {self.a} | {name_b} {self.b}"


def units(case: dict) -> list[str]:
    """The comparison units of a case: its op names (and ``""`` for its other sections, if any)."""
    ops = list(case.get("ops", []))
    if not ops:
        return [CASE_UNIT]
    rest = [s for s in case["sections"] if s["kind"] not in OP_KINDS]
    return ops + ([CASE_UNIT] if rest else [])


def _hex(v, name: str) -> str:
    v = int(v)
    if "f64" in name:
        return f"0x{v:x} ({struct.unpack('<d', struct.pack('<Q', v))[0]:.17g})"
    return f"0x{v:x}"


class CaseDiff:
    """The differences of ``out_a`` and ``out_b`` (uint8 arrays) of ``case`` (inputs from ``folder``)."""

    def __init__(self, case: dict, folder: str, out_a: np.ndarray, out_b: np.ndarray) -> None:
        self.case, self.folder = case, folder
        self.a, self.b = np.asarray(out_a, np.uint8), np.asarray(out_b, np.uint8)
        if self.a.size != self.b.size:
            raise ValueError(f"{case['name']}: outputs expect the same size, but got {self.a.size} and {self.b.size} "
                             "bytes")
        self._inputs: dict[str, list[np.ndarray]] = {}

    def unit(self, name: str) -> list[Mismatch]:
        """Every differing word of unit ``name`` (an op name or ``""``)."""
        ops = self.case.get("ops", [])
        out: list[Mismatch] = []
        for sec in self.case["sections"]:
            per_op = sec["kind"] in OP_KINDS
            if name == CASE_UNIT and ops and per_op:
                continue
            if name != CASE_UNIT and not per_op:
                continue
            k = ops.index(name) if name != CASE_UNIT else None
            out.extend(self._section(sec, k))
        return out

    def _view(self, sec: dict, data: np.ndarray) -> np.ndarray:
        raw = data[sec["offset"]:sec["offset"] + sec["bytes"]]
        v = raw.view(DTYPES[sec["dtype"]])
        return v.reshape(sec["shape"]) if sec.get("shape") else v

    def _section(self, sec: dict, k: int | None) -> list[Mismatch]:
        a, b = self._view(sec, self.a), self._view(sec, self.b)
        kind = sec["kind"]
        if kind == "per_thread_ops":
            return self._per_thread(sec, a[:, k], b[:, k], self.case["ops"][k])
        if kind in ("per_op_regions", "per_op_words"):
            return [Mismatch(f"{sec['name']} word {int(w)}", "", _hex(a[k, w], ""), _hex(b[k, w], ""))
                    for w in np.flatnonzero(a[k] != b[k])]
        if kind == "smem_image":
            return [Mismatch(f"{sec['name']} byte {int(i)} (128-byte line {i // 128}, chunk {i % 128 // 16})", "",
                             f"0x{int(a[i]):02x}", f"0x{int(b[i]):02x}") for i in np.flatnonzero(a != b)]
        if kind == "tensor2d":
            return self._tensor(sec, a, b)
        labels = sec.get("labels") or []
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        out = []
        for i in np.flatnonzero(flat_a != flat_b):
            at = np.unravel_index(i, sec["shape"]) if sec.get("shape") else int(i)
            label = f" ({labels[i]})" if i < len(labels) else ""
            out.append(Mismatch(f"{sec['name']} word {at}{label}", "", _hex(flat_a[i], ""), _hex(flat_b[i], "")))
        return out

    def _per_thread(self, sec: dict, a: np.ndarray, b: np.ndarray, op: str) -> list[Mismatch]:
        ins = self._thread_inputs(sec)
        name = sec["name"]
        out = []
        for t, w in zip(*np.nonzero(a != b), strict=True):
            inputs = " ".join(f"{col}=0x{int(x[t]):x}" for col, x in zip("abc", ins, strict=False))
            out.append(Mismatch(f"{name} thread {int(t)} word {int(w)}", inputs, _hex(a[t, w], op), _hex(b[t, w], op)))
        return out

    def _thread_inputs(self, sec: dict) -> list[np.ndarray]:
        files = tuple(sec.get("inputs", []))
        key = ",".join(files)
        if key not in self._inputs:
            self._inputs[key] = [np.load(os.path.join(self.folder, f)).reshape(-1) for f in files]
        return self._inputs[key]

    def _tensor(self, sec: dict, a: np.ndarray, b: np.ndarray) -> list[Mismatch]:
        pitch, e = sec["pitch"], sec["elem"]
        out = []
        for el in np.unique(np.flatnonzero(a != b) // e):
            off = int(el) * e
            row, col = off // pitch, off % pitch // e
            out.append(Mismatch(f"{sec['name']} row {row} element {col}", "",
                                "0x" + a[off:off + e].tobytes()[::-1].hex(), "0x" + b[off:off + e].tobytes()[::-1].hex()))
        return out
