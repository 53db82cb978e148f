"""What the fake driver reads from a cubin: its SM number, whether it is arch-specific, its kernels.

An ELF64 cubin as ptxas 13.0 writes it (checked by tests/test_fake_cuda.py against real ptxas
output for every ``-arch``)::

    e_machine = 190 (EM_CUDA)
    e_flags   bits 31..16  ABI flags (0x0600)
              bits 15..8   SM number: 80, 90, 100, 103, 110, 120, 121
              bits  7..0   0x04 before sm_100, 0x02 from sm_100 on
    .nv.compat  4-byte records (format 0x02, attribute, u16 value); attribute 0x09 = 1 for an
                arch-specific (``sm_XYa``) cubin, 0 for plain and family (``sm_XYf``) ones
    .symtab     one FUNC symbol per kernel entry
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

EM_CUDA = 190
STT_FUNC = 2
COMPAT_ARCH_SPECIFIC = 0x09


class NotACubin(ValueError):
    """The bytes are not an ELF64 CUDA image."""


@dataclass(frozen=True)
class CubinInfo:
    sm: int                      # 90 for sm_90
    arch_specific: bool          # assembled for sm_XYa
    functions: frozenset[str]

    @property
    def major_minor(self) -> tuple[int, int]:
        return self.sm // 10, self.sm % 10


def _sections(data: bytes) -> dict[str, tuple[int, int, int, int]]:
    """name -> (type, offset, size, link)"""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]

    def name(offset: int) -> str:
        start = names_at + offset
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    return {name(h[0]): (h[1], h[4], h[5], h[6]) for h in headers}, headers


def read_cubin(data: bytes) -> CubinInfo:
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:
        raise NotACubin("not an ELF64 image")
    machine = struct.unpack_from("<H", data, 0x12)[0]
    if machine != EM_CUDA:
        raise NotACubin(f"e_machine {machine} is not EM_CUDA")
    flags = struct.unpack_from("<I", data, 0x30)[0]
    sections, headers = _sections(data)
    arch_specific = False
    compat = sections.get(".nv.compat")
    if compat is not None:
        blob = data[compat[1]:compat[1] + compat[2]]
        for i in range(0, len(blob) - 3, 4):
            fmt, attr, value = blob[i], blob[i + 1], struct.unpack_from("<H", blob, i + 2)[0]
            if fmt != 0x02:
                break
            if attr == COMPAT_ARCH_SPECIFIC:
                arch_specific = value == 1
    functions = set()
    symtab = sections.get(".symtab")
    if symtab is not None:
        strtab = headers[symtab[3]][4]
        for off in range(symtab[1], symtab[1] + symtab[2], 24):
            st_name, st_info = struct.unpack_from("<IB", data, off)
            if st_info & 0xF == STT_FUNC:
                start = strtab + st_name
                functions.add(data[start:data.index(b"\0", start)].decode("ascii", "replace"))
    return CubinInfo((flags >> 8) & 0xFF, arch_specific, frozenset(functions))
