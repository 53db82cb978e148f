"""Variant enumeration: every case of a level, family by family, in a deterministic order.

    from generators.variants import cases
    for case in cases("default", sections=("9.7.16.10",), families=("mma.ws",)):
        ...

Families (``FAMILIES``) and the section each belongs to; negative cases (``legal=False``) are
listed with their family. Sections filter by prefix, families exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from generators.params import Case
from generators.variants import movement as _mv
from generators.variants.common import LEVELS, check_level
from generators.variants.mma import mma_cases
from generators.variants.negative import negative_cases
from generators.variants.sync import sync_cases, sync_hazard_cases
from generators.variants.warp_mma_sp import warp_mma_sp_cases

__all__ = ["FAMILIES", "LEVELS", "cases", "family_sections"]


def _mma_family(name: str) -> Callable[[str], list[Case]]:
    return lambda level: [c for c in _mma_cache(level) if c.family == name]


_MMA: dict[str, list[Case]] = {}


def _mma_cache(level: str) -> list[Case]:
    if level not in _MMA:
        _MMA[level] = mma_cases(level)
    return _MMA[level]


# family -> (spec section, generator of the legal cases)
FAMILIES: dict[str, tuple[str, Callable[[str], list[Case]]]] = {
    "alloc": ("9.7.16.7.1", _mv.alloc_cases),
    "ld": ("9.7.16.8.3", _mv.ld_cases),
    "ld.red": ("9.7.16.8.3", _mv.ld_red_cases),
    "st": ("9.7.16.8.4", _mv.st_cases),
    "wait": ("9.7.16.8.5", _mv.wait_cases),
    "cp": ("9.7.16.9.2", _mv.cp_cases),
    "shift": ("9.7.16.9.3", _mv.shift_cases),
    "mma": ("9.7.16.10.9.1", _mma_family("mma")),
    "mma.sp": ("9.7.16.10.9.2", _mma_family("mma.sp")),
    "mma.ws": ("9.7.16.10.9.3", _mma_family("mma.ws")),
    "mma.ws.sp": ("9.7.16.10.9.4", _mma_family("mma.ws.sp")),
    "fence": ("9.7.16.11.1", _mv.fence_cases),
    "commit": ("9.7.16.12.1", _mv.commit_cases),
    "sync": ("9.7.16.6.4", sync_cases),
    "sync.hazard": ("9.7.16.6.4", sync_hazard_cases),
    "warp.mma.sp": ("9.7.14.6.1", warp_mma_sp_cases),
}


def family_sections() -> dict[str, str]:
    return {name: sec for name, (sec, _) in FAMILIES.items()}


def _section_match(section: str, prefixes: Iterable[str]) -> bool:
    prefixes = list(prefixes)
    return not prefixes or any(section == p or section.startswith(p.rstrip(".") + ".") for p in prefixes)


def cases(level: str = "smoke", sections: Iterable[str] = (), families: Iterable[str] = (),
          negatives: bool = True) -> list[Case]:
    """Every case of ``level`` (legal ones, then negatives), filtered by section prefix and family."""
    check_level(level)
    families = list(families)
    for fam in families:
        if fam not in FAMILIES:
            raise ValueError(f"family expects one of {', '.join(FAMILIES)}, but got {fam!r}")
    sections = list(sections)
    out: list[Case] = []
    for name, (_, gen) in FAMILIES.items():
        if families and name not in families:
            continue
        out.extend(c for c in gen(level) if _section_match(c.section, sections))
    if negatives:
        out.extend(c for c in negative_cases(level)
                   if (not families or c.family in families) and _section_match(c.section, sections))
    return out
