"""cp.async.bulk (non-tensor bulk copy, global -> shared, PTX ISA §9.7.9.25.4.1) with mbarrier
completion (``.mbarrier::complete_tx::bytes``), in the asynchronous proxy.  Bulk stores and
reductions to global memory (``.bulk_group`` completion) are :mod:`ptxsim.memory.bulk_store`.

Timing model — the latest legal completion, so a kernel that does not wait correctly reads stale
shared memory: an issued copy reads its source at issue, and writes its destination and signals
``complete_tx`` of ``size`` bytes (hook ``mbarrier``, event ``complete_tx``) only when no thread of
the machine can make progress without it (every live thread spins on a failed wait; scheduler
calls :func:`progress`). Copies still pending when the last thread exits are dropped.

Rules checked (§9.7.9.25.4.1): size a positive multiple of 16, both addresses 16-byte aligned,
the destination within the CTA's shared memory, the mbarrier initialised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxsim.errors import MemoryFault
from ptxsim.memory.access import state_address
from ptxsim.memory.mbarrier import signal, words
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

SECTION = "9.7.9.25.4.1"
U32 = TYPES["u32"]
ALIGN = 16


@dataclass
class BulkCopy:
    """One asynchronous copy into shared memory (``cp.async.bulk``, and the tensor loads of
    :mod:`ptxsim.memory.tensor`): ``data`` lands at each destination, then each mbarrier gets
    ``complete_tx`` of its size."""

    dsts: list             # per destination: a slice or flat byte indices into the machine's shared memory
    data: np.ndarray       # uint8 source bytes, read at issue
    mbars: list[int]       # uint64 word index of each destination's mbarrier object
    instr: object


class BulkEngine:
    """Copies issued and not yet landed, oldest first."""

    def __init__(self, m) -> None:
        self.pending: list[BulkCopy] = []
        m.progress_hooks.append(self.land_one)

    def land_one(self, m) -> bool:
        """Land the oldest copy (data, then complete_tx); False when none is pending."""
        if not self.pending:
            return False
        c = self.pending.pop(0)
        for dst in c.dsts:
            m.smem[dst] = c.data
            if m.hz is not None:
                m.hz.async_write(dst)
        m.epoch += 1
        signal(m, np.array(c.mbars, dtype=np.int64), 0, -int(c.data.size), "complete_tx", c.instr)
        return True


def engine(m) -> BulkEngine:
    return m.extension("cp.async.bulk", BulkEngine)


@opcode("cp.async.bulk")
def compile_bulk(ins, q, k):
    if "prefetch" in q.rest:
        raise Unsupported("cp.async.bulk.prefetch.L2 (a bulk prefetch into L2) is not modelled")
    if "shared::cluster" in q.rest and "shared::cta" in q.rest:
        raise Unsupported("cp.async.bulk.shared::cluster.shared::cta (shared memory to a peer CTA's shared memory) "
                          "is not modelled")
    dst_space = q.take("shared::cluster", "shared::cta", required=True)
    q.take("global", required=True)
    q.take("mbarrier::complete_tx::bytes", required=True)
    if q.take("multicast::cluster") or q.take_prefix("L2::"):
        raise Unsupported("cp.async.bulk .multicast::cluster / .L2::cache_hint are not modelled")
    q.done()
    d, src, size, mbar = k.operands(ins, 4)
    daddr, saddr = state_address(k, d, dst_space), state_address(k, src, "global")
    rsize, maddr = k.reader(size, U32), state_address(k, mbar, dst_space)

    def run(m, s):
        n = np.broadcast_to(np.asarray(rsize(m, s)).astype(np.int64), (s.n,))
        da = np.broadcast_to(np.asarray(daddr(m, s), dtype=np.uint64), (s.n,))
        sa = np.broadcast_to(np.asarray(saddr(m, s), dtype=np.uint64), (s.n,))
        _, mwords = words(m, s, dst_space, maddr(m, s), "cp.async.bulk mbarrier", write=False)
        flat = m.shared_index(s, da, ALIGN, "cp.async.bulk destination", cluster=dst_space == "shared::cluster")
        eng = engine(m)
        for j in range(s.n):
            size_j = int(n[j])
            if size_j <= 0 or size_j % ALIGN:
                raise MemoryFault(f"cp.async.bulk size expects a positive multiple of 16 (§{SECTION}), "
                                  f"but got {size_j}")
            if int(sa[j]) % ALIGN:
                raise MemoryFault(f"cp.async.bulk source address expects 16-byte alignment (§{SECTION}), "
                                  f"but got 0x{int(sa[j]):x}")
            if int(flat[j]) % m.smem_bytes + size_j > m.smem_bytes:
                raise MemoryFault(f"cp.async.bulk of {size_j} bytes at shared address 0x{int(da[j]):x} runs past the "
                                  f"CTA's {m.smem_bytes} bytes of shared memory")
            data = m.gmem.gather(sa[j] + np.arange(size_j, dtype=np.uint64), 8, "cp.async.bulk source")
            dst = int(flat[j])
            if m.hz is not None:
                m.hz.async_dest(int(s.idx[j]), [slice(dst, dst + data.size)], ins)
            eng.pending.append(BulkCopy([slice(dst, dst + data.size)], data.astype(np.uint8), [int(mwords[j])], ins))
        m.epoch += 1
    return run


__all__ = ["BulkCopy", "BulkEngine", "compile_bulk", "engine"]
