"""mbarrier objects (PTX ISA §9.7.13.15) with phase and transaction-count tracking.

The 64-bit object lives in shared memory in a simulator-private encoding (the real one is
opaque, and kernels may only touch it through mbarrier instructions)::

     63  62           42 41           21 20            0
    +---+---------------+---------------+---------------+
    |ph |  tx-count     | expected count| pending count |
    +---+---------------+---------------+---------------+
    ph: parity of the current phase; tx-count: 21-bit two's complement pending bytes

A phase completes when the pending count is 0 and the tx-count is 0: the parity flips, the
pending count is reset to the expected count.  ``try_wait.parity p`` / ``test_wait.parity p``
are true once the phase of parity ``p`` has completed (current parity != p); the token variants
compare with the parity recorded in the token returned by ``arrive`` (the object's value before
the arrival).  Using an object that ``mbarrier.init`` did not initialise is an error.
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import SimError
from ptxsim.faults.model import MbarrierEvent
from ptxsim.memory.global_memory import SHARED_BASE
from ptxsim.ptx.registry import ORDERING, Unsupported, opcode
from ptxsim.ptx.types import TYPES

B64, U32, U64 = TYPES["b64"], TYPES["u32"], TYPES["u64"]
FIELD = 21
FMASK = (1 << FIELD) - 1
MAX_COUNT = (1 << 20) - 1
SPACES = ("shared", "shared::cta", "shared::cluster")


def decode(word: int) -> tuple[int, int, int, int]:
    """(pending, expected, tx, phase) of an mbarrier word."""
    word = int(word)
    tx = (word >> (2 * FIELD)) & FMASK
    tx = tx - (1 << FIELD) if tx >> (FIELD - 1) else tx
    return word & FMASK, (word >> FIELD) & FMASK, tx, word >> 63


def encode(pending: int, expected: int, tx: int, phase: int) -> int:
    return (pending & FMASK) | ((expected & FMASK) << FIELD) | ((tx & FMASK) << (2 * FIELD)) | ((phase & 1) << 63)


class MbarrierState:
    """Which shared-memory words hold an initialised mbarrier object."""

    def __init__(self, m) -> None:
        self.initialised = np.zeros(m.smem.size // 8, dtype=bool)


def _state(m) -> MbarrierState:
    return m.extension("mbarrier", MbarrierState)


def words(m, s, space: str, addr, what: str, write: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 view of shared memory, word index per thread), checked to be initialised."""
    view, index = _locate(m, s, space, addr, what, write)
    if not _state(m).initialised[index].all():
        bad = index[~_state(m).initialised[index]][0]
        cta, off = divmod(int(bad) * 8, m.smem_bytes)
        raise SimError(f"{what}: no mbarrier.init for the object at shared address 0x{off + SHARED_BASE:x} of CTA {cta}")
    if m.hz is not None:
        m.hz.mbar_use(index, s.idx)
    return view, index


def _locate(m, s, space: str, addr, what: str, write: bool = True) -> tuple[np.ndarray, np.ndarray]:
    view, index = m.locate(space, s, addr, 64, what, write)
    if view.base is not m.smem:
        raise SimError(f"{what}: an mbarrier object must be in shared memory")
    return view, index


