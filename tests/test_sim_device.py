"""SimDevice: loading, launch geometry checks, and the kernel-ABI launch of the device layer."""

import struct

import numpy as np
import pytest

from ptxsim import SimDevice, SimError, UnimplementedError
from tests.sim_ptx import ABI_COPY, UNIMPLEMENTED

pytestmark = pytest.mark.reference


def test_load_refuses_a_cubin():
    with pytest.raises(SimError, match="expects PTX text, but got a cubin"):
        SimDevice().load(b"\x7fELF\x02\x01\x01")


def test_unimplemented_instructions_are_named_at_load():
    with pytest.raises(UnimplementedError) as info:
        SimDevice().load(UNIMPLEMENTED)
    assert len(info.value.items) == 2
    assert "bmsk.clamp.b32" in info.value.items[0] and "no simulator handler" in info.value.items[0]
    assert ".sat on mad" in info.value.items[1]


def test_reqntid_is_enforced():
    dev = SimDevice()
    with pytest.raises(SimError, match="reqntid"):
        dev.run(dev.load(ABI_COPY), "abi_copy", [0, 0], (1, 1, 1), (64, 1, 1))


def test_abi_kernel_through_run():
    """Case records built by hand (kernel ABI: in_ptr, out_ptr, status_ptr, out_words)."""
    dev = SimDevice(batch_clusters=2)
    module = dev.load(ABI_COPY)
    ncases, words = 5, [3, 200, 0, 129, 7]
    table = dev.memory.alloc(256 * ncases)
    records = bytearray(256 * ncases)
    ins, outs, stats = [], [], []
    for i, n in enumerate(words):
        data = (np.arange(n, dtype=np.uint32) + 1000 * i)
        ins.append(dev.memory.alloc(max(4 * n, 4)))
        dev.memory.write(ins[-1], data.tobytes())
        outs.append(dev.memory.alloc(max(4 * n, 4)))
        stats.append(dev.memory.alloc(16))
        struct.pack_into("<QQQI", records, 256 * i, ins[-1], outs[-1], stats[-1], n)
    dev.memory.write(table, bytes(records))
    dev.run(module, "abi_copy", [table, ncases], (ncases + 1, 1, 1), (128, 1, 1))   # one spare CTA exits
    for i, n in enumerate(words):
        got = dev.memory.read_array(outs[i], 4 * n).view(np.uint32) if n else np.zeros(0, np.uint32)
        assert got.tolist() == list(range(1000 * i, 1000 * i + n))
        assert dev.memory.read_array(stats[i], 16).view(np.uint32).tolist() == [0x600D0002, 0, 0, 0]


def test_launch_through_the_device_layer():
    import conformance.harness.device as device_layer
    from conformance.harness.device_sim import SimBackend

    dev = SimBackend()
    module = dev.load(ABI_COPY)
    buffers = [device_layer.CaseBuffers(np.arange(n, dtype=np.uint32).tobytes(), n) for n in (4, 130, 1)]
    result = dev.launch(module, "abi_copy", bytes(256 * 3), buffers, (3, 1, 1), (128, 1, 1))
    for buf, out in zip(buffers, result.outputs, strict=True):
        assert out.tolist() == list(range(buf.out_words))
    assert result.status_words[:, 0, 0].tolist() == [0x600D0002] * 3
