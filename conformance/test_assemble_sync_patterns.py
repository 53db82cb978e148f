"""Assembly tier, PTX ISA §9.7.16.6: canonical synchronization patterns (§9.7.16.6.4) as whole kernels.

Every legal case of the level assembles with ptxas for each of its targets (MMA cases: the SASS
holds a tensor-core MMA opcode when nvdisasm is found); every negative case is rejected. Test
IDs are case IDs. Without ptxas every case skips with the reason.
"""

import pytest

from conformance.harness.assembly import check_case, parametrize_cases

pytestmark = pytest.mark.assemble
FAMILIES = ('sync', 'sync.hazard')


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, FAMILIES)


def test_assembles(case, request):
    check_case(case, request)
