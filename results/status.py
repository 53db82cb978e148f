"""Case statuses of the outcome log (the vocabulary of Mesa's deqp-runner, plus NotSupported).

A status is what one case ended as after the baseline was applied; ``raw_status`` in the log keeps
what the case itself did.  Failing statuses make a run fail; the others do not.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """Final status of one case."""

    PASS = "Pass"
    FAIL = "Fail"
    SKIP = "Skip"
    CRASH = "Crash"
    TIMEOUT = "Timeout"
    NOT_SUPPORTED = "NotSupported"
    EXPECTED_FAIL = "ExpectedFail"
    UNEXPECTED_PASS = "UnexpectedPass"
    FLAKE = "Flake"
    MISSING = "Missing"

    def __str__(self) -> str:
        return self.value

    @property
    def failing(self) -> bool:
        """Whether this status makes the run fail (deqp-runner semantics)."""
        return self in FAILING

    @classmethod
    def parse(cls, text: str) -> Status:
        """The status spelled ``text`` exactly (``"Pass"``, ``"NotSupported"``, ...)."""
        try:
            return cls(text)
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise ValueError(f"status expects one of {names}, but got {text!r}") from None


#: Statuses that fail a run.
FAILING = frozenset({Status.FAIL, Status.CRASH, Status.TIMEOUT, Status.UNEXPECTED_PASS, Status.MISSING})

#: Statuses of a case that did something wrong on its own (before any baseline); a baseline may
#: list these, and ``--flake-reruns`` reruns them.
RAW_FAILURES = frozenset({Status.FAIL, Status.CRASH, Status.TIMEOUT})

#: Statuses of cases that were not executed at all (left out of pass-rate denominators).
NOT_EXECUTED = frozenset({Status.SKIP, Status.NOT_SUPPORTED})

#: Statuses that count as passing in a pass rate.
PASSING = frozenset({Status.PASS, Status.FLAKE})

#: Report order: worst first.  ``worst`` of several statuses is the first of them in this tuple.
SEVERITY = (
    Status.CRASH,
    Status.TIMEOUT,
    Status.FAIL,
    Status.UNEXPECTED_PASS,
    Status.MISSING,
    Status.FLAKE,
    Status.EXPECTED_FAIL,
    Status.NOT_SUPPORTED,
    Status.SKIP,
    Status.PASS,
)


def worst(statuses) -> Status | None:
    """The most severe of ``statuses`` (``None`` for none)."""
    present = set(statuses)
    for status in SEVERITY:
        if status in present:
            return status
    return None
