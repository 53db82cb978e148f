"""generators.params (immutable builder) and generators.pairwise (covering arrays)."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.pairwise import covered_pairs, pairwise
from generators.params import Params, params

pytestmark = pytest.mark.reference


def test_combine_expand_filter_order():
    rows = list(params().combine("a", [1, 2]).expand("b", lambda p: range(p["a"])).unless(lambda p: p["b"] == 1))
    assert [dict(r) for r in rows] == [{"a": 1, "b": 0}, {"a": 2, "b": 0}]


def test_builder_is_immutable():
    base = params().combine("x", [1, 2])
    more = base.combine("y", ["u", "v"])
    assert len(base) == 2 and len(more) == 4
    assert list(base.filter(lambda p: p["x"] == 1))[0]["x"] == 1 and len(base) == 2


def test_duplicate_key_is_an_error():
    with pytest.raises(ValueError, match="set once"):
        list(params().combine("x", [1]).combine("x", [2]))


def test_params_mapping_and_hash():
    p = Params.of(a=1, b="z")
    assert dict(p) == {"a": 1, "b": "z"} and p == Params.of({"a": 1}, b="z") and hash(p) == hash(Params.of(a=1, b="z"))
    assert p.replace(a=3)["a"] == 3
    with pytest.raises(KeyError):
        p.replace(c=1)


def _all_valid_pairs(axes, valid):
    names = list(axes)
    pairs = set()
    for vals in itertools.product(*axes.values()):
        row = dict(zip(names, vals, strict=False))
        if valid(row):
            pairs |= {(a, row[a], b, row[b]) for a, b in itertools.combinations(names, 2)}
    return pairs


@pytest.mark.parametrize("seed", [0, 1])
def test_pairwise_covers_every_coverable_pair(seed):
    axes = {"a": (0, 1, 2), "b": ("x", "y"), "c": (True, False), "d": (None, 1, 2, 3)}

    def valid(r):
        return not (r["a"] == 2 and r["b"] == "y") and not (r["c"] and r["d"] is None)

    rows = pairwise(axes, valid, seed=seed)
    assert all(valid(r) for r in rows)
    assert covered_pairs(rows, list(axes)) >= _all_valid_pairs(axes, valid)
    full = sum(1 for vals in itertools.product(*axes.values()) if valid(dict(zip(axes, vals, strict=False))))
    assert len(rows) < full                      # smaller than the product


def test_pairwise_is_deterministic():
    axes = {"p": tuple(range(5)), "q": tuple(range(4)), "r": "abc"}
    assert pairwise(axes, seed=3) == pairwise(axes, seed=3)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=5))
def test_pairwise_unconstrained(sizes):
    axes = {f"x{i}": tuple(range(n)) for i, n in enumerate(sizes)}
    rows = pairwise(axes)
    assert covered_pairs(rows, list(axes)) == _all_valid_pairs(axes, lambda r: True)
