"""State of one simulated batch of CTAs: threads, registers, memories, special registers.

A :class:`Machine` runs a batch of whole clusters of one launch in lock step: every register is a
numpy row over all the batch's threads (thread ``t`` = ``(cta * ntid) + tid``, CTAs numbered
cluster by cluster), and an instruction executes once for the selection of threads that reach it
together (a :class:`Sel`).  Handlers read and write through the compiled operand accessors of
:mod:`ptxsim.ptx.compiler`, and memory through :meth:`Machine.load` / :meth:`Machine.store`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ptxsim.errors import MemoryFault, SimError
from ptxsim.hazards import Hazards
from ptxsim.memory.global_memory import (
    CLUSTER_RANK_SHIFT,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    SHARED_BASE,
    SHARED_WINDOW,
    UINT,
    WINDOW_SIZE,
    GlobalMemory,
    check_alignment,
    split_cluster_address,
)

WARP = 32
_MIN, _MAX = np.minimum.reduce, np.maximum.reduce
SMEM_FILL = 0xA5          # shared memory starts as this byte (hardware: stale data), never zero


def per_thread(values: np.ndarray, n: int) -> np.ndarray:
    """``values`` as one entry per selected thread: itself when it has that shape already, else a
    read-only broadcast view (a scalar register or immediate). ``np.broadcast_to`` costs more than
    the memory accesses it fed (a tenth of a launch of small kernels); a scalar is spread into a
    new array instead (several times cheaper than the view)."""
    if values.shape == (n,):
        return values
    if values.ndim == 0:
        out = np.empty(n, dtype=values.dtype)
        out[...] = values
        return out
    return np.broadcast_to(values, (n,))


class Sel:
    """The threads executing an instruction together: ``ix`` indexes per-thread rows (a slice
    for "every thread of the batch", else an index array), ``idx`` the thread numbers, ``n``;
    ``memo``: values derived from the (never modified) selection alone, e.g. its warp runs."""

    __slots__ = ("ix", "idx", "n", "memo")

    def __init__(self, ix, idx: np.ndarray) -> None:
        self.ix = ix
        self.idx = idx
        self.n = int(idx.size)
        self.memo: dict = {}

    def narrow(self, mask: np.ndarray) -> Sel | None:
        """The threads where ``mask`` (one bool per selected thread) is true; None if none."""
        taken = np.count_nonzero(mask)           # one pass instead of .all() and .any()
        if taken == mask.size:
            return self
        if not taken:
            return None
        idx = self.idx[mask]
        return Sel(idx, idx)

    def __repr__(self) -> str:
        return f"Sel(n={self.n})"


@dataclass(frozen=True)
class Geometry:
    """Launch shape: grid and cluster in CTAs, block in threads (x fastest everywhere)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] = (1, 1, 1)

    @property
    def ntid(self) -> int:
        return int(np.prod(self.block))

    @property
    def cluster_size(self) -> int:
        return int(np.prod(self.cluster))

    @property
    def nclusters(self) -> tuple[int, int, int]:
        return tuple(g // c for g, c in zip(self.grid, self.cluster, strict=True))

    @property
    def total_clusters(self) -> int:
        return int(np.prod(self.nclusters))

    def validate(self) -> None:
        for what, dims in (("grid", self.grid), ("block", self.block), ("cluster", self.cluster)):
            if len(dims) != 3 or any(int(d) < 1 for d in dims):
                raise SimError(f"{what} expects three dimensions >= 1, but got {dims}")
        if any(g % c for g, c in zip(self.grid, self.cluster, strict=True)):
            raise SimError(f"grid expects a multiple of the cluster shape {self.cluster}, but got {self.grid}")


#: warp slots of one SM (%nwarpid): 64 on sm_90 and sm_100 (CUDA occupancy tables; measured on H100)
WARP_SLOTS_PER_SM = 64


def _coords(linear: np.ndarray, dims) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = linear % dims[0]
    y = (linear // dims[0]) % dims[1]
    z = linear // (dims[0] * dims[1])
    return x, y, z


class Machine:
    """Threads and memories of one batch (whole clusters) of a launch."""

    def __init__(self, program, geometry: Geometry, clusters, gmem: GlobalMemory, params: bytes,
                 faults, shared_bytes: int = 0, max_steps: int = 50_000_000, livelock_spins: int = 20_000,
                 hazards: frozenset | bool | None = None, sm_count: int = 148) -> None:
        self.prog = program
        #: SMs of the simulated GPU (%nsmid; %smid is the CTA's number modulo it)
        self.sm_count = int(sm_count)
        self.geometry = geometry
        self.clusters = np.asarray(clusters, dtype=np.int64)
        self.ntid = geometry.ntid
        self.cluster_size = geometry.cluster_size
        self.ncta = self.clusters.size * self.cluster_size
        self.T = self.ncta * self.ntid
        t = np.arange(self.T, dtype=np.int64)
        self.cta_of = t // self.ntid
        self.tid_of = t % self.ntid
        self.rank_of = self.cta_of % self.cluster_size
        self.cluster_of = self.cta_of // self.cluster_size
        self.warps_per_cta = -(-self.ntid // WARP)
        self.warp_of = self.cta_of * self.warps_per_cta + self.tid_of // WARP
        self.lane_of = self.tid_of % WARP
        self.all = Sel(slice(None), t)
        self.R = np.zeros((max(program.nregs, 1), self.T), dtype=np.uint64)
        self.P = np.zeros((max(program.npreds, 1), self.T), dtype=bool)
        self.smem_bytes = program.shared_bytes(shared_bytes)
        self.smem = np.full(self.ncta * self.smem_bytes, SMEM_FILL, dtype=np.uint8)
        self.local_bytes = program.local_bytes
        self.local = np.zeros(self.T * self.local_bytes, dtype=np.uint8) if self.local_bytes else None
        pbytes = bytes(params) + b"\0" * (-len(params) % 8 + 8)
        self.params = np.frombuffer(pbytes, dtype=np.uint8).copy()
        self.gmem = gmem
        self.faults = faults
        self.exited = np.zeros(self.T, dtype=bool)
        self.live_per_cta = np.full(self.ncta, self.ntid, dtype=np.int64)
        self.live_per_warp = np.bincount(self.warp_of, minlength=self.ncta * self.warps_per_cta)
        self.ext: dict = {}
        self.exit_hooks: list[Callable] = []       # fn(machine, sel) after threads exit
        self.cta_exit_hooks: list[Callable] = []   # fn(machine, ctas) when CTAs have no live thread
        self.progress_hooks: list[Callable] = []   # fn(machine) -> bool: land one asynchronous operation
        self.yield_request = False
        self.steps = 0
        self.tally: list[int] | None = None    # threads per executed instruction (ptxsim.trace), or None
        self.current_pc = 0
        self.epoch = 0                 # bumped by anything another thread could observe
        self.fruitless = 0             # consecutive failed waits with no epoch change
        self.yield_epoch = -1
        self.livelock_spins = livelock_spins
        self.max_steps = max_steps
        self._special: dict[str, np.ndarray] = {}
        #: the hazard checker (:mod:`ptxsim.hazards`), or None when off (handlers test ``m.hz``)
        self.hz = None if hazards is None or hazards is False else \
            Hazards(self, frozenset() if hazards is True else hazards)      # the set: rule ids waived

    # -- extensions ---------------------------------------------------------------------------

    def extension(self, key: str, factory: Callable):
        """Per-machine state of a handler family, made by ``factory(machine)`` on first use."""
        try:
            return self.ext[key]
        except KeyError:
            value = self.ext[key] = factory(self)
            return value

    def progress(self) -> bool:
        """Let the asynchronous proxy land one pending operation (every thread waits); False if none."""
        return any(hook(self) for hook in self.progress_hooks)

    def sel_of(self, idx: np.ndarray) -> Sel:
        return self.all if idx.size == self.T else Sel(idx, idx)

    # -- threads -------------------------------------------------------------------------------

    def exit_threads(self, s: Sel) -> None:
        self.epoch += 1
        self.exited[s.ix] = True
        counts = np.bincount(self.cta_of[s.ix], minlength=self.ncta)
        self.live_per_cta -= counts
        self.live_per_warp -= np.bincount(self.warp_of[s.ix], minlength=self.live_per_warp.size)
        for hook in list(self.exit_hooks):
            hook(self, s)
        done = np.flatnonzero((counts > 0) & (self.live_per_cta == 0))
        if done.size:
            for hook in list(self.cta_exit_hooks):
                hook(self, done)

    def cluster_first_cta(self, ix) -> np.ndarray:
        return self.cluster_of[ix] * self.cluster_size

    # -- special registers (PTX ISA §10) ------------------------------------------------------

    def special(self, name: str) -> np.ndarray:
        """Value of a special register for every thread (uint64 row), computed once."""
        try:
            return self._special[name]
        except KeyError:
            value = self._special[name] = np.ascontiguousarray(self._compute_special(name), dtype=np.uint64)
            return value

    def _compute_special(self, name: str) -> np.ndarray:
        g = self.geometry
        base, _, comp = name.partition(".")
        axis = {"x": 0, "y": 1, "z": 2}.get(comp)
        ones = np.ones(self.T, dtype=np.int64)
        cluster_linear = self.clusters[self.cluster_of]
        cl = _coords(cluster_linear, g.nclusters)
        in_cl = _coords(self.rank_of, g.cluster)
        if base == "%tid" and axis is not None:
            return _coords(self.tid_of, g.block)[axis]
        if base == "%ntid" and axis is not None:
            return ones * g.block[axis]
        if base == "%ctaid" and axis is not None:
            return cl[axis] * g.cluster[axis] + in_cl[axis]
        if base == "%nctaid" and axis is not None:
            return ones * g.grid[axis]
        if base == "%clusterid" and axis is not None:
            return cl[axis]
        if base == "%nclusterid" and axis is not None:
            return ones * g.nclusters[axis]
        if base == "%cluster_ctaid" and axis is not None:
            return in_cl[axis]
        if base == "%cluster_nctaid" and axis is not None:
            return ones * g.cluster[axis]
        if name == "%cluster_ctarank":
            return self.rank_of
        if name == "%cluster_nctarank":
            return ones * self.cluster_size
        if name == "%is_explicit_cluster":
            return ones * int(self.cluster_size > 1 or "reqnctapercluster" in self.prog.kernel.directives)
        if name == "%laneid":
            return self.lane_of
        if name == "%warpid":
            # physical warp slot on the SM; the simulator uses the CTA-relative warp number
            return self.tid_of // WARP
        if name == "%nwarpid":
            # the number of warp slots of an SM (PTX ISA: the maximum number of warp identifiers),
            # not of a CTA: 64 on sm_90 (the H100 wrote 64: h100-battery misc) and sm_100
            return ones * WARP_SLOTS_PER_SM
        if name in ("%smid", "%gridid"):
            return self.cta_of % self.sm_count if name == "%smid" else ones * 0
        if name == "%nsmid":
            # the GPU's SM count (a machine fact: 132 on the H100 SXM, 148 on a B200)
            return ones * self.sm_count
        lanes = self.lane_of.astype(np.uint64)
        one = np.uint64(1)
        if name == "%lanemask_eq":
            return one << lanes
        if name == "%lanemask_lt":
            return (one << lanes) - one
        if name == "%lanemask_le":
            return (one << (lanes + one)) - one
        if name == "%lanemask_ge":
            return np.uint64(0xFFFFFFFF) & ~((one << lanes) - one)
        if name == "%lanemask_gt":
            return np.uint64(0xFFFFFFFF) & ~((one << (lanes + one)) - one)
        if name in ("%dynamic_smem_size", "%total_smem_size"):
            return ones * self.smem_bytes
        raise SimError(f"special register {name} is not implemented by the simulator")

    # -- memory --------------------------------------------------------------------------------

    def _shared_flat(self, s: Sel, addrs, nbytes: int, what: str, cluster: bool) -> np.ndarray:
        a = per_thread(np.asarray(addrs, dtype=np.uint64), s.n)
        tag, off = split_cluster_address(a)
        cta = per_thread(self.cta_of[s.ix], s.n)
        if tag.size and int(_MAX(tag)):          # tags are >= 0: some is nonzero iff the largest is
            if not cluster:
                raise MemoryFault(f"{what}: .shared::cta access with a .shared::cluster address of another CTA "
                                  f"(0x{int(a[np.flatnonzero(tag)[0]]):x})")
            if (tag > self.cluster_size).any():
                raise MemoryFault(f"{what}: .shared::cluster address names CTA rank "
                                  f"{int(tag.max()) - 1}, but the cluster has {self.cluster_size} CTAs")
            cta = np.where(tag > 0, self.cluster_first_cta(s.ix) + tag - 1, cta)
        off = off - SHARED_BASE
        if off.size and (int(_MIN(off)) < 0 or int(_MAX(off)) + nbytes > self.smem_bytes):
            bad = (off < 0) | (off + nbytes > self.smem_bytes)
            k = int(np.flatnonzero(bad)[0])
            raise MemoryFault(f"{what} of {nbytes} bytes at shared address 0x{int(a[k]):x}, outside the "
                              f"CTA's {self.smem_bytes} bytes of shared memory at 0x{SHARED_BASE:x}")
        check_alignment(a, nbytes, what)
        return cta * self.smem_bytes + off

    def shared_index(self, s: Sel, addrs, nbytes: int, what: str, cluster: bool = True) -> np.ndarray:
        """Flat byte index into ``self.smem`` of each thread's shared (or shared::cluster) access."""
        return self._shared_flat(s, addrs, nbytes, what, cluster)

    def _local_flat(self, s: Sel, addrs, nbytes: int, what: str) -> np.ndarray:
        off = np.broadcast_to(np.asarray(addrs, dtype=np.uint64).astype(np.int64), (s.n,))
        if self.local is None or ((off < 0) | (off + nbytes > self.local_bytes)).any():
            raise MemoryFault(f"{what} of {nbytes} bytes outside the thread's {self.local_bytes} bytes of local memory")
        check_alignment(off, nbytes, what)
        return s.idx * self.local_bytes + off

    def _param_index(self, s: Sel, addrs, nbytes: int, what: str) -> np.ndarray:
        off = np.broadcast_to(np.asarray(addrs, dtype=np.uint64).astype(np.int64), (s.n,))
        if ((off < 0) | (off + nbytes > self.prog.param_bytes)).any():
            raise MemoryFault(f"{what} of {nbytes} bytes outside the kernel's {self.prog.param_bytes} parameter bytes")
        check_alignment(off, nbytes, what)
        return off

    def load(self, space: str, s: Sel, addrs, bits: int, what: str = "load") -> np.ndarray:
        """One ``bits``-wide element per selected thread from ``space``; unsigned numpy array."""
        n = bits // 8
        dt = UINT[bits]
        if space == "global":
            return self.gmem.gather(per_thread(np.asarray(addrs, dtype=np.uint64), s.n), bits, what)
        if space in ("shared", "shared::cta", "shared::cluster"):
            flat = self._shared_flat(s, addrs, n, what, space == "shared::cluster")
            if self.hz is not None and self.hz.alloc_slots:
                self.hz.shared_read(s, flat, n)
            return self.smem.view(dt)[flat // n]
        if space == "param":
            return self.params.view(dt)[self._param_index(s, addrs, n, what) // n]
        if space == "local":
            return self.local.view(dt)[self._local_flat(s, addrs, n, what) // n]
        if space == "const":
            return self.gmem.gather(np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (s.n,)), bits, what)
        if space == "generic":
            return self._generic(s, addrs, lambda sp, sub, a: self.load(sp, sub, a, bits, what), dt)
        raise SimError(f"{what}: state space .{space} is not implemented by the simulator")

    def store(self, space: str, s: Sel, addrs, values, bits: int, what: str = "store") -> None:
        """Store one ``bits``-wide element per selected thread (``values`` unsigned, broadcastable)."""
        self.epoch += 1
        n = bits // 8
        dt = UINT[bits]
        values = per_thread(np.asarray(values).astype(dt, copy=False), s.n)
        if space == "global":
            self.gmem.scatter(per_thread(np.asarray(addrs, dtype=np.uint64), s.n), values, bits, what)
        elif space in ("shared", "shared::cta", "shared::cluster"):
            flat = self._shared_flat(s, addrs, n, what, space == "shared::cluster")
            self.smem.view(dt)[flat // n] = values
            if self.hz is not None:
                self.hz.generic_write(s, flat, n)
        elif space == "local":
            self.local.view(dt)[self._local_flat(s, addrs, n, what) // n] = values
        elif space == "param":
            raise MemoryFault(f"{what}: a generic store to a kernel parameter (parameters are read-only)")
        elif space == "generic":
            a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (s.n,))
            for sp, mask, local_addr in self._generic_parts(a):
                sub = s.narrow(mask)
                self.store(sp, sub, local_addr[mask], values[mask], bits, what)
        else:
            raise SimError(f"{what}: stores to state space .{space} are not implemented by the simulator")

    def space_of(self, space: str, addrs) -> str:
        """The state space ``addrs`` of an instruction in ``space`` reach (a generic one resolved
        by its window; an instruction's addresses in several spaces: the first)."""
        if space != "generic":
            return space
        parts = self._generic_parts(np.atleast_1d(np.asarray(addrs, dtype=np.uint64)))
        return parts[0][0] if parts else "global"

    def _generic_parts(self, a: np.ndarray):
        """Split generic addresses into (space, mask, address in that space) parts."""
        sh = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        lo = (a >= np.uint64(LOCAL_WINDOW)) & (a < np.uint64(LOCAL_WINDOW + WINDOW_SIZE))
        pa = (a >= np.uint64(PARAM_WINDOW)) & (a < np.uint64(PARAM_WINDOW + WINDOW_SIZE))
        gl = ~(sh | lo | pa)
        parts = []
        if gl.any():
            parts.append(("global", gl, a))
        if sh.any():
            parts.append(("shared::cluster", sh, a - np.uint64(SHARED_WINDOW)))
        if lo.any():
            parts.append(("local", lo, a - np.uint64(LOCAL_WINDOW)))
        if pa.any():
            parts.append(("param", pa, a - np.uint64(PARAM_WINDOW)))
        return parts

    def _generic(self, s: Sel, addrs, fn, dt) -> np.ndarray:
        a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (s.n,))
        parts = self._generic_parts(a)
        if len(parts) == 1 and parts[0][1].all():
            sp, _, local_addr = parts[0]
            return fn(sp, s, local_addr)
        out = np.empty(s.n, dtype=dt)
        for sp, mask, local_addr in parts:
            out[mask] = fn(sp, s.narrow(mask), local_addr[mask])
        return out

    def locate(self, space: str, s: Sel, addrs, bits: int, what: str = "access",
               write: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(array view of ``bits``-wide elements, element index per thread) for read-modify-write
        instructions (atomics, mbarrier) on global, shared or local memory."""
        self.epoch += int(write)
        n = bits // 8
        dt = UINT[bits]
        a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (s.n,))
        if space == "generic":
            parts = self._generic_parts(a)
            if len(parts) != 1:
                raise MemoryFault(f"{what}: generic addresses of one instruction span several state spaces")
            space, _, a = parts[0]
        if space == "global":
            check_alignment(a, n, what)
            return self.gmem.heap.view(dt), self.gmem.offsets(a, n, what) // n
        if space in ("shared", "shared::cta", "shared::cluster"):
            return self.smem.view(dt), self._shared_flat(s, a, n, what, space == "shared::cluster") // n
        if space == "local":
            return self.local.view(dt), self._local_flat(s, a, n, what) // n
        raise SimError(f"{what}: state space .{space} is not implemented for this instruction")

    def to_generic(self, space: str, addrs) -> np.ndarray:
        a = np.asarray(addrs, dtype=np.uint64)
        if space in ("shared", "shared::cta", "shared::cluster"):
            return a + np.uint64(SHARED_WINDOW)
        if space == "local":
            return a + np.uint64(LOCAL_WINDOW)
        if space == "param":
            return a + np.uint64(PARAM_WINDOW)
        return a

    def from_generic(self, space: str, addrs) -> np.ndarray:
        a = np.asarray(addrs, dtype=np.uint64)
        if space in ("shared", "shared::cta", "shared::cluster"):
            return a - np.uint64(SHARED_WINDOW)
        if space == "local":
            return a - np.uint64(LOCAL_WINDOW)
        if space == "param":
            return a - np.uint64(PARAM_WINDOW)
        return a


def cluster_address(rank, shared_addr) -> np.ndarray:
    """The ``.shared::cluster`` address of ``shared_addr`` in the CTA of cluster rank ``rank``."""
    return (np.asarray(shared_addr, dtype=np.uint64) & np.uint64((1 << CLUSTER_RANK_SHIFT) - 1)) | \
        ((np.asarray(rank, dtype=np.uint64) + np.uint64(1)) << np.uint64(CLUSTER_RANK_SHIFT))
