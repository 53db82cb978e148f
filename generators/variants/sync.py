"""The canonical synchronization patterns of §9.7.16.6.4 as cases (one kernel each)."""

from __future__ import annotations

from generators.params import Case, Params
from generators.ptx.patterns import PATTERNS, pattern_kernel
from generators.variants.common import make_case


def sync_cases(level: str) -> list[Case]:
    return [make_case(f"tcgen05.sync.{p.name}", "sync", p.section, pattern_kernel(p),
                      Params.of(pattern=p.name, kind="f16", cta_group=1, m=128, n=128),
                      rule=f"§{p.section}: {p.description}") for p in PATTERNS]
