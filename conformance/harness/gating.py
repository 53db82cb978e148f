"""Gating: a case runs only on a device of one of its targets; otherwise it is ``NotSupported``.

Target spellings and what they run on (PTX ISA "Target ISA notes"; the tcgen05 text says
"sm_100f or higher in the same family"):

* ``sm_XYa`` (architecture-specific): exactly compute capability X.Y;
* ``sm_XYf`` (family-specific): major X, minor >= Y (sm_100f: sm_100 and sm_103);
* ``sm_XY`` (baseline): compute capability X.Y or newer (e.g. warp-level ``mma.sp`` on sm_80+).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import pytest

_TARGET = re.compile(r"sm_(\d+)(\d)([af]?)")


@dataclass(frozen=True)
class Target:
    major: int
    minor: int
    suffix: str  # "", "a" or "f"

    @classmethod
    def parse(cls, text: str) -> Target:
        match = _TARGET.fullmatch(text)
        if match is None:
            raise ValueError(f"target expects sm_<major><minor>[a|f] (e.g. sm_100a), but got {text!r}")
        return cls(int(match.group(1)), int(match.group(2)), match.group(3))

    def runs_on(self, cc: tuple[int, int]) -> bool:
        if self.suffix == "a":
            return tuple(cc) == (self.major, self.minor)
        if self.suffix == "f":
            return cc[0] == self.major and cc[1] >= self.minor
        return tuple(cc) >= (self.major, self.minor)


def device_target(cc: tuple[int, int]) -> str:
    """``(9, 0)`` -> ``"sm_90"``."""
    return f"sm_{cc[0]}{cc[1]}"


def sass_arch(target: str, cc: tuple[int, int]) -> str:
    """The ``ptxas -arch`` that turns PTX of ``target`` into SASS for a device of compute capability ``cc``.

    SASS runs only on its own major version (an ``sm_80`` cubin does not load on an sm_90 GPU:
    "no kernel image is available for execution on the device", H100, 2026-11-26), so the device's
    own architecture is used, with the suffix the PTX needs: ``sm_XYa`` for an arch-specific
    target, ``sm_XYf`` for a family target, plain ``sm_XY`` for a baseline one.  ptxas 13.0
    accepts exactly these pairs (docs/gpu.md, "Which -arch for which .target")::

        .target sm_80  ->  -arch sm_80 ... sm_121a   (any architecture at or above the target)
        .target sm_100f -> -arch sm_100/100a/100f/103/103a/103f   (the family)
        .target sm_100a -> -arch sm_100a only

    Raises ``ValueError`` when the target does not run on ``cc`` (gate with :func:`supported_target`).
    """
    parsed = Target.parse(target)
    if not parsed.runs_on(cc):
        raise ValueError(f"target {target} expects a device it runs on, but got compute capability {cc[0]}.{cc[1]}")
    return device_target(cc) + parsed.suffix


def supported_target(targets: Sequence[str], cc: tuple[int, int] | None) -> str | None:
    """The first of ``targets`` that runs on compute capability ``cc`` (``None`` if none does)."""
    if cc is None:
        return None
    for text in targets:
        if Target.parse(text).runs_on(cc):
            return text
    return None


def not_supported_reason(targets: Sequence[str], cc: tuple[int, int] | None) -> str:
    needs = targets[0] if len(targets) == 1 else "one of " + ", ".join(targets)
    if cc is None:
        return f"NotSupported: needs {needs}, found none"
    return f"NotSupported: needs {needs}; device is {device_target(cc)}"


def require_target(targets: Sequence[str], device) -> str:
    """Return the target of ``targets`` that ``device`` runs, or skip the test as NotSupported.

    ``device`` may be ``None`` (no GPU found) or any object with ``compute_capability``.
    """
    if not targets:
        raise ValueError("targets expects at least one target, but got none")
    for text in targets:
        Target.parse(text)  # bad spellings are an error, not a skip
    cc = None if device is None else getattr(device, "compute_capability", None)
    found = supported_target(targets, cc)
    if found is None:
        pytest.skip(not_supported_reason(targets, cc))
    return found
