"""Negative execution cases (issue 14): a synchronization pattern with one step removed must make
the device report a hazard (family ``sync.hazard``, ``generators/ptx/broken_patterns.py``).

The verdict: Pass when the launch fails with a :class:`ptxsim.HazardError` whose ``rule`` is one
the case expects (or, for a removed ``tcgen05.commit``, when the wait it fed times out); Fail
otherwise (the kernel ran clean, or the device reported something else). Only the simulated device
can observe a missing wait or fence deterministically: on a GPU the case skips as NotSupported.
"""

from __future__ import annotations

import pytest

from conformance.harness.device import CaseCrash, CaseTimeout, check_status
from conformance.harness.execute_batch import ExecCase, service
from conformance.harness.gating import require_target
from generators.ptx.broken_patterns import TIMEOUT
from ptxsim import HazardError

NEEDS_SIM = ("NotSupported: hazard detection needs the simulated device (--device sim); on a GPU a missing "
             "synchronization step shows only intermittently")


#: broken forms the hazard checker does not report yet (case ID -> why); strict xfail, so a
#: checker that learns the rule turns the entry into a failure that asks for its removal
CHECKER_GAPS: dict[str, str] = {}


def reported(run, case_id: str) -> tuple[str, str]:
    """What the device reported for one run: (rule id, or ``timeout``, or ``""``; in words)."""
    err = run.error
    cause = getattr(err, "__cause__", None)
    if isinstance(err, CaseCrash) and isinstance(cause, HazardError):
        return cause.rule, f"HazardError: {cause}"
    if isinstance(err, CaseTimeout):
        return TIMEOUT, f"timeout: {err}"
    if err is not None:
        return "", f"{type(err).__name__}: {err}"
    if run.status is not None:
        try:
            message = check_status(case_id, run.status)
        except CaseTimeout as exc:
            return TIMEOUT, f"timeout: {exc}"
        if message:
            return "", message
    return "", "no error: the kernel ran to its end and the device reported nothing"


def check_hazard_case(xcase: ExecCase, request) -> None:
    case = xcase.case
    device = request.getfixturevalue("cts_device")
    if device is None or device.kind == "none":
        require_target(case.targets, device)             # skips: NotSupported ..., found none
    if device.kind != "sim":
        pytest.skip(NEEDS_SIM)
    if not getattr(device, "hazards", True):
        pytest.skip("NotSupported: the simulated device runs with its hazard checker off (SimDevice(hazards=False))")
    svc = service(request.config, device)
    run = svc.run_for(request.node, xcase, svc.target_for(case))
    if run.skip:
        pytest.skip(run.skip)
    gap = CHECKER_GAPS.get(case.case_id)
    if gap:
        request.node.add_marker(pytest.mark.xfail(reason=f"known checker gap: {gap}", strict=True))
    expect = tuple(case.params["expect"].split(","))
    rule, words = reported(run, case.case_id)
    request.node.user_properties.append(("reported", rule or "nothing"))
    if rule not in expect:
        pytest.fail(f"§{case.section} {case.case_id}: without {case.params['without']} the device expects to report "
                    f"{' or '.join(expect)}, but got {words[:800]}", pytrace=False)
