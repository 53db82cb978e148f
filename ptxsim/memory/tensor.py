"""Tensor copies through tensor maps (TMA): ``cp.async.bulk.tensor`` (PTX ISA §9.7.9.27, tile mode),
``cp.reduce.async.bulk.tensor``, ``cp.async.bulk.commit_group`` / ``wait_group``, the tensor-map
prefetches and ``fence.proxy.tensormap::generic``.

Tensor maps are the simulator's own 128-byte encoding (:mod:`ptxsim.memory.tensormap`, made on the host
by :func:`ptxsim.tensormap_tiled`, mirroring ``cuTensorMapEncodeTiled``).  The ``tensorMap``
operand is a kernel parameter named directly (``[tmap, {..}]``), a generic address of one
(``mov.b64 %rd, tmap; cvta.param.u64 %rd, %rd``: the simulator's parameter window), or a generic
or ``.global``/``.const`` address of a copy in global memory; it must be 64-byte aligned.

Load (global -> shared, ``.mbarrier::complete_tx::bytes``): coordinates are signed 32-bit
element indices, innermost first; the innermost start ``c_0 * elementSize`` must be a multiple of
16 bytes (an H100 traps otherwise: :func:`check_start_aligned`).  Along dimension ``d`` the box
covers ``c_d + k * s_d`` for ``k < ceil(box_d / s_d)`` (``s_d`` the element stride; ignored for
dimension 0, as the driver API says).  Elements outside ``0 <= i < globalDim`` read as zero, or
with ``oobFill nan_request_zero_fma`` as 0x7FF7 in every 16 bits (what an H100 wrote, f32
elements included: 0x7FF77FF7).  The box lands from ``dstMem``, innermost first, one inner row per
swizzle span (dense without swizzle; a row narrower than the span leaves the rest of its span
untouched: :func:`box_row_pitch`), and is then swizzled by shared-memory ADDRESS (CUDA C++
Programming Guide, "TMA Swizzle"; CUTLASS ``Swizzle<B,4,3>``)::

    32B:  a ^ (((a >> 7) & 1) << 4)      64B: a ^ (((a >> 7) & 3) << 4)     128B: a ^ (((a >> 7) & 7) << 4)
    128B_atom_32B: a ^ (((a >> 7) & 3) << 5)   (CUTLASS Swizzle<2,5,2>)
    128B_atom_32B_flip_8B: as 128B_atom_32B, then a ^ (((a >> 7) & 1) << 3)   (inferred from the enum's comment)
    128B_atom_64B: a ^ (((a >> 7) & 1) << 6)   (inferred: 64-byte atoms within the 128-byte span)

Alignment (simulator choices, stricter than the guide, which allows an offset pattern):
``dstMem`` 128-byte aligned always (PTX), and a swizzled box must start on its pattern repeat
(32B: 256, 64B: 512, 128B: 1024, 128B_atom_32B(+flip): 512, 128B_atom_64B: 256 bytes).
Interleaved maps and the packed sub-byte types are refused when copied.

Loads land through :mod:`ptxsim.memory.bulk`'s queue, in issue order with the other bulk copies: the
global source is read at issue; shared memory is
written and ``complete_tx`` of the whole box's bytes (OOB-filled elements included) signalled
only when no thread can progress otherwise.  ``.multicast::cluster``: the box lands at the same
CTA-relative offset in every CTA of ``ctaMask``, each signalling the mbarrier at the same offset
in its own CTA (with ``.cta_group::2``: in the CTA of its pair with the parity of the given
mbarrier's CTA — CUTLASS's 2-SM convention, inferred).

Store (shared -> global, ``.bulk_group``) and reduction: queued per thread at issue;
``commit_group`` closes a group; ``wait_group{.read} N`` performs (reads shared memory, writes
global memory) every committed group but the newest ``N`` of the thread, in order.  Whatever is
still queued when the thread exits is performed then.  Out-of-bound elements are not written.
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import MemoryFault, SimError
from ptxsim.memory.access import state_address
from ptxsim.memory.bulk import BulkCopy
from ptxsim.memory.bulk import engine as bulk_engine
from ptxsim.memory.global_memory import PARAM_WINDOW, SHARED_BASE, SHARED_WINDOW, WINDOW_SIZE
from ptxsim.memory.mbarrier import MbarrierState, words
from ptxsim.memory.tensormap import SIZE, SWIZZLE_SPAN, TensorMap, decode_tensormap
from ptxsim.ptx.registry import ORDERING, Unsupported, opcode
from ptxsim.ptx.syntax import Addr, TensorRef
from ptxsim.ptx.types import TYPES

SECTION = "9.7.9.27"
S32, U16, U64 = TYPES["s32"], TYPES["u16"], TYPES["u64"]
MAP_ALIGN = 64
DST_ALIGN = 128
DIMS = {"1d": 1, "2d": 2, "3d": 3, "4d": 4, "5d": 5}
#: swizzle -> (xor mask source bits (a >> 7) & m, shift of the xored field, pattern repeat in bytes)
SWIZZLE = {"none": (0, 4, 128), "32B": (1, 4, 256), "64B": (3, 4, 512), "128B": (7, 4, 1024),
           "128B_atom_32B": (3, 5, 512), "128B_atom_32B_flip_8B": (3, 5, 512), "128B_atom_64B": (1, 6, 256)}
#: out-of-bound fill of ``oobFill nan_request_zero_fma``: 0x7FF7 in every 16 bits, whatever the element
#: size (measured on an H100 for f16, bf16 and f32 elements; f64 inferred from the same pattern)
NAN_FILL_HALF = 0x7FF7
#: the innermost box start must be a multiple of this many bytes (the H100 traps otherwise)
START_ALIGN = 16


def swizzle_addresses(addr: np.ndarray, swizzle: str) -> np.ndarray:
    """Physical shared addresses of the linear shared addresses ``addr`` (int64) under ``swizzle``."""
    mask, shift, _ = SWIZZLE[swizzle]
    out = addr ^ (((addr >> 7) & mask) << shift) if mask and swizzle != "none" else addr.copy()
    if swizzle == "128B_atom_32B_flip_8B":
        out ^= ((addr >> 7) & 1) << 3
    return out


# -- tensor maps -------------------------------------------------------------------------------

class MapCache:
    def __init__(self, m) -> None:
        self.maps: dict[bytes, TensorMap] = {}


def _decode(m, raw: bytes, instr) -> TensorMap:
    cache = m.extension("tensormap", MapCache).maps
    t = cache.get(raw)
    if t is None:
        try:
            t = decode_tensormap(raw)
        except ValueError as exc:
            raise SimError(f"{instr.opcode}: {exc}") from None
        cache[raw] = t
    return t


def _map_reader(k, ref: Addr):
    """``read(m, s) -> list of 128-byte maps`` for the tensorMap address of ``[tensorMap, {..}]``."""
    space, addr = k.address(ref)
    if space not in (None, "param", "global", "const"):
        raise Unsupported(f"a tensor map in .{space} memory (expects a kernel parameter or global memory)")

    def read(m, s) -> list[bytes]:
        a = np.broadcast_to(np.asarray(addr(m, s), dtype=np.uint64), (s.n,))
        out = []
        for v in a.tolist():
            sp = space or "generic"
            if sp == "generic":
                if PARAM_WINDOW <= v < PARAM_WINDOW + WINDOW_SIZE:
                    sp, v = "param", v - PARAM_WINDOW
                elif SHARED_WINDOW <= v < SHARED_WINDOW + WINDOW_SIZE:
                    raise MemoryFault(f"tensor map at generic address 0x{v:x} is in shared memory (expects a "
                                      "kernel parameter, .const or .global)")
                else:
                    sp = "global"
            if v % MAP_ALIGN:
                raise MemoryFault(f"tensor map address expects {MAP_ALIGN}-byte alignment, but got 0x{v:x} (.{sp})")
            if sp == "param":
                if v + SIZE > m.prog.param_bytes:
                    raise MemoryFault(f"tensor map at parameter offset {v} runs past the kernel's "
                                      f"{m.prog.param_bytes} parameter bytes")
                out.append(m.params[v:v + SIZE].tobytes())
            else:
                words64 = m.gmem.gather(np.uint64(v) + np.arange(0, SIZE, 8, dtype=np.uint64), 64, "tensor map read")
                out.append(words64.astype(np.uint64).tobytes())
        return out
    return read


def _coords(k, ref: TensorRef, ndim: int):
    items = k.vector(ref.coords)
    if len(items) != ndim:
        raise Unsupported(f"a .{ndim}d tensor copy expects {ndim} coordinates, but got {len(items)}")
    readers = [k.reader(x, S32) for x in items]

    def read(m, s) -> np.ndarray:
        return np.stack([np.broadcast_to(np.asarray(r(m, s)).astype(np.int64), (s.n,)) for r in readers], axis=1)
    return read


def _tensor_ref(op) -> TensorRef:
    if not isinstance(op, TensorRef):
        raise Unsupported(f"expects a [tensorMap, {{coordinates}}] operand, but got {op}")
    return op


def _check_copyable(t: TensorMap, ndim: int, what: str) -> None:
    if t.rank != ndim:
        raise SimError(f"{what}: a .{ndim}d copy expects a tensor map of rank {ndim}, but got rank {t.rank}")
    if t.interleave != "none":
        raise SimError(f"{what}: interleaved tensor maps ({t.interleave}) are not modelled by the simulator")
    if t.element_bytes == 0:
        raise SimError(f"{what}: packed data type {t.dtype} is not modelled by the simulator")


def check_start_aligned(t: TensorMap, coords, ins) -> None:
    """The innermost box start ``coords[0] * elementSize`` must be a multiple of 16 bytes: an H100
    traps (illegal instruction at the UTMALDG/UTMASTG) on every copy whose start is not, loads,
    stores and reductions alike, in or out of bounds (22 of 22 such copies trapped, 20 of 20
    aligned ones ran; docs/sim.md "Hardware behaviours adopted").  The PTX ISA states no such rule."""
    start = int(coords[0]) * t.element_bytes
    if start % START_ALIGN:
        raise MemoryFault(f"{ins.opcode}: a tensor copy's innermost box start (coordinate x element size) expects a "
                          f"multiple of {START_ALIGN} bytes (the H100 traps with an illegal instruction otherwise), "
                          f"but got coordinate {int(coords[0])} x {t.element_bytes} B = {start} bytes")


def box_elements(t: TensorMap, coords) -> tuple[np.ndarray, np.ndarray]:
    """(global byte offset from the map's address, in-bounds mask) of every box element, in shared
    memory order (innermost dimension fastest); offsets of out-of-bound elements are 0."""
    counts = t.box_counts
    offset = np.zeros((), dtype=np.int64)
    valid = np.ones((), dtype=bool)
    strides = t.byte_strides
    for d in range(t.rank):
        step = 1 if d == 0 else t.element_strides[d]
        idx = int(coords[d]) + np.arange(counts[d], dtype=np.int64) * step
        ok = (idx >= 0) & (idx < t.global_dims[d])
        shape = [1] * t.rank
        shape[t.rank - 1 - d] = counts[d]
        offset = offset + np.where(ok, idx, 0).reshape(shape) * strides[d]
        valid = valid & ok.reshape(shape)
    offset, valid = np.broadcast_arrays(offset, valid)
    return offset.reshape(-1), valid.reshape(-1)


def box_row_pitch(t: TensorMap) -> int:
    """Shared-memory bytes between the box's inner rows.  Without swizzle the rows are dense; with a
    swizzle each row starts on a new swizzle span, so a row narrower than the span leaves the rest
    of its span untouched (as an H100 placed the 7 narrow boxes of the h100-battery, loads and
    stores; the span's 16-byte chunks are then permuted by address as usual)::

        row r, byte b of the box  ->  swizzle(dst + r * span + b)        (b < rowBytes <= span)
    """
    row = t.box_counts[0] * t.element_bytes
    return max(row, SWIZZLE_SPAN[t.swizzle])


def box_footprint(t: TensorMap) -> int:
    """Bytes of shared memory the box spans (its rows at :func:`box_row_pitch`)."""
    return t.box_bytes // (t.box_counts[0] * t.element_bytes) * box_row_pitch(t)


def _shared_layout(m, t: TensorMap, shared_addr: int, what: str) -> np.ndarray:
    """Swizzled CTA-relative shared addresses (int64) of the box's bytes starting at ``shared_addr``."""
    _, _, repeat = SWIZZLE[t.swizzle]
    if shared_addr % DST_ALIGN:
        raise MemoryFault(f"{what}: shared memory address expects {DST_ALIGN}-byte alignment (§{SECTION}), "
                          f"but got 0x{shared_addr:x}")
    if t.swizzle != "none" and shared_addr % repeat:
        raise MemoryFault(f"{what}: with swizzle {t.swizzle} the simulator expects the box to start on the pattern's "
                          f"{repeat}-byte repeat, but got shared address 0x{shared_addr:x}")
    footprint = box_footprint(t)
    if shared_addr - SHARED_BASE < 0 or shared_addr - SHARED_BASE + footprint > m.smem_bytes:
        raise MemoryFault(f"{what}: a box spanning {footprint} bytes at shared address 0x{shared_addr:x} runs outside "
                          f"the CTA's {m.smem_bytes} bytes of shared memory at 0x{SHARED_BASE:x}")
    row = t.box_counts[0] * t.element_bytes
    dense = np.arange(t.box_bytes, dtype=np.int64)
    linear = dense // row * box_row_pitch(t) + dense % row
    return swizzle_addresses(shared_addr + linear, t.swizzle)


def oob_fill_value(t: TensorMap) -> int:
    """The element an out-of-bound box position reads as: zero, or with ``nan_request_zero_fma``
    0x7FF7 repeated in every 16 bits (an H100 wrote 0x7FF7 for f16/bf16 and 0x7FF77FF7 for f32)."""
    if t.oob_fill != "nan_request_zero_fma":
        return 0
    return int.from_bytes(NAN_FILL_HALF.to_bytes(2, "little") * (t.element_bytes // 2), "little")


def _gather_box(m, t: TensorMap, coords) -> np.ndarray:
    """The box's bytes (uint8, dense, innermost first) read from global memory, OOB filled."""
    e = t.element_bytes
    offset, valid = box_elements(t, coords)
    elements = np.full(offset.size, oob_fill_value(t), dtype=np.uint64)
    if valid.any():
        addrs = np.uint64(t.global_address) + offset[valid].astype(np.uint64)
        elements[valid] = m.gmem.gather(addrs, 8 * e, "cp.async.bulk.tensor source").astype(np.uint64)
    return elements.astype(f"<u{e}").view(np.uint8)


# -- asynchronous landing ----------------------------------------------------------------------

class TensorEngine:
    """Queued tensor stores per thread (loads land through :class:`ptxsim.memory.bulk.BulkEngine`,
    in issue order with the other bulk copies)."""

    def __init__(self, m) -> None:
        self.groups: dict[int, list[list]] = {}      # thread -> committed groups (lists of closures)
        self.open: dict[int, list] = {}              # thread -> operations not yet committed
        m.exit_hooks.append(self.flush_exited)

    def flush_exited(self, m, s) -> None:
        for t in s.idx.tolist():
            for group in self.groups.pop(t, []) + [self.open.pop(t, [])]:
                for op in group:
                    _perform(m, op)


def engine(m) -> TensorEngine:
    return m.extension("cp.async.bulk.tensor", TensorEngine)


# -- handlers ----------------------------------------------------------------------------------

@opcode("cp.async.bulk.tensor")
def compile_tensor(ins, q, k):
    ndim = DIMS.get(q.take(*DIMS, required=True))
    if q.take("im2col", "im2col::w", "im2col::w::128", "tile::gather4", "tile::scatter4", "im2col_no_offs"):
        raise Unsupported("cp.async.bulk.tensor im2col / gather4 / scatter4 modes are not modelled")
    q.take("tile")
    spaces = [x for x in q.rest if x in ("shared::cluster", "shared::cta", "global")]
    if len(spaces) != 2:
        raise Unsupported("expects .dst.src state spaces (.shared::cluster/.shared::cta and .global)")
    dst = spaces[0]
    q.take(dst)
    if dst == "global":
        q.take("shared::cta", required=True)
        q.take("bulk_group", required=True)
        q.ignore_prefix("L2::cache_hint")
        return _compile_store(ins, q, k, ndim, None)
    q.take("global", required=True)
    q.take("mbarrier::complete_tx::bytes", required=True)
    multicast = q.flag("multicast::cluster")
    group = int(q.take_prefix("cta_group::") or 1)
    hint = q.flag("L2::cache_hint")
    ops = k.operands(ins, 3 + multicast + hint)
    if not isinstance(ops[0], Addr) or not isinstance(ops[2], Addr):
        raise Unsupported("expects [dstMem], [tensorMap, {coordinates}], [mbar]")
    ref = _tensor_ref(ops[1])
    daddr = state_address(k, ops[0], dst)
    maddr = state_address(k, ops[2], dst)
    rmap, rcoords = _map_reader(k, ref.addr), _coords(k, ref, ndim)
    rmask = k.reader(ops[3], U16) if multicast else None
    cluster = dst == "shared::cluster"
    what = ins.opcode

    def run(m, s):
        maps, coords = rmap(m, s), rcoords(m, s)
        da = np.broadcast_to(np.asarray(daddr(m, s), dtype=np.uint64), (s.n,))
        ma = np.broadcast_to(np.asarray(maddr(m, s), dtype=np.uint64), (s.n,))
        _, mwords = words(m, s, dst, ma, f"{what} mbarrier", write=False)
        dflat = m.shared_index(s, da, 16, f"{what} destination", cluster=cluster)
        masks = np.broadcast_to(np.asarray(rmask(m, s)).astype(np.int64), (s.n,)) if multicast else None
        loads = bulk_engine(m)
        inited = m.extension("mbarrier", MbarrierState).initialised
        for j in range(s.n):
            t = _decode(m, maps[j], ins)
            _check_copyable(t, ndim, what)
            check_start_aligned(t, coords[j], ins)
            d_cta, d_off = divmod(int(dflat[j]), m.smem_bytes)
            m_cta, m_off = divmod(int(mwords[j]) * 8, m.smem_bytes)
            layout = _shared_layout(m, t, d_off + SHARED_BASE, what) - SHARED_BASE
            data = _gather_box(m, t, coords[j])
            if not multicast:
                if m.hz is not None:
                    m.hz.async_dest(int(s.idx[j]), [d_cta * m.smem_bytes + layout], ins)
                loads.pending.append(BulkCopy([d_cta * m.smem_bytes + layout], data, [int(mwords[j])], ins))
                continue
            first = int(m.cluster_first_cta(np.array([m.cta_of[s.idx[j]]]))[0])
            mask = int(masks[j]) & 0xFFFF
            ranks = [r for r in range(16) if mask >> r & 1]
            if not ranks or ranks[-1] >= m.cluster_size:
                raise SimError(f"{what}: ctaMask 0x{mask:04x} expects ranks of the cluster's {m.cluster_size} CTAs")
            flats, mbars = [], []
            for r in ranks:
                target = ((r & ~1) | ((m_cta - first) & 1)) if group == 2 else r
                word = ((first + target) * m.smem_bytes + m_off) // 8
                if not inited[word]:
                    raise SimError(f"{what}: no mbarrier.init for the object at shared address "
                                   f"0x{m_off + SHARED_BASE:x} of cluster rank {target}")
                flats.append((first + r) * m.smem_bytes + layout)
                mbars.append(word)
            if m.hz is not None:
                m.hz.async_dest(int(s.idx[j]), flats, ins)
            loads.pending.append(BulkCopy(flats, data, mbars, ins))
        m.epoch += 1
    return run


REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
INT_DTYPES = {"uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "int32": np.int32,
              "uint64": np.uint64, "int64": np.int64}
FLOAT_DTYPES = {"float16": np.float16, "float32": np.float32, "float32_ftz": np.float32, "float64": np.float64}


def reduce_elements(op: str, dtype: str, old: np.ndarray, new: np.ndarray,
                    what: str = "cp.reduce.async.bulk.tensor") -> np.ndarray:
    """``op`` of the raw little-endian elements (uint8 views) ``old`` and ``new``; raw result."""
    if dtype == "bfloat16":
        import ml_dtypes
        npt = ml_dtypes.bfloat16
    else:
        npt = INT_DTYPES.get(dtype) or FLOAT_DTYPES.get(dtype)
    if npt is None:
        raise SimError(f"{what}: data type {dtype} is not modelled")
    a, b = old.view(npt), new.view(npt)
    isfloat = dtype in FLOAT_DTYPES or dtype == "bfloat16"
    if op in ("and", "or", "xor", "inc", "dec") and isfloat:
        raise SimError(f"{what} .{op} expects integer elements, but got {dtype}")
    if op == "add":
        r = (a.astype(np.float32) + b.astype(np.float32)).astype(npt) if dtype in ("float16", "bfloat16") else a + b
    elif op == "min":
        r = np.minimum(a, b)
    elif op == "max":
        r = np.maximum(a, b)
    elif op in ("and", "or", "xor"):
        r = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b)
    elif op == "inc":
        r = np.where(a >= b, 0, a + 1).astype(npt)
    else:
        r = np.where((a == 0) | (a > b), b, a - 1).astype(npt)
    return np.ascontiguousarray(r, dtype=npt).view(np.uint8)


def _compile_store(ins, q, k, ndim: int, op: str | None):
    ops = k.operands(ins, 2, 3)                     # optional cache-policy operand
    ref = _tensor_ref(ops[0])
    if not isinstance(ops[1], Addr):
        raise Unsupported("expects [tensorMap, {coordinates}], [srcMem]")
    saddr = state_address(k, ops[1], "shared::cta")
    rmap, rcoords = _map_reader(k, ref.addr), _coords(k, ref, ndim)
    what = ins.opcode

    def run(m, s):
        maps, coords = rmap(m, s), rcoords(m, s)
        sa = np.broadcast_to(np.asarray(saddr(m, s), dtype=np.uint64), (s.n,))
        sflat = m.shared_index(s, sa, 16, f"{what} source", cluster=False)
        eng = engine(m)
        for j, thread in enumerate(s.idx.tolist()):
            t = _decode(m, maps[j], ins)
            _check_copyable(t, ndim, what)
            check_start_aligned(t, coords[j], ins)
            cta, off = divmod(int(sflat[j]), m.smem_bytes)
            flat = cta * m.smem_bytes + _shared_layout(m, t, off + SHARED_BASE, what) - SHARED_BASE
            perform = _store_op(m, t, coords[j].copy(), flat, op)
            perform.instr = ins         # named by the hazard checker when the thread exits without waiting
            if m.hz is not None:        # the async proxy reads the source: generic writes need a proxy fence
                g = np.unique(np.asarray(flat, dtype=np.int64) >> 4)
                m.hz.async_read(thread, g, ins)
                m.hz.bulk_source(g, ins)            # read until the thread's wait_group{.read}
                perform.hz_source = g
            eng.open.setdefault(thread, []).append(perform)
        m.epoch += 1
    return run


def _store_op(m, t: TensorMap, coords, flat: np.ndarray, op: str | None):
    """The deferred store: read shared memory now (at wait/exit), write the in-bound elements."""
    def perform():
        e = t.element_bytes
        offset, valid = box_elements(t, coords)
        data = m.smem[flat].reshape(-1, e)[valid]
        if not valid.any():
            return
        addrs = np.uint64(t.global_address) + offset[valid].astype(np.uint64)
        byte_addrs = (addrs[:, None] + np.arange(e, dtype=np.uint64)).reshape(-1)
        if op is not None:
            old = m.gmem.gather(byte_addrs, 8, "cp.reduce.async.bulk.tensor destination")
            data = reduce_elements(op, t.dtype, np.ascontiguousarray(old), np.ascontiguousarray(data).reshape(-1))
        m.gmem.scatter(byte_addrs, np.ascontiguousarray(data).reshape(-1), 8, "cp.async.bulk.tensor destination")
        m.epoch += 1
    return perform


@opcode("cp.reduce.async.bulk.tensor")
def compile_reduce(ins, q, k):
    ndim = DIMS.get(q.take(*DIMS, required=True))
    q.take("global", required=True)
    q.take("shared::cta", required=True)
    op = q.take(*REDUCE_OPS, required=True)
    q.take("tile")
    q.take("bulk_group", required=True)
    q.ignore_prefix("L2::cache_hint")
    return _compile_store(ins, q, k, ndim, op)


@opcode("cp.async.bulk.commit_group")
def compile_commit_group(ins, q, k):
    k.operands(ins, 0)

    def run(m, s):
        eng = engine(m)
        for t in s.idx.tolist():
            eng.groups.setdefault(t, []).append(eng.open.pop(t, []))
    return run


@opcode("cp.async.bulk.wait_group")
def compile_wait_group(ins, q, k):
    q.flag("read")
    (n,) = k.operands(ins, 1)
    rn = k.reader(n, TYPES["u32"])

    def run(m, s):
        keep = int(np.max(np.asarray(rn(m, s))))
        eng = engine(m)
        for t in s.idx.tolist():
            groups = eng.groups.get(t, [])
            done, eng.groups[t] = groups[:max(len(groups) - keep, 0)], groups[max(len(groups) - keep, 0):]
            for group in done:
                for op in group:
                    _perform(m, op)
    return run


def _perform(m, op) -> None:
    """Perform a queued bulk store; the hazard checker forgets its source reads."""
    op()
    if m.hz is not None and getattr(op, "hz_source", None) is not None:
        m.hz.bulk_source_done(op.hz_source)


@opcode("cp.async.bulk.prefetch.tensor")
def compile_prefetch_tensor(ins, q, k):
    q.take(*DIMS, required=True)
    q.take("L2", required=True)
    q.take("global", required=True)
    if q.take("im2col", "tile::gather4"):
        raise Unsupported("cp.async.bulk.prefetch.tensor im2col / gather4 are not modelled")
    q.take("tile")
    q.ignore_prefix("L2::cache_hint")
    ops = k.operands(ins, 1, 2)
    _map_reader(k, _tensor_ref(ops[0]).addr)
    return lambda m, s: None


@opcode("prefetch.tensormap", "prefetch.param.tensormap", "prefetch.const.tensormap", "prefetch.global.tensormap")
def compile_prefetch_tensormap(ins, q, k):
    (a,) = k.operands(ins, 1)
    k.address(a)
    return lambda m, s: None


@opcode("fence.proxy.tensormap::generic")
def compile_fence_tensormap(ins, q, k):
    sem = q.take("release", "acquire", required=True)
    q.ignore(*ORDERING)
    if sem == "release":
        k.operands(ins, 0)
    else:
        a, size = k.operands(ins, 2)
        k.address(a)
        if getattr(size, "value", None) != SIZE:
            raise Unsupported(f"fence.proxy.tensormap::generic.acquire expects a size of {SIZE}, but got {size}")
    return lambda m, s: None


__all__ = ["TensorEngine", "box_elements", "compile_tensor", "engine", "reduce_elements", "swizzle_addresses"]
