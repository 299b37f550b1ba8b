"""The library entry point for judge runs: load named runs once, label them, compare.

>>> loaded = load_runs(runs_from_toml("fixtures/example/runs.toml"))   # doctest: +SKIP
>>> edges = chain(loaded.labelled("umbrela-fallback@1"))             # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import UsageError
from replicate.judge.load import FieldSpec, load_run
from replicate.judge.model import LabelledRun, Run
from replicate.judge.select import RunSpec
from replicate.parsing import PARSERS
from replicate.reading import READERS, ReadOptions


@dataclass(frozen=True)
class Loaded:
    """Runs read from disk plus every warning raised while reading them.

    Raw runs are read once; :meth:`labelled` reads their outputs with a named
    parser (cached per parser, so several parser versions can be compared).
    """

    runs: tuple[Run, ...]
    diagnostics: Diagnostics
    fields: FieldSpec = FieldSpec()
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.runs)

    def detected(self) -> dict[str, list[str]]:
        """Reader name -> paths of the files whose reader was chosen by content (not named)."""
        out: dict[str, list[str]] = {}
        for r in self.runs:
            for f in r.files:
                if f.chosen == "by content":
                    out.setdefault(f.reader, []).append(f.provenance.path)
        return out

    def labelled(self, parser_name: str) -> list[LabelledRun]:
        """Each run labelled by the registered parser ``parser_name`` (EXAM runs keep their grades)."""
        if parser_name not in self._cache:
            needs_parser = any(r.labels is None for r in self.runs)
            parser = PARSERS.get(parser_name) if needs_parser else None
            self._cache[parser_name] = [r.label_with(parser) for r in self.runs]
        return list(self._cache[parser_name])

    def run(self, name: str) -> Run:
        for r in self.runs:
            if r.name == name:
                return r
        raise UsageError(f"unknown run {name!r}; runs: {', '.join(self.names)}")


def load_runs(
    specs: Sequence[RunSpec],
    *,
    fields: FieldSpec = FieldSpec(),
    strict: bool = False,
    reader: str | None = None,
    options: ReadOptions | None = None,
) -> Loaded:
    """Read every run of ``specs`` (each file once) into a :class:`Loaded`.

    ``reader`` names the reader of runs whose spec names none (``--reader``);
    without either, each file's reader is chosen by content. Errors raise :class:`~replicate.errors.BadInput` naming file and line;
    warnings are counted in ``Loaded.diagnostics`` (``strict=True`` raises on the first).
    """
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"run names must be unique; repeated: {', '.join(dupes)}")
    diag = Diagnostics(strict=strict)
    if reader is not None:
        READERS.get(reader)  # an unknown name is a usage error before any file is read
    runs = tuple(
        load_run(s.name, s.paths, fields=fields, diagnostics=diag, reader=s.reader or reader, options=options)
        for s in specs
    )
    return Loaded(runs, diag, fields)
