"""Tensor maps (TMA descriptors) for the simulator: ``tensormap_tiled`` mirrors the CUDA driver's
``cuTensorMapEncodeTiled`` (CUDA Driver API §6.30 "Tensor Map Object Management"), with its
argument rules, and packs the result into 128 bytes that ``cp.async.bulk.tensor`` reads back with
:func:`decode_tensormap`.

The real ``CUtensorMap`` is opaque (128 bytes, 64-byte aligned); the layout below is the
simulator's OWN encoding, never the hardware's.  A kernel must only hand it to tensor
instructions.  Arguments follow the driver API: dimensions innermost first, ``global_strides``
in bytes for dimensions 1..rank-1 (rank-1 entries; dimension 0 is contiguous).

Byte layout (little endian)::

    offset size  field
    0      8     magic b"PTXSIMTM"
    8      2     version (1)
    10     1     data type: CUtensorMapDataType value (0 uint8 .. 15 16u6_align16b)
    11     1     rank (1..5)
    12     1     interleave: CUtensorMapInterleave (0 none, 1 16B, 2 32B)
    13     1     swizzle: CUtensorMapSwizzle (0 none, 1 32B, 2 64B, 3 128B, 4 128B_atom_32B,
                 5 128B_atom_32B_flip_8B, 6 128B_atom_64B)
    14     1     l2 promotion: CUtensorMapL2promotion (0 none, 1 64B, 2 128B, 3 256B)
    15     1     oob fill: CUtensorMapFloatOOBfill (0 none, 1 nan_request_zero_fma)
    16     8     global address
    24     40    global dims, 5 x u64 (unused ranks 0)
    64     32    global strides in bytes of dims 1..4, 4 x u64 (unused 0)
    96     5     box dims minus 1, 5 x u8
    101    5     element strides minus 1, 5 x u8
    106    18    zero (tensormap.replace records a value the layout cannot hold here: field, ordinal, u64)
    124    4     CRC-32 (zlib) of bytes 0..123

:func:`decode_tensormap` checks magic, version, CRC and re-validates every field with the same
rules as the encoder, so garbage (or a real driver-made CUtensorMap) is refused with a clear
error.  Packed sub-byte types (``16u4_align8b``, ``16u4_align16b``, ``16u6_align16b``, CUDA 12.8)
encode and validate; the simulator's copies do not model them.  FP8 data has no type of its own
in the CUDA enum: encode it as ``uint8``.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

MAGIC = b"PTXSIMTM"
VERSION = 1
SIZE = 128
ALIGN = 64                       # "tensorMap address must be aligned to 64 bytes"
SOURCE = "cuTensorMapEncodeTiled (CUDA Driver API, Tensor Map Object Management)"

# CUtensorMapDataType, in enum order: (name, element bits)
DTYPES: tuple[tuple[str, int], ...] = (
    ("uint8", 8), ("uint16", 16), ("uint32", 32), ("int32", 32), ("uint64", 64), ("int64", 64),
    ("float16", 16), ("float32", 32), ("float64", 64), ("bfloat16", 16), ("float32_ftz", 32),
    ("tfloat32", 32), ("tfloat32_ftz", 32), ("16u4_align8b", 4), ("16u4_align16b", 4), ("16u6_align16b", 6),
)
DTYPE_CODE = {name: i for i, (name, _) in enumerate(DTYPES)}
FLOAT_TYPES = frozenset({"float16", "float32", "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz"})
PACKED_TYPES = frozenset({"16u4_align8b", "16u4_align16b", "16u6_align16b"})
INTERLEAVES = ("none", "16B", "32B")
SWIZZLES = ("none", "32B", "64B", "128B", "128B_atom_32B", "128B_atom_32B_flip_8B", "128B_atom_64B")
L2_PROMOTIONS = ("none", "64B", "128B", "256B")
OOB_FILLS = ("none", "nan_request_zero_fma")
SWIZZLE_SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128, "128B_atom_32B": 128,
                "128B_atom_32B_flip_8B": 128, "128B_atom_64B": 128}

_HEAD = struct.Struct("<8sHBBBBBBQ")          # 24 bytes


@dataclass(frozen=True)
class TensorMap:
    """A decoded tiled tensor map (dims, strides, box innermost first; strides in bytes)."""

    dtype: str
    rank: int
    global_address: int
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]          # rank - 1 byte strides, for dims 1..rank-1
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "none"

    @property
    def element_bits(self) -> int:
        return DTYPES[DTYPE_CODE[self.dtype]][1]

    @property
    def element_bytes(self) -> int:
        """Bytes per element (packed sub-byte types: 0)."""
        return self.element_bits // 8 if self.element_bits % 8 == 0 else 0

    @property
    def byte_strides(self) -> tuple[int, ...]:
        """Byte stride of every dimension, dimension 0 (one element) included."""
        return (self.element_bytes, *self.global_strides)

    @property
    def box_counts(self) -> tuple[int, ...]:
        """Elements copied along each dimension: ceil(box / elementStride), except dimension 0
        without interleave, whose element stride "is ignored" (the driver API)."""
        counts = []
        for i, (b, s) in enumerate(zip(self.box_dims, self.element_strides, strict=True)):
            counts.append(b if (i == 0 and self.interleave == "none") else -(-b // s))
        return tuple(counts)

    @property
    def box_bytes(self) -> int:
        n = 1
        for c in self.box_counts:
            n *= c
        return n * self.element_bits // 8

    def encode(self) -> bytes:
        return tensormap_tiled(self.dtype, self.rank, self.global_address, self.global_dims, self.global_strides,
                               self.box_dims, self.element_strides, self.interleave, self.swizzle,
                               self.l2_promotion, self.oob_fill)


def _fail(rule: str, got) -> None:
    raise ValueError(f"{rule} ({SOURCE}), but got {got}")


def _choice(what: str, value, options: tuple[str, ...]) -> str:
    """``value`` as one of ``options``: the name (case-insensitive, CU_TENSOR_MAP_* prefix allowed) or
    the CUDA enum value."""
    if isinstance(value, bool):
        _fail(f"{what} expects one of {', '.join(options)}", repr(value))
    if isinstance(value, int):
        if 0 <= value < len(options):
            return options[value]
        _fail(f"{what} expects an enum value 0..{len(options) - 1} ({', '.join(options)})", value)
    if isinstance(value, str):
        key = value.lower()
        for prefix in ("cu_tensor_map_data_type_", "cu_tensor_map_interleave_", "cu_tensor_map_swizzle_",
                       "cu_tensor_map_l2_promotion_l2_", "cu_tensor_map_l2_promotion_",
                       "cu_tensor_map_float_oob_fill_"):
            if key.startswith(prefix):
                key = key[len(prefix):]
        for o in options:
            if o.lower() == key:
                return o
    _fail(f"{what} expects one of {', '.join(options)}", repr(value))


def _ints(what: str, values, n: int) -> tuple[int, ...]:
    try:
        out = tuple(values)
    except TypeError:
        _fail(f"{what} expects a sequence of {n} ints", repr(values))
    if len(out) != n:
        _fail(f"{what} expects {n} entries", f"{len(out)} ({list(out)})")
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            _fail(f"{what} expects ints", repr(v))
    return tuple(int(v) for v in out)


def validate(dtype, rank, global_address, global_dims, global_strides, box_dims, element_strides,
             interleave="none", swizzle="none", l2_promotion="none", oob_fill="none") -> TensorMap:
    """The checked :class:`TensorMap`; ValueError "<rule> expects X, but got Y" on any violation of
    the driver API's documented requirements for ``cuTensorMapEncodeTiled``."""
    dtype = _choice("tensorDataType", dtype, tuple(n for n, _ in DTYPES))
    interleave = _choice("interleave", interleave, INTERLEAVES)
    swizzle = _choice("swizzle", swizzle, SWIZZLES)
    l2_promotion = _choice("l2Promotion", l2_promotion, L2_PROMOTIONS)
    oob_fill = _choice("oobFill", oob_fill, OOB_FILLS)
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= 5:
        _fail("tensorRank expects 1..5", repr(rank))
    if interleave != "none" and rank < 3:
        _fail("tensorRank expects >= 3 when interleave is not NONE", rank)
    bits = DTYPES[DTYPE_CODE[dtype]][1]
    align16b = dtype in ("16u4_align16b", "16u6_align16b")
    if isinstance(global_address, bool) or not isinstance(global_address, int) or not 0 <= global_address < 1 << 64:
        _fail("globalAddress expects a 64-bit address", repr(global_address))
    addr_align = 32 if (interleave == "32B" or align16b) else 16
    if global_address % addr_align:
        why = "interleave 32B" if interleave == "32B" else dtype if align16b else ""
        _fail(f"globalAddress expects {addr_align}-byte alignment" + (f" (with {why})" if why else ""),
              hex(global_address))
    dims = _ints("globalDim", global_dims, rank)
    for d in dims:
        if not 1 <= d <= 1 << 32:
            _fail("globalDim expects every dimension non-zero and <= 2^32", list(dims))
    if align16b and dims[0] % 128:
        _fail(f"globalDim[0] expects a multiple of 128 for {dtype}", dims[0])
    if dtype == "16u4_align8b" and dims[0] % 2:
        _fail("globalDim[0] expects a multiple of 2 for 16u4_align8b", dims[0])
    strides = _ints("globalStrides", global_strides, rank - 1)
    stride_align = 32 if (interleave == "32B" or align16b) else 16
    for s in strides:
        if s < 0 or s % stride_align or s >= 1 << 40:
            _fail(f"globalStrides expects multiples of {stride_align} less than 2^40", list(strides))
    box = _ints("boxDim", box_dims, rank)
    for b in box:
        if not 1 <= b <= 256:
            _fail("boxDim expects every entry non-zero and <= 256", list(box))
    inner_bits = box[0] * bits
    if interleave == "none" and inner_bits % 128:
        _fail("boxDim[0] * elementSize expects a multiple of 16 bytes when interleave is NONE",
              f"{inner_bits / 8:g} bytes (boxDim[0] = {box[0]})")
    if align16b and box[0] != 128:
        _fail(f"boxDim[0] expects 128 for {dtype}", box[0])
    estrides = _ints("elementStrides", element_strides, rank)
    for e in estrides:
        if not 1 <= e <= 8:
            _fail("elementStrides expects every entry non-zero and <= 8", list(estrides))
    if interleave == "32B" and swizzle != "32B":
        _fail("swizzle expects 32B when interleave is 32B", swizzle)
    span = SWIZZLE_SPAN[swizzle]
    if interleave == "none" and span and inner_bits > span * 8:
        _fail(f"boxDim[0] * elementSize expects <= {span} bytes (the swizzle span) with swizzle {swizzle}",
              f"{inner_bits // 8} bytes")
    if dtype == "16u6_align16b" and swizzle not in ("none", "128B", "128B_atom_32B", "128B_atom_64B"):
        _fail("swizzle expects none, 128B, 128B_atom_32B or 128B_atom_64B for 16u6_align16b", swizzle)
    if dtype == "16u6_align16b" and interleave != "none":
        _fail("interleave expects none for 16u6_align16b", interleave)
    if dtype == "16u4_align16b" and swizzle not in ("none", "128B", "128B_atom_32B"):
        _fail("swizzle expects none, 128B or 128B_atom_32B for 16u4_align16b", swizzle)
    if oob_fill != "none" and dtype not in FLOAT_TYPES:
        _fail("oobFill nan_request_zero_fma expects a floating-point tensorDataType", dtype)
    return TensorMap(dtype, rank, int(global_address), dims, strides, box, estrides, interleave, swizzle,
                     l2_promotion, oob_fill)


