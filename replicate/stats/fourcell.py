"""Four-cell tables: every single-label figure of docs/design/design.md, defined once (pure).

For an edge old -> new over N shared items the cells are ``both`` (old right,
new right), ``only_old`` (old right, new wrong: a regression), ``only_new``
(old wrong, new right) and ``neither``; ``changed`` counts the items whose two
labels differ (known when the table comes from labels, not from a paper).

Each figure is one declaration, a :class:`Figure` in the one table
:data:`FIGURES`: its ratio of whole numbers made from the cells, its names,
its range, what it mirrors on the reverse edge and where it is shown. The
bootstrap (:mod:`replicate.stats.bootstrap`), the JSON of an edge, the
renderers, ``verify``'s metric names, note tables, flags and alternatives, and
the docs' table of figures are all read from it, so a figure is added in one place: :func:`register_figure`
(see "Adding a four-cell figure" in docs/concepts.md). The ratio uses only
``+``, ``-`` and ``*``, so the same definition is evaluated three ways:

- exactly, as a :class:`~fractions.Fraction` of one table's ints
  (:meth:`FourCell.exact`; what ``verify`` matches and floors place);
- as a float view of the same ratio (:meth:`FourCell.value`, or the figure's
  name as an attribute; ``int / int`` is correctly rounded, so it equals
  ``float`` of the fraction);
- elementwise on integer numpy arrays, for every ordered pair of runs at once
  (:func:`ratio_arrays`; what ``matrix`` draws and the bootstrap resamples).

A figure whose denominator is 0 is undefined: ``None`` (NaN in arrays), never 0.
:class:`FourCell` reads like a scipy result object: it keeps the counts it was
computed from, and offers :meth:`FourCell.confidence_interval` and
:meth:`FourCell.mcnemar_p` as methods.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from replicate.stats.intervals import wilson, z_value
from replicate.stats.paired import mcnemar_exact_log10_p, mcnemar_exact_p

if TYPE_CHECKING:
    # a typed attribute per built-in figure, generated from BUILT_IN below: what a type checker sees of FourCell's
    # figures (a misspelt one is an error); at run time FourCell reads them from FIGURES (its __getattr__)
    from replicate.stats.figure_attributes import FigureAttributes
else:
    FigureAttributes = object


class Cells(Protocol):
    """Anything with the four cells (and label changes): ints, or integer arrays of the same shape."""

    @property
    def both(self) -> Any: ...
    @property
    def only_old(self) -> Any: ...
    @property
    def only_new(self) -> Any: ...
    @property
    def neither(self) -> Any: ...
    @property
    def changed(self) -> Any: ...


def _n(c: Cells) -> Any:
    return c.both + c.only_old + c.only_new + c.neither


def _old_correct(c: Cells) -> Any:
    return c.both + c.only_old


def _new_wrong(c: Cells) -> Any:
    # N - new_correct, written as a sum of cells
    return c.only_old + c.neither


Ratio = Callable[[Cells], tuple[Any, Any]]
Kind = Literal["rate", "difference", "ratio"]

#: What each kind of figure can be: its range (a stretched interval is kept within it).
RANGES: dict[str, tuple[float, float]] = {"rate": (0.0, 1.0), "difference": (-1.0, 1.0), "ratio": (0.0, math.inf)}
#: Where a figure is shown besides every edge (``edge``: the JSON of an edge, its bootstrap interval, the
#: figures and interval tables, an audit's moves): ``chain``'s one-row-per-edge table, ``matrix``'s squares.
VIEWS: tuple[str, ...] = ("edge", "chain", "matrix")


@dataclass(frozen=True, slots=True)
class NoteColumn:
    """How ``verify``'s note shows an edge figure in its tables of edges: ``heading`` heads its column (empty:
    the figure's ``short``); ``point`` orders it among the edge's point figures (None: not among them); ``block``
    is the interval table it is in, the accuracies' or the regression figures'. By default a figure is shown
    last in the point figures and in the regression figures' intervals, headed by its ``short``."""

    heading: str = ""
    point: float | None = math.inf
    block: Literal["accuracy", "regression"] = "regression"


