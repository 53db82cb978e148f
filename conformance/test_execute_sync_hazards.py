"""Execution tier, PTX ISA §9.7.16.6.4: the canonical synchronization patterns with one step
removed (negative execution cases, issue 14).

Each case is a pattern kernel without one synchronization step (``without``); the simulated
device must report a hazard naming the removed rule (a removed commit: a timeout). On a GPU the
cases skip as NotSupported (a race shows only intermittently there). Test IDs are case IDs.
"""

import pytest

from conformance.harness.execute import parametrize_cases
from conformance.harness.execute_hazard import check_hazard_case

pytestmark = pytest.mark.execute
FAMILIES = ('sync.hazard',)


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, FAMILIES)


def test_reports_hazard(xcase, request):
    check_hazard_case(xcase, request)
