"""Shared/generic/local/param memory, barriers over shared data, atomics, and memory faults."""

import numpy as np
import pytest

from ptxsim import MemoryFault, SimDevice
from tests.sim_ptx import BAD_STORE, MEMORY, NARROW, SHARED, run_kernel

pytestmark = pytest.mark.reference


def test_reverse_through_shared_memory_with_named_barrier():
    dev = SimDevice()
    module = dev.load(SHARED)
    src = dev.memory.alloc(512)
    dev.memory.write(src, (np.arange(128, dtype=np.uint32) * 3 + 1).tobytes())
    dst = dev.memory.alloc(1024)
    dev.run(module, "shared_rev", [src, dst], (2, 1, 1), (128, 1, 1))
    out = dev.memory.read_array(dst, 1024).view(np.uint32)
    assert out[:128].tolist() == [(127 - t) * 3 + 1 for t in range(128)]
    # after `bar.sync 1, 64` (warps 0-1 only) every thread of warps 0-1 saw its own CTA's atomics
    assert (out[128:192] >= 64).all() and (out[128:192] <= 128).all()
    assert out[192:].tolist() == [0] * 64


def test_generic_local_and_atomics():
    out = run_kernel(SimDevice(), MEMORY, "memory", 16 + 128, block=(64, 1, 1))
    counters, per_thread = out[:16], out[16:].reshape(64, 2)
    assert counters[:4].tolist() == [64, sum(range(64)), 63, 64 % 10]       # add, red.add, max, inc wraps at 9
    assert counters[4:7].tolist() == [77, 0, 99]                            # cas hit, cas miss, exch
    assert counters[8:11].tolist() == [0, 0, 0]                             # old values returned
    assert counters[11] == 0x400                                            # first shared variable's address
    assert per_thread[:, 0].tolist() == [5000 + t for t in range(64)]        # generic -> shared -> local
    assert sorted(per_thread[:, 1].tolist()) == list(range(64))             # atom.add old values


def test_store_outside_any_allocation_is_a_fault():
    dev = SimDevice()
    module = dev.load(BAD_STORE)
    buf = dev.memory.alloc(64)
    dev.run(module, "bad_store", [buf, 0], (1, 1, 1), (1, 1, 1))           # in bounds
    with pytest.raises(MemoryFault, match=r"line 14: `st.global.u32 \[%rd3\], %r2;`.*outside any global allocation"):
        dev.run(module, "bad_store", [buf, 64], (1, 1, 1), (1, 1, 1))
    with pytest.raises(MemoryFault, match="misaligned"):
        dev.run(module, "bad_store", [buf, 2], (1, 1, 1), (1, 1, 1))


def test_narrow_loads_extend_and_byte_stores_truncate():
    dev = SimDevice()
    data = bytes((37 * i + 5) & 0xFF for i in range(128))
    src = dev.memory.alloc(128)
    dev.memory.write(src, data)
    out = run_kernel(dev, NARROW, "narrow", 64 * 8 + 16, block=(64, 1, 1), in_ptr=src)
    words = out[:64 * 8].reshape(64, 8)[:, :6]
    for t in range(64):
        half = data[2 * t] | data[2 * t + 1] << 8
        expect = [data[t], (data[t] - 256 if data[t] >= 128 else data[t]) & 0xFFFFFFFF, half,
                  (half - 65536 if half >= 32768 else half) & 0xFFFFFFFF, t // 32, 64]
        assert words[t].tolist() == expect, f"thread {t}"
    assert out[64 * 8:].view("u1").tolist() == [(3 * t) & 0xFF for t in range(64)]
