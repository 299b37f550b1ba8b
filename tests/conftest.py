"""Shared test fixtures.

Fixtures used across folders live in ``support/fixtures.py`` and reach every
test module through ``pytest_plugins`` (no per-module fixture imports).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.paths import ROOT, SHARED_DATA

__all__ = ["ROOT", "SHARED_DATA"]

pytest_plugins = ["support.fixtures"]


@pytest.fixture
def root() -> Path:
    return ROOT
