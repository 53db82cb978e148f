"""Memories of the simulated device: global heap, address windows, vectorised gathers/scatters.

Address map (a simulator choice; kernels must not depend on it beyond what PTX guarantees)::

    global     GLOBAL_BASE (4 GiB) upwards: one heap, 256-byte aligned allocations.  Placing it
               above 2^32 makes a pointer truncated to 32 bits fault instead of aliasing.
    shared     shared-space addresses SHARED_BASE (0x400) .. SHARED_BASE + size per CTA; the first
               1 KiB is left unused like the system-reserved shared memory of sm_80+ GPUs, so a
               kernel that assumes its variables start at 0 is caught.
               A .shared::cluster address of another CTA carries (rank + 1) << 24 (``mapa``).
    generic    global addresses are generic addresses; shared window SHARED_WINDOW + address,
               local window LOCAL_WINDOW + address (``cvta``); kernel parameters (``.param``
               offsets, ``mov %r, param_name``) at PARAM_WINDOW + offset (``cvta.param``, read-only).

Every access is checked: inside a live allocation / the CTA's shared size, naturally aligned.
"""

from __future__ import annotations

import bisect

import numpy as np

from ptxsim.errors import MemoryFault

GLOBAL_BASE = 1 << 32
SHARED_BASE = 0x400
SHARED_WINDOW = 0x7F00_0000_0000
LOCAL_WINDOW = 0x7E00_0000_0000
PARAM_WINDOW = 0x7D00_0000_0000       # generic addresses of kernel parameters (cvta.param)
WINDOW_SIZE = 1 << 32
CLUSTER_RANK_SHIFT = 24
SHARED_ADDRESS_MASK = (1 << CLUSTER_RANK_SHIFT) - 1
ALLOC_ALIGN = 256

UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SHIFT = {8: 0, 16: 1, 32: 2, 64: 3}      # log2 of the element size in bytes


def _first_bad(addrs: np.ndarray, bad: np.ndarray) -> str:
    k = int(np.flatnonzero(bad)[0])
    return f"0x{int(np.asarray(addrs).reshape(-1)[k]):x}"


_OR, _MIN, _MAX = np.bitwise_or.reduce, np.minimum.reduce, np.maximum.reduce


def check_alignment(addrs, nbytes: int, what: str) -> None:
    """Natural alignment of an access of ``nbytes`` (vectors: the whole vector, PTX §6.4)."""
    if nbytes > 1:
        a = np.asarray(addrs, dtype=np.uint64)
        # one reduction: some address has a low bit set iff their bitwise OR has (no temporaries)
        if int(_OR(a, axis=None)) & (nbytes - 1):
            low = a & np.uint64(nbytes - 1)
            raise MemoryFault(f"{what} of {nbytes} bytes at misaligned address {_first_bad(addrs, low != 0)}")


