"""A stand-in execution tier for the mutation-score self-test (collected only when named).

Each case is one of the simulator's fault-free self-tests, marked ``execute`` like the suite's
execution tier, and run through ``tcgen05-cts mutation-score --tests tests/sim_exec_sample.py``.
"""

import pytest

from tests import test_sim_cases_for_mutation as cases

pytestmark = pytest.mark.execute


@pytest.mark.parametrize("name", cases.NAMES)
def test_case(name):
    cases.CASES[name]()
