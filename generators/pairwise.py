"""Pairwise (2-way) covering arrays with constraints, deterministic.

``pairwise(axes, valid)`` returns rows (dicts) such that every pair of values of two axes that
occurs together in *some* valid row occurs together in at least one returned row. The method is
AETG-like greedy construction with a seeded generator: start each row from an uncovered pair,
fill the other axes one at a time with the value covering most new pairs, keep the best of a few
candidates. Pairs that no valid row can hold are found by a bounded search and dropped.

Used for the "remaining axes" of the default level (issue 6: pairwise coverage of the axes
outside Table 39).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = dict[str, Any]


def _pairs_of(row: Row, names: Sequence[str]) -> set[tuple]:
    return {(a, row[a], b, row[b]) for a, b in itertools.combinations(names, 2)}


def _fill(seed_row: Row, names, axes, uncovered, valid, rng, tries: int = 12) -> Row | None:
    """Complete ``seed_row`` greedily; None if no valid completion was found."""
    index = {n: i for i, n in enumerate(names)}
    for attempt in range(tries):
        row = dict(seed_row)
        order = [n for n in names if n not in row]
        rng.shuffle(order)
        for name in order:
            values = list(axes[name])
            if attempt:
                rng.shuffle(values)
            best, best_gain = None, -1
            for v in values:
                gain = 0
                for other, ov in row.items():
                    key = (name, v, other, ov) if index[name] < index[other] else (other, ov, name, v)
                    gain += key in uncovered
                if gain > best_gain:
                    best, best_gain = v, gain
            row[name] = best
        if valid(row):
            return row
        # retry with a random completion of the remaining axes
        for _ in range(8):
            rnd = dict(seed_row)
            for name in order:
                rnd[name] = rng.choice(list(axes[name]))
            if valid(rnd):
                return rnd
    return None


def pairwise(axes: Mapping[str, Sequence[Any]], valid: Callable[[Row], bool] = lambda r: True,
             seed: int = 0, candidates: int = 4) -> list[Row]:
    """A constrained pairwise covering array over ``axes`` (name -> values), deterministic."""
    names = list(axes)
    if not names:
        return [{}]
    if len(names) == 1:
        return [r for r in ({names[0]: v} for v in axes[names[0]]) if valid(r)]
    rng = random.Random(seed)
    uncovered: set[tuple] = set()
    for a, b in itertools.combinations(names, 2):
        for va in axes[a]:
            for vb in axes[b]:
                uncovered.add((a, va, b, vb))
    rows: list[Row] = []
    ordered = sorted(uncovered, key=lambda p: (names.index(p[0]), names.index(p[2]), repr(p[1]), repr(p[3])))
    for pair in ordered:
        while pair in uncovered:
            best, best_gain = None, 0
            for _ in range(candidates):
                row = _fill({pair[0]: pair[1], pair[2]: pair[3]}, names, axes, uncovered, valid, rng)
                if row is None:
                    break
                gain = len(_pairs_of(row, names) & uncovered)
                if gain > best_gain:
                    best, best_gain = row, gain
            if best is None:           # no valid row holds this pair: not coverable
                uncovered.discard(pair)
                break
            rows.append(best)
            uncovered -= _pairs_of(best, names)
    return rows


def covered_pairs(rows: Sequence[Row], names: Sequence[str]) -> set[tuple]:
    """Every (axis, value, axis, value) pair present in ``rows`` (for tests and reports)."""
    out: set[tuple] = set()
    for row in rows:
        out |= _pairs_of(row, list(names))
    return out
