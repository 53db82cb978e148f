"""Run battery cases on ptxsim.

A case whose PTX has op blocks runs without the blocks the simulator refuses at load (status
``partial``; their output slots keep their initial contents and are reported as not modelled).
A refusal outside any block refuses the whole case; a :class:`ptxsim.SimError` during the run
(a trap the hardware also takes, a fault) fails it.
"""

from __future__ import annotations

import os
import time

import numpy as np

from conformance.battery.opblocks import block_of_line, drop_blocks, op_blocks
from ptxsim import SimDevice, SimError, UnimplementedError, tensormap_tiled


def _load(dev, text: str, blocks: dict):
    """(module, {op: why dropped}); UnimplementedError for refusals outside any block."""
    dropped: dict[int, str] = {}
    while True:
        try:
            return dev.load(drop_blocks(text, blocks, dropped)), dropped
        except UnimplementedError as exc:
            outside, new = [], {}
            for item in exc.items:
                k = block_of_line(blocks, item)
                if k is None or k in dropped:
                    outside.append(item)
                else:
                    new[k] = new[k] + "; " + item if k in new else item
            dropped.update(new)
            if outside:
                raise UnimplementedError(outside) from None


def case_inputs(case: dict, folder: str) -> dict[str, np.ndarray | int]:
    """Each buffer's initial bytes (uint8) or, for a zeroed output buffer, its size."""
    out: dict[str, np.ndarray | int] = {}
    for b in case["buffers"]:
        if "file" in b:
            out[b["name"]] = np.ascontiguousarray(np.load(os.path.join(folder, b["file"]))).view(np.uint8).reshape(-1)
        else:
            out[b["name"]] = int(b["bytes"])
    return out


def kernel_params(case: dict, addrs: dict, encode) -> list:
    """The kernel's arguments in ``.param`` order: buffer addresses, scalars, tensor maps (``encode``
    takes ``tensormap_tiled``'s arguments)."""
    params = []
    for p in case["params"]:
        if "buffer" in p:
            params.append(addrs[p["buffer"]])
        elif "tmap" in p:
            t = p["tmap"]
            params.append(encode(t["dtype"], int(t["rank"]), addrs[t["buffer"]], t["dims"], t["strides"], t["box"],
                                 t["estrides"], t["interleave"], t["swizzle"], t["l2"], t["oob"]))
        else:
            params.append(int(p["value"]))
    return params


def run_case(case: dict, folder: str, hazards: bool = True, sm_count: int = 148) -> tuple[np.ndarray | None, dict]:
    """(the case's saved buffers concatenated, uint8; or None) and its record {status, error,
    dropped_ops {name: why}, seconds}.  An op block in which the simulator itself crashes (a raw
    Python exception: a simulator bug) is dropped like a refused one, its reason saying so."""
    with open(os.path.join(folder, case["ptx"])) as f:
        text = f.read()
    blocks = op_blocks(text) if case.get("ops") else {}
    crashed: dict[int, str] = {}
    while True:
        out, rec, crash = _attempt(case, folder, text, blocks, crashed, hazards, sm_count)
        k = block_of_line(blocks, crash) if crash else None
        if crash is None:
            return out, rec
        if k is None or k in crashed:
            rec.update(status="crash", error=crash)
            return None, rec
        crashed[k] = crash


def _attempt(case, folder, text, blocks, crashed, hazards, sm_count):
    names = case.get("ops", [])
    rec = {"status": "ok", "error": "", "dropped_ops": {}, "seconds": 0.0}
    dev = SimDevice(hazards=hazards, sm_count=sm_count)
    try:
        module, dropped = _load(dev, drop_blocks(text, blocks, crashed), blocks)
    except UnimplementedError as exc:
        rec.update(status="refused", error=str(exc))
        return None, rec, None
    dropped.update(crashed)
    rec["dropped_ops"] = {names[k] if k < len(names) else str(k): why for k, why in sorted(dropped.items())}
    rec["status"] = "partial" if dropped else "ok"
    inputs = case_inputs(case, folder)
    addrs = {}
    for name, x in inputs.items():
        addrs[name] = dev.memory.alloc(max(_size(x), 1))
        dev.memory.write(addrs[name], x if isinstance(x, np.ndarray) else np.zeros(x, np.uint8))
    t0 = time.perf_counter()
    try:
        dev.run(module, case["kernel"], kernel_params(case, addrs, tensormap_tiled), grid=tuple(case["grid"]),
                block=tuple(case["block"]), shared_bytes=int(case.get("shared_bytes", 0)))
    except SimError as exc:
        rec.update(status="error", error=f"{type(exc).__name__}: {exc} {' '.join(getattr(exc, '__notes__', []))}")
        return None, rec, None
    except Exception as exc:  # noqa: BLE001  (not a SimError: the simulator itself crashed)
        notes = " ".join(getattr(exc, "__notes__", []))
        return None, rec, f"simulator CRASH {type(exc).__name__}: {exc} {notes}".strip()
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    out = [np.frombuffer(dev.memory.read(addrs[b["name"]], _size(inputs[b["name"]])), np.uint8)
           for b in case["buffers"] if b["save"]]
    return (np.concatenate(out) if out else np.zeros(0, np.uint8)), rec, None


def _size(x) -> int:
    return x.size if isinstance(x, np.ndarray) else int(x)
