"""Why a field bit or value class that no case has cannot be had (the data behind
``tcgen05-cts coverage-fields``).

A hole (``field_coverage.Hole``) is *justified* when a legal case cannot close it: a reserved bit
or the descriptor's fixed constant (from the word's field table, :func:`fixed_reason`), or an
entry of :data:`JUSTIFIED` below, which names the spec rule. Everything else is a hole the suite
should close.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.harness.field_coverage import WORDS, Hole


@dataclass(frozen=True)
class Justification:
    """``word`` / ``field`` as in :class:`Hole`; ``items``: bit indices within the field, or
    class names (empty = all); ``missing``: ``0``, ``1`` or ``value``."""

    word: str
    field: str
    missing: str
    items: tuple
    reason: str
    section: str

    def matches(self, hole: Hole) -> bool:
        if (hole.word, hole.field, hole.missing) != (self.word, self.field, self.missing):
            return False
        if not self.items:
            return True
        if hole.what == "class":
            return hole.item in self.items
        word = WORDS[hole.word]
        bit = int(hole.item.split()[1])
        f, i = word.field_of(bit)
        return i in self.items


_T39 = "9.7.16.2.1"
JUSTIFIED: tuple[Justification, ...] = (
    Justification("idesc Table 42", "M>>4", "1", (0,), "M is 32 (.ws), 64, 128 or 256 (Table 39): M>>4 is 2, 4, 8 "
                  "or 16, never odd", _T39),
    Justification("idesc Table 43", "scale type", "0", (), "kind::mxf8f6f4 scales are ue8m0 only (code 1; "
                  "Table 43 bit 23, Table 55)", "9.7.16.4.2"),
    Justification("idesc Table 44", "A type", "0", (0,), "kind::mxf4 and mxf4nvf4 take e2m1 only (code 1, "
                  "Table 44)", "9.7.16.4.2"),
    Justification("idesc Table 44", "A type", "1", (1, 2), "kind::mxf4 and mxf4nvf4 take e2m1 only (code 1, "
                  "Table 44)", "9.7.16.4.2"),
    Justification("idesc Table 44", "B type", "0", (0,), "kind::mxf4 and mxf4nvf4 take e2m1 only (code 1, "
                  "Table 44)", "9.7.16.4.2"),
    Justification("idesc Table 44", "B type", "1", (1,), "kind::mxf4 and mxf4nvf4 take e2m1 only (code 1, "
                  "Table 44)", "9.7.16.4.2"),
    Justification("idesc Table 44", "transpose A", "1", (), "kind::mxf4 and mxf4nvf4 do not support transpose "
                  "(Table 49)", "9.7.16.10.1"),
    Justification("idesc Table 44", "transpose B", "1", (), "kind::mxf4 and mxf4nvf4 do not support transpose "
                  "(Table 49)", "9.7.16.10.1"),
    Justification("idesc Table 44", "SFA id", "1", (0,), "kind::mxf4/mxf4nvf4 scale-factor ids are 0 or 2 "
                  "(Table 44; ids 1 and 3 only in the K=96 figures, an erratum reading: reference.tables."
                  "descriptor_scale_ids)", "9.7.16.10.7"),
    Justification("idesc Table 44", "SFB id", "1", (0,), "kind::mxf4/mxf4nvf4 scale-factor ids are 0 or 2 "
                  "(Table 44; ids 1 and 3 only in the K=96 figures, an erratum reading: reference.tables."
                  "descriptor_scale_ids)", "9.7.16.10.7"),
    Justification("taddr ld/st", "lane", "1", tuple(range(7, 16)), "Tensor Memory has 128 lanes: lane bits 7-15 "
                  "of a legal address are 0", "9.7.16.1.1"),
)
for _role in ("D", "A", "SFA", "SFB", "metadata", "ld/st", "cp", "shift"):
    JUSTIFIED += (Justification(f"taddr {_role}", "column", "1", tuple(range(9, 16)), "Tensor Memory has 512 "
                                "columns: column bits 9-15 of a legal address are 0", "9.7.16.1.1"),)
    if _role != "ld/st":
        JUSTIFIED += (Justification(f"taddr {_role}", "lane", "1", tuple(range(7, 16)), "Tensor Memory has 128 "
                                    "lanes: lane bits 7-15 of a legal address are 0", "9.7.16.1.1"),)


def fixed_reason(hole: Hole) -> str | None:
    """A reserved bit never 1, or a bit of a fixed constant never at the other value."""
    if hole.what != "bit":
        return None
    word = WORDS[hole.word]
    bit = int(hole.item.split()[1])
    f, i = word.field_of(bit)
    if f.fixed is None or str((f.fixed >> i) & 1) == hole.missing:
        return None
    if f.name == "reserved":
        return f"reserved bit: a legal {hole.word} has it 0"
    return f"{f.name}: a legal {hole.word} always has bit {bit} = {(f.fixed >> i) & 1}"


def justify(hole: Hole) -> tuple[str, str] | None:
    """(reason, section) of a justified hole, or None."""
    reason = fixed_reason(hole)
    if reason:
        return reason, hole.section
    for j in JUSTIFIED:
        if j.matches(hole):
            return j.reason, j.section
    return None
