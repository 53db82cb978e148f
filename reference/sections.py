"""Section index of the PTX ISA texts this suite conforms to (section id -> title).

Generated once from the headings of ``shared/spec/*.md``; ``tests/test_sections.py``
re-reads those headings and checks this table against them. :class:`SectionRef` names a section
(and the table row, rule or qualifier within it) a case exercises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SECTIONS: dict[str, str] = {
    '9.7.14.6.1': 'Sparse matrix storage',
    '9.7.16': 'TensorCore 5th Generation Family Instructions',
    '9.7.16.1': 'Tensor Memory',
    '9.7.16.1.1': 'Tensor Memory Addressing',
    '9.7.16.1.2': 'Tensor Memory Allocation',
    '9.7.16.2': 'Matrix and Data Movement Shape',
    '9.7.16.2.1': 'Matrix Shape',
    '9.7.16.2.1.1': 'Target ISA Note',
    '9.7.16.2.2': 'Specifying Matrix Shape',
    '9.7.16.2.3': 'Data Movement Shape',
    '9.7.16.2.3.1': 'Memory Layout',
    '9.7.16.2.3.1.1': 'Matrix fragments for shape .32x32b',
    '9.7.16.2.3.1.2': 'Matrix fragments for shape .16x64b',
    '9.7.16.2.3.1.3': 'Matrix fragments for shape .16x128b',
    '9.7.16.2.3.1.4': 'Matrix fragments for shape .16x256b',
    '9.7.16.2.3.1.5': 'Matrix fragments for shape .16x32bx2',
    '9.7.16.3': 'Major-ness supported by Strides',
    '9.7.16.3.1': 'Leading Dimension Stride: relative offset or absolute address',
    '9.7.16.3.1.1': 'Relative offset mode',
    '9.7.16.3.1.2': 'Absolute address mode for K dimension being 48B',
    '9.7.16.3.1.2.1': 'Restrictions on the Leading Dimension Absolute Address Stride',
    '9.7.16.3.2': 'Stride Dimension Byte Offset',
    '9.7.16.3.3': 'Canonical Layouts',
    '9.7.16.4': 'Matrix Descriptors',
    '9.7.16.4.1': 'Shared memory descriptor',
    '9.7.16.4.1.1': 'Target ISA Note',
    '9.7.16.4.2': 'Instruction descriptor',
    '9.7.16.4.3': 'Zero-Column Mask Descriptor',
    '9.7.16.5': 'Issue Granularity',
    '9.7.16.5.1': 'CTA Pair',
    '9.7.16.5.2': 'Peer CTA',
    '9.7.16.6': 'Memory Consistency Model for 5th generation of TensorCore operations',
    '9.7.16.6.1': 'Asynchronous Operations',
    '9.7.16.6.2': 'Pipelined tcgen05 Instructions',
    '9.7.16.6.2.1': 'Implicitly pipelined tcgen05 Instructions',
    '9.7.16.6.2.1.1': 'mbarrier based completion mechanism',
    '9.7.16.6.2.1.2': 'tcgen05.wait instruction based completion mechanism',
    '9.7.16.6.3': 'Specialized Inter-thread Synchronization for tcgen05 instructions',
    '9.7.16.6.4': 'Canonical synchronization patterns',
    '9.7.16.6.4.1': 'Pipelined instructions, same thread',
    '9.7.16.6.4.2': 'Non-pipelined instructions, same thread',
    '9.7.16.6.4.3': 'Pipelined instructions, different thread',
    '9.7.16.6.4.4': 'Non-pipelined instructions, different thread',
    '9.7.16.6.4.5': 'Register dependencies, same thread',
    '9.7.16.6.5': 'Shared Memory Accesses',
    '9.7.16.7': 'Tensor Memory Allocation and Management Instructions',
    '9.7.16.7.1': 'Tensorcore 5th Generation Instructions: tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit',
    '9.7.16.8': 'Tensor Memory and Register Load/Store Instructions',
    '9.7.16.8.1': 'Access restrictions',
    '9.7.16.8.2': 'Packing and Unpacking',
    '9.7.16.8.3': 'Tensorcore 5th Generation Instructions: tcgen05.ld',
    '9.7.16.8.4': 'Tensorcore 5th Generation Instructions: tcgen05.st',
    '9.7.16.8.5': 'Tensorcore 5th Generation Instructions: tcgen05.wait',
    '9.7.16.9': 'Tensor Memory Data Movement Instructions',
    '9.7.16.9.1': 'Optional Decompression',
    '9.7.16.9.1.1': 'Decompression of 4-bit floating point to 8-bit type',
    '9.7.16.9.1.2': 'Decompression of 6-bit floating point to 8-bit type',
    '9.7.16.9.2': 'Tensorcore 5th Generation Instructions: tcgen05.cp',
    '9.7.16.9.3': 'Tensorcore 5th Generation Instructions: tcgen05.shift',
    '9.7.16.10': 'TensorCore 5th Generation Matrix Multiply and accumulate Operations',
    '9.7.16.10.1': 'Transpose and Negate operations',
    '9.7.16.10.2': 'Matrix Layout Organization',
    '9.7.16.10.3': 'Valid Combinations of Type-Size, Major-ness and Swizzling',
    '9.7.16.10.4': 'Packing formats of elements in Tensor and Shared memory',
    '9.7.16.10.4.1': 'Packing format for matrix D in Tensor Memory',
    '9.7.16.10.4.2': 'Packing format for matrix A and B',
    '9.7.16.10.4.3': 'Packing format used for matrix A by .kind::mxf8f6f4 in Tensor Memory',
    '9.7.16.10.4.4': 'Packing format used for matrix A and B by .kind::mxf8f6f4 in Shared Memory',
    '9.7.16.10.4.5': 'Packing format used for matrix A by .kind::mxf4 and .kind::mxf4nvf4 in Tensor Memory',
    '9.7.16.10.4.6': 'Packing format used for matrix A and B by .kind::mxf4 and .kind::mxf4nvf4 in Shared Memory',
    '9.7.16.10.5': 'Data Path Layout Organization',
    '9.7.16.10.5.1': 'Layout A (M = 256)',
    '9.7.16.10.5.2': 'Layout B (M = 128 + cta-group::2 + Dense A matrix)',
    '9.7.16.10.5.3': 'Layout C (M = 128 + cta-group::2 + Sparse A matrix)',
    '9.7.16.10.5.4': 'Layout D (M = 128 + cta-group::1)',
    '9.7.16.10.5.5': 'Layout E (M = 64 + .ws mode)',
    '9.7.16.10.5.6': 'Layout F (M = 64 + non .ws mode)',
    '9.7.16.10.5.7': 'Layout G (M = 32)',
    '9.7.16.10.6': 'Shared Memory Layout and Swizzling',
    '9.7.16.10.7': 'Block Scaling',
    '9.7.16.10.7.1': 'Valid combinations of scale_vectorsize with types and MMA-Kind',
    '9.7.16.10.7.2': 'Scale Factor A ID',
    '9.7.16.10.7.2.1': 'Layout of the Scale Factor A Matrix for scale_vec::1X/block32 with K=32/K=64',
    '9.7.16.10.7.2.2': 'Layout of the Scale Factor A Matrix for scale_vec::2X/block32 with K=64/K=128',
    '9.7.16.10.7.2.3': 'Layout of the Scale Factor A Matrix for scale_vec::4X/block16 with K=64/K=128',
    '9.7.16.10.7.2.4': 'Layout of the Scale Factor A Matrix for block32 with K=96 (Semantically equivalent to scale_vec::3X)',
    '9.7.16.10.7.2.5': 'Layout of the Scale Factor A Matrix for block16 with K=96 (Semantically equivalent to scale_vec::6X)',
    '9.7.16.10.7.3': 'Scale Factor B ID',
    '9.7.16.10.7.3.1': 'Layout of the Scale Factor B Matrix for scale_vec::1X/block32 with K=32/K=64',
    '9.7.16.10.7.3.2': 'Layout of the Scale Factor B Matrix for scale_vec::2X/block32 with K=64/K=128',
    '9.7.16.10.7.3.3': 'Layout of the Scale Factor B Matrix for scale_vec::4X/block16 with K=64/K=128',
    '9.7.16.10.7.3.4': 'Layout of the Scale Factor B Matrix for block32 with K=96 (Semantically equivalent to scale_vec::3X)',
    '9.7.16.10.7.3.5': 'Layout of the Scale Factor B Matrix for block16 with K=96 (Semantically equivalent to scale_vec::6X)',
    '9.7.16.10.8': 'Sparse Matrices',
    '9.7.16.10.8.1': 'Sparse tcgen05.mma.sp with .kind::tf32',
    '9.7.16.10.8.2': 'Sparse tcgen05.mma.sp with .kind::f16, .kind::f8f6f4, .kind::mxf8f6f4, .kind::i8',
    '9.7.16.10.8.3': 'Sparse tcgen05.mma.sp with .kind::mxf4 and .kind::mxf4nvf4',
    '9.7.16.10.8.4': 'Sparsity selector',
    '9.7.16.10.8.4.1': 'Layout of the Sparsity Metadata Matrix for M = 64 for .kind::f16',
    '9.7.16.10.8.4.2': 'Layout of the Sparsity Metadata Matrix for M = 128 / M = 256 for .kind::f16',
    '9.7.16.10.8.4.3': 'Layout of the Sparsity Metadata Matrix for M = 64 for .kind::tf32',
    '9.7.16.10.8.4.4': 'Layout of the Sparsity Metadata Matrix for M = 128 / M = 256 for .kind::tf32',
    '9.7.16.10.8.4.5': 'Layout of the Sparsity Metadata Matrix for M = 64 for .kind::f8f6f4, .kind::mxf8f6f4, .kind::i8, .kind::mxf4, .kind::mxf4nvf4',
    '9.7.16.10.8.4.6': 'Layout of the Sparsity Metadata Matrix for M = 128 / M = 256 for .kind::f8f6f4, .kind::mxf8f6f4, .kind::i8, .kind::mxf4, .kind::mxf4nvf4',
    '9.7.16.10.8.5': 'Alignment restriction',
    '9.7.16.10.9': 'TensorCore 5th Generation of MMA Instructions',
    '9.7.16.10.9.1': 'TensorCore 5th Generation Instructions: tcgen05.mma',
    '9.7.16.10.9.2': 'TensorCore 5th Generation Instructions: tcgen05.mma.sp',
    '9.7.16.10.9.3': 'TensorCore 5th Generation Instructions: tcgen05.mma.ws',
    '9.7.16.10.9.4': 'TensorCore 5th Generation Instructions: tcgen05.mma.ws.sp',
    '9.7.16.11': 'TensorCore 5th Generation Specialized Synchronization Operations',
    '9.7.16.11.1': 'TensorCore 5th Generation Instructions: tcgen05.fence',
    '9.7.16.12': 'TensorCore 5th Generation Async Synchronization Operations',
    '9.7.16.12.1': 'TensorCore 5th Generation Instructions: tcgen05.commit',
}


def section_title(section_id: str) -> str:
    """Title of PTX ISA section ``section_id`` (e.g. ``"9.7.16.4.1"``)."""
    try:
        return SECTIONS[section_id]
    except KeyError:
        raise KeyError(f"unknown PTX ISA section {section_id!r}; expects one of the ids in reference.sections.SECTIONS") from None


# --- references to sections, tables and rules --------------------------------------------------

# Where each numbered table of the texts lives (the heading above its caption).
TABLE_SECTIONS: dict[int, str] = {
    39: "9.7.16.2.1", 40: "9.7.16.4.1", 41: "9.7.16.4.1", 42: "9.7.16.4.2", 43: "9.7.16.4.2",
    44: "9.7.16.4.2", 45: "9.7.16.4.3", 46: "9.7.16.5", 47: "9.7.16.8.3", 48: "9.7.16.8.4",
    49: "9.7.16.10.1", 50: "9.7.16.10.1", 51: "9.7.16.10.2", 52: "9.7.16.10.3", 53: "9.7.16.10.6",
    54: "9.7.16.10.7.1", 55: "9.7.16.10.7.1",
}


@dataclass(frozen=True)
class SectionRef:
    """One section a case exercises; ``detail`` names the table row, rule, layout or qualifier of
    that section the case exercises (e.g. ``"Table 52: 16-bit K-major 128B"``), or is empty."""

    section: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise ValueError(f"SectionRef expects a section id of reference.sections.SECTIONS, but got {self.section!r}")

    def __str__(self) -> str:
        return f"§{self.section}" + (f" {self.detail}" if self.detail else "")


def table_section(table: int) -> str:
    """The section holding numbered table ``table`` (39-55)."""
    try:
        return TABLE_SECTIONS[table]
    except KeyError:
        raise KeyError(f"table expects one of {min(TABLE_SECTIONS)}-{max(TABLE_SECTIONS)}, but got {table!r}") from None


def parent_section(section_id: str) -> str | None:
    """The enclosing section of ``section_id`` in the index (None for a top-level one)."""
    parts = section_id.split(".")
    while len(parts) > 1:
        parts = parts[:-1]
        candidate = ".".join(parts)
        if candidate in SECTIONS:
            return candidate
    return None


_SECTION_MENTION = re.compile(r"§\s*(9\.7\.[0-9.]*[0-9])")
_TABLE_MENTION = re.compile(r"\bTables?\s+(\d+)(?:\s*(?:/|-|and)\s*(\d+))?")


def refs_named_in(text: str) -> tuple[SectionRef, ...]:
    """The sections a rule text names: ``§9.7.16.x`` mentions and ``Table NN`` (the table's section,
    detail ``Table NN``). Unknown ids are left out."""
    out: list[SectionRef] = []
    for m in _SECTION_MENTION.finditer(text):
        if m.group(1) in SECTIONS:
            out.append(SectionRef(m.group(1)))
    for m in _TABLE_MENTION.finditer(text):
        for number in (m.group(1), m.group(2)):
            if number and int(number) in TABLE_SECTIONS:
                out.append(SectionRef(TABLE_SECTIONS[int(number)], f"Table {number}"))
    return tuple(dict.fromkeys(out))


def section_ids(refs) -> tuple[str, ...]:
    """Section ids of ``refs`` in order of first appearance, each once."""
    return tuple(dict.fromkeys(r.section for r in refs))
