"""Result folders of the battery, and their comparison.

A result folder is the generated battery (``manifest.json``, the PTX, the inputs) plus
``outputs.npz``: ``out_<case>`` (uint8, the case's saved buffers concatenated in manifest order)
and ``meta`` (JSON: device, seed, and per case its status ``ok``/``partial``/``refused``/
``error``/``crash``, error text and the op blocks the device did not run).  The recorded H100
files (``hw_<case>`` keys, tests/data/hardware) read the same way.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from conformance.battery.diff import CaseDiff, units
from conformance.battery.generate import MANIFEST, load_manifest

OUTPUTS = "outputs.npz"
PREFIXES = ("out_", "hw_")


def fingerprint(folder: str) -> str:
    """SHA-256 of the folder's manifest.json: which battery (kernels, inputs, layout) outputs belong to."""
    with open(os.path.join(folder, MANIFEST), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def save(folder: str, meta: dict, outputs: dict[str, np.ndarray]) -> str:
    """Write ``folder/outputs.npz`` (through a temporary file renamed into place), its meta recording
    the battery's :func:`fingerprint`; its path."""
    meta = dict(meta, manifest_sha256=fingerprint(folder))
    path = os.path.join(folder, OUTPUTS)
    tmp = path + ".tmp.npz"
    arrays = {f"out_{name}": np.asarray(v, np.uint8) for name, v in outputs.items()}
    np.savez_compressed(tmp, meta=np.array(json.dumps(meta)), **arrays)
    os.replace(tmp, path)
    return path


class Results:
    """One run of a battery: its manifest folder, meta and per-case outputs."""

    def __init__(self, folder: str, npz_path: str, label: str) -> None:
        self.folder, self.label = folder, label
        self.manifest = load_manifest(folder)
        with np.load(npz_path) as npz:
            self.meta = json.loads(str(npz["meta"])) if "meta" in npz.files else {"cases": {}}
            self.outputs = {k.split("_", 1)[1]: npz[k] for k in npz.files if k.startswith(PREFIXES)}

    def status(self, case: str) -> dict:
        rec = self.meta.get("cases", {}).get(case)
        if rec is None:
            return {"status": "not run", "error": ""}
        return rec


def open_results(path: str, manifest_folder: str | None = None, label: str = "") -> Results:
    """A result folder (``manifest.json`` + ``outputs.npz``), or a ``.npz`` file whose battery is
    ``manifest_folder``; ValueError saying what is missing."""
    if os.path.isdir(path):
        for need in (MANIFEST, OUTPUTS):
            if not os.path.exists(os.path.join(path, need)):
                raise ValueError(f"expects a battery result folder holding {MANIFEST} and {OUTPUTS}, but {path} has "
                                 f"no {need}")
        return Results(path, os.path.join(path, OUTPUTS), label or path)
    if path.endswith(".npz") and os.path.isfile(path):
        if manifest_folder is None:
            raise ValueError(f"{path} is a bare .npz: the other argument expects a result folder (its manifest)")
        return Results(manifest_folder, path, label or path)
    raise ValueError(f"expects a battery result folder or a .npz file, but got {path!r}")


def same_battery(a: Results, b: Results) -> str:
    """"" when both describe the same kernels and inputs, else why not."""
    if a.folder == b.folder:
        recorded, sha = b.meta.get("seed"), b.meta.get("manifest_sha256")
        if recorded is not None and recorded != a.manifest.get("seed"):
            return f"expects outputs of seed {a.manifest.get('seed')}, but got outputs of seed {recorded}"
        if sha is not None and sha != fingerprint(a.folder):
            return "expects outputs of DIR_A's battery, but its manifest_sha256 names another manifest.json"
        return ""
    ca, cb = a.manifest["cases"], b.manifest["cases"]
    if a.manifest.get("seed") != b.manifest.get("seed") or [c["name"] for c in ca] != [c["name"] for c in cb]:
        return (f"expects the same battery, but got seed {a.manifest.get('seed')} ({len(ca)} cases) and seed "
                f"{b.manifest.get('seed')} ({len(cb)} cases)")
    for x, y in zip(ca, cb, strict=True):
        if x["params"] != y["params"] or x["buffers"] != y["buffers"] or x["sections"] != y["sections"]:
            return f"expects the same battery, but case {x['name']} differs (another generator version?)"
    return ""


def compare(a: Results, b: Results, limit: int | None = None) -> tuple[list[str], int]:
    """(report lines, number of differing or one-sided units).  Every differing word is listed
    (``limit``: at most that many per unit)."""
    lines: list[str] = []
    summary: list[str] = []
    idle: list[str] = []            # cases neither side ran (both refused, or a partial run)
    bad = 0
    for case in a.manifest["cases"]:
        name = case["name"]
        sa, sb = a.status(name), b.status(name)
        oa, ob = a.outputs.get(name), b.outputs.get(name)
        if oa is None or ob is None:
            if oa is not None or ob is not None or sa["status"] != sb["status"]:
                bad += 1
                summary.append(f"{name}: {a.label} {_state(sa, oa)} | {b.label} {_state(sb, ob)}")
            else:
                idle.append(name)
            continue
        diff = CaseDiff(case, a.folder, oa, ob)
        da, db = set(sa.get("dropped_ops", {})), set(sb.get("dropped_ops", {}))
        n_units, n_words, skipped, neither = 0, 0, [], []
        for unit in units(case):
            if unit in da and unit in db:
                neither.append(unit)
                continue
            if unit in da or unit in db:
                skipped.append(unit)
                continue
            found = diff.unit(unit)
            if not found:
                continue
            n_units += 1
            n_words += len(found)
            lines.append(f"{name}{'/' + unit if unit else ''}: {len(found)} words differ")
            shown = found if limit is None else found[:limit]
            lines.extend("  " + m.line(a.label, b.label) for m in shown)
            if len(shown) < len(found):
                lines.append(f"  ... {len(found) - len(shown)} more")
        bad += n_units + len(skipped)
        verdict = "identical" if n_units == 0 else f"{n_words} words differ in {n_units} unit(s)"
        if skipped:
            verdict += f"; {len(skipped)} op block(s) run on one side only: {', '.join(skipped)}"
        if neither:
            verdict += f"; {len(neither)} op block(s) run on neither side"
        summary.append(f"{name}: {verdict}")
    if idle:
        summary.append(f"{len(idle)} case(s) run on neither side ({a.status(idle[0])['status']}, ...)")
    return summary + ([""] if lines else []) + lines, bad


def _state(rec: dict, out) -> str:
    text = rec["status"] + ("" if out is None else " (outputs)")
    return text + (f": {rec['error'][:200]}" if rec.get("error") else "")
