"""The execution tier's harness: which cases run, and the check of one case (docs/execute.md).

Test modules ``conformance/test_execute_<section>.py`` parametrize over :func:`execution_cases`
(the legal cases of the level for their families, plus numerics companions of the MMA cases;
negative cases are the assembly tier's) and call :func:`check_case`:

1. gating: no device (``--device cuda`` without a GPU, ``--device none``) or a device of another
   architecture -> ``skip("NotSupported: needs <target>, found none")``;
2. the case's batch is launched once (``conformance.harness.execute_batch``) and its results picked up;
3. a case the reference cannot define, or the simulator does not model, is a Skip naming why;
4. crash / timeout -> ``CaseCrash`` / ``CaseTimeout`` (statuses Crash / Timeout); status words;
5. the expected sections (``conformance.harness.oracles``) are compared (``conformance.harness.execute_compare``);
   a case that depends on a spec question whose probe saw another reading than the one its
   expected values follow fails naming the question (``conformance.harness.probes``);
   on failure the PTX, cubin, record, inputs, outputs and expected words go under
   ``<results>/artifacts/``.

Numerics companions (``<case ID>.numerics``): the MMA kernels run once more per (family, kind,
D type) with random full-mantissa operands (and NaN / zero rows), compared with the model
``--numerics`` names: ``hardware`` bit for bit, ``spec`` within the spec model's bound.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from conformance.harness.assembly import selected_cases
from conformance.harness.case_status import Deferred, cts_case
from conformance.harness.compare import ComparisonFailure, save_artifacts
from conformance.harness.device import CaseCrash, CaseTimeout, check_status
from conformance.harness.execute_batch import ExecCase, ExecutionService, service
from conformance.harness.execute_compare import compare_case
from conformance.harness.gating import require_target
from conformance.harness.oracles import OracleError, expected
from conformance.harness.probes import conflict_message, reading_conflicts
from conformance.harness.selection import deselected_by_markexpr
from generators.inputs import NUMERICS
from generators.inputs.mma import untestable_reason
from generators.params import Case
from generators.sections import section_ids_of, statements_of

MMA_FAMILIES = ("mma", "mma.sp", "mma.ws", "mma.ws.sp")


# -- which cases -----------------------------------------------------------------------------------

def _operand_types(c: Case) -> set[tuple[str, str]]:
    p = c.params
    return {("A", p["a_type"]), ("B", p["b_type"]), ("C", p["d_type"]), ("SF", p["scale_type"])}


def numerics_companions(cases: Sequence[Case]) -> list[ExecCase]:
    """One numerics companion per (family, kind, D type) of the MMA cases: the first case of the
    group that has a defined expected result, preferring dense cta_group::1 ones; then the first
    case of each A, B, D or scale-factor type no companion has yet (every type's special values,
    ``generators.inputs.mma``, reach some companion: issue 15 value coverage)."""
    picked: dict[tuple, Case] = {}
    eligible = [c for c in cases if c.family in MMA_FAMILIES and c.params["kind"] != "i8"
                and not untestable_reason(c.params)]
    for c in eligible:
        key = (c.family, c.params["kind"], c.params["d_type"])
        best = picked.get(key)
        if best is None or (c.params["cta_group"], c.params["m"]) < (best.params["cta_group"], best.params["m"]):
            picked[key] = c
    seen = set().union(*(_operand_types(c) for c in picked.values()))
    for c in eligible:
        if not _operand_types(c) <= seen:
            picked[("type", c.case_id)] = c
            seen |= _operand_types(c)
    return [ExecCase(c, NUMERICS) for c in picked.values()]


def grouped_by_kernel(items: Sequence[ExecCase]) -> list[ExecCase]:
    """Stable grouping: kernels in order of first appearance, each kernel's cases together (so a
    pytest-xdist worker receives a kernel's cases in one run of consecutive tests)."""
    order: dict[str, list[ExecCase]] = {}
    for xc in items:
        order.setdefault(xc.case.kernel.name, []).append(xc)
    return [xc for group in order.values() for xc in group]


def execution_cases(config, families: Sequence[str]) -> list[ExecCase]:
    cases = [c for c in selected_cases(config, families) if c.legal]
    return grouped_by_kernel([ExecCase(c) for c in cases] + numerics_companions(cases))


def _variant(case: Case) -> dict:
    return {k: v for k, v in case.params.items_ if isinstance(v, (str, int, bool)) and k != "idesc"}


