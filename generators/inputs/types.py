"""What input synthesis returns: the record, the in blocks and the logical inputs of a case."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

SEMANTIC, NUMERICS = "semantic", "numerics"
MODES = (SEMANTIC, NUMERICS)


class Untestable(Exception):
    """The case cannot be given exact-by-construction inputs with a defined expected result
    (a layout or operand placement the reference does not model, a spec-undefined combination).
    The harness reports it as a Skip with this reason; never as a pass."""


@dataclass(frozen=True)
class CaseInputs:
    """Everything the host writes for one case, and what the expected-value step needs.

    ``record``: the family fields of the case record (pointers are filled at launch);
    ``in_blocks``: one in block per CTA, equal lengths (``in_cta_stride`` = that length);
    ``out_words``: u32 words each CTA writes; ``logical``: family-defined logical inputs for the
    oracle (``conformance/oracles``); ``decisions``: documented decisions (not spec text) the
    expected values depend on, named in a failure message.
    """

    record: dict
    in_blocks: tuple[bytes, ...]
    out_words: int
    logical: Mapping[str, Any] = field(default_factory=dict)
    decisions: tuple[str, ...] = ()

    @property
    def in_block(self) -> bytes:
        """The in block of CTA rank 0 (every CTA's block has this length)."""
        return self.in_blocks[0] if self.in_blocks else b""

    @property
    def in_bytes(self) -> bytes:
        """All CTAs' blocks back to back (what the arena holds at ``in_ptr``)."""
        return b"".join(self.in_blocks)

    @property
    def ctas(self) -> int:
        return max(1, len(self.in_blocks))


@dataclass(frozen=True)
class TmemRegion:
    """A readback region: ``before[cta, lane, column]`` is its content before the instruction
    under test (preloaded cells), ``known[cta, lane, column]`` says which cells were preloaded."""

    column: int
    before: np.ndarray
    known: np.ndarray

    @property
    def ncols(self) -> int:
        return int(self.before.shape[2])
