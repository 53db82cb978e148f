"""Errors of the simulated device.

Every way a kernel can go wrong in the simulator is a :class:`SimError` naming the PTX line and
instruction: the host side turns one raised during a launch into a ``Crash`` of the cases of that
launch (and isolates the culprit by rerunning them one by one), exactly as for a sticky CUDA error.
"""

from __future__ import annotations


class SimError(RuntimeError):
    """A kernel did something the simulated hardware refuses (or cannot model)."""


class PtxSyntaxError(SimError):
    """The PTX text is outside the grammar the simulator parses."""


class UnimplementedError(SimError):
    """The kernel uses instructions or qualifiers the simulator does not implement.

    ``items`` lists one line per offending instruction; the message names them all, so a missing
    handler is never silently ignored.
    """

    def __init__(self, items: list[str]) -> None:
        self.items = list(items)
        head = f"{len(items)} instruction(s) not implemented by the simulator:\n  "
        super().__init__(head + "\n  ".join(items))


class MemoryFault(SimError):
    """An access outside memory the kernel may touch (unallocated, misaligned, out of window)."""


class Deadlock(SimError):
    """Every live thread waits on something no thread can provide (barrier, allocation)."""


class SpecViolation(SimError):
    """The kernel broke a rule of the PTX ISA the simulator checks (wraps a ``SpecError``)."""


class Trap(SimError):
    """The kernel executed ``trap`` (or ``brkpt``)."""


class StepLimit(SimError):
    """The launch ran more instructions than the simulator's safety limit."""


class HazardError(SimError):
    """The kernel broke a synchronization rule of §9.7.16.6 or of the async-proxy memory model.

    Raised by the hazard checker (``SimDevice(hazards=True)``, the default).  ``rule`` is a short
    stable id (``"wait-ld"``, ``"proxy-fence"``, ...), ``section`` the PTX ISA section it cites,
    ``first``/``second`` the two PTX lines involved (``where()`` strings, ``second`` the one that
    broke the rule), ``threads`` the threads or CTA involved, in words.
    """

    def __init__(self, message: str, *, rule: str = "", section: str = "", first: str = "",
                 second: str = "", threads: str = "") -> None:
        self.rule, self.section, self.first, self.second, self.threads = rule, section, first, second, threads
        super().__init__(message)


class Livelock(SimError):
    """Every live thread spins on a wait that nothing left can satisfy (a GPU would time out)."""


def where(instr) -> str:
    """``line N: `text``` for an instruction (anything with ``line`` and ``text``)."""
    return f"line {instr.line}: `{instr.text}`"
