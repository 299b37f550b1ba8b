"""Parsers: one raw judge output text in, one integer label (or unparsed) out.

A parser is a :class:`Parser` registered under a canonical versioned name such
as ``umbrela-strict@1`` in the ``replicate.parsers`` entry-point group. The
built-in ones live in the top-level ``parsers/`` folder (import name
``replicate_parsers``) and ship through the same entry points third parties use;
``docs/writing-a-parser.md`` shows a complete plugin package.

Parsing is pure: no I/O, no state, and a released version never changes.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

from replicate.labels import LabelSet
from replicate.registry import Registry, VersionedName

if TYPE_CHECKING:
    import numpy as np

#: The value used for "unparsed" inside label arrays (labels are small ints >= 0).
UNPARSED = -1


@dataclass(frozen=True, slots=True)
class Parser:
    """A named, versioned reading of raw output text into an integer label.

    ``read`` returns the label or ``None`` when the text holds no label the
    parser accepts. ``details`` is the full rule text shown in the catalogue.

    ``released`` (keyword-only) says whether the parser reproduces a released
    script's or paper's reading (True, the default) or is a reading new in this
    project, a correction no paper used (False). Tools that pick parsers by
    default (``replicate verify``) try released readings first, so a correction
    never gates by default; the catalogue shows it as "released" or "correction".

    ``label_set`` (keyword-only) declares what its labels are: ordinal grades on
    a range (MAE and Pearson r apply) or categories (``A``, ``B``, ``tie``:
    they do not; the label is the category's code, its position in the set).
    Default: the ordinal range from the smallest to the largest of ``labels``.

    ``value`` (keyword-only, optional) is the number a harness records for the
    text where that number need not be a whole label: FastChat records
    ``[[8.5]]`` as 8.5 and averages it into the model's MT-Bench score, while a
    label is a whole grade. None when the text holds no number the harness
    records. Figures that are means of the harness's numbers (``replicate
    mtbench``) read :meth:`score`; every other figure reads the label.
    """

    name: str
    description: str
    read: Callable[[str], int | None]
    details: str = ""
    labels: tuple[int, ...] = (0, 1, 2, 3)
    released: bool = field(default=True, kw_only=True)
    label_set: LabelSet | None = field(default=None, kw_only=True)
    value: Callable[[str], float | None] | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        VersionedName.parse(self.name)  # raises ValueError on a bad name
        if self.label_set is None:
            object.__setattr__(self, "label_set", LabelSet.ordinal(min(self.labels), max(self.labels)))
        elif not isinstance(self.label_set, LabelSet):
            raise ValueError(f"parser {self.name}: label_set must be a LabelSet, got {self.label_set!r}")
        if "\n" in self.description:
            raise ValueError(f"parser {self.name}: description must be one line")
        if not isinstance(self.released, bool):
            raise ValueError(
                f"parser {self.name}: released must be True (a released reading) or False (a correction), "
                f"got {self.released!r}"
            )

    @property
    def reading(self) -> str:
        """``"released"`` or ``"correction"``: what :attr:`released` means, as shown in the catalogue."""
        return "released" if self.released else "correction"

    @property
    def version(self) -> VersionedName:
        return VersionedName.parse(self.name)

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        return self.read(text)

    def score(self, text: str | None) -> float | None:
        """The number the harness records for ``text`` (:attr:`value`), or the label itself for a parser
        without one; None where there is none."""
        if text is None:
            return None
        if self.value is not None:
            return self.value(text)
        label = self.read(text)
        return None if label is None else float(label)

    def parse_many(self, texts: Iterable[str | None]) -> np.ndarray:
        """Labels for many outputs as an ``int8`` array, :data:`UNPARSED` where unparsed.

        Identical texts are read once (released outputs repeat heavily); the texts remembered for that
        hold at most :data:`PARSE_CACHE_CHARS` characters, so ``texts`` can be a stream of any length.
        """
        import numpy as np  # here, not at import: listing or showing parsers needs no numpy

        if isinstance(texts, (list, tuple)):  # held in memory already: each distinct text read once, mapped in C
            distinct = dict.fromkeys(texts)
            for text in distinct:
                value = self(text)
                distinct[text] = UNPARSED if value is None else value
            return np.fromiter(map(distinct.__getitem__, texts), dtype=np.int8, count=len(texts))
        cache: dict[str | None, int] = {}
        room = PARSE_CACHE_CHARS
        out: list[int] = []
        append = out.append
        for text in texts:
            label = cache.get(text)
            if label is None:
                value = self(text)
                label = UNPARSED if value is None else value
                if room > 0:
                    cache[text] = label
                    room -= len(text) if text else 1
            append(label)
        return np.asarray(out, dtype=np.int8)


#: The most characters of texts :meth:`Parser.parse_many` remembers (16 Mi: about 64 MB at most).
PARSE_CACHE_CHARS = 16 << 20


def parser(
    name: str, description: str, *, labels: tuple[int, ...] = (0, 1, 2, 3), released: bool = True
) -> Callable[[Callable[[str], int | None]], Parser]:
    """Decorator turning ``def read(text) -> int | None`` into a :class:`Parser`.

    The function's docstring becomes the parser's catalogue entry. Pass
    ``released=False`` for a reading new in your package (a correction no
    paper used); see :attr:`Parser.released`.
    """

    def wrap(func: Callable[[str], int | None]) -> Parser:
        return Parser(name, description, func, inspect.cleandoc(func.__doc__ or ""), labels, released=released)

    return wrap


#: Every parser installed, discovered through the ``replicate.parsers`` entry points.
PARSERS: Registry[Parser] = Registry("replicate.parsers", "parser")