def signal(m, index: np.ndarray, counts: np.ndarray, tx: np.ndarray, kind: str, instr, *,
           complete_pending=None, threads=None) -> np.ndarray:
    """Apply arrivals (``counts``) and tx-count changes (``tx``, added before arriving) per thread
    to the objects at word ``index``; return each thread's token (the object before its arrival).

    Threads hitting the same object are aggregated into one :class:`MbarrierEvent` (hook
    ``mbarrier``).  ``complete_pending(event)`` is called for commit events before they arrive.
    ``threads`` (one per ``index`` entry): the arriving threads, for the hazard checker's clocks.
    """
    view = m.smem.view(np.uint64)
    tokens = view[index].copy()
    keys, inverse = np.unique(index, return_inverse=True)
    for kpos, key in enumerate(keys):
        members = np.flatnonzero(inverse == kpos)
        cnt = int(np.asarray(counts)[members].sum()) if np.ndim(counts) else int(counts) * members.size
        txv = int(np.asarray(tx)[members].sum()) if np.ndim(tx) else int(tx) * members.size
        cta, off = divmod(int(key) * 8, m.smem_bytes)
        event = MbarrierEvent(kind, cta, off + SHARED_BASE, cnt, txv)
        if m.faults.active("mbarrier"):
            event = m.faults.apply("mbarrier", event, instr=instr.text if instr else "", cta=cta)
            if event is None:
                continue
        if complete_pending is not None and event.complete_pending:
            complete_pending(event)
        hz = m.hz
        if hz is not None:
            if kind == "commit":
                hz.mbar_commit(int(key), int(np.asarray(threads)[members[0]]))
            else:
                release = kind == "arrive" and instr is not None and instr.opcode.startswith("mbarrier.arrive") \
                    and "relaxed" not in instr.parts
                hz.mbar_arrive(int(key), None if threads is None else np.asarray(threads)[members], release)
        pending, expected, txc, phase = decode(view[key])
        old_phase = phase
        txc += event.tx
        remaining = event.count
        if remaining and remaining <= pending:
            pending -= remaining
            remaining = 0
        while remaining:                        # arrivals beyond this phase: one at a time
            if pending == 0:
                raise SimError(f"mbarrier at shared address 0x{off + SHARED_BASE:x} of CTA {cta}: more arrivals "
                               "than its pending count (phase cannot complete while tx-count is nonzero)")
            pending -= 1
            remaining -= 1
            if pending == 0 and txc == 0:
                phase, pending = phase ^ 1, expected
        if pending == 0 and txc == 0:
            phase, pending, txc = phase ^ 1, expected, 0
        if not -MAX_COUNT <= txc <= MAX_COUNT:
            raise SimError(f"mbarrier tx-count {txc} outside +-{MAX_COUNT}")
        view[key] = np.uint64(encode(pending, expected, txc, phase))
        if hz is not None and phase != old_phase:
            hz.mbar_phase(int(key))
    return tokens


def _space(q) -> str:
    """State space of the mbarrier operand; none given means generic addressing."""
    q.ignore(*ORDERING)
    sp = q.take(*SPACES)
    return "generic" if sp is None else ("shared::cta" if sp == "shared" else sp)


def _addr(k, op, space):
    sym_space, addr = k.address(op)
    if sym_space not in (None, "shared"):
        raise Unsupported(f"an mbarrier in .{sym_space} memory")
    if sym_space == "shared" and space == "generic":
        raise Unsupported("a generic mbarrier address from a .shared variable needs cvta first")
    return addr


@opcode("mbarrier.init")
def compile_init(ins, q, k):
    space = _space(q)
    q.take_type(("b64",))
    a, c = k.operands(ins, 2)
    addr, rc = _addr(k, a, space), k.reader(c, U32)

    def run(m, s):
        view, index = _locate(m, s, space, addr(m, s), "mbarrier.init")
        count = np.broadcast_to(np.asarray(rc(m, s)).astype(np.int64), (s.n,))
        if ((count < 1) | (count > MAX_COUNT)).any():
            raise SimError(f"mbarrier.init count expects 1..{MAX_COUNT}, but got {int(count.min())}")
        view[index] = np.array([encode(int(x), int(x), 0, 0) for x in count], dtype=np.uint64)
        _state(m).initialised[index] = True
        if m.hz is not None:
            m.hz.mbar_init(index)
            m.hz.mbar_inited(index, s.idx, ins)
    return run


@opcode("mbarrier.inval")
def compile_inval(ins, q, k):
    space = _space(q)
    q.take_type(("b64",))
    (a,) = k.operands(ins, 1)
    addr = _addr(k, a, space)

    def run(m, s):
        _, index = words(m, s, space, addr(m, s), "mbarrier.inval")
        _state(m).initialised[index] = False
    return run


