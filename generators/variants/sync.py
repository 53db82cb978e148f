"""The canonical synchronization patterns of §9.7.16.6.4 as cases (one kernel each), and their
broken forms (one synchronization step removed; family ``sync.hazard``, negative execution cases
whose expected outcome is a reported hazard, ``generators/ptx/broken_patterns.py``)."""

from __future__ import annotations

from generators.params import Case, Params
from generators.ptx.broken_patterns import broken_forms, broken_kernel
from generators.ptx.patterns import PATTERNS, pattern_kernel
from generators.variants.common import make_case

_PARAMS = dict(kind="f16", cta_group=1, m=128, n=128)


def sync_cases(level: str) -> list[Case]:
    return [make_case(f"tcgen05.sync.{p.name}", "sync", p.section, pattern_kernel(p),
                      Params.of(pattern=p.name, **_PARAMS),
                      rule=f"§{p.section}: {p.description}") for p in PATTERNS]


def sync_hazard_cases(level: str) -> list[Case]:
    """Every broken form of every pattern (smoke: the first form of each removed step kind)."""
    out, seen = [], set()
    for p in PATTERNS:
        kernel = pattern_kernel(p)
        for form in broken_forms(p, kernel):
            kind = form.step.split(" (")[0]
            if level == "smoke" and kind in seen:
                continue
            seen.add(kind)
            out.append(make_case(f"tcgen05.sync.{p.name}.without_{form.slug}", "sync.hazard", p.section,
                                 broken_kernel(kernel, form),
                                 Params.of(pattern=p.name, without=form.step, expect=",".join(form.expect), **_PARAMS),
                                 rule=f"§{p.section}: {p.description}, without {form.step}: the device must report "
                                      f"{' or '.join(form.expect)}"))
    return out
