"""Helpers shared by the variant families: levels, layout names, case assembly."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from generators.params import Case, Params
from reference import tables as T
from reference.errors import SpecError
from reference.spec_questions import question
from reference.targets import TCGEN05_TARGETS, legal_targets

LEVELS: tuple[str, ...] = ("smoke", "default", "exhaustive")

# Element widths in bits (the type words of Table 39 / §9.7.16.10.4).
TYPE_BITS: dict[str, int] = T.ELEMENT_BITS

SWIZZLE_SLUG: dict[str, str] = {"none": "swnone", "32B": "sw32", "64B": "sw64", "128B": "sw128",
                                "128B_base32B": "sw128b32"}
_SLUG_SWIZZLE = {v: k for k, v in SWIZZLE_SLUG.items()}


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level expects one of {', '.join(LEVELS)}, but got {level!r}")
    return level


def layout_name(swizzle: str, major: str) -> str:
    """``("128B", "K")`` -> ``"sw128_k"``."""
    return f"{SWIZZLE_SLUG[swizzle]}_{major.lower()}"


def parse_layout(name: str) -> tuple[str, str]:
    """``"sw128_k"`` -> ``("128B", "K")``."""
    slug, major = name.rsplit("_", 1)
    return _SLUG_SWIZZLE[slug], major.upper()


def operand_layouts(type_word: str) -> tuple[str, ...]:
    """Shared-memory layouts of an operand of ``type_word`` (K-major first, then MN-major/transposed):
    ``reference.tables.legal_swizzles`` under the *pick* of spec question Q-KMAJOR-BASE32B
    (Table 52's swizzles that have a Table 53 atom), whatever ``--reading`` says: the case lists
    do not change with a reading; the question's probe alone builds K-major 128B_base32B."""
    return _operand_layouts(TYPE_BITS[type_word], question(T.KMAJOR_BASE32B).pick)


@lru_cache(maxsize=None)
def _operand_layouts(bits: int, pick: str) -> tuple[str, ...]:
    return tuple(layout_name(swizzle, major) for major in T.MAJORS for swizzle in T.legal_swizzles(bits, major, pick))


def targets_for(features: Sequence[str], candidates: Sequence[str] = TCGEN05_TARGETS) -> tuple[str, ...]:
    return legal_targets(tuple(features), tuple(candidates))


def spec_ok(fn: Callable[[], object]) -> bool:
    """True when ``fn()`` does not raise SpecError (legality read from the reference)."""
    try:
        fn()
    except SpecError:
        return False
    return True


def make_case(case_id: str, family: str, section: str, kernel, params: Params, *, features=(), legal=True,
              rule: str = "", targets: Sequence[str] | None = None, ptx_version=None, note: str = "",
              deviations=()) -> Case:
    """A Case whose instruction text is the kernel's instruction under test."""
    feats = tuple(features) or tuple(kernel.features)
    return Case(case_id=case_id, family=family, section=section, instruction=kernel.instruction,
                targets=tuple(targets) if targets is not None else targets_for(feats), kernel=kernel,
                legal=legal, rule=rule, params=params, features=feats, ptx_version=ptx_version, note=note,
                deviations=tuple(deviations))


def assign_cyclic(bases: Sequence, rows: Sequence[dict], valid: Callable[[object, dict], bool]) -> list[tuple]:
    """Pair every base with a row of ``rows`` (cycling, first valid from position i), then add
    each never-used row once with the first base it is valid for. Deterministic."""
    out: list[tuple] = []
    used = [False] * len(rows)
    n = len(rows)
    for i, base in enumerate(bases):
        for j in range(n):
            k = (i + j) % n
            if valid(base, rows[k]):
                out.append((base, rows[k]))
                used[k] = True
                break
    for k, row in enumerate(rows):
        if not used[k]:
            base = next((b for b in bases if valid(b, row)), None)
            if base is not None:
                out.append((base, row))
    return out
