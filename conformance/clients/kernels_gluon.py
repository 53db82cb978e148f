"""Corpus kernels (placeholder until the configurations land)."""

from __future__ import annotations


def configs() -> list:
    return []
