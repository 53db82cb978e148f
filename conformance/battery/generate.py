"""Generate the instruction battery: PTX kernels, their inputs (.npy) and ``manifest.json``.

Every kernel is deterministic given the seed; ``generate(seed, folder)`` makes the same files as
the steering session's ``gen.py`` that produced the recorded H100 outputs (tests/data/hardware).
Sections, in the order they draw from the seed's random stream: TMA, bulk copies and stores,
mbarrier sequences, ALU op blocks (alu64, f64, cvt_int, misc, ldst), warp collectives, matrix,
cp.async, atomics, control flow, then the 32-bit ALU battery (``alu32``, the h100-alu sequences).
"""

from __future__ import annotations

import json
import os

from conformance.battery.gen_alu import add_alu
from conformance.battery.gen_alu32 import add_alu32
from conformance.battery.gen_atomics import add_atomics, add_ctrl
from conformance.battery.gen_bulk import add_bulk, add_mbarrier
from conformance.battery.gen_tma import add_tma
from conformance.battery.gen_warp import add_cp_async, add_matrix, add_warp
from conformance.battery.spec import Battery

#: in the order they draw from the seed's stream (new sections go last: earlier cases stay as recorded)
SECTIONS = (add_tma, add_bulk, add_mbarrier, add_alu, add_warp, add_matrix, add_cp_async, add_atomics, add_ctrl,
            add_alu32)
MANIFEST = "manifest.json"


def generate(seed: int, folder: str) -> dict:
    """Write the battery of ``seed`` into ``folder`` (created); returns the manifest."""
    os.makedirs(folder, exist_ok=True)
    bat = Battery(seed, folder)
    for add in SECTIONS:
        add(bat)
    manifest = {"version": 1, "seed": seed, "cases": bat.cases}
    with open(os.path.join(folder, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def load_manifest(folder: str) -> dict:
    with open(os.path.join(folder, MANIFEST)) as f:
        return json.load(f)