def tensormap_tiled(dtype, rank, global_address, global_dims, global_strides, box_dims, element_strides,
                    interleave="none", swizzle="none", l2_promotion="none", oob_fill="none") -> bytes:
    """The simulator's 128-byte tensor map for ``cuTensorMapEncodeTiled(dtype, rank, globalAddress,
    globalDim, globalStrides, boxDim, elementStrides, interleave, swizzle, l2Promotion, oobFill)``.

    Dims, strides and boxes innermost first; ``global_strides`` has rank-1 byte strides (dims
    1..rank-1).  Names as in the CUDA enums (``"float16"``, ``"128B"``, ``"nan_request_zero_fma"``;
    CUDA enum ints or ``CU_TENSOR_MAP_*`` spellings work too).  Raises ValueError naming the
    violated rule.  Pass the result as the kernel's ``.param .align 64 .b8 [128]`` argument, or
    write it to 64-byte aligned global memory.
    """
    t = validate(dtype, rank, global_address, global_dims, global_strides, box_dims, element_strides,
                 interleave, swizzle, l2_promotion, oob_fill)
    pad = lambda xs, n: tuple(xs) + (0,) * (n - len(xs))     # noqa: E731
    raw = _HEAD.pack(MAGIC, VERSION, DTYPE_CODE[t.dtype], t.rank, INTERLEAVES.index(t.interleave),
                     SWIZZLES.index(t.swizzle), L2_PROMOTIONS.index(t.l2_promotion), OOB_FILLS.index(t.oob_fill),
                     t.global_address)
    raw += struct.pack("<5Q", *pad(t.global_dims, 5)) + struct.pack("<4Q", *pad(t.global_strides, 4))
    raw += bytes(pad([b - 1 for b in t.box_dims], 5)) + bytes(pad([e - 1 for e in t.element_strides], 5))
    raw += bytes(124 - len(raw))
    return raw + struct.pack("<I", zlib.crc32(raw))


