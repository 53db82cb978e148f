"""Tensor maps edited in a kernel: ``tensormap.replace`` (PTX ISA §9.7.9.26, mode ``.tile``) and
``tensormap.cp_fenceproxy`` (the copy of an edited map from shared to global memory with the
proxy fence).  Triton's ``tl.make_tensor_descriptor`` kernels zero 128 bytes of shared memory,
replace every field, copy the map to global scratch with ``cp_fenceproxy`` and then use it in
``cp.async.bulk.tensor``.

The map in memory is the simulator's own encoding (:mod:`ptxsim.memory.tensormap`).  A replace decodes
it leniently (bytes without a valid header and CRC are the empty, all-zero map), changes one field
and writes it back with magic, version and a fresh CRC, validating nothing: validation happens
when a tensor copy reads the map (``decode_tensormap``).  Field values as PTX writes them: ``rank``
is the rank minus one, ``elemtype`` the PTX enum (u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16
tf32 tf32.ftz b4x16 b4x16_p64 b6x16_p32 = 0..15; f32.ftz/f64/bf16 differ from the driver's enum),
``box_dim``/``global_dim``/``element_stride`` their values, ``global_stride`` the byte stride of
dimension ``ord + 1``, ``swizzle_mode`` 0 none / 1 32B / 2 64B / 3 128B with
``swizzle_atomicity`` 0 16B / 1 32B / 2 32B + 8B flip / 3 64B (the CUtensorMapSwizzle
combinations; others are refused when the map is used), ``interleave_layout`` and ``fill_mode``
as the driver's enums.  ``ord`` counts dimensions innermost first (Triton: the innermost block
dimension is ``ord`` 0).

Each thread executing the instruction edits the map at its own address (threads in thread order,
so identical edits by a warp are harmless); the map must be 64-byte aligned.  ``cp_fenceproxy``
copies 128 bytes (the only size PTX allows) per thread; the fence itself is exact in the
simulator's sequentially consistent memory.
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import MemoryFault, SimError
from ptxsim.memory.access import state_address
from ptxsim.memory.tensormap import ORDINAL_FIELDS, POISON_FIELDS, SIZE, replace_field
from ptxsim.ptx.registry import ORDERING, Unsupported, opcode
from ptxsim.ptx.types import TYPES

SECTION = "9.7.9.26"
ALIGN = 64
U32, U64 = TYPES["u32"], TYPES["u64"]
FIELDS = POISON_FIELDS[1:]
WORDS = np.arange(0, SIZE, 8, dtype=np.uint64)


def _read_map(m, space: str, sub, a: int, what: str) -> bytes:
    words = [np.asarray(m.load(space, sub, np.uint64(a + off), 64, what), dtype=np.uint64).reshape(-1)[0]
             for off in WORDS.tolist()]
    return np.array(words, dtype=np.uint64).tobytes()


def _write_map(m, space: str, sub, a: int, raw: bytes, what: str) -> None:
    words = np.frombuffer(raw, dtype=np.uint64)
    for j, off in enumerate(WORDS.tolist()):
        m.store(space, sub, np.uint64(a + off), words[j], 64, what)


def _threads(s):
    """One single-thread selection per selected thread, in thread order."""
    for j in range(s.n):
        mask = np.zeros(s.n, dtype=bool)
        mask[j] = True
        yield j, s.narrow(mask)


def _check_align(a: int, what: str, space: str) -> None:
    if a % ALIGN:
        raise MemoryFault(f"{what}: a tensor map address expects {ALIGN}-byte alignment, but got 0x{a:x} (.{space})")


@opcode("tensormap.replace")
def compile_tensormap_replace(ins, q, k):
    q.take("tile", required=True)
    field = q.take(*FIELDS, required=True)
    space = q.take("global", "shared::cta", "shared", default="generic")
    if space == "shared":
        space = "shared::cta"
    q.take("b1024", required=True)
    t = q.take_type(("b32", "b64"))
    q.done()
    what = f"tensormap.replace.{field}"
    if field in ORDINAL_FIELDS:
        addr_op, ord_op, val_op = k.operands(ins, 3)
        read_ord = k.reader(ord_op, U32)
    else:
        addr_op, val_op = k.operands(ins, 2)
        read_ord = None
    addr = state_address(k, addr_op, space)
    read_val = k.reader(val_op, t)
    mask = (1 << t.bits) - 1

    def run(m, s):
        a_all = np.broadcast_to(np.asarray(addr(m, s), dtype=np.uint64), (s.n,))
        v_all = np.broadcast_to(np.asarray(read_val(m, s)), (s.n,))
        o_all = np.broadcast_to(np.asarray(read_ord(m, s)), (s.n,)) if read_ord else None
        for j, sub in _threads(s):
            a = int(a_all[j])
            _check_align(a, what, space)
            value = int(t.to_u64(v_all[j:j + 1], t.bits)[0]) & mask
            ordinal = int(o_all[j]) if o_all is not None else 0
            try:
                raw = replace_field(_read_map(m, space, sub, a, what), field, value, ordinal)
            except ValueError as exc:
                raise SimError(f"{ins.opcode}: {exc} (§{SECTION})") from None
            _write_map(m, space, sub, a, raw, what)
    return run


@opcode("tensormap.cp_fenceproxy")
def compile_cp_fenceproxy(ins, q, k):
    q.take("global", required=True)
    q.take("shared::cta", required=True)
    q.take("tensormap::generic", required=True)
    q.take("release", required=True)
    q.take("cta", "cluster", "gpu", "sys", required=True)
    q.take("sync", required=True)
    q.take("aligned", required=True)
    q.ignore(*ORDERING)
    q.done()
    dst_op, src_op, size = k.operands(ins, 3)
    if getattr(size, "value", None) != SIZE:
        raise Unsupported(f"tensormap.cp_fenceproxy expects a size of {SIZE}, but got {size}")
    dst = state_address(k, dst_op, "global")
    src = state_address(k, src_op, "shared::cta")
    what = "tensormap.cp_fenceproxy"

    def run(m, s):
        d_all = np.broadcast_to(np.asarray(dst(m, s), dtype=np.uint64), (s.n,))
        s_all = np.broadcast_to(np.asarray(src(m, s), dtype=np.uint64), (s.n,))
        for j, sub in _threads(s):
            d, a = int(d_all[j]), int(s_all[j])
            _check_align(d, what, "global")
            _check_align(a, what, "shared::cta")
            _write_map(m, "global", sub, d, _read_map(m, "shared::cta", sub, a, what), what)
    return run


__all__ = ["compile_cp_fenceproxy", "compile_tensormap_replace"]