def parametrize_cases(metafunc, families: Sequence[str]) -> None:
    """``pytest_generate_tests`` body shared by the test_execute_* modules."""
    if "xcase" not in metafunc.fixturenames:
        return
    if deselected_by_markexpr(metafunc):
        metafunc.parametrize("xcase", [])         # an empty set: its placeholder is deselected too
        return
    params = []
    for xc in execution_cases(metafunc.config, families):
        mark = cts_case(case_id=xc.case_id, section=xc.case.section, family=xc.case.family,
                        sections=Deferred(section_ids_of, xc.case),
                        statements=Deferred(statements_of, xc.case), mode=xc.mode, **_variant(xc.case))
        params.append(pytest.param(xc, id=xc.case_id, marks=mark))
    metafunc.parametrize("xcase", params)


# -- one case ----------------------------------------------------------------------------------------

def check_case(xcase: ExecCase, request) -> None:
    """The execution-tier verdict for one case (module docstring)."""
    case = xcase.case
    device = request.getfixturevalue("cts_device")
    if device is None or device.kind == "none":
        require_target(case.targets, device)             # skips: NotSupported ..., found none
    svc = service(request.config, device)
    target = svc.target_for(case)
    if target is None:
        require_target(case.targets, device)             # skips: NotSupported ...; device is sm_XY
    props = request.node.user_properties
    props.append(("target", target))
    if svc.kind == "cuda":
        props += [("load", svc.load_mode), ("sass_arch", svc.arch_for(target) or "driver JIT"),
                  ("toolchain", svc.toolchain_for(target))]
    run = svc.run_for(request.node, xcase, target)
    props += [("batch", run.batch), ("device_seconds", round(run.seconds, 6))]
    if run.skip:
        pytest.skip(run.skip)
    if isinstance(run.error, (CaseCrash, CaseTimeout)):
        raise run.error
    if run.error is not None:
        pytest.fail(f"§{case.section} {xcase.case_id}: {type(run.error).__name__}: {run.error}", pytrace=False)
    repro = request.getfixturevalue("cts_repro")
    message = check_status(xcase.case_id, run.status)
    if message:
        _artifacts(request, svc, xcase, target, run, None)
        pytest.fail(f"§{case.section} {message}\n  reproduce: {repro}", pytrace=False)
    numerics = request.config.getoption("numerics")
    try:
        exp = expected(case, run.inputs, numerics=numerics, mode=xcase.mode)
    except OracleError as exc:
        pytest.fail(f"§{case.section} {xcase.case_id}: expected-value step: {exc}", pytrace=False)
    conflicts = reading_conflicts(request.config, device, case, mode=xcase.mode, numerics=numerics,
                                  inputs=run.inputs)
    try:
        compare_case(exp, run.outputs, section_id=case.section, case_id=xcase.case_id, repro=repro)
        if conflicts:
            # The device follows another reading, but this case's data gives the same values under
            # both: its result is right whichever reading holds, so it passes (a Fail here would be
            # a wrong verdict, and would make a case's outcome depend on another case's run).
            props.append(("spec_question_conflict", conflict_message(xcase.case_id, conflicts)))
        return
    except ComparisonFailure as exc:
        failure = str(exc)
    if conflicts:
        failure = f"§{case.section} {conflict_message(xcase.case_id, conflicts)}\n{failure}"
    where = _artifacts(request, svc, xcase, target, run, exp)
    pytest.fail(failure + (f"\n  artifacts: {where}" if where is not None else ""), pytrace=False)


def _artifacts(request, svc: ExecutionService, xcase: ExecCase, target: str, run, exp):
    results_dir = request.getfixturevalue("cts_results_dir")
    if results_dir is None or run.inputs is None:
        return None
    ptx, cubin = svc.source(xcase.case, target)
    from generators.inputs import case_record

    arrays = {"record": np.frombuffer(case_record(xcase.case, run.inputs), dtype=np.uint8),
              "inputs": np.frombuffer(run.inputs.in_bytes, dtype=np.uint8)}
    if run.outputs is not None:
        arrays["outputs"] = run.outputs
    if run.status is not None:
        arrays["status_words"] = run.status
    for sec in (exp.sections if exp is not None else ()):
        name = re.sub(r"[^A-Za-z0-9]+", "_", sec.name).strip("_")
        arrays.update({f"{name}_index": sec.index, f"{name}_expected": sec.expected, f"{name}_mask": sec.mask})
    return save_artifacts(results_dir, xcase.case_id, ptx=ptx, cubin=cubin, **arrays)
