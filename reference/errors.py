"""Errors raised by the executable spec.

Every violation of a spec rule is a :class:`SpecError`: it names the PTX ISA section and
the rule (usually a table) so that a user reading one line knows what broke, e.g.::

    §9.7.16.4.1 (Table 40): swizzle expects one of 0, 1, 2, 4, 6, but got 3
"""

from __future__ import annotations


class SpecError(ValueError):
    """A value violates a rule of the PTX ISA.

    ``section`` is the section id (``"9.7.16.4.1"``), ``rule`` a short name of the rule
    (``"Table 40"``, ``"16-byte alignment"``), ``detail`` says what was expected and got.
    """

    def __init__(self, section: str, rule: str, detail: str) -> None:
        self.section = section
        self.rule = rule
        self.detail = detail
        super().__init__(f"§{section} ({rule}): {detail}")


def expect(condition: bool, section: str, rule: str, detail: str) -> None:
    """Raise :class:`SpecError` unless ``condition`` holds."""
    if not condition:
        raise SpecError(section, rule, detail)


def expects_but_got(what: str, expected: str, got: object) -> str:
    """The house style for error details: ``"<what> expects <expected>, but got <got>"``."""
    return f"{what} expects {expected}, but got {got!r}"
