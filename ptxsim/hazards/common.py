"""What every rule family of the hazard checker shares: the sections the rules cite, the
asynchronous-operation kinds and their pipelined pairs, the :class:`~ptxsim.errors.HazardError`
builder, and small array helpers (no state here)."""

from __future__ import annotations

import numpy as np

from ptxsim.errors import HazardError, where

SEC_PIPE = "9.7.16.6.2.1.2"          # tcgen05.ld/st -> tcgen05.wait
SEC_ASYNC = "9.7.16.6.1"             # asynchronous tcgen05 operations: unordered unless pipelined
SEC_REG = "9.7.16.6.4.5"             # register dependencies, same thread
SEC_SYNC = "9.7.16.6.3"              # tcgen05.fence::before/after_thread_sync
SEC_MBAR = "9.7.16.6.2.1.1"          # mbarrier based completion
SEC_PROXY = "9.7.16.6.5"             # shared memory accesses in the async proxy
SEC_ALLOC = "9.7.16.7.1"
SEC_BULK = "9.7.9.25.4.1"            # cp.async.bulk: completion through the mbarrier's complete-tx
SEC_TENSOR = "9.7.9.27"              # cp.async.bulk.tensor / cp.async.bulk.wait_group (bulk async-groups)
SEC_ISSUE = "9.7.16.5"               # issue granularity: .cta_group::2 needs the peer CTA (Table 46)
SEC_MBAR_INIT = "9.7.13.15.9"        # mbarrier.init: an object must be initialized before any other mbarrier op
#: the asynchronous tcgen05 operations the shadow tells apart (Tensor Memory cell -> its last writer's kind)
ASYNC_KINDS = {"mma": 1, "cp": 2, "cp.4x256b": 3, "shift": 4}
ASYNC_KIND_NAMES = {code: kind for kind, code in ASYNC_KINDS.items()}
#: pairs (earlier, later) of one thread that execute in issue order (§9.7.16.6.2; mma -> mma for any
#: accumulator, the reading docs/sim.md "Choices" explains)
PIPELINED = {("mma", "mma"), ("cp", "mma"), ("cp.4x256b", "mma"), ("shift", "mma"), ("shift", "cp.4x256b"),
             ("mma", "shift")}
PEER_DEALLOC = "tcgen05.dealloc.cta_group::2 (conservatively: it frees the peer CTA's columns too)"
ALLOC_OPS = ("tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit")


def _threads(m, idx) -> str:
    """A few threads as ``thread(s) (CTA:tid) C:I, ...``."""
    idx = np.atleast_1d(np.asarray(idx)).tolist()
    head = ", ".join(f"{int(m.cta_of[t])}:{int(m.tid_of[t])}" for t in idx[:4])
    more = f" and {len(idx) - 4} more" if len(idx) > 4 else ""
    return f"thread(s) (CTA:tid) {head}{more}"


def hazard(rule: str, section: str, first, second, threads: str, what: str) -> HazardError:
    """A :class:`HazardError` whose message names the rule, both lines and the threads."""
    f = first if isinstance(first, str) else where(first) if first is not None else "(kernel start)"
    s = where(second) if second is not None else "(kernel exit)"
    exc = HazardError(f"hazard {rule} (§{section}): {what}; first {f}, then {s}; {threads}",
                      rule=rule, section=section, first=f, second=s, threads=threads)
    exc.located = True              # the message already names both lines
    return exc


def _async_kind(ins) -> str:
    """The :data:`ASYNC_KINDS` key of an ``mma``/``cp``/``shift`` instruction."""
    kind = ins.opcode.split(".")[1]
    return "cp.4x256b" if kind == "cp" and ".4x256b" in ins.opcode else kind


def _index(m, ins) -> int:
    return m.prog.index_of.get(id(ins), 0)


def _instr(m, index: int):
    return m.prog.instrs[index]


def _distinct(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of integers ``a``, through a bitmap when their range is small."""
    if not a.size:
        return a
    lo, hi = int(a.min()), int(a.max())
    if hi - lo > 8 * a.size + 65536:
        return np.unique(a)
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[a - lo] = True
    return np.flatnonzero(seen) + lo


def _uniform(starts: np.ndarray, n: int) -> int:
    """The common size of the groups starting at ``starts`` (of ``n`` rows), 0 when they differ."""
    size = n // starts.size if starts.size else 0
    return size if size and n == size * starts.size and (starts == np.arange(starts.size) * size).all() else 0


def _rows(idx: np.ndarray):
    """``idx`` as a slice when it is one contiguous ascending run (a view instead of a copy)."""
    if idx.size and int(idx[-1]) - int(idx[0]) + 1 == idx.size and (idx.size < 3 or bool((np.diff(idx) == 1).all())):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx
