"""Every hand-written kernel of the simulator's self-tests is real PTX: ptxas assembles it."""

import pytest

from tests import sim_mma_cases, sim_ptx, sim_ptx_hazards, sim_ptx_tcgen05, sim_ptx_tcgen05_ops
from tests.sim_ptx import UNIMPLEMENTED, assemble

pytestmark = pytest.mark.assemble

KERNELS = {**sim_ptx.KERNELS, **sim_ptx_tcgen05.KERNELS, **sim_ptx_tcgen05_ops.KERNELS,
           **sim_mma_cases.KERNELS, **sim_ptx_hazards.KERNELS}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_assembles(name):
    ptx, arch = KERNELS[name]
    result = assemble(ptx, arch)
    assert result.returncode == 0, result.stderr


def test_unimplemented_kernel_is_valid_ptx():
    """The simulator refuses it for lack of handlers, not because it is malformed."""
    result = assemble(UNIMPLEMENTED, "sm_90")
    assert result.returncode == 0, result.stderr
