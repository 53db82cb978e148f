"""Immutable parameter builder (after the WebGPU CTS ``params_builder``) and the case record type.

A builder holds a tuple of :class:`Params` rows. ``combine`` takes a cartesian product with one
more axis, ``expand`` adds an axis whose values depend on the row, ``filter``/``unless`` drop
rows. Every call returns a new builder; adding a key twice is an error. Order is deterministic:
the order of the values given.

    rows = (params()
            .combine("kind", KINDS)
            .expand("row", lambda p: shape_rows(p["kind"]))
            .unless(lambda p: p["row"].ws and p["kind"] == "tf32"))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

#: Axes of a tcgen05.mma case (generators/variants/mma.py): those that change the kernel's
#: instruction spelling, and those that are runtime parameters of one kernel (docs/generators.md).
KERNEL_AXES = ("a_operand", "collector", "ashift", "dol", "scale_input_d", "zcm", "scale_vec")
RUNTIME_AXES = ("b_layout", "enable_input_d", "negate", "selector", "scale_ids", "saturate", "max_shift", "lbo_mode")


@dataclass(frozen=True)
class Params(Mapping):
    """An ordered, hashable, immutable mapping of public case parameters."""

    items_: tuple[tuple[str, Any], ...] = ()

    @cached_property
    def _index(self) -> dict[str, Any]:
        """{key: value} of ``items_`` (the first value of a key), built on the first look-up and
        kept on the instance (not a field: equality, hashing and the order stay ``items_``'s)."""
        return {k: v for k, v in reversed(self.items_)}

    def __getitem__(self, key: str) -> Any:
        return self._index[key]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self.items_)

    def __len__(self) -> int:
        return len(self.items_)

    def with_(self, **values: Any) -> Params:
        """A copy with new keys added; an existing key is an error (WebGPU CTS rule)."""
        for key in values:
            if key in self:
                raise ValueError(f"parameter {key!r} expects to be set once, but got it twice")
        return Params(self.items_ + tuple(values.items()))

    def replace(self, **values: Any) -> Params:
        """A copy with existing keys given new values (keys must exist)."""
        for key in values:
            if key not in self:
                raise KeyError(key)
        return Params(tuple((k, values.get(k, v)) for k, v in self.items_))

    @classmethod
    def of(cls, mapping: Mapping[str, Any] | None = None, **values: Any) -> Params:
        merged = dict(mapping or {})
        merged.update(values)
        return cls(tuple(merged.items()))


class ParamsBuilder:
    """Immutable builder of :class:`Params` rows (combine/expand/filter/unless)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[Params] | None = None) -> None:
        self._rows: tuple[Params, ...] = (Params(),) if rows is None else tuple(rows)

    def combine(self, name: str, values: Iterable[Any]) -> ParamsBuilder:
        values = tuple(values)
        return ParamsBuilder(r.with_(**{name: v}) for r in self._rows for v in values)

    def expand(self, name: str, fn: Callable[[Params], Iterable[Any]]) -> ParamsBuilder:
        return ParamsBuilder(r.with_(**{name: v}) for r in self._rows for v in fn(r))

    def combine_rows(self, rows: Iterable[Mapping[str, Any]]) -> ParamsBuilder:
        """Product with a list of partial rows (several keys at once)."""
        rows = tuple(rows)
        return ParamsBuilder(r.with_(**dict(extra)) for r in self._rows for extra in rows)

    def expand_rows(self, fn: Callable[[Params], Iterable[Mapping[str, Any]]]) -> ParamsBuilder:
        return ParamsBuilder(r.with_(**dict(extra)) for r in self._rows for extra in fn(r))

    def filter(self, pred: Callable[[Params], bool]) -> ParamsBuilder:
        return ParamsBuilder(r for r in self._rows if pred(r))

    def unless(self, pred: Callable[[Params], bool]) -> ParamsBuilder:
        return ParamsBuilder(r for r in self._rows if not pred(r))

    def __iter__(self) -> Iterator[Params]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def params() -> ParamsBuilder:
    """An empty builder holding one empty row."""
    return ParamsBuilder()


@dataclass(frozen=True)
class Case:
    """One reported item of the suite.

    ``case_id``: stable dot path; ``family``: instruction family (e.g. ``"mma.ws.sp"``);
    ``section``: PTX ISA section; ``instruction``: the instruction under test exactly as written
    in the kernel; ``targets``: where the case exists (legal) or is tried (negative);
    ``legal``: whether the spec allows it; ``rule``: the rule it exercises or breaks;
    ``kernel``: the kernel spec (shared by every case with the same spelling);
    ``params``: public runtime parameters; ``features``: Target-ISA features it needs;
    ``ptx_version``: forced `.version` (negative version cases), else computed per target;
    ``deviations``: known toolchain behaviour that contradicts the spec, keyed by version prefix
    (e.g. ``("13.0", "ptxas accepts ...")``): the assembly tier reports it as an expected failure.
    """

    case_id: str
    family: str
    section: str
    instruction: str
    targets: tuple[str, ...]
    kernel: Any
    legal: bool = True
    rule: str = ""
    params: Params = field(default_factory=Params)
    features: tuple[str, ...] = ()
    ptx_version: tuple[int, int] | None = None
    note: str = ""
    deviations: tuple[tuple[str, str], ...] = ()   # (toolchain version prefix, what it does instead)