@opcode("mbarrier.arrive", "mbarrier.arrive_drop")
def compile_arrive(ins, q, k):
    drop = ins.parts[1] == "arrive_drop"
    expect_tx = q.flag("expect_tx")
    no_complete = q.flag("noComplete")
    space = _space(q)
    q.take_type(("b64",))
    if drop or no_complete:
        raise Unsupported(f"mbarrier.{'arrive_drop' if drop else 'arrive.noComplete'} is not modelled")
    ops = k.operands(ins, 2, 3)
    wtoken = k.writer(ops[0], B64)
    addr = _addr(k, ops[1], space)
    rextra = k.reader(ops[2], U32) if len(ops) == 3 else None
    if expect_tx and rextra is None:
        raise Unsupported("mbarrier.arrive.expect_tx expects a tx-count operand")
    if space == "shared::cluster" and not (ops[0].text == "_"):
        raise Unsupported("mbarrier.arrive on .shared::cluster returns no state (destination must be _)")

    def run(m, s):
        _, index = words(m, s, space, addr(m, s), ins.opcode)
        extra = np.asarray(rextra(m, s)).astype(np.int64) if rextra is not None else None
        counts = 1 if expect_tx or extra is None else np.broadcast_to(extra, (s.n,))
        if expect_tx:                  # "expect-tx operation ... prior to the arrive-on operation"
            signal(m, index, 0, np.broadcast_to(extra, (s.n,)), "expect_tx", ins, threads=s.idx)
        wtoken(m, s, signal(m, index, counts, 0, "arrive", ins, threads=s.idx))
    return run


@opcode("mbarrier.expect_tx", "mbarrier.complete_tx")
def compile_tx(ins, q, k):
    sign = 1 if ins.parts[1] == "expect_tx" else -1
    space = _space(q)
    q.take_type(("b64",))
    a, c = k.operands(ins, 2)
    addr, rc = _addr(k, a, space), k.reader(c, U32)

    def run(m, s):
        _, index = words(m, s, space, addr(m, s), ins.opcode)
        tx = sign * np.broadcast_to(np.asarray(rc(m, s)).astype(np.int64), (s.n,))
        signal(m, index, 0, tx, ins.parts[1], ins, threads=s.idx)
    return run


@opcode("mbarrier.test_wait", "mbarrier.try_wait")
def compile_wait(ins, q, k):
    parity = q.flag("parity")
    acquire = "relaxed" not in q.rest        # default .acquire (§9.7.13.15.16)
    space = _space(q)
    q.take_type(("b64",))
    ops = k.operands(ins, 3, 4)          # try_wait: optional suspendTimeHint
    if len(ops) == 4 and ins.parts[1] != "try_wait":
        raise Unsupported("test_wait takes no suspend-time hint")
    wp = k.pred_writer(ops[0])
    addr = _addr(k, ops[1], space)
    rstate = k.reader(ops[2], U32 if parity else U64)

    def run(m, s):
        view, index = words(m, s, space, addr(m, s), ins.opcode, write=False)
        phase = view[index] >> np.uint64(63)
        ref = np.asarray(rstate(m, s)).astype(np.uint64)
        ref = ref & np.uint64(1) if parity else ref >> np.uint64(63)
        done = np.broadcast_to(phase != ref, (s.n,))
        wp(m, s, done)
        if m.hz is not None and done.any():
            m.hz.mbar_acquire(np.broadcast_to(index, (s.n,))[done], s.idx[done], acquire)
        if not done.all():
            m.yield_request = True     # let the threads that will arrive run
    return run


@opcode("mbarrier.pending_count")
def compile_pending(ins, q, k):
    q.take_type(("b64",))
    d, st = k.operands(ins, 2)
    rs, w = k.reader(st, U64), k.writer(d, U32)
    return lambda m, s: w(m, s, (np.asarray(rs(m, s)) & np.uint64(FMASK)).astype(np.uint32))
