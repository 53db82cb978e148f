"""Execution tier, PTX ISA §9.7.16.7: Tensor Memory allocation: tcgen05.alloc, dealloc, relinquish_alloc_permit.

Every legal case of the level runs on the device (``--device cuda|sim``; batched per kernel) and
its outputs are compared with the reference's expected values (docs/execute.md). Test IDs are
case IDs. Without a device of a case's target every case skips as NotSupported.
"""

import pytest

from conformance.harness.execute import check_case, parametrize_cases

pytestmark = pytest.mark.execute
FAMILIES = ('alloc',)


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, FAMILIES)


def test_executes(xcase, request):
    check_case(xcase, request)