@dataclass(frozen=True, slots=True)
class Figure:
    """One four-cell figure: its definition over the cells and everything the tool shows of it.

    ``ratio`` gives the figure's ``(numerator, denominator)`` from anything with
    the cells (:class:`Cells`) using only ``+``, ``-`` and ``*``, so it is
    evaluated exactly, as a float and over arrays alike. ``definition`` is that
    ratio in words (``only_old / n``), ``label`` and ``short`` the figure's names
    in a table row and a column header, ``meaning`` what it says (the docs'
    table). ``kind`` fixes its range and how it is printed (a rate or a
    difference as a percent, a ratio as a number). ``proportion``: a count of
    items over a count of items, so it has a Wilson interval (and a bootstrap
    interval never narrower). ``mirror``: the figure of the reverse edge new ->
    old that equals this one (the bootstrap copies it from an edge's reverse).
    ``needs_labels``: it needs the label changes (``changed``), which a table
    typed in from a paper does not have. ``views``: where it is shown
    (:data:`VIEWS`; every figure can be named in a claim). ``note``: how ``verify``'s note lays it out
    (:class:`NoteColumn`). ``undefined``: why its denominator is 0, in words (a claim of it says so).
    """

    name: str
    ratio: Ratio
    definition: str
    label: str
    short: str
    meaning: str
    kind: Kind = "rate"
    proportion: bool = False
    mirror: str | None = None
    needs_labels: bool = False
    views: frozenset[str] = frozenset({"edge"})
    note: NoteColumn = NoteColumn()
    undefined: str = "its denominator is 0"

    @property
    def range(self) -> tuple[float, float]:
        return RANGES[self.kind]

    @property
    def heading(self) -> str:
        """Its column heading in ``verify``'s note."""
        return self.note.heading or self.short


#: Every four-cell figure by name, in the order tables and JSON show them: the one table.
FIGURES: dict[str, Figure] = {}

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _sample_tables() -> list[SimpleNamespace]:
    """Small tables every cell count 0-2, with a number of changed labels between the least and the most."""
    out = []
    for both, only_old, only_new, neither in itertools.product(range(3), repeat=4):
        least = only_old + only_new
        for changed in sorted({least, least + neither}):
            out.append(SimpleNamespace(both=both, only_old=only_old, only_new=only_new, neither=neither, changed=changed))
    return out


_SAMPLES = _sample_tables()


