"""Reading TOML input files (runs tables, claims, collection and sim configs) with one error style."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from replicate.command_input import read_input
from replicate.errors import BadInput

_TOML_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)")


def read_toml(path: str | Path, *, what: str = "file") -> dict:
    """The parsed TOML document at ``path``.

    Every failure is a :class:`BadInput` naming the file (and, for syntax errors,
    the line): those of :func:`~replicate.command_input.read_input` (``<what> not
    found``, ...), ``not UTF-8 text (...)`` or ``not valid TOML: ...`` (also a document nested too deeply
    for the parser, which would otherwise end in a ``RecursionError``).
    """
    p = Path(path)
    raw = read_input(p, what=what)
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInput(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=p) from None
    except RecursionError:
        raise BadInput("not valid TOML: nested too deeply (arrays or inline tables within each other "
                       "thousands deep)", path=p) from None
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_LINE.search(str(exc))
        raise BadInput(
            f"not valid TOML: {_TOML_LINE.sub('', str(exc)).strip()}",
            path=p,
            line=int(m.group(1)) if m else None,
        ) from None
