"""Assembly tier: every instruction example printed in §9.7.16, assembled verbatim.

Each statement of an "Examples" block is wrapped alone in a kernel (operands declared) and
assembled for sm_100a (sm_103a for tcgen05.ld.red, absent from sm_100a). Examples the spec
gets wrong (NOTES.md item 6 and the others listed in conformance.harness.spec_examples.ERRATA) are
expected failures with their reason (strict: a toolchain that starts accepting them shows up);
pseudocode statements (``...``) skip. The ptxas diagnostic of every example is recorded.
"""

import pytest

from conformance.harness.assembly import toolchains
from conformance.harness.case_status import cts_case
from conformance.harness.spec_examples import PSEUDOCODE, Example, example_ptx, examples, spec_path
from conformance.harness.toolchain import Assembler, Job, find_tool

pytestmark = pytest.mark.assemble

_RESULTS: dict = {}


def _examples() -> list[Example]:
    path = spec_path()
    return examples(path.read_text(encoding="utf-8")) if path else []


def pytest_generate_tests(metafunc):
    if "example" in metafunc.fixturenames:
        exs = _examples()
        metafunc.parametrize("example", [
            pytest.param(e, id=e.example_id, marks=cts_case(case_id=e.example_id, section=e.section, family="spec-example",
                                                            tier="assemble", instruction=e.statement))
            for e in exs])


def _results(tool, exs):
    if tool.path not in _RESULTS:
        jobs = [Job(e.entry, e.target, example_ptx(e)) for e in exs if PSEUDOCODE not in e.statement]
        _RESULTS[tool.path] = Assembler(tool, find_tool("nvdisasm")).assemble(jobs)
    return _RESULTS[tool.path]


def test_spec_example(example, request):
    if spec_path() is None:
        pytest.skip("spec texts not found: expects ../shared/spec beside the checkout or TCGEN05_CTS_SPEC")
    if PSEUDOCODE in example.statement:
        pytest.skip(f"pseudocode, not an instruction: {example.statement}")
    tools = toolchains(request.config)
    if not tools:
        pytest.skip("NotSupported: no ptxas found")
    why = example.expected_error()
    if why:
        request.node.add_marker(pytest.mark.xfail(reason=why, strict=True))
    failures = []
    for tool in tools:
        res = _results(tool, _examples())[(example.entry, example.target)]
        request.node.user_properties.append((tool.label, "accepted" if res.ok else res.diagnostics))
        if not res.ok:
            failures.append(f"{tool.label} rejects {example.statement!r}: {res.diagnostics.splitlines()[0]}")
    assert not failures, "; ".join(failures)
