"""The hazard checker (``ptxsim.hazards``, docs/sim.md "Hazard checker"): for each rule a correct
hand-written kernel runs clean and its broken version (one synchronization step removed) raises
``HazardError`` with that rule, naming both PTX lines."""

import numpy as np
import pytest

from ptxsim import HazardError, SimDevice, SimError
from tests.sim_ptx import run_kernel
from tests.sim_ptx_hazards import LDST, without

pytestmark = pytest.mark.reference


def expect_hazard(ptx, name, rule, first, second, **kw):
    """Run and return the HazardError of ``rule`` whose two lines contain ``first``/``second``."""
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(), ptx, name, 256, **kw)
    exc = info.value
    assert isinstance(exc, SimError)
    assert exc.rule == rule, str(exc)
    assert first in exc.first and second in exc.second, str(exc)
    assert exc.first in str(exc) and exc.second in str(exc) and exc.section in str(exc)
    return exc


def test_ldst_clean():
    out = run_kernel(SimDevice(), LDST, "ldst", 32, block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def _unused():
    expect_hazard(without(LDST, "wait_ld"), "ldst", "wait-ld", "tcgen05.ld", "st.global", block=(32, 1, 1))


def test_hazards_off_runs_the_broken_kernel():
    out = run_kernel(SimDevice(hazards=False), without(LDST, "wait_ld"), "ldst", 32, block=(32, 1, 1))
    np.testing.assert_array_equal(out, np.arange(32))


def test_tcgen05_ld_not_waited_before_dealloc():
    expect_hazard(without(LDST, "wait_ld"), "ldst", "dealloc-pending", "tcgen05.ld", "tcgen05.dealloc",
                  block=(32, 1, 1))


def test_register_of_tcgen05_ld_overwritten_before_wait_ld():
    ptx = LDST.replace("    tcgen05.wait::ld.sync.aligned;                                       // @wait_ld\n",
                       "    mov.u32 %r5, 7;\n    tcgen05.wait::ld.sync.aligned;\n")
    expect_hazard(ptx, "ldst", "wait-ld", "tcgen05.ld", "mov.u32", block=(32, 1, 1))


def test_tcgen05_st_not_waited_before_tcgen05_ld():
    expect_hazard(without(LDST, "wait_st"), "ldst", "wait-st", "tcgen05.st", "tcgen05.ld", block=(32, 1, 1))
