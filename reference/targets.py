"""Targets and PTX ISA versions: which architecture has which feature (the "Target ISA Notes").

Every tcgen05 instruction section (§9.7.16.7-12) ends with "PTX ISA Notes" and "Target ISA
Notes" paragraphs; this module transcribes them as data (:data:`FEATURES`, each row quoting the
lines it transcribes) and answers every target question with one table-driven predicate,
:func:`supports`. Nothing else in the suite decides target legality.

Reading of the notes (decisions, see docs/generators.md):

* ``sm_XYa`` in a list means exactly that architecture.
* "``sm_XYf`` or higher in the same family" means every target of family XY (100 and 103 are
  family 100; 110 is family 110; 120/121 family 120) whose number is >= XY, with either suffix:
  PTX for ``sm_100f`` assembles for ``sm_103a`` (ptxas --help, option --gpu-name).
* ``sm_101a``/``sm_101f`` were renamed ``sm_110a``/``sm_110f`` in PTX ISA 9.0; we list only the
  new names.
* "requires ``sm_100a``" (``scale_vec::NX``, ``scale-input-d``) is read literally: sm_100a only
  (plus the family rows the same note grants). ptxas 13.0 also accepts ``.scale_vec::NX`` on
  sm_103a and sm_110a (:data:`PTXAS_OBSERVATIONS`).
* Warp-level ``mma.sp`` (§9.7.14.6.x) notes say "requires ``sm_80`` or higher": ``min_sm``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from reference.errors import SpecError, expects_but_got

# Targets the tcgen05 matrix is assembled for (issue 6), and the warp-level mma.sp targets
# (Ampere, Ada, Hopper, Blackwell datacenter, Blackwell consumer).
TCGEN05_TARGETS: tuple[str, ...] = ("sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f")
WARP_MMA_SP_TARGETS: tuple[str, ...] = ("sm_80", "sm_89", "sm_90", "sm_100a", "sm_120a")

# Lowest `.version` each `.target` is accepted with. Measured with ptxas 13.0 (`.version V` /
# `.target T` / empty entry, every V from 6.5 to 9.0); agrees with the PTX ISA release notes
# (sm_100a: PTX 8.6; family targets: 8.8; sm_110*: 9.0 after the rename of sm_101).
TARGET_MIN_PTX: dict[str, tuple[int, int]] = {
    "sm_80": (7, 0), "sm_86": (7, 1), "sm_89": (7, 8), "sm_90": (7, 8), "sm_90a": (8, 0),
    "sm_100a": (8, 6), "sm_100f": (8, 8), "sm_103a": (8, 8), "sm_103f": (8, 8),
    "sm_110a": (9, 0), "sm_110f": (9, 0), "sm_120a": (8, 7), "sm_120f": (8, 8),
}

# Architecture number -> family (the "same family" of the notes).
_FAMILY: dict[int, int] = {100: 100, 103: 100, 110: 110, 120: 120, 121: 120}
_TARGET_RE = re.compile(r"^sm_(\d+)([af]?)$")


@dataclass(frozen=True)
class Feature:
    """One Target ISA note: where a feature exists and the PTX ISA version that introduced it.

    ``arch``: exact arch-specific targets; ``family``: ``sm_XYf`` entries (family XY, number >= XY);
    ``min_sm``: "sm_NN or higher" (any suffix); ``ptx``: the "Introduced in PTX ISA version"
    line. ``quote`` holds the spec lines transcribed (shortened), ``section`` where they are.
    """

    name: str
    section: str
    ptx: tuple[int, int]
    arch: tuple[str, ...] = ()
    family: tuple[str, ...] = ()
    min_sm: int | None = None
    quote: str = ""


_TCGEN05_ARCH = ("sm_100a", "sm_110a")
_TCGEN05_FAMILY = ("sm_100f", "sm_110f")
_TCGEN05_QUOTE = ("Supported on sm_100a, sm_101a (renamed sm_110a); family-specific from PTX 8.8: "
                  "sm_100f or higher in the same family, sm_101f (renamed sm_110f); sm_110f or higher")


def _base(name: str, section: str) -> Feature:
    return Feature(name, section, (8, 6), _TCGEN05_ARCH, _TCGEN05_FAMILY, quote=_TCGEN05_QUOTE)


FEATURES: dict[str, Feature] = {f.name: f for f in (
    _base("tcgen05.alloc", "9.7.16.7.1"),
    _base("tcgen05.ld", "9.7.16.8.3"),
    _base("tcgen05.st", "9.7.16.8.4"),
    _base("tcgen05.wait", "9.7.16.8.5"),
    _base("tcgen05.cp", "9.7.16.9.2"),
    _base("tcgen05.mma", "9.7.16.10.9.1"),
    _base("tcgen05.mma.sp", "9.7.16.10.9.2"),
    _base("tcgen05.mma.ws", "9.7.16.10.9.3"),
    _base("tcgen05.mma.ws.sp", "9.7.16.10.9.4"),
    _base("tcgen05.fence", "9.7.16.11.1"),
    _base("tcgen05.commit", "9.7.16.12.1"),
    Feature("tcgen05.ld.red", "9.7.16.8.3", (8, 8), ("sm_110a",), ("sm_110f", "sm_103f"),
            quote="tcgen05.ld.red is supported on sm_101a (renamed sm_110a); family-specific from PTX 8.8: "
                  "sm_101f (renamed sm_110f), sm_103f or higher in the same family; sm_110f. "
                  "Introduced in PTX ISA version 8.8"),
    Feature("tcgen05.shift", "9.7.16.9.3", (8, 6), ("sm_100a", "sm_103a", "sm_110a"),
            quote="Supported on sm_100a, sm_101a (renamed sm_110a), sm_103a, sm_110a"),
    Feature("kind::i8", "9.7.16.10.9.1", (8, 6), ("sm_100a", "sm_110a"),
            quote="family-specific ... except .kind::i8; Qualifier .kind::i8 is supported on sm_100a, "
                  "sm_101a (renamed sm_110a), sm_110a (same note in .mma.sp, .mma.ws, .mma.ws.sp)"),
    Feature("kind::mxf4nvf4", "9.7.16.10.9.1", (8, 7), _TCGEN05_ARCH, _TCGEN05_FAMILY,
            quote="Qualifier .kind::mxf4nvf4 introduced in PTX ISA version 8.7"),
    Feature("sparse kind::mxf4", "9.7.16.10.9.2", (8, 6), ("sm_100a", "sm_103a", "sm_110a"),
            quote="(mma.sp) family-specific ... except .kind::i8/.kind::mxf4nvf4/.kind::mxf4; Qualifiers "
                  ".kind::mxf4nvf4 and .kind::mxf4 are supported on sm_100a, sm_101a (renamed sm_110a), "
                  "sm_103a, sm_110a"),
    Feature("scale-input-d", "9.7.16.10.9.1", (8, 6), ("sm_100a",), ("sm_100f",),
            quote="Argument scale-input-d requires sm_100a and is supported on sm_100f or higher in "
                  "the same family from PTX ISA version 8.8"),
    Feature("scale_vec::NX", "9.7.16.10.9.1", (8, 6), ("sm_100a",),
            quote=".scale_vec::1X, .scale_vec::2X, .scale_vec::4X requires sm_100a"),
    Feature("block16/block32", "9.7.16.10.9.1", (8, 8), (), ("sm_100f", "sm_110f"),
            quote=".block16, .block32 requires sm_100f or sm_110f; Qualifiers .block16 and .block32 "
                  "introduced in PTX ISA version 8.8"),
    Feature("K=96", "9.7.16.2.1.1", (8, 6), ("sm_103a",),
            quote="K = 96 is only supported for target architecture sm_103a"),
    Feature("lbo absolute", "9.7.16.4.1.1", (8, 6), ("sm_103a",),
            quote="The byte address mode for the leading dimension stride is supported on sm_103a"),
    # Warp-level mma.sp (public PTX ISA §9.7.14.6.3, Target ISA Notes / PTX ISA Notes).
    Feature("mma.sp", "9.7.14.6.1", (7, 1), min_sm=80,
            quote="mma.sp requires sm_80 or higher (ptxas 13.0: 'Sparse MMA' requires PTX 7.1)"),
    Feature("mma.sp::ordered_metadata", "9.7.14.6.1", (8, 5), min_sm=80,
            quote="mma.sp::ordered_metadata introduced in PTX ISA version 8.5; requires sm_80 or higher"),
    Feature("mma.sp e4m3/e5m2", "9.7.14.6.1", (8, 4), min_sm=89,
            quote="mma.sp with .e4m3/.e5m2 (m16n8k64) requires sm_89 or higher"),
    Feature("mma.sp kind::f8f6f4", "9.7.14.6.1", (8, 7), ("sm_120a",), ("sm_120f",),
            quote=".kind::f8f6f4, .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4 with mma.sp::ordered_metadata "
                  "require sm_120a, and sm_120f or higher in the same family from PTX ISA version 8.8"),
)}

# Where ptxas disagrees with the literal notes (measured; reported, not used for legality).
PTXAS_OBSERVATIONS: tuple[str, ...] = (
    "ptxas 13.0 and 13.5 accept .scale_vec::1X/2X/4X on sm_103a and sm_110a (note: 'requires sm_100a')",
    "ptxas 13.0 and 13.5 treat an omitted .scale_vectorsize of kind::mxf8f6f4 as .block32 "
    "(PTX ISA 8.8 required); the text gives no default for mxf8f6f4",
)


@lru_cache(maxsize=None)
def parse_target(target: str) -> tuple[int, str]:
    """``"sm_103a"`` -> ``(103, "a")``; ``"sm_90"`` -> ``(90, "")``."""
    m = _TARGET_RE.match(target) if isinstance(target, str) else None
    if not m:
        raise SpecError("9.7.16", "Target ISA Notes", expects_but_got("target", "sm_<NN>[a|f]", target))
    return int(m.group(1)), m.group(2)


def family_of(target: str) -> int | None:
    """Family number of a target (100 for sm_100a/sm_103a/sm_100f, ...), None if it has none."""
    return _FAMILY.get(parse_target(target)[0])


def _in_family_row(target: str, row: str) -> bool:
    number, _ = parse_target(target)
    row_number, _ = parse_target(row)
    return family_of(target) is not None and family_of(target) == family_of(row) and number >= row_number


def feature(name: str) -> Feature:
    try:
        return FEATURES[name]
    except KeyError:
        raise SpecError("9.7.16", "Target ISA Notes", expects_but_got("feature", "one of " + ", ".join(FEATURES), name)) from None


def supports(target: str, features: tuple[str, ...] | list[str]) -> bool:
    """The single legality predicate: does ``target`` have every feature in ``features``?"""
    return _supports(target, tuple(features))


@lru_cache(maxsize=4096)
def _supports(target: str, features: tuple[str, ...]) -> bool:
    number, _ = parse_target(target)
    for name in features:
        f = feature(name)
        ok = target in f.arch or any(_in_family_row(target, row) for row in f.family)
        ok = ok or (f.min_sm is not None and number >= f.min_sm)
        if not ok:
            return False
    return True


def legal_targets(features, candidates: tuple[str, ...] = TCGEN05_TARGETS) -> tuple[str, ...]:
    """The candidate targets that have every feature (order of ``candidates``)."""
    return tuple(t for t in candidates if supports(t, features))


def ptx_version(target: str, features=()) -> tuple[int, int]:
    """Lowest `.version` for ``target`` with ``features``: max of the target's and the features'."""
    if target not in TARGET_MIN_PTX:
        raise SpecError("9.7.16", "Target ISA Notes", expects_but_got("target", "one of " + ", ".join(TARGET_MIN_PTX), target))
    return max([TARGET_MIN_PTX[target]] + [feature(n).ptx for n in features])


def first_missing(target: str, features) -> Feature | None:
    """The first feature ``target`` lacks (for "needs sm_100a" messages), or None."""
    for name in features:
        if not supports(target, (name,)):
            return feature(name)
    return None


def version_text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"