def _swapped(c: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(both=c.both, only_old=c.only_new, only_new=c.only_old, neither=c.neither, changed=c.changed)


def _check_figure(f: Figure) -> None:
    """A figure's declaration against its own claims, on small tables: ints, its kind's range, a proportion's
    count within its denominator, its mirror on the reverse edge."""
    def bad(why: str) -> ValueError:
        return ValueError(f"four-cell figure {f.name!r}: {why}")

    if not _NAME.match(f.name):
        raise bad("a name is lower-case letters, digits and underscores, starting with a letter")
    if f.name in FIGURES:
        raise bad("is registered twice")
    if f.kind not in RANGES:
        raise bad(f"kind must be one of {', '.join(RANGES)}; got {f.kind!r}")
    if not f.views or not f.views <= set(VIEWS):
        raise bad(f"views must be some of {', '.join(VIEWS)}; got {sorted(f.views)}")
    mirror = None if f.mirror is None else (f if f.mirror == f.name else FIGURES.get(f.mirror))
    if mirror is not None and mirror.mirror != f.name:
        raise bad(f"mirrors {f.mirror!r}, which mirrors {mirror.mirror!r}")
    low, high = f.range
    for c in _SAMPLES:
        num, den = f.ratio(c)
        if type(num) is not int or type(den) is not int or den < 0:
            raise bad(f"ratio must give whole numbers (a denominator >= 0) from whole cells; got ({num!r}, {den!r})")
        if den == 0:
            continue
        if num < low * den or num > high * den:  # integer comparisons: exact, and cheap at import
            raise bad(f"{num}/{den} on the cells {vars(c)} lies outside its kind {f.kind!r} ({low}, {high})")
        if f.proportion and not 0 <= num <= den:
            raise bad(f"a proportion's count must lie within its denominator; got {num}/{den} on {vars(c)}")
        if mirror is not None:
            back_num, back_den = mirror.ratio(_swapped(c))
            if back_num * den != num * back_den or back_den == 0:
                raise bad(f"is not {mirror.name!r} of the reverse edge on the cells {vars(c)}")


def register_figure(figure: Figure) -> Figure:
    """Add a four-cell figure to :data:`FIGURES`: from then on the bootstrap gives it an interval, an edge's
    JSON and tables show it and a claim can name it. Its declaration is checked first (see
    :func:`_check_figure`); a figure whose ``mirror`` is registered later is checked then."""
    _check_figure(figure)
    FIGURES[figure.name] = figure
    return figure


def declared(name: str) -> Figure:
    """The figure called ``name``; ValueError naming every figure when there is none."""
    f = FIGURES.get(name)
    if f is None:
        raise _unknown(name)
    return f


def figure_names(view: str | None = None) -> tuple[str, ...]:
    """The figures' names in table order (shown in ``view``, when given)."""
    return tuple(n for n, f in FIGURES.items() if view is None or view in f.views)


def same_count() -> tuple[tuple[str, ...], ...]:
    """The proportions that count the same items over different denominators, in groups (table order): a
    printed figure named for one may be another of its group (``verify`` tries them)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for name, f in FIGURES.items():
        if f.proportion:
            groups.setdefault(tuple(f.ratio(c)[0] for c in _SAMPLES), []).append(name)
    return tuple(tuple(g) for g in groups.values() if len(g) > 1)


def proportions() -> tuple[str, ...]:
    """The edge figures that are a count over a count of items on any table (labels not needed): each has a
    Wilson interval from the cells alone."""
    return tuple(n for n, f in FIGURES.items() if f.proportion and not f.needs_labels and "edge" in f.views)


class _Ratios(Mapping[str, Ratio]):
    """Each figure's ratio by name, read from :data:`FIGURES` (so a figure registered later is in it)."""

    def __getitem__(self, name: str) -> Ratio:
        return FIGURES[name].ratio

    def __iter__(self) -> Iterator[str]:
        return iter(FIGURES)

    def __len__(self) -> int:
        return len(FIGURES)


#: figure -> its ``(numerator, denominator)`` function (a view of :data:`FIGURES`).
RATIOS: Mapping[str, Ratio] = _Ratios()

_EDGE_CHAIN = frozenset({"edge", "chain"})
_ACCURACY = NoteColumn(point=None, block="accuracy")
#: The built-in figures, each one declaration. Code elsewhere names a figure by its object (``REGRESSION_RATE.name``
#: as a key, ``cells.regression_rate`` as a value), never by a string of its own (tests/stats/test_figure_names.py).
EM_OLD = register_figure(Figure(
    "em_old", lambda c: (c.both + c.only_old, _n(c)), "(both + only_old) / n", "EM old", "EM old",
    "the old version's exact-match accuracy on the shared items", proportion=True, mirror="em_new",
    views=_EDGE_CHAIN, note=_ACCURACY))
EM_NEW = register_figure(Figure(
    "em_new", lambda c: (c.both + c.only_new, _n(c)), "(both + only_new) / n", "EM new", "EM new",
    "the new version's exact-match accuracy on the shared items", proportion=True, mirror="em_old",
    views=_EDGE_CHAIN, note=_ACCURACY))
# EM_old - EM_new = (only_old - only_new) / N, exactly; not mirrored: the percentiles' interpolation is not exactly
# antisymmetric
ACCURACY_DIFFERENCE = register_figure(Figure(
    "accuracy_difference", lambda c: (c.only_old - c.only_new, _n(c)), "EM old - EM new (paired)", "EM difference",
    "EM diff.",
    "the accuracy lost, paired by item; equals regression_rate - backward_rate exactly, so an asymmetry between the "
    "two says nothing beyond it", kind="difference", note=NoteColumn("EM old - new", point=None, block="accuracy")))
REGRESSION_RATE = register_figure(Figure(
    "regression_rate", lambda c: (c.only_old, _n(c)), "only_old / n", "regression rate", "regr.",
    "the share of **all** items the upgrade breaks; what most papers print (\"negative flip rate\")",
    proportion=True, mirror="backward_rate", views=frozenset(VIEWS), note=NoteColumn("regressed", point=1)))
REGRESSION_SHARE_OF_OLD_CORRECT = register_figure(Figure(
    "regression_share_of_old_correct", lambda c: (c.only_old, _old_correct(c)), "only_old / (both + only_old)",
    "regression share of old-correct", "regr./old-correct",
    "the share of **what the old version got right** that the upgrade loses", proportion=True,
    views=frozenset(VIEWS), note=NoteColumn("of old-correct", point=2),
    undefined="the old run has no correct labels (both + only_old = 0)"))
BACKWARD_RATE = register_figure(Figure(
    "backward_rate", lambda c: (c.only_new, _n(c)), "only_new / n", "backward rate", "backward",
    "the share of all items the upgrade fixes; the regression rate of the reverse edge", proportion=True,
    mirror="regression_rate", views=_EDGE_CHAIN, note=NoteColumn(point=5, block="accuracy")))
CHANGE_RATE = register_figure(Figure(
    "change_rate", lambda c: (c.changed, _n(c)), "labels differ / n", "change rate", "change",
    "churn regardless of gold (2 -> 1 on a gold-3 item is a change but not a regression); needs the labels",
    proportion=True, mirror="change_rate", needs_labels=True, views=_EDGE_CHAIN, note=NoteColumn(point=6)))
INDEPENDENT_REGRESSION_RATE = register_figure(Figure(
    "independent_regression_rate", lambda c: (_old_correct(c) * _new_wrong(c), _n(c) * _n(c)),
    "EM old x (1 - EM new)", "independent regression rate", "indep. regr.",
    "the regression rate expected if the two versions' errors were unrelated", note=NoteColumn("independent", point=3)))
INDEPENDENCE_RATIO = register_figure(Figure(
    "independence_ratio", lambda c: (c.only_old * _n(c), _old_correct(c) * _new_wrong(c)),
    "regression / independent", "independence ratio", "indep. ratio",
    "below 1: fewer regressions than unrelated errors on equally hard items would give (item difficulty "
    "alone does this); above 1: more; known in the model-update literature as relative negative flip rate",
    kind="ratio", views=frozenset(VIEWS), note=NoteColumn("ratio", point=4),
    undefined="the independent-errors rate is 0 (old never right or new always right)"))
LABEL_AGREEMENT = register_figure(Figure(
    "label_agreement", lambda c: (_n(c) - c.changed, _n(c)), "labels equal / n", "label agreement", "label agr.",
    "1 - change_rate: the share of items given the same label by both versions", proportion=True,
    mirror="label_agreement", needs_labels=True, views=frozenset({"matrix"})))
#: The figures this module declares (a figure registered from outside is in :data:`FIGURES` only): each is a typed
#: attribute of :class:`FourCell` (replicate/stats/figure_attributes.py, generated from them by tools/docgen.py).
BUILT_IN: tuple[Figure, ...] = tuple(FIGURES.values())


def exact_ratio(num: int, den: int) -> Fraction | None:
    """``num / den`` as an exact fraction; None (undefined, not 0) when ``den`` is 0."""
    return None if den == 0 else Fraction(int(num), int(den))


def float_ratio(num: int, den: int) -> float | None:
    """``num / den`` as the nearest float (equal to ``float(exact_ratio(num, den))``); None when ``den`` is 0."""
    return None if den == 0 else num / den


def ratio_arrays(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise ``num / den`` of integer arrays as float64, NaN where ``den`` is 0.

    Each entry equals :func:`float_ratio` of the same integers (IEEE division
    is correctly rounded; counts stay far below 2**53).
    """
    num = np.asarray(num, dtype=np.float64)  # no copy when already float64
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def figure_arrays(cells: Cells, figures: Sequence[str]) -> dict[str, np.ndarray]:
    """Each named figure of :data:`RATIOS` over cells held as integer arrays (NaN = undefined)."""
    _check_figures(figures)
    return {name: ratio_arrays(*RATIOS[name](cells)) for name in figures}


def _unknown(figure: str) -> ValueError:
    return ValueError(f"figure must be one of {', '.join(RATIOS)}; got {figure!r}")


def _check_figures(figures: Sequence[str]) -> None:
    for f in figures:
        if f not in RATIOS:
            raise _unknown(f)


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


@dataclass(frozen=True, slots=True)
class FourCell(FigureAttributes):
    """The four cells of an edge old -> new over N shared items, and every figure of them.

    ``both``: old right, new right; ``only_old``: old right, new wrong (a
    regression); ``only_new``: old wrong, new right; ``neither``: both wrong.
    ``changed``: items whose two labels differ, when the table comes from
    labels (None for a table typed in from a paper); it is extra information
    about the labels, so two tables with the same cells compare equal.

    Figures are float properties (None where undefined); :meth:`exact` gives
    the same figure as a :class:`~fractions.Fraction`.
    """

    both: int
    only_old: int
    only_new: int
    neither: int
    changed: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("both", "only_old", "only_new", "neither"):
            object.__setattr__(self, name, _count(name, getattr(self, name)))
        if self.changed is not None:
            changed = _count("changed", self.changed)
            if changed > self.n:
                raise ValueError(f"changed must be at most n = {self.n}, got {changed}")
            object.__setattr__(self, "changed", changed)

    # -- counts ------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(_n(self))

    @property
    def old_correct(self) -> int:
        return int(_old_correct(self))

    @property
    def new_correct(self) -> int:
        return self.both + self.only_new

    # -- figures: the one definition in FIGURES, exact or as a float -------------
    def parts(self, figure: str) -> tuple[int, int] | None:
        """(numerator, denominator) of ``figure``; None for a figure needing labels on a typed-in table."""
        f = declared(figure)
        if self.changed is None and f.needs_labels:
            return None
        return f.ratio(self)

    def exact(self, figure: str) -> Fraction | None:
        """``figure`` (a key of :data:`FIGURES`) as an exact fraction; None where undefined."""
        parts = self.parts(figure)
        return None if parts is None else exact_ratio(*parts)

    def value(self, figure: str) -> float | None:
        """``figure`` as a float (the nearest to :meth:`exact`); None where undefined."""
        parts = self.parts(figure)
        return None if parts is None else float_ratio(*parts)

    if not TYPE_CHECKING:  # hidden from type checkers, which then see only the built-in figures' typed attributes
        def __getattr__(self, name: str) -> float | None:
            """Each figure of :data:`FIGURES` as a float attribute (``cells.regression_rate``), as :meth:`value`;
            one registered from outside the package too, though only the built-in ones are typed
            (:class:`~replicate.stats.figure_attributes.FigureAttributes`)."""
            if name in FIGURES:
                return self.value(name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- tests and intervals -------------------------------------------------------
    def mcnemar_p(self) -> float | None:
        """Exact McNemar test of whether the two versions' accuracies differ (independent items); None with no items."""
        return None if self.n == 0 else mcnemar_exact_p(self.only_old, self.only_new)

    def confidence_interval(
        self, figure: str = "regression_rate", *, confidence_level: float = 0.95
    ) -> tuple[float, float] | None:
        """Wilson score interval of one proportion (see :func:`proportions`); None when its denominator is 0."""
        return self.confidence_intervals([figure], confidence_level=confidence_level)[figure]

    def confidence_intervals(
        self, figures: Sequence[str] | None = None, *, confidence_level: float = 0.95
    ) -> dict[str, tuple[float, float] | None]:
        """Wilson score intervals of several proportions at once (one vectorised call); every one by default."""
        allowed = proportions()
        figures = allowed if figures is None else figures
        for f in figures:
            if f not in allowed:
                raise ValueError(f"figure must be one of {', '.join(allowed)}; got {f!r}")
        if not figures:
            return {}
        k, n = (np.array(v) for v in zip(*(FIGURES[f].ratio(self) for f in figures)))
        defined = n > 0
        lo, hi = wilson(k[defined], n[defined], z_value(confidence_level))
        bounds = iter(zip(lo.tolist(), hi.tolist()))
        return {f: (next(bounds) if ok else None) for f, ok in zip(figures, defined.tolist())}

    def figures(self) -> dict:
        """Every edge figure as a JSON-ready dict (rates as fractions; None = undefined or needing labels)."""
        return edge_figures_json(self.arrays(), np.array([self.changed is not None]))[0]

    def arrays(self) -> SimpleNamespace:
        """This table as one-entry integer arrays (``changed`` 0 when not known), for the functions over many tables."""
        return SimpleNamespace(**{k: np.array([getattr(self, k)]) for k in ("both", "only_old", "only_new", "neither")},
                               changed=np.array([self.changed or 0]))

    def to_json(self) -> dict:
        return self.figures()


def edge_figures_json(cells: Cells, labelled: np.ndarray) -> list[dict]:
    """:meth:`FourCell.figures` of many tables at once: ``cells`` holds 1-D integer arrays, one entry a table;
    ``labelled``: whether each table has its label changes (a figure needing labels is None where not).

    Each figure is evaluated once over the arrays (:func:`figure_arrays`; the same floats as
    :meth:`FourCell.value`), so ``matrix`` writes the JSON of all its pairs without a per-pair lookup.
    """
    names = figure_names("edge")
    values = figure_arrays(cells, names)
    no_labels = ~np.asarray(labelled, dtype=bool)
    columns = []
    for name in names:
        v = values[name]
        if FIGURES[name].needs_labels and no_labels.any():
            v = np.where(no_labels, np.nan, v)
        columns.append([None if x != x else x for x in v.tolist()])  # NaN (undefined) -> None
    counts = [np.asarray(getattr(cells, k)).tolist() for k in ("both", "only_old", "only_new", "neither")]
    tests: dict[tuple[int, int], tuple[float | None, float | None]] = {(-1, -1): (None, None)}  # no items: no test
    out = []
    for k, (both, only_old, only_new, neither) in enumerate(zip(*counts)):
        n = both + only_old + only_new + neither
        # the exact test depends on the discordant counts' minimum and sum only: an edge and its reverse share it
        key = (min(only_old, only_new), only_old + only_new) if n else (-1, -1)
        test = tests.get(key)
        if test is None:
            test = tests[key] = (mcnemar_exact_p(only_old, only_new), mcnemar_exact_log10_p(only_old, only_new))
        out.append({
            "n": n,
            "cells": {"both": both, "only_old": only_old, "only_new": only_new, "neither": neither},
            **{name: col[k] for name, col in zip(names, columns)},
            "mcnemar_p": test[0],
            "mcnemar_log10_p": test[1],
        })
    return out


def as_float(x: Fraction | None) -> float | None:
    """The float view of an exact figure (None stays None)."""
    return None if x is None else float(x)
