"""Fixtures shared by the collection tests."""

from __future__ import annotations

import pytest

from replicate.collect.config import load_items
from support.paths import ROOT

ITEMS = ROOT / "fixtures" / "collect" / "items.jsonl"


@pytest.fixture(autouse=True)
def _key(request, monkeypatch):
    """The test module's planted API key (its KEY) in its ENV variable, when it declares both."""
    module = request.module
    if hasattr(module, "KEY") and hasattr(module, "ENV"):
        monkeypatch.setenv(module.ENV, module.KEY)


@pytest.fixture(scope="module")
def items():
    return load_items(ITEMS)
