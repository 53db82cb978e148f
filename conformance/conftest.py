"""Collection rules of the conformance package (test modules of every tier)."""

from __future__ import annotations

EMPTY_PARAMETER_SET = "got empty parameter set"


def pytest_collection_modifyitems(config, items) -> None:
    """Deselect the placeholder test pytest makes when a selection (``--family``, ``--section``)
    leaves a module no case: it is no case of the suite and must not appear in the outcome log."""
    dropped = [it for it in items if any(str(m.kwargs.get("reason", "")).startswith(EMPTY_PARAMETER_SET)
                                         for m in it.iter_markers("skip"))]
    if dropped:
        keep = {id(it) for it in dropped}
        items[:] = [it for it in items if id(it) not in keep]
        config.hook.pytest_deselected(items=dropped)


NEXT_LEVEL = {"smoke": "default"}       # default -> exhaustive takes ~50 s to enumerate: not listed


def pytest_cts_not_run(config):
    """Legal variants the chosen level leaves out (the outcome plugin's coverage input): at smoke,
    the default level's legal cases that smoke does not hold, with the selection options applied."""
    from generators.variants import cases
    from results.outcome_log import NotRun

    level = config.getoption("level")
    wider = NEXT_LEVEL.get(level)
    if wider is None:
        return []
    sections, families = config.getoption("section"), config.getoption("family")
    have = {c.case_id for c in cases(level, sections=sections, families=families, negatives=False)}
    return [NotRun(c.case_id, c.section, c.family, f"in level {wider}, not in {level}")
            for c in cases(wider, sections=sections, families=families, negatives=False) if c.case_id not in have]