def decode_tensormap(raw) -> TensorMap:
    """The :class:`TensorMap` of 128 bytes made by :func:`tensormap_tiled`; ValueError for anything
    else (wrong size, magic, version or checksum, or fields breaking the encoder's rules)."""
    raw = bytes(raw)
    if len(raw) != SIZE:
        raise ValueError(f"tensor map expects {SIZE} bytes, but got {len(raw)}")
    magic, version, dt, rank, il, sw, l2, oob, address = _HEAD.unpack_from(raw)
    if magic != MAGIC:
        raise ValueError(f"tensor map expects the simulator's magic {MAGIC!r} (made by ptxsim.tensormap_tiled; a "
                         f"CUDA driver CUtensorMap is opaque and not understood), but got {magic!r}")
    if version != VERSION:
        raise ValueError(f"tensor map expects version {VERSION}, but got {version}")
    crc = struct.unpack_from("<I", raw, 124)[0]
    if zlib.crc32(raw[:124]) != crc:
        raise ValueError(f"tensor map expects CRC-32 0x{zlib.crc32(raw[:124]):08x} of bytes 0..123, but got "
                         f"0x{crc:08x} (the map was modified after encoding)")
    if raw[POISON:124] != bytes(124 - POISON):
        field, ordinal, value = raw[POISON], raw[POISON + 1], struct.unpack_from("<Q", raw, POISON + 2)[0]
        name = POISON_FIELDS[field] if field < len(POISON_FIELDS) else f"field {field}"
        where = f"[{ordinal}]" if name in ORDINAL_FIELDS else ""
        raise ValueError(f"tensor map {name}{where} was set by tensormap.replace to {value} (0x{value:x}), which its "
                         "encoding cannot hold (box_dim and element_stride expect 1..256, rank 1..5, elemtype, "
                         "interleave_layout, swizzle_mode, swizzle_atomicity and fill_mode their enum values)")
    if sw >= len(SWIZZLES) and sw & 0x80:
        mode, atom = (sw >> 3) & 0xF, sw & 7
        raise ValueError(f"tensor map swizzle_mode {mode} with swizzle_atomicity {atom} (set by tensormap.replace) "
                         "expects one of the CUtensorMapSwizzle combinations (mode 0..3 with atomicity 0, or mode 3 "
                         "(128B) with atomicity 1 (32B), 2 (32B + 8B flip) or 3 (64B))")
    if not 1 <= rank <= 5:
        raise ValueError(f"tensor map rank expects 1..5, but got {rank}")
    for what, code, options in (("data type", dt, DTYPES), ("interleave", il, INTERLEAVES), ("swizzle", sw, SWIZZLES),
                                ("l2 promotion", l2, L2_PROMOTIONS), ("oob fill", oob, OOB_FILLS)):
        if code >= len(options):
            raise ValueError(f"tensor map {what} expects an enum value below {len(options)}, but got {code}")
    dims = struct.unpack_from("<5Q", raw, 24)[:rank]
    strides = struct.unpack_from("<4Q", raw, 64)[:rank - 1]
    box = tuple(b + 1 for b in raw[96:96 + rank])
    est = tuple(e + 1 for e in raw[101:101 + rank])
    return validate(DTYPES[dt][0], rank, address, dims, strides, box, est, INTERLEAVES[il], SWIZZLES[sw],
                    L2_PROMOTIONS[l2], OOB_FILLS[oob])


