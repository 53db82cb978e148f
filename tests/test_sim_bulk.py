"""cp.async.bulk with mbarrier transaction counts on the simulator (PTX ISA §9.7.9.25.4.1,
§9.7.13.15): the copy lands only when every thread waits, and only an armed transaction count
makes the wait last until then (the fault ``expect-tx-ignored`` breaks exactly that)."""

import numpy as np
import pytest

from ptxsim import SimDevice, SimError
from ptxsim.faults.catalogue import FAULTS
from tests.sim_ptx import BULK

pytestmark = pytest.mark.reference

DATA = np.arange(16, dtype=np.uint32) * 0x01010101 + 0x10203040      # independent of the simulator
STALE = 0xA5A5A5A5                                                     # shared memory before any store


def _run(faults=(), nbytes=64) -> np.ndarray:
    dev = SimDevice(faults=faults)
    src = dev.memory.alloc(64)
    dev.memory.write(src, DATA.tobytes())
    module = dev.load(BULK)
    out = dev.memory.alloc(64 * 16)
    dev.run(module, "bulk", [src, out, np.uint32(nbytes)], (1, 1, 1), (64, 1, 1))
    return dev.memory.read_array(out, 64 * 16).view(np.uint32).reshape(64, 4)


def test_bulk_copy_lands_when_every_thread_waits():
    out = _run()
    assert out[:, 3].tolist() == list(range(64))
    assert (out[:, 0] == STALE).all()                         # read before the wait: not landed yet
    assert out[:, 1].tolist() == [int(DATA[t % 16]) for t in range(64)]
    assert (out[:, 2] >= 1).all() and (out[:, 2] < 1000).all()  # every thread spun at least once


def test_expect_tx_ignored_fault_lets_the_wait_pass_before_the_bytes():
    fault = next(f for f in FAULTS if f.name == "expect-tx-ignored")
    out = _run(faults=(fault,))
    assert (out[:, 1] == STALE).all()
    assert (out[:, 2] == 0).all()


@pytest.mark.parametrize("nbytes", [0, 8, 40])
def test_bulk_size_must_be_a_positive_multiple_of_16(nbytes):
    with pytest.raises(SimError, match="multiple of 16"):
        _run(nbytes=nbytes)
