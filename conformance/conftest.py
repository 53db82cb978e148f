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
