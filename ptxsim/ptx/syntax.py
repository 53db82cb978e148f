"""Parsed PTX as plain data (frozen dataclasses): what :mod:`ptxsim.ptx.parser` returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Name:
    """A register, special register (``%tid.x``), variable, parameter or label; ``_`` is a sink."""

    text: str
    offset: int = 0        # ``name+imm`` outside brackets


@dataclass(frozen=True)
class Imm:
    """An immediate.  ``form``: ``int``; ``f32``/``f64`` (value = the bits of 0f/0d literals);
    ``float`` (a decimal literal, value is a Python float)."""

    value: int | float
    form: str = "int"


@dataclass(frozen=True)
class Addr:
    """``[base+offset]``; ``base`` None for an absolute address."""

    base: Name | None
    offset: int = 0


@dataclass(frozen=True)
class Vec:
    """``{a, b, ...}``."""

    items: tuple


@dataclass(frozen=True)
class Not:
    """``!p`` (a negated predicate source)."""

    name: Name


@dataclass(frozen=True)
class Pair:
    """``p|q`` (the two destinations of ``setp``)."""

    first: Name
    second: Name


Operand = Name | Imm | Addr | Vec | Not | Pair


@dataclass(frozen=True)
class Instr:
    """One instruction: ``opcode`` is the full dotted spelling, ``parts`` its pieces."""

    opcode: str
    operands: tuple
    guard: Name | None = None
    guard_neg: bool = False
    line: int = 0
    text: str = ""

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.opcode.split("."))


@dataclass(frozen=True)
class Label:
    name: str
    line: int = 0


@dataclass(frozen=True)
class BranchTargets:
    """``name: .branchtargets L0, L1, ...;`` - the target list of ``brx.idx`` (PTX ISA §9.7.12, brx.idx)."""

    name: str
    labels: tuple[str, ...]
    line: int = 0


@dataclass(frozen=True)
class VarDecl:
    """A variable: ``count`` None for a scalar, 0 for an unsized ``.extern`` array."""

    space: str
    name: str
    type: str
    align: int | None = None
    count: int | None = None
    extern: bool = False
    init: tuple | None = None
    line: int = 0


@dataclass(frozen=True)
class RegDecl:
    name: str
    type: str
    line: int = 0


@dataclass(frozen=True)
class ParamDecl:
    name: str
    type: str
    align: int | None = None
    count: int | None = None


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[ParamDecl, ...]
    directives: dict = field(default_factory=dict)
    regs: tuple[RegDecl, ...] = ()
    variables: tuple[VarDecl, ...] = ()
    body: tuple = ()
    line: int = 0


@dataclass(frozen=True)
class Module:
    version: str
    target: tuple[str, ...]
    address_size: int
    kernels: dict
    variables: tuple[VarDecl, ...] = ()


@dataclass(frozen=True)
class TensorRef:
    """``[tensorMap, {c0, c1, ..}]``: a tensor-map address and its coordinates (``cp.async.bulk.tensor``)."""

    addr: Addr
    coords: Vec
