"""The assembly tier's harness: which cases, which toolchains, and assembled results on demand.

Test modules call :func:`selected_cases` at collection (options ``--level``, ``--section``,
``--family``) and :func:`check_case` in the test. Results come from :class:`AssemblyService`:
when a test needs a (kernel, target) that is not assembled yet, the service assembles it together
with the kernels of the next tests in collection order (look-ahead), so ptxas sees batches even
though pytest runs one test at a time; pytest-xdist workers share the on-disk cache.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import pytest

from conformance.harness.case_status import Deferred, cts_case
from conformance.harness.selection import deselected_by_markexpr
from conformance.harness.toolchain import Assembler, Job, Result, Tool, find_ptxas, find_tool
from generators.params import Case
from generators.ptx.kernel import render
from generators.sections import section_ids_of, statements_of
from generators.variants import cases as all_cases
from reference.targets import ptx_version

MMA_FAMILIES = ("mma", "mma.sp", "mma.ws", "mma.ws.sp", "warp.mma.sp")
LOOKAHEAD_ITEMS = 256


def job_for(case: Case, target: str, arch: str = "") -> Job:
    """The assembly job of ``case`` on ``target`` (`.version`: forced, else the lowest allowed),
    as SASS for ``arch`` (default: the target itself)."""
    version = case.ptx_version or ptx_version(target, case.features)
    return Job(case.kernel.name, target, render(case.kernel, target, version), "" if arch == target else arch)


def selected_cases(config, families: Sequence[str]) -> list[Case]:
    """Cases of the chosen level, section prefixes and families (intersected with ``families``)."""
    wanted = [f for f in families if not config.getoption("--family") or f in config.getoption("--family")]
    if not wanted:
        return []
    return all_cases(config.getoption("--level"), sections=config.getoption("--section"), families=wanted)


class AssemblyService:
    """Assembles on demand with look-ahead; one per toolchain per pytest process."""

    def __init__(self, ptxas: Tool, nvdisasm: Tool | None, workers: int = 1) -> None:
        self.tool = ptxas
        self.nvdisasm = nvdisasm
        self.assembler = Assembler(ptxas, nvdisasm, workers=workers)
        self.results: dict[tuple[str, ...], Result] = {}
        self._index: dict[int, int] | None = None

    def ensure(self, jobs: Iterable[Job], optional: Iterable[Job] = ()) -> None:
        todo = [j for j in jobs if j.key not in self.results]
        extra = [j for j in optional if j.key not in self.results]
        if todo:
            self.results.update(self.assembler.assemble(todo, optional=extra))

    def results_for(self, case: Case, item=None) -> dict[str, Result]:
        keys = [(case.kernel.name, t) for t in case.targets]
        if any(k not in self.results for k in keys):
            jobs = [job_for(case, t) for t in case.targets]
            self.ensure(jobs, self._lookahead(item) if item is not None else ())
        return {t: self.results[(case.kernel.name, t)] for t in case.targets}

    def result_for_device(self, case: Case, target: str, arch: str) -> Result:
        """The case's kernel of PTX ``target`` assembled as SASS for the device's ``arch``."""
        job = job_for(case, target, arch)
        if job.key not in self.results:
            self.ensure([job])
        return self.results[job.key]

    def _lookahead(self, item) -> list[Job]:
        items = item.session.items
        if self._index is None:
            self._index = {id(it): i for i, it in enumerate(items)}
        start = self._index.get(id(item), 0)
        jobs: list[Job] = []
        seen: set[tuple[str, str]] = set()
        for it in items[start + 1:start + 1 + LOOKAHEAD_ITEMS]:
            case = getattr(it, "callspec", None) and it.callspec.params.get("case")
            if not isinstance(case, Case):
                continue
            for t in case.targets:
                key = (case.kernel.name, t)
                if key not in self.results and key not in seen:
                    seen.add(key)
                    jobs.append(job_for(case, t))
        return jobs


_SERVICES: dict[str, AssemblyService] = {}


def toolchains(config) -> list[Tool]:
    """ptxas toolchains from ``--ptxas`` (repeatable) or discovery; empty when none is found.

    The versions found are recorded as the run's toolchain in the outcome log."""
    tools = find_ptxas(config.getoption("--ptxas"))
    if tools:
        from conformance.outcomes_plugin import set_run_info

        set_run_info(config, toolchain="; ".join(f"ptxas {t.version}" for t in tools))
    return tools


