"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.paths import ROOT, SHARED_DATA

__all__ = ["ROOT", "SHARED_DATA"]


@pytest.fixture
def root() -> Path:
    return ROOT
