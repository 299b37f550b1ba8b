"""Import a development script under ``tools/`` (outside the installed package)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from support.paths import ROOT


def load_tool(name: str) -> ModuleType:
    """The module ``tools/<name>.py``, imported once."""
    key = f"replicate_tools_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module