# -- in-kernel edits (tensormap.replace) ----------------------------------------------------------
#
# ``tensormap.replace`` edits one field of a map in memory and nothing is validated until a copy
# uses the map, so these helpers decode leniently (any 128 bytes without a valid header and CRC
# are an all-zero, empty map), change raw fields and re-encode with magic, version and a fresh
# CRC.  Values the byte layout cannot hold are recorded in the reserved bytes at ``POISON``
# (field code, ordinal, u64 value), which :func:`decode_tensormap` reports.  A swizzle_mode /
# swizzle_atomicity pair with no CUtensorMapSwizzle equivalent is stored as
# ``0x80 | mode << 3 | atomicity`` in the swizzle byte (refused when decoded).

POISON = 106
POISON_FIELDS = ("none", "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
                 "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode")
ORDINAL_FIELDS = frozenset({"box_dim", "global_dim", "global_stride", "element_stride"})
#: PTX ``.elemtype`` enum (PTX ISA "tensormap.replace": u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16
#: tf32 tf32.ftz b4x16 b4x16_p64 b6x16_p32) -> CUtensorMapDataType name; 8..10 differ from the
#: driver's order (Triton: ``TMA_DTYPE_DEVICE_TO_HOST``)
PTX_ELEMTYPES = ("uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float32_ftz",
                 "float64", "bfloat16", "tfloat32", "tfloat32_ftz", "16u4_align8b", "16u4_align16b", "16u6_align16b")
