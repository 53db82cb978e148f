"""A minimal evaluator of CuTe (shape, stride) layouts, for cross-checking transcribed public layouts.

Written for the tests from the CuTe definition (a layout maps a coordinate to sum(coord_k * stride_k)
over the flattened modes, an integer index being split colexicographically: first mode fastest).
Independent of the code under test: the tests feed it (shape, stride) pairs transcribed from
NVIDIA/cutlass headers and compare the results with the reference model's closed forms.
"""

from __future__ import annotations


def _flatten(x) -> list[int]:
    if isinstance(x, (tuple, list)):
        out: list[int] = []
        for item in x:
            out.extend(_flatten(item))
        return out
    return [int(x)]


def evaluate(shape, stride, index: int) -> int:
    """Layout ``shape:stride`` at the integer ``index`` (colexicographic over the flat modes)."""
    result = 0
    for size, step in zip(_flatten(shape), _flatten(stride), strict=True):
        result += (index % size) * step
        index //= size
    return result


def size(shape) -> int:
    n = 1
    for s in _flatten(shape):
        n *= s
    return n


def evaluate2(layout, coord0: int, coord1: int) -> int:
    """A rank-2 layout ``((shape0, shape1), (stride0, stride1))`` at (coord0, coord1)."""
    (shape0, shape1), (stride0, stride1) = layout
    return evaluate(shape0, stride0, coord0) + evaluate(shape1, stride1, coord1)
