"""Selection before parametrization: a test function whose every case ``-m`` deselects is not
parametrized at all.

``pytest -m execute --level default`` collects the assembly tier's 17,000 cases only to deselect
them after collection (``_pytest.mark.deselect_by_mark``); building them was about a third of
each xdist worker's collection. A function's cases all carry its own marks (module
``pytestmark`` and decorators), and the tier markers (:data:`TIER_MARKS`) only those: a module
declares its tier, a case never adds one (tests/test_selection.py checks every collected case).
Whatever else a case may add (its ``cts_case`` marker, an ``xfail`` added at run time) is unknown
here, so a function is skipped only when the expression is false under *every* truth assignment of
the other names it mentions.
"""

from __future__ import annotations

import itertools
import re

try:                       # pytest's own -m grammar (a private module: without it, parametrize as usual)
    from _pytest.mark.expression import Expression
except ImportError:        # pragma: no cover
    Expression = None

#: identifiers as pytest's ``-m`` grammar spells them (``and``/``or``/``not`` are operators)
_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_OPERATORS = {"and", "or", "not"}
_MAX_UNKNOWN = 10
#: the tiers of pyproject.toml's markers: set by a test module (``pytestmark``), never by a case
TIER_MARKS = frozenset({"reference", "assemble", "execute", "probe", "clients"})          # 2**10 evaluations at most; beyond that, parametrize as usual


def deselected_by_markexpr(metafunc) -> bool:
    """True when ``-m`` deselects every case of ``metafunc``'s function, whatever marks a case adds."""
    text = getattr(metafunc.config.option, "markexpr", "") or ""
    if not text.strip() or Expression is None:
        return False
    try:
        expr = Expression.compile(text)
    except SyntaxError:
        return False                      # pytest reports the bad expression itself
    carried = {m.name for m in metafunc.definition.iter_markers()}
    unknown = sorted({t for t in _IDENT.findall(text) if t not in _OPERATORS} - carried - TIER_MARKS)
    if len(unknown) > _MAX_UNKNOWN:
        return False
    for values in itertools.product((False, True), repeat=len(unknown)):
        if expr.evaluate(_matcher(carried | {n for n, v in zip(unknown, values, strict=True) if v})):
            return False
    return True


def _matcher(marks: set[str]):
    def matcher(name: str, /, **kwargs) -> bool:
        return name in marks
    return matcher
