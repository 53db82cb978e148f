"""Locate the spec texts (``shared/spec`` beside the checkout, as on CI and dev machines)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def spec_dir() -> Path | None:
    """The folder holding the PTX ISA texts, or None. ``TCGEN05_CTS_SPEC`` overrides."""
    candidates = [os.environ.get("TCGEN05_CTS_SPEC"), ROOT / "shared" / "spec", ROOT.parent / "shared" / "spec"]
    for cand in candidates:
        if cand and (Path(cand) / "ptx-9.7.16-tcgen05.md").is_file():
            return Path(cand)
    return None


def spec_text(name: str) -> str:
    """Text of one spec file; skips the calling test (with the reason) when the texts are absent."""
    folder = spec_dir()
    if folder is None:
        pytest.skip("spec texts not found: expects ../shared/spec beside the checkout or TCGEN05_CTS_SPEC")
    return (folder / name).read_text(encoding="utf-8")