#: (PTX swizzle_mode, swizzle_atomicity) -> CUtensorMapSwizzle code
SWIZZLE_PAIRS = {(0, 0): 0, (1, 0): 1, (2, 0): 2, (3, 0): 3, (3, 1): 4, (3, 2): 5, (3, 3): 6}
_PAIR_OF = {v: k for k, v in SWIZZLE_PAIRS.items()}


def decode_raw(raw) -> bytearray:
    """``raw`` as an editable 128-byte map: a copy if magic, version and CRC are valid, else all zeros
    (the empty map).  No field is validated."""
    raw = bytes(raw)
    if (len(raw) == SIZE and raw[:8] == MAGIC and struct.unpack_from("<H", raw, 8)[0] == VERSION
            and zlib.crc32(raw[:124]) == struct.unpack_from("<I", raw, 124)[0]):
        return bytearray(raw)
    return bytearray(SIZE)


def encode_raw(buf: bytearray) -> bytes:
    """The 128 bytes of an edited map: magic, version and a fresh CRC written, nothing validated."""
    buf = bytearray(buf)
    buf[:10] = MAGIC + struct.pack("<H", VERSION)
    buf[124:] = struct.pack("<I", zlib.crc32(bytes(buf[:124])))
    return bytes(buf)


def replace_field(raw, field: str, value: int, ordinal: int = 0) -> bytes:
    """``raw`` with one field replaced as ``tensormap.replace.tile.<field>`` does (PTX encodings:
    ``rank`` is rank - 1, ``elemtype`` the PTX enum, box/dims/element strides their values,
    ``global_stride`` bytes of dimension ``ordinal + 1``; ordinals innermost first).  Raises
    ValueError for an ordinal out of range; unrepresentable values are recorded (see above)."""
    buf = decode_raw(raw)
    value = int(value)
    code = POISON_FIELDS.index(field)
    limit = 4 if field == "global_stride" else 5
    if field in ORDINAL_FIELDS and not 0 <= ordinal < limit:
        raise ValueError(f"tensormap.replace.{field} expects an ordinal 0..{limit - 1}, but got {ordinal}")
    bad = False
    if field == "global_address":
        struct.pack_into("<Q", buf, 16, value)
    elif field == "rank":
        bad = not 0 <= value < 255
        if not bad:
            buf[11] = value + 1
    elif field == "global_dim":
        struct.pack_into("<Q", buf, 24 + 8 * ordinal, value)
    elif field == "global_stride":
        struct.pack_into("<Q", buf, 64 + 8 * ordinal, value)
    elif field in ("box_dim", "element_stride"):
        bad = not 1 <= value <= 256
        if not bad:
            buf[(96 if field == "box_dim" else 101) + ordinal] = value - 1
    elif field == "elemtype":
        bad = not 0 <= value < len(PTX_ELEMTYPES)
        if not bad:
            buf[10] = DTYPE_CODE[PTX_ELEMTYPES[value]]
    elif field in ("interleave_layout", "fill_mode"):
        bad = not 0 <= value < 128
        if not bad:
            buf[12 if field == "interleave_layout" else 15] = value
    elif field in ("swizzle_mode", "swizzle_atomicity"):
        sw = buf[13]
        mode, atom = _PAIR_OF[sw] if sw in _PAIR_OF else (((sw >> 3) & 0xF, sw & 7) if sw & 0x80 else (sw, 0))
        if field == "swizzle_mode":
            bad = not 0 <= value < 16
            mode = value if not bad else mode
        else:
            bad = not 0 <= value < 8
            atom = value if not bad else atom
        buf[13] = SWIZZLE_PAIRS.get((mode, atom), 0x80 | mode << 3 | atom)
    else:
        raise ValueError(f"tensormap.replace field {field!r} is not one of {', '.join(POISON_FIELDS[1:])}")
    if bad:
        if buf[POISON] == 0:
            buf[POISON], buf[POISON + 1] = code, ordinal
            struct.pack_into("<Q", buf, POISON + 2, value & ((1 << 64) - 1))
    elif buf[POISON] == code and buf[POISON + 1] == ordinal:
        buf[POISON:124] = bytes(124 - POISON)
    return encode_raw(buf)


__all__ = ["DTYPES", "SWIZZLES", "SWIZZLE_SPAN", "TensorMap", "decode_raw", "decode_tensormap", "encode_raw",
           "replace_field", "tensormap_tiled", "validate"]
