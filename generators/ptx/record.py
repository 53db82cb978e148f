"""Case record layout (docs/kernel-abi.md): 256 bytes per case, little-endian.

Bytes 0-31 are common to every kernel; 32-255 are the family-defined words the builders of this
package read. One layout serves every family (a field a kernel does not read is ignored), so a
case record is packed the same way whatever the family::

    off  type    field            read by
    ---  ------  ---------------  -------------------------------------------------------------
      0  u64     in_ptr           all (operand images; per CTA: + cta_rank * in_cta_stride)
      8  u64     out_ptr          all (per CTA: + cta_rank * out_words * 4)
     16  u64     status_ptr       all (u32 x4 per CTA)
     24  u32     out_words        all (words this CTA writes at out_ptr)
     28  u32     flags            bit0 enable-input-d, bit1 a_desc LBO absolute, bit2 b_desc LBO
                                  absolute, bit3 s_desc LBO absolute
     32  u32     in_cta_stride    cta_group::2 kernels
     36  u32     smem_bytes       bytes copied in_ptr + smem_src -> staging buffer + smem_dst
                                  (smem_dst + smem_bytes <= SMEM_CAPACITY, multiple of 16)
     40  u32     smem_src         byte offset of the shared-memory image in the in block (multiple of 16)
     44  u32     regs_src         byte offset of per-thread register inputs (u32 [thread][reg])
     48  u64     a_desc           shared memory descriptor of A, start (and LBO if absolute)
                                  relative to the staging buffer
     56  u64     b_desc           same for B
     64  u32     idesc            instruction descriptor
     68  u32     tm_d             TMEM addresses relative to the allocation (lane << 16 | column)
     72  u32     tm_a
     76  u32     tm_sfa
     80  u32     tm_sfb
     84  u32     tm_meta
     88  u64     zcm_desc         zero-column mask descriptor
     96  u32x8   dol              disable-output-lane words (4 for cta_group::1, 8 for ::2)
    128  u32x18  preload          6 x {tmem_rel, ncols, in_offset}: TMEM filled before the test
                                  (in_offset: byte offset in the in block of [lane][column] u32)
    200  u32x4   readback         2 x {tmem_rel, ncols}: TMEM read back into out after the test
    216  u32     taddr            TMEM address of ld/st/cp/shift under test (relative)
    220  u32     smem_dst         byte offset in the staging buffer where the copy lands (multiple of
                                  1024; operands placed high in the shared-memory window)
    224  u64     s_desc           source descriptor of tcgen05.cp (relative, as a_desc)
    232  u32x6   aux              family-specific extras: commit ctaMask (aux[0]); warp-level
                                  block-scale byte-id-a, thread-id-a, byte-id-b, thread-id-b (aux[0..3])

Output block (per CTA): readback regions in order, each [lane 0..127][column] u32, then the
per-thread register dump [thread][register] u32 of the kernels that dump registers.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

RECORD_BYTES = 256
STATUS_WORDS = 4
SMEM_CAPACITY = 224 * 1024           # staging buffer bytes (dynamic shared memory, 1024-aligned): with the
                                     # alignment slack and the static mbarriers below sm_100's 227 KiB per CTA
DYNAMIC_SMEM_BYTES = SMEM_CAPACITY + 1024   # launch with this much dynamic smem (alignment slack)
PRELOAD_SLOTS = 6
READBACK_SLOTS = 2

FLAG_ENABLE_INPUT_D = 1 << 0
FLAG_A_LBO_ABSOLUTE = 1 << 1
FLAG_B_LBO_ABSOLUTE = 1 << 2
FLAG_S_LBO_ABSOLUTE = 1 << 3

# name -> (byte offset, struct format, count)
FIELDS: dict[str, tuple[int, str, int]] = {
    "in_ptr": (0, "Q", 1), "out_ptr": (8, "Q", 1), "status_ptr": (16, "Q", 1),
    "out_words": (24, "I", 1), "flags": (28, "I", 1),
    "in_cta_stride": (32, "I", 1), "smem_bytes": (36, "I", 1), "smem_src": (40, "I", 1),
    "regs_src": (44, "I", 1),
    "a_desc": (48, "Q", 1), "b_desc": (56, "Q", 1), "idesc": (64, "I", 1),
    "tm_d": (68, "I", 1), "tm_a": (72, "I", 1), "tm_sfa": (76, "I", 1), "tm_sfb": (80, "I", 1),
    "tm_meta": (84, "I", 1), "zcm_desc": (88, "Q", 1), "dol": (96, "I", 8),
    "preload": (128, "I", 18), "readback": (200, "I", 4), "taddr": (216, "I", 1),
    "smem_dst": (220, "I", 1), "s_desc": (224, "Q", 1), "aux": (232, "I", 6),
}


def offset(name: str, index: int = 0) -> int:
    """Byte offset of ``name`` (element ``index`` of an array field)."""
    off, fmt, count = FIELDS[name]
    if not 0 <= index < count:
        raise IndexError(f"{name}[{index}] expects an index below {count}, but got {index}")
    return off + index * struct.calcsize(fmt)


STAGING_ALIGN = 16
STAGING_ALIGNED = ("smem_bytes", "smem_src", "smem_dst")     # StageSmem copies with ld.global.v4 / st.shared.v4


def pack_case_record(values: Mapping[str, object]) -> bytes:
    """Pack a case record (unknown names are an error; absent fields are 0)."""
    buf = bytearray(RECORD_BYTES)
    for name, value in values.items():
        if name not in FIELDS:
            raise KeyError(f"case record field expects one of {', '.join(FIELDS)}, but got {name!r}")
        off, fmt, count = FIELDS[name]
        items = list(value) if count > 1 else [value]
        if len(items) > count:
            raise ValueError(f"case record field {name} expects at most {count} values, but got {len(items)}")
        if name in STAGING_ALIGNED and int(value) % STAGING_ALIGN:
            raise ValueError(f"case record field {name} expects a multiple of {STAGING_ALIGN} (the staging copy "
                             f"moves 16 bytes per thread), but got {int(value)}")
        for i, item in enumerate(items):
            struct.pack_into("<" + fmt, buf, off + i * struct.calcsize(fmt), int(item))
    return bytes(buf)


def unpack_case_record(data: bytes) -> dict[str, object]:
    """Inverse of :func:`pack_case_record` (arrays as tuples)."""
    if len(data) != RECORD_BYTES:
        raise ValueError(f"case record expects {RECORD_BYTES} bytes, but got {len(data)}")
    out: dict[str, object] = {}
    for name, (off, fmt, count) in FIELDS.items():
        vals = struct.unpack_from("<" + fmt * count, data, off)
        out[name] = vals if count > 1 else vals[0]
    return out
