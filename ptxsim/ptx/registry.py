"""The opcode registry: the plug-in point of the simulator.

A handler is registered for a dotted opcode prefix and compiles one instruction, once, when a
module is loaded::

    @opcode("tcgen05.shift")
    def compile_shift(ins: Instr, q: Quals, k: KernelProgram) -> Exec | Op:
        cta_group = q.take_prefix("cta_group::", required=True)
        q.take("down", required=True)
        q.done()                               # any qualifier left over is an error
        taddr = k.reader(ins.operands[0], U32)
        def run(m: Machine, s: Sel) -> None:   # executed for the threads ``s`` that reach it
            ...
        return run

Lookup is by the longest registered prefix of the opcode's dot-separated parts
(``mbarrier.try_wait.parity.shared::cta.b64`` -> ``mbarrier.try_wait``); the remaining parts are
the qualifiers, handed over in a :class:`Quals`.  A handler returns a plain executor
``run(machine, sel)`` (the common case; predicates ``@p`` are applied around it), or one of the
control :class:`Op` kinds the scheduler knows.  A handler that cannot model an instruction raises
:class:`Unsupported`; the loader collects every such message (and every opcode without a handler)
into one :class:`~ptxsim.errors.UnimplementedError`.
"""

from __future__ import annotations

from typing import Callable

from ptxsim.ptx.types import TYPES, PtxType


class Unsupported(Exception):
    """Raised by a handler at compile time: the instruction or a qualifier is not modelled."""


class Op:
    """A compiled instruction.  ``instr`` and the guard (``guard`` predicate index or None,
    ``neg``) are filled in by the compiler."""

    __slots__ = ("instr", "guard", "neg")

    def __init__(self) -> None:
        self.instr = None
        self.guard = None
        self.neg = False


class Plain(Op):
    """Straight-line instruction: ``fn(machine, sel)``, then the next instruction."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable) -> None:
        super().__init__()
        self.fn = fn


class Branch(Op):
    """``bra``: threads whose guard holds continue at ``target`` (a label, resolved to ``pc``)."""

    __slots__ = ("target", "pc")

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target
        self.pc = -1


class IndirectBranch(Op):
    """``brx.idx``: each thread whose guard holds continues at the ``index``-th label of the
    ``.branchtargets`` list ``table`` (resolved to ``pcs``); ``index(machine, sel)`` reads the register."""

    __slots__ = ("table", "index", "labels", "pcs")

    def __init__(self, table: str, index: Callable) -> None:
        super().__init__()
        self.table = table
        self.index = index
        self.labels: tuple[str, ...] = ()
        self.pcs = None


class Exit(Op):
    """``ret``/``exit``: the threads end."""

    __slots__ = ()


class Block(Op):
    """A potentially blocking instruction (barriers).  ``arrive(machine, sel)`` runs once when
    threads reach it; they then wait until ``ready(machine, sel)`` (one bool per thread) lets them
    continue with the next instruction.  The scheduler runs other threads meanwhile and reports a
    deadlock when every live thread waits."""

    __slots__ = ("arrive", "ready", "describe")

    def __init__(self, arrive: Callable, ready: Callable, describe: str = "") -> None:
        super().__init__()
        self.arrive = arrive
        self.ready = ready
        self.describe = describe


Handler = Callable  # (Instr, Quals, KernelProgram) -> Callable | Op
HANDLERS: dict[str, Handler] = {}


def opcode(*prefixes: str) -> Callable[[Handler], Handler]:
    """Register a handler for each dotted opcode prefix (``"add"``, ``"tcgen05.alloc"``)."""
    def register(fn: Handler) -> Handler:
        for prefix in prefixes:
            if prefix in HANDLERS and HANDLERS[prefix] is not fn:
                raise ValueError(f"opcode prefix {prefix!r} has a handler already: {HANDLERS[prefix].__qualname__}")
            HANDLERS[prefix] = fn
        return fn
    return register


def find_handler(parts: tuple[str, ...]) -> tuple[int, Handler] | None:
    """(number of parts the prefix covers, handler) for the longest registered prefix, or None."""
    for n in range(len(parts), 0, -1):
        handler = HANDLERS.get(".".join(parts[:n]))
        if handler is not None:
            return n, handler
    return None


class Quals:
    """The qualifiers of one instruction after its registered prefix, consumed by its handler.

    Every ``take``/``flag`` removes what it finds; :meth:`done` raises :class:`Unsupported` for
    anything left, so an unknown qualifier is never ignored.
    """

    def __init__(self, rest: tuple[str, ...]) -> None:
        self.rest = list(rest)

    def take(self, *options: str, default: str | None = None, required: bool = False) -> str | None:
        """The one qualifier among ``options`` present (removed), else ``default``."""
        found = [q for q in self.rest if q in options]
        if len(found) > 1:
            raise Unsupported(f"conflicting qualifiers {', '.join('.' + f for f in found)}")
        if found:
            self.rest.remove(found[0])
            return found[0]
        if required:
            raise Unsupported("expects one of the qualifiers " + ", ".join("." + o for o in options))
        return default

    def flag(self, name: str) -> bool:
        """Whether ``.name`` is present (removed)."""
        return self.take(name) is not None

    def take_prefix(self, prefix: str, required: bool = False) -> str | None:
        """The remainder of the qualifier starting with ``prefix`` (``cta_group::`` -> ``"1"``)."""
        found = [q for q in self.rest if q.startswith(prefix)]
        if len(found) > 1:
            raise Unsupported(f"conflicting qualifiers {', '.join('.' + f for f in found)}")
        if found:
            self.rest.remove(found[0])
            return found[0][len(prefix):]
        if required:
            raise Unsupported(f"expects a .{prefix}* qualifier")
        return None

    def take_type(self, allowed=None, required: bool = True) -> PtxType | None:
        """The first type word (in spelling order), optionally restricted to ``allowed``."""
        for q in self.rest:
            if q in TYPES:
                if allowed is not None and q not in allowed:
                    raise Unsupported(f"type .{q} is not implemented here (implemented: "
                                      + ", ".join("." + a for a in allowed) + ")")
                self.rest.remove(q)
                return TYPES[q]
        if required:
            raise Unsupported("expects a type qualifier")
        return None

    def ignore(self, *names: str) -> None:
        """Accept qualifiers that do not change the simulated behaviour (memory order, cache hints)."""
        self.rest = [q for q in self.rest if q not in names]

    def ignore_prefix(self, *prefixes: str) -> None:
        self.rest = [q for q in self.rest if not q.startswith(prefixes)]

    def done(self) -> None:
        if self.rest:
            raise Unsupported("qualifier(s) " + ", ".join("." + q for q in self.rest)
                              + " not implemented by the simulator")


#: memory-ordering and scope qualifiers: the simulator is sequentially consistent, so all are exact
ORDERING = ("weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio",
            "cta", "cluster", "gpu", "sys")
