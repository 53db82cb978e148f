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


_ALIGNED = "the lane alignment of D, A and the metadata is 0, or 16 for Layouts F and C (§9.7.16.10.5 table; the " \
           "same for all three, §9.7.16.10.8.5): lane bits 0-3 and 5-6 of a legal address are 0"
for _role in ("D", "A", "metadata"):
    JUSTIFIED += (Justification(f"taddr {_role}", "lane", "1", (0, 1, 2, 3, 5, 6), _ALIGNED, "9.7.16.10.5"),)
for _role in ("SFA", "SFB"):
    JUSTIFIED += (Justification(f"taddr {_role}", "lane", "1", tuple(range(7)), "scale factors are duplicated to all "
                                "32-lane partitions of Tensor Memory: the address names lane 0 and the four quarters "
                                "hold the same", "9.7.16.10.7"),)
JUSTIFIED += (
    Justification("taddr shift", "lane", "1", tuple(range(5)), "the lane of tcgen05.shift's taddr must be aligned to "
                  "32", "9.7.16.9.3"),
    Justification("taddr cp", "lane", "1", (5, 6), "every tcgen05.cp shape reaches lanes up to 96 past its address "
                  "(.4x256b: one row per quarter; the others all 128 lanes): a legal lane is below 32", "9.7.16.9.2"),
    Justification("taddr cp", "lane", "1", tuple(range(5)), "only .4x256b leaves room for a lane offset (1-31), and "
                  "where its rows land then is not in the text (no figure; reference.tmem_cp takes the CUTLASS "
                  "SM100_UTCCP_4x32dp128bit map for lane 0 only): left to the cases at lane 0", "9.7.16.9.2"),
)

for _op, _types in (("warp A", ("bf16", "f16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1")),
                    ("warp B", ("bf16", "f16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1")),
                    ("warp C", ("f16", "f32"))):
    for _t in _types:
        JUSTIFIED += (Justification(f"{_op} {_t}", _t, "value", ("subnormal",), "the text does not say how mma "
                                    "treats subnormal inputs (flushed or kept; §9.7.14.6.1 defers to the dense "
                                    "mma's numerics): the exact-by-construction warp-level cases leave them out "
                                    "(generators/inputs/values.py) and warp-level mma.sp has no numerics "
                                    "companions to compare them under a model", "9.7.14.6.1"),)


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
