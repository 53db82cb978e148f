"""Execution tier, PTX ISA §9.7.14.6.1: warp-level sparse MMA (mma.sp / mma.sp::ordered_metadata).

Every legal case of the level runs on the device (``--device cuda|sim``; batched per kernel) and
its outputs are compared with the reference's expected values (docs/execute.md). Test IDs are
case IDs. Without a device of a case's target every case skips as NotSupported.
"""

import pytest

from conformance.harness.execute import check_case, parametrize_cases

pytestmark = pytest.mark.execute
FAMILIES = ('warp.mma.sp',)


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, FAMILIES)


def test_executes(xcase, request):
    check_case(xcase, request)
