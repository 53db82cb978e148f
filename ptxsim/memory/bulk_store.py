"""Bulk stores and reductions, shared -> global, completed through bulk async-groups (PTX ISA
§9.7.9.25.4.1 ``cp.async.bulk``, §9.7.9.25.4.2 ``cp.reduce.async.bulk``)::

    cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}  [dstMem], [srcMem], size{, policy}
    cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp{.noftz}.type{.L2::cache_hint}
                                                                  [dstMem], [srcMem], size{, policy}

Both are queued per thread at issue, like the tensor stores of :mod:`ptxsim.memory.tensor` (whose
``cp.async.bulk.commit_group`` / ``wait_group{.read}`` close and perform the groups): shared memory
is read and global memory written when a ``wait_group`` covers the group, or when the thread
exits.  Rules checked: ``size`` a positive multiple of 16, both addresses 16-byte aligned, the
source within the CTA's shared memory; a reduction's ``.type`` one of the listed element types and
its ``redOp`` one the type allows.
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import MemoryFault
from ptxsim.memory.access import state_address
from ptxsim.memory.tensor import REDUCE_OPS, engine, reduce_elements
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

SECTION_STORE, SECTION_REDUCE = "9.7.9.25.4.1", "9.7.9.25.4.2"
U32 = TYPES["u32"]
ALIGN = 16
#: PTX type of cp.reduce.async.bulk -> element type name of :func:`ptxsim.memory.tensor.reduce_elements`
REDUCE_TYPES = {"b32": "uint32", "u32": "uint32", "s32": "int32", "b64": "uint64", "u64": "uint64", "s64": "int64",
                "f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16"}
#: the operations each type allows (§9.7.9.25.4.2)
REDUCE_ALLOWED = {"b32": ("and", "or", "xor"), "b64": ("and", "or", "xor"),
                  "u32": ("add", "min", "max", "inc", "dec"), "s32": ("add", "min", "max"),
                  "u64": ("add", "min", "max"), "s64": ("add", "min", "max"), "f32": ("add",), "f64": ("add",),
                  "f16": ("add", "min", "max"), "bf16": ("add", "min", "max")}


def _spaces(q, what: str, section: str) -> None:
    """Consume ``.global.shared::cta.bulk_group``; say what is wrong otherwise."""
    if q.take("shared::cluster") and q.take("shared::cta"):
        raise Unsupported(f"{what}.shared::cluster.shared::cta (shared -> peer shared memory, mbarrier completion) "
                          "is not modelled")
    if not q.take("global"):
        raise Unsupported(f"a bulk store expects the destination state space .global (§{section}), "
                          f"but got .{'.'.join(q.rest)}")
    q.take("shared::cta", required=True)
    if q.take("mbarrier::complete_tx::bytes"):
        raise Unsupported(f"a bulk store to .global completes through .bulk_group (§{section}), "
                          "not .mbarrier::complete_tx::bytes")
    q.take("bulk_group", required=True)
    if q.flag("cp_mask"):
        raise Unsupported(f"{what} .cp_mask (byte-masked store, sm_100) is not modelled")


def _compile(ins, k, hint: bool, op: str | None, ptype: str | None, section: str):
    ops = k.operands(ins, 4 if hint else 3)
    daddr, saddr = state_address(k, ops[0], "global"), state_address(k, ops[1], "shared::cta")
    rsize = k.reader(ops[2], U32)
    what = ins.opcode

    def run(m, s):
        n = np.broadcast_to(np.asarray(rsize(m, s)).astype(np.int64), (s.n,))
        da = np.broadcast_to(np.asarray(daddr(m, s), dtype=np.uint64), (s.n,))
        sa = np.broadcast_to(np.asarray(saddr(m, s), dtype=np.uint64), (s.n,))
        sflat = m.shared_index(s, sa, ALIGN, f"{what} source", cluster=False)
        eng = engine(m)
        for j, thread in enumerate(s.idx.tolist()):
            size = int(n[j])
            if size <= 0 or size % ALIGN:
                raise MemoryFault(f"{what}: size expects a positive multiple of 16 (§{section}), but got {size}")
            if int(da[j]) % ALIGN:
                raise MemoryFault(f"{what}: destination address expects 16-byte alignment (§{section}), "
                                  f"but got 0x{int(da[j]):x}")
            start = int(sflat[j])
            if start % m.smem_bytes + size > m.smem_bytes:
                raise MemoryFault(f"{what}: {size} bytes at shared address 0x{int(sa[j]):x} run past the CTA's "
                                  f"{m.smem_bytes} bytes of shared memory")
            src = np.arange(start, start + size, dtype=np.int64)
            perform = _store(m, src, int(da[j]), op, ptype, what)
            perform.instr = ins
            if m.hz is not None:        # the async proxy reads the source until the thread's wait_group{.read}
                g = np.unique(src >> 4)
                m.hz.async_read(thread, g, ins)
                m.hz.bulk_source(g, ins)
                perform.hz_source = g
            eng.open.setdefault(thread, []).append(perform)
        m.epoch += 1
    return run


def _store(m, src: np.ndarray, dst: int, op: str | None, ptype: str | None, what: str):
    """The deferred store: read shared memory when performed, write (or reduce into) global memory."""
    def perform():
        addrs = np.uint64(dst) + np.arange(src.size, dtype=np.uint64)
        data = np.ascontiguousarray(m.smem[src])
        if op is not None:
            old = np.ascontiguousarray(m.gmem.gather(addrs, 8, f"{what} destination"))
            data = reduce_elements(op, REDUCE_TYPES[ptype], old, data, what)
        m.gmem.scatter(addrs, np.ascontiguousarray(data).reshape(-1), 8, f"{what} destination")
        m.epoch += 1
    return perform


@opcode("cp.async.bulk.global")
def compile_bulk_store(ins, q, k):
    q.rest.insert(0, "global")
    _spaces(q, "cp.async.bulk", SECTION_STORE)
    hint = q.flag("L2::cache_hint")
    q.done()
    return _compile(ins, k, hint, None, None, SECTION_STORE)


@opcode("cp.reduce.async.bulk")
def compile_bulk_reduce(ins, q, k):
    _spaces(q, "cp.reduce.async.bulk", SECTION_REDUCE)
    op = q.take(*REDUCE_OPS, required=True)
    ptype = q.take(*REDUCE_TYPES, required=True)
    if op not in REDUCE_ALLOWED[ptype]:
        raise Unsupported(f"cp.reduce.async.bulk .{op} expects one of the types "
                          + ", ".join("." + t for t, ops in REDUCE_ALLOWED.items() if op in ops)
                          + f" (§{SECTION_REDUCE}), but got .{ptype}")
    noftz = q.flag("noftz")
    if noftz and ptype not in ("f16", "bf16"):
        raise Unsupported(f"cp.reduce.async.bulk .noftz expects .f16 or .bf16, but got .{ptype}")
    hint = q.flag("L2::cache_hint")
    q.done()
    return _compile(ins, k, hint, op, ptype, SECTION_REDUCE)


__all__ = ["compile_bulk_reduce", "compile_bulk_store"]
