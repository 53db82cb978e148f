"""Assembly tier, PTX ISA §9.7.16.8: Tensor Memory load/store: tcgen05.ld (+ .red), tcgen05.st, tcgen05.wait.

Every legal case of the level assembles with ptxas for each of its targets (MMA cases: the SASS
holds a tensor-core MMA opcode when nvdisasm is found); every negative case is rejected. Test
IDs are case IDs. Without ptxas every case skips with the reason.
"""

import pytest

from conformance.harness.assembly import check_case, parametrize_cases

pytestmark = pytest.mark.assemble
FAMILIES = ('ld', 'ld.red', 'st', 'wait')


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, FAMILIES)


def test_assembles(case, request):
    check_case(case, request)