def service(config, tool: Tool) -> AssemblyService:
    if tool.path not in _SERVICES:
        workers = 1 if os.environ.get("PYTEST_XDIST_WORKER") else max(1, min(4, os.cpu_count() or 1))
        _SERVICES[tool.path] = AssemblyService(tool, find_tool("nvdisasm"), workers=workers)
    return _SERVICES[tool.path]


def deviation_for(case: Case, tool: Tool) -> str | None:
    for prefix, what in case.deviations:
        if tool.version.startswith(prefix):
            return what
    return None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no diagnostic)"


def check_case(case: Case, request) -> None:
    """The assembly-tier assertion for one case: legal -> accepted on every target (and a
    tensor-core MMA opcode in the SASS of MMA cases when nvdisasm is found); illegal -> rejected."""
    tools = toolchains(request.config)
    if not tools:
        pytest.skip("NotSupported: no ptxas found (--ptxas, $TCGEN05_CTS_PTXAS, nvidia-cuda-nvcc wheel, CUDA_HOME, PATH)")
    if not case.targets:
        pytest.skip(f"NotSupported: {case.case_id} exists on none of the assembled targets")
    problems: list[str] = []
    for tool in tools:
        svc = service(request.config, tool)
        results = svc.results_for(case, request.node)
        request.node.user_properties.append((f"{tool.label}", {t: r.ok for t, r in results.items()}))
        if case.legal:
            for target, res in results.items():
                if not res.ok:
                    problems.append(f"{tool.label} rejects legal case on {target}: {_first_line(res.diagnostics)}")
                elif case.family in MMA_FAMILIES and svc.nvdisasm is not None:
                    mma_ops = sorted(op for op in res.opcodes if "MMA" in op)
                    request.node.user_properties.append((f"sass-mma-{target}", ",".join(mma_ops)))
                    if not res.has_tensor_mma():
                        problems.append(f"{tool.label} {target}: no tensor-core MMA opcode in the SASS")
        else:
            accepted = [t for t, r in results.items() if r.ok]
            known = deviation_for(case, tool)
            if known:
                request.node.add_marker(pytest.mark.xfail(reason=f"toolchain deviation: {known}", strict=True))
            if accepted:
                problems.append(f"{tool.label} accepts illegal case on {', '.join(accepted)} (rule: {case.rule})")
    if problems:
        pytest.fail(f"{case.case_id} [{case.section}]: " + "; ".join(problems), pytrace=False)


def parametrize_cases(metafunc, families: Sequence[str]) -> None:
    """``pytest_generate_tests`` body shared by the test_assemble_* modules."""
    if "case" in metafunc.fixturenames:
        if deselected_by_markexpr(metafunc):
            metafunc.parametrize("case", [])      # an empty set: its placeholder is deselected too
            return
        cs = selected_cases(metafunc.config, families)
        metafunc.parametrize("case", [pytest.param(c, id=c.case_id, marks=assembly_identity(c)) for c in cs])


def assembly_identity(case: Case) -> pytest.MarkDecorator:
    """Outcome-log identity of a case's assembly verdict: ``<case_id>.assemble`` (the execution
    tier reports the plain case ID), its spec section, family and variant fields."""
    return cts_case(case_id=f"{case.case_id}.assemble", section=case.section, family=case.family,
                    sections=Deferred(section_ids_of, case), statements=Deferred(statements_of, case), tier="assemble", legal=case.legal, targets=",".join(case.targets),
                    instruction=case.instruction, rule=case.rule)
