"""Real-client tier (``-m clients``): Triton/Gluon and CuTe kernels compiled for sm_100a run unmodified.

Each case is one corpus configuration (``conformance/clients``): Triton 3.9, or the wheels' nvcc with
CUTLASS 4.2's CuTe headers, compiles it (cached on disk), the device runs the PTX exactly as Triton's
launcher would (a CuTe kernel: its own parameters only), and every output must equal the float64 numpy product bit for bit (inputs are exact by construction).  On ``--device sim`` the
simulator decodes every tcgen05 operand through ``reference/``, so a mismatch is a finding about
the project's reading of the spec (docs/clients.md).  JUnit section: ``clients:<family>``.
Without Triton (or without the CuTe wheels) that client's cases are one skipped case with the reason;
without a device the tier skips as NotSupported.
"""

from __future__ import annotations

import pytest

from conformance.clients.corpus import TRIAGED_RACES
from conformance.harness.case_status import CASE_MARKER

pytestmark = pytest.mark.clients
FAMILY = "clients"
SIM_ARCHS = (100, 103)


def pytest_generate_tests(metafunc):
    if "client" not in metafunc.fixturenames:
        return
    from conformance.clients.corpus import load_corpus, skip_reasons

    params = []
    for client, reason in skip_reasons().items():
        if reason:             # one skipped case per client whose toolchain is missing
            params.append(pytest.param(None, id=f"corpus-{client}", marks=[
                pytest.mark.skip(reason=reason), getattr(pytest.mark, CASE_MARKER)(
                    case_id=f"clients.corpus-{client}", section="clients", family=FAMILY)]))
    params += [pytest.param(k, id=k.name, marks=getattr(pytest.mark, CASE_MARKER)(
        case_id=f"clients.{k.name}", section=k.section, family=FAMILY)) for k in load_corpus()]
    metafunc.parametrize("client", params)


def unexercised_families(client, spellings) -> list[str]:
    """The declared families no executed instruction spelling matches (the trace disagrees)."""
    import re

    from conformance.clients.model import FAMILIES

    missing = [f for f in client.families if FAMILIES[f][0] and not any(re.search(FAMILIES[f][0], s) for s in spellings)]
    return [f"{client.name}: declares family {f} ({FAMILIES[f][0]}), but the simulator's trace has no such instruction"
            for f in missing]


# The simulator runs the corpus as an outside user would: SimDevice() with its defaults, which follow
# the readings every known client follows (ptxsim.hazards.CLIENT_READINGS: Q-SYNC-FENCE acquire-orders,
# Q-PAIR-DEALLOC collective; docs/sim.md "Hazard checker"), every rule on.  Kernels with a documented
# real race (TRIAGED_RACES) run with that rule waived, and a run without the waiver must still report it.


def _client_device(request, client=None, waive_triaged: bool = True):
    device = request.getfixturevalue("cts_device")
    kind = request.config.getoption("device")
    if device is None or getattr(device, "kind", "none") == "none":
        pytest.skip("NotSupported: needs sm_100a, found none")
    if kind == "sim":          # a traced simulator per case, with the session's faults
        from conformance.harness.device_sim import hazards_from_environment
        from ptxsim import SimDevice

        waive = () if not waive_triaged else tuple(
            rule for name, rule in TRIAGED_RACES.items() if client is not None and client.name == name)
        return SimDevice(device.sim.faults.faults, trace=True, hazards=hazards_from_environment(),
                         waive_hazards=waive)
    cc = getattr(device, "compute_capability", None)
    if client is not None and cc is not None and tuple(cc) != (client.arch // 10, client.arch % 10):
        pytest.skip(f"NotSupported: needs {client.target}, found sm_{cc[0]}{cc[1]}")
    from conformance.clients.cuda import client_device

    try:
        return client_device(device)
    except OSError as exc:      # a PyCUDA without the driver library beside it (tests/fake_cuda)
        pytest.skip(f"NotSupported: the clients tier calls libcuda.so.1 directly (cuLaunchKernelEx), "
                    f"which this machine lacks: {exc}")


def _still_races(request, client, compiled, case, run_case) -> None:
    """The documented race of a triaged kernel is still reported with its rule checked."""
    from ptxsim import HazardError

    with pytest.raises(HazardError) as info:
        run_case(_client_device(request, client, waive_triaged=False), client, compiled, case)
    assert info.value.rule == TRIAGED_RACES[client.name], str(info.value)


def test_client_kernel(client, request):
    from conformance.clients.build import compile_kernel
    from conformance.clients.launch import compare, run_case

    device = _client_device(request, client)
    cc = getattr(device, "compute_capability", None)
    on_sim = request.config.getoption("device") == "sim"
    # The simulator interprets the PTX of every target it models (sm_100a and sm_103a: tcgen05.ld.red,
    # Gluon's load_min/load_max, exists only on sm_103a); a GPU runs only its own target.
    if not (on_sim and client.arch in SIM_ARCHS) and cc is not None and tuple(cc) != (client.arch // 10, client.arch % 10):
        pytest.skip(f"NotSupported: needs {client.target}, found sm_{cc[0]}{cc[1]}")
    compiled = compile_kernel(client)
    case = client.case()
    if on_sim and client.name in TRIAGED_RACES and getattr(device, "hazards", False):
        _still_races(request, client, compiled, case, run_case)
    result = run_case(device, client, compiled, case)
    request.node.user_properties.append(("target", client.target))
    problems = compare(client, case, result.outputs)
    trace = getattr(device, "trace", None)
    if trace is not None:
        problems += unexercised_families(client, trace.summary()["instructions"])
    if problems:
        pytest.fail(f"{client.section} {client.name} ({client.language}, {client.target}): " + "; ".join(problems)
                    + f"\n  reproduce: python3 -m pytest 'conformance/test_clients.py::test_client_kernel[{client.name}]'"
                      f" --device {request.config.getoption('device')}", pytrace=False)
