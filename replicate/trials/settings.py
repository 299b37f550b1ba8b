"""The settings of the K-trial figures, each with its one default (pure data).

Read by ``replicate items`` (:func:`replicate.trials.engine.analyse_items`),
``replicate screen`` (:func:`replicate.trials.screen.screen`), ``replicate
plan`` (:func:`replicate.trials.plan.plan`), their command-line defaults, and
``replicate verify`` for claims over trials tables (where ``[study]`` or a
claim may set any of them). A figure computed by a command and the same figure
checked by ``verify`` therefore use the same defaults.

========== ========== ==================================================================
setting    default    meaning
========== ========== ==================================================================
eps        0.2        practical threshold on an item's difference, decided exactly (1/5)
alpha      0.05       Benjamini-Hochberg level: an item is significant when q <= alpha
ci         newcombe   interval for equivalence (newcombe, wald, agresti-caffo)
null       1000       replications of the permutation null (0: off)
seed       0          seed of every random draw (the null, single draws, plan's simulation)
low, high  0.1, 0.9   the informative accuracy range of ``screen`` (inclusive)
threshold  0.35       share of informative items a benchmark needs to pass ``screen``
tolerance  0.05       replication: a fresh figure within this of the printed one replicates
========== ========== ==================================================================

The seed is 0 everywhere a command or claim takes one (``items``,
``plan``, ``verify``'s trial claims): a fixed, recorded default, so an
unseeded run is repeatable and two commands given no seed draw the same
streams. (The judge commands' ``--seed`` seeds their bootstrap, a separate
setting.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal, get_args

#: Settings given as decimal text (decided exactly), shown in JSON as numbers.
DECIMAL_SETTINGS = ("eps", "low", "high", "threshold", "tolerance")
#: Every setting a ``[study]`` table or a trial claim may give.
SETTING_FIELDS = ("eps", "alpha", "ci", "null", "seed", "by", "low", "high", "threshold", "tolerance")
#: How cells are formed: one per edge and benchmark, or benchmarks pooled.
By = Literal["benchmark", "none"]
BY_CHOICES: tuple[By, ...] = get_args(By)


@dataclass(frozen=True, slots=True)
class TrialSettings:
    """Settings that change a trial figure. ``given`` names those set explicitly (the rest are defaults)."""

    eps: str = "0.2"
    alpha: float = 0.05
    ci: str = "newcombe"
    null: int = 1000
    seed: int = 0
    by: str | None = None  # verify: None takes it from the claim (a benchmark -> "benchmark", none -> "none")
    low: str = "0.1"
    high: str = "0.9"
    threshold: str = "0.35"
    tolerance: str = "0.05"
    given: frozenset[str] = frozenset()

    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name != "given":
                v = getattr(self, f.name)
                out[f.name] = float(v) if f.name in DECIMAL_SETTINGS else v
        out["given"] = sorted(self.given)
        return out

    def fraction(self, name: str) -> Fraction:
        return Fraction(Decimal(str(getattr(self, name))))


#: The defaults, one each.
DEFAULTS = TrialSettings()
#: The seed of every random draw of a trial command or claim that gives none.
DEFAULT_SEED: int = DEFAULTS.seed


def _decimal_text(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    from replicate.stats.rational import exact_decimal

    try:
        exact_decimal(str(v))
    except ValueError:
        return None
    return str(v).strip()


def parse_settings(table: Mapping[str, Any], base: TrialSettings, say: Callable[[str], None]) -> TrialSettings:
    """The settings of ``table`` (a [study] or a claim) over ``base``; bad values are said, not raised."""
    from replicate.stats.intervals import DIFF_METHODS  # (numpy: the command line reads the defaults without it)

    values: dict[str, Any] = {}
    for key in SETTING_FIELDS:
        if key not in table:
            continue
        v = table[key]
        if key in DECIMAL_SETTINGS:
            text = _decimal_text(v)
            if text is None or not 0 <= Decimal(text) <= 1 or (key in ("eps", "tolerance") and Decimal(text) == 0):
                say(f"{key} must be a number in {'(0, 1]' if key in ('eps', 'tolerance') else '[0, 1]'}, got {v!r}")
                continue
            values[key] = text
        elif key == "alpha":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
                say(f"alpha must be a number in (0, 1), got {v!r}")
                continue
            values[key] = float(v)
        elif key in ("null", "seed"):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                say(f"{key} must be a whole number >= 0, got {v!r}")
                continue
            values[key] = v
        elif key == "ci":
            if v not in DIFF_METHODS:
                say(f"unknown ci {v!r}; methods: {', '.join(DIFF_METHODS)}")
                continue
            values[key] = v
        elif key == "by":
            if v not in BY_CHOICES:
                say(f"by must be one of {', '.join(BY_CHOICES)}, got {v!r}")
                continue
            values[key] = v
    return replace(base, **values, given=base.given | frozenset(values))
