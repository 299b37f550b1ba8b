"""Where the K-trial figures go: matplotlib found, the folder made, each figure written as PNG and SVG.

Shared by ``items --plots`` and ``costs --plots`` (the drawing itself stays in each command's module);
every file goes through :class:`~replicate.outfile.Outputs`, so it is written whole or not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replicate.errors import Message, Param, UsageError
from replicate.outfile import Outputs

PLOTS_HINT = "pip install 'replicate-audit[plots]'"
NO_MATPLOTLIB = f"figures were not drawn: matplotlib is not installed (install the plots extra: {PLOTS_HINT})"


def figure_maker(out: Path) -> Any | None:
    """matplotlib's ``Figure`` once the folder ``out`` exists (made if needed), or None without matplotlib.

    A folder that cannot be made is :class:`~replicate.errors.UsageError` naming ``--plots``.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(Message(Param("plots"), f": cannot make the folder {out}: {exc.strerror or exc}")) from None
    return Figure


def save_figure(fig: Any, out: Path, stem: str, outputs: Outputs) -> list[str]:
    """``fig`` laid out and written as ``out/stem.png`` and ``out/stem.svg``: the two paths."""
    fig.tight_layout()
    png, svg = out / f"{stem}.png", out / f"{stem}.svg"
    outputs.write_figure(fig, png, svg)
    return [str(png), str(svg)]