class GlobalMemory:
    """The device's global memory: one growing heap with a bump allocator and bounds checks."""

    def __init__(self, capacity: int = 1 << 20) -> None:
        self.heap = np.zeros((capacity + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN, dtype=np.uint8)
        self.top = 0
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.live: list[bool] = []
        self._bounds: tuple[np.ndarray, np.ndarray] | None = None

    # allocation
    def alloc(self, nbytes: int, align: int = ALLOC_ALIGN) -> int:
        """Allocate ``nbytes`` (zero-filled); return the device address."""
        start = (self.top + align - 1) // align * align
        end = start + max(int(nbytes), 0)
        if end > self.heap.size:
            size = (max(end, 2 * self.heap.size) + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN
            grown = np.zeros(size, dtype=np.uint8)
            grown[:self.top] = self.heap[:self.top]
            self.heap = grown
        self.heap[start:end] = 0
        self.top = end
        self.starts.append(start)
        self.ends.append(end)
        self.live.append(True)
        self._bounds = None
        return GLOBAL_BASE + start

    def free(self, address: int) -> None:
        off = address - GLOBAL_BASE
        try:
            k = self.starts.index(off)
        except ValueError:
            raise MemoryFault(f"free of 0x{address:x}, which is not an allocation") from None
        self.live[k] = False
        self._bounds = None
        if all(not x for x in self.live):          # everything freed: reuse the heap
            self.top = 0
            self.starts, self.ends, self.live = [], [], []

    # host copies
    def write(self, address: int, data) -> None:
        """Copy ``data`` (bytes, or a numpy array: its raw bytes in C order) to ``address``."""
        raw = (np.ascontiguousarray(data).view(np.uint8).reshape(-1) if isinstance(data, np.ndarray)
               else np.frombuffer(bytes(data), dtype=np.uint8))
        off = self._check_host(address, raw.size)
        self.heap[off:off + raw.size] = raw

    def read(self, address: int, nbytes: int) -> bytes:
        """The ``nbytes`` bytes at ``address``."""
        off = self._check_host(address, nbytes)
        return self.heap[off:off + nbytes].tobytes()

    def read_array(self, address: int, nbytes: int) -> np.ndarray:
        """The ``nbytes`` bytes at ``address`` as a writable uint8 array (``.view(dtype)`` it)."""
        off = self._check_host(address, nbytes)
        return self.heap[off:off + nbytes].copy()

    def _check_host(self, address: int, nbytes: int) -> int:
        ok = self.valid(np.array([address], dtype=np.uint64), nbytes)
        if not ok[0]:
            raise MemoryFault(f"host copy of {nbytes} bytes at 0x{address:x} outside any allocation")
        return address - GLOBAL_BASE

    # device accesses
    def valid(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """Whether each ``[addr, addr + nbytes)`` lies inside one live allocation."""
        if self._bounds is None:
            live = [k for k, x in enumerate(self.live) if x]
            self._bounds = (np.array([self.starts[k] for k in live], dtype=np.int64),
                            np.array([self.ends[k] for k in live], dtype=np.int64))
        starts, ends = self._bounds
        off = np.asarray(addrs, dtype=np.uint64).astype(np.int64) - GLOBAL_BASE
        if starts.size == 0:
            return np.zeros(off.shape, dtype=bool)
        k = np.searchsorted(starts, off, side="right") - 1
        kk = np.maximum(k, 0)
        return (k >= 0) & (off >= starts[kk]) & (off + nbytes <= ends[kk])

    def _one_allocation(self, lo: int, hi: int) -> bool:
        """Whether offsets lo..hi (inclusive ends) fall in one live allocation (fast path)."""
        k = bisect.bisect_right(self.starts, lo) - 1
        return k >= 0 and self.live[k] and hi <= self.ends[k]

    def offsets(self, addrs, nbytes: int, what: str) -> np.ndarray:
        addrs = np.asarray(addrs, dtype=np.uint64)
        # the span [lowest, highest + nbytes) of the addresses as unsigned numbers: inside one live
        # allocation, every access is (a negative or wrapped offset falls outside any, as below)
        if addrs.size and self._one_allocation(int(_MIN(addrs, axis=None)) - GLOBAL_BASE,
                                               int(_MAX(addrs, axis=None)) - GLOBAL_BASE + nbytes):
            return addrs.astype(np.int64) - GLOBAL_BASE
        ok = self.valid(addrs, nbytes)
        if not ok.all():
            raise MemoryFault(f"{what} of {nbytes} bytes at {_first_bad(addrs, ~ok)}, outside any global allocation")
        return addrs.astype(np.int64) - GLOBAL_BASE

    def _elements(self, addrs, bits: int, what: str) -> np.ndarray:
        """Index of each access's ``bits``-wide element in the heap (alignment, then bounds checked).
        The offsets are in bounds, so not negative: a shift divides them by the element size."""
        n = bits // 8
        check_alignment(addrs, n, what)
        return self.offsets(addrs, n, what) >> _SHIFT[bits]

    def gather(self, addrs, bits: int, what: str = "global load") -> np.ndarray:
        return self.heap.view(UINT[bits])[self._elements(addrs, bits, what)]

    def scatter(self, addrs, values, bits: int, what: str = "global store") -> None:
        self.heap.view(UINT[bits])[self._elements(addrs, bits, what)] = values


def split_cluster_address(addrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``.shared::cluster`` address -> (target rank + 1, or 0 for the own CTA; shared address)."""
    a = np.asarray(addrs, dtype=np.uint64)
    return (a >> np.uint64(CLUSTER_RANK_SHIFT)).astype(np.int64), (a & np.uint64(SHARED_ADDRESS_MASK)).astype(np.int64)
