"""SASS opcode extraction with nvdisasm (tensor-core MMA check of the assembly tier).

``nvdisasm -c`` prints one ``.text.<function>:`` section per kernel; each instruction line looks
like ``/*18f0*/  @!P0 UTCHMMA.2CTA tmem[UR16], gdesc[UR22], ... ;``. We keep the mnemonic's
base (text before the first ``.``) per function.

Tensor-core MMA opcodes (observed with nvdisasm 13.5 on ptxas 13.0 cubins): tcgen05.mma gives
``UTC*MMA`` (UTCHMMA f16/tf32, UTCQMMA f8f6f4, UTCIMMA i8, UTCOMMA mxf4, ...); warp-level
mma.sp gives ``HMMA``/``IMMA``/``QMMA``/``OMMA`` with a ``.SP`` modifier.
"""

from __future__ import annotations

import re
import subprocess

_SECTION_RE = re.compile(r"^\s*\.text\.(?P<name>[\w$.]+):\s*$")
_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T\d]+\s+)?(?P<op>[A-Z][A-Z0-9_]*)(?P<mods>[.\w]*)")
TENSOR_MMA_RE = re.compile(r"^(UTC[A-Z]*MMA|[HIQODB]MMA)$")


def parse_opcodes(listing: str) -> dict[str, set[str]]:
    """function name -> set of opcode mnemonics (base names) from an ``nvdisasm -c`` listing."""
    out: dict[str, set[str]] = {}
    current: str | None = None
    for line in listing.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            current = m.group("name")
            out.setdefault(current, set())
            continue
        if current is None:
            continue
        m = _INSN_RE.match(line)
        if m:
            out[current].add(m.group("op"))
    return out


def opcodes_by_function(nvdisasm: str, cubin: str) -> dict[str, set[str]]:
    """Run nvdisasm on ``cubin``; empty mapping when it cannot disassemble the file."""
    proc = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {}
    return parse_opcodes(proc.stdout)


def has_tensor_mma(opcodes) -> bool:
    """True when any mnemonic is a tensor-core MMA opcode."""
    return any(TENSOR_MMA_RE.match(op) for op in opcodes)
