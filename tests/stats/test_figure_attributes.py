"""FourCell's built-in figures are typed attributes for a type checker, generated from the one table.

``FourCell`` reads its figures from :data:`~replicate.stats.fourcell.FIGURES` at run time (its ``__getattr__``),
which a type checker would take as "any attribute goes". It hides that method from type checkers and takes as its
base, for them only, ``FigureAttributes`` (replicate/stats/figure_attributes.py, written by tools/docgen.py from
``BUILT_IN``). These tests run mypy on snippets: a misspelt figure is an error naming it, every built-in figure
type-checks as ``float | None``; and at run time the attributes still come from the table.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from replicate.stats.fourcell import BUILT_IN, FIGURES, Figure, FourCell, register_figure

ROOT = Path(__file__).resolve().parents[2]


def _mypy(tmp_path: Path, sources: dict[str, str]) -> tuple[int, list[str]]:
    """mypy (the project's settings) over the snippets; its exit code and its output lines."""
    pytest.importorskip("mypy", reason="mypy is not installed (it is in the test extra)")
    paths = []
    for name, text in sources.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
        paths.append(str(tmp_path / name))
    # from the repository's root, so mypy finds the package (an editable install's import hook is invisible to it)
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--follow-imports=silent",
         "--cache-dir", os.devnull, "--no-error-summary", "--show-column-numbers", *paths],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    return out.returncode, [ln.replace(str(tmp_path) + os.sep, "") for ln in out.stdout.splitlines()]


def test_mypy_names_a_misspelt_figure_and_passes_every_built_in_one(tmp_path):
    good = "\n".join([
        "from replicate.stats.fourcell import FourCell",
        "",
        "def figures(cells: FourCell) -> None:",
        *(f"    reveal_type(cells.{f.name})" for f in BUILT_IN),
        '    exact = cells.exact("any_name")  # by name: checked at run time',
        '    registered = getattr(cells, "any_name")',
        "",
    ])
    bad = """\
        from replicate.stats.fourcell import FourCell

        cells = FourCell(3, 2, 1, 4)
        fine: float | None = cells.regression_rate
        misspelt = cells.regresion_rate
        registered_later = cells.fixed_share_of_old_wrong
        """
    code, lines = _mypy(tmp_path, {"good.py": good, "bad.py": bad})
    assert code == 1, lines
    errors = [ln for ln in lines if ": error:" in ln]
    assert errors == [
        'bad.py:5:12: error: "FourCell" has no attribute "regresion_rate"  [attr-defined]',
        'bad.py:6:20: error: "FourCell" has no attribute "fixed_share_of_old_wrong"  [attr-defined]',
    ], lines
    revealed = [ln for ln in lines if ln.startswith("good.py") and "Revealed type" in ln]
    assert len(revealed) == len(BUILT_IN) >= 10
    assert all(re.search(r'Revealed type is "((builtins\.)?float \| None|Union\[builtins\.float, None\])"', ln)
               for ln in revealed), revealed


def test_mypy_passes_the_correct_snippet_alone(tmp_path):
    code, lines = _mypy(tmp_path, {"ok.py": """\
        from replicate.stats.fourcell import FourCell

        cells = FourCell(3, 2, 1, 4, changed=5)
        rate: float | None = cells.regression_rate
        share: float | None = cells.regression_share_of_old_correct
        """})
    assert code == 0 and lines == [], lines


def test_at_run_time_each_figure_comes_from_the_table():
    cells = FourCell(3, 2, 1, 4, changed=5)
    assert FourCell.__mro__ == (FourCell, object)  # the typed base is for type checkers only
    for f in BUILT_IN:
        assert getattr(cells, f.name) == cells.value(f.name)
    assert cells.regression_rate == 2 / 10 and cells.independence_ratio == (2 * 10) / (5 * 6)
    with pytest.raises(AttributeError, match="'FourCell' object has no attribute 'regresion_rate'"):
        cells.regresion_rate  # type: ignore[attr-defined]  # noqa: B018


def test_a_registered_figure_is_an_attribute_at_run_time():
    added = Figure("doubly_wrong_share", lambda c: (c.neither, c.both + c.only_old + c.only_new + c.neither),
                   "neither / n", "both wrong", "both wrong", "the share of items both versions get wrong")
    register_figure(added)
    try:
        cells = FourCell(3, 2, 1, 4)
        assert getattr(cells, added.name) == 4 / 10 == cells.value(added.name)
        assert added not in BUILT_IN
    finally:
        del FIGURES[added.name]
