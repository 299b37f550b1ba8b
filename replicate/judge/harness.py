"""The harness's own figure beside the recomputed one: a self-check of a run against its harness (pure).

Where a harness wrote its aggregate beside the per-item file (lm-eval's
``results_<date>.json``, an inspect log's header, HELM's ``stats.json``), the
reader keeps it (:class:`~replicate.reading.contract.HarnessFigure`). Here it is set
against the accuracy recomputed from the run's items under the unparsed policy
in force (the source's rule by default, so they should agree), at the printed
figure's precision: a value ``v`` written with ``d`` decimals matches every
recomputed value within half a unit of its last place, by the rule a claim is
checked by (:mod:`replicate.printed`); a value written in full as a double
(``0.6666666666666666``, 15 decimals or more) matches the recomputed ratio
computed as a double, as the harness computed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from replicate.parsing import UNPARSED
from replicate.printed import half_unit, rounded_to
from replicate.stats.policy import Policy

if TYPE_CHECKING:
    from replicate.judge.model import LabelledRun
    from replicate.reading.contract import HarnessFigure


def accuracy_masks(run: LabelledRun, policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """(right, counted) per item of one run against its gold under ``policy``: ``intersect`` counts the parsed
    items, ``wrong`` every item (an unparsed one wrong). Items without gold are not counted."""
    labels = np.asarray(run.labels)
    gold = np.asarray(run.gold)
    has_gold = gold >= 0
    parsed = labels != UNPARSED
    counted = has_gold & parsed if policy == "intersect" else has_gold
    return counted & parsed & (labels == gold), counted


def correct_counted(run: LabelledRun, policy: Policy) -> tuple[int, int]:
    """(items right, items counted) of one run against its gold under ``policy`` (:func:`accuracy_masks`)."""
    right, counted = accuracy_masks(run, policy)
    return int(np.count_nonzero(right)), int(np.count_nonzero(counted))


def places(printed: str) -> int:
    """Digits after the decimal point of a number as written (``0.57``: 2; ``1e-05``: 5; ``1``: 0)."""
    try:
        exponent = Decimal(printed).as_tuple().exponent
    except InvalidOperation:
        raise ValueError(f"not a number: {printed!r}") from None
    return max(0, -int(exponent)) if isinstance(exponent, int) else 0


#: Decimals from which a printed figure is a double written in full (Python's shortest repr), compared as a double.
FULL = 15


@dataclass(frozen=True)
class HarnessCheck:
    """One harness figure set against the run's recomputed accuracy."""

    run: str
    figure: HarnessFigure
    correct: int
    counted: int
    policy: Policy

    @property
    def recomputed(self) -> Fraction | None:
        return Fraction(self.correct, self.counted) if self.counted else None

    @property
    def places(self) -> int:
        return places(self.figure.printed)

    def shown(self) -> str:
        """The recomputed accuracy at the printed figure's precision (halves away from zero); a figure written
        as a double's shortest text (15 decimals or more, ``0.6666666666666666``) is set beside the double."""
        x = self.recomputed
        if x is None:
            return "-"
        if self.places >= FULL:
            return repr(float(x))
        return rounded_to(x, self.places)

    @property
    def matches(self) -> bool | None:
        """Within half a unit of the printed figure's last place (a boundary matches); None without items."""
        x = self.recomputed
        if x is None:
            return None
        if self.places >= FULL:  # a double as the harness computed it (mean = k / n in binary): equal as doubles
            return float(x) == self.figure.value
        return abs(x - Fraction(Decimal(self.figure.printed))) <= half_unit(self.places)

    @property
    def verdict(self) -> str:
        return {True: "match", False: "MISMATCH", None: "-"}[self.matches]

    def to_json(self) -> dict[str, Any]:
        x = self.recomputed
        return {
            "run": self.run, **self.figure.to_json(), "recomputed": None if x is None else float(x),
            "correct": self.correct, "counted": self.counted, "unparsed_policy": self.policy,
            "match": self.matches,
        }


def harness_checks(run: LabelledRun, policy: Policy) -> list[HarnessCheck]:
    """Every harness figure of ``run``'s files set against its accuracy under ``policy`` (none for a run of several
    files: the harness's figure is one file's)."""
    if len(run.files) != 1 or not run.files[0].harness:
        return []
    correct, counted = correct_counted(run, policy)
    return [HarnessCheck(run.name, f, correct, counted, policy) for f in run.files[0].harness]


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    import json

    return json.dumps(text, ensure_ascii=False)


#: A harness figure written in full as a double is written into a claim at this many decimals: within half a
#: unit of its last place lies the double the harness computed, and the exact ratio it stands for.
CLAIM_PLACES = 15


def claims_toml(runs: Sequence[tuple[str, Sequence[str], str, Mapping[str, str], Sequence[HarnessFigure]]]) -> str:
    """A claims file (TOML) whose claims are the harnesses' own figures, for ``replicate verify``.

    ``runs``: per run, its name, its files (relative to the verification's ``--root``), its reader, the
    reader options it was read with and the harness figures of its file. Each figure becomes an ``em``
    claim over its run (unit ``fraction``, the value as the harness wrote it; one written in full as a
    double, at :data:`CLAIM_PLACES` decimals, saying so), with no ``unparsed``: verify takes the runs'
    source rule, as the harness counted.
    """
    out = [
        "# The harnesses' own figures, written beside their per-item files, as claims (replicate harness-claims).",
        "# Check them with: replicate verify THIS.toml --root DIR (the paths below are relative to DIR).",
        "",
        "[study]",
        f"title = {_toml_string(f'the harness figures of {len(runs)} run(s)')}",
        "",
        "[runs]",
    ]
    for name, files, reader, options, _ in runs:
        parts = [f"files = [{', '.join(map(_toml_string, files))}]", f"reader = {_toml_string(reader)}"]
        parts += [f"{k} = {_toml_string(v)}" for k, v in options.items()]
        out.append(f"{_toml_string(name)} = {{ {', '.join(parts)} }}")
    for name, _, _, _, figures in runs:
        for f in figures:
            value, text = f.printed, f"{f.metric} as the harness wrote it"
            if places(value) >= FULL:
                value = f"{Decimal(value):.{CLAIM_PLACES}f}"
                text += f" ({f.printed}, a double in full; written here at {CLAIM_PLACES} decimals)"
            out += [
                "", "[[claims]]", f"id = {_toml_string(f'{name}: {f.metric}')}", 'metric = "em"',
                f"run = {_toml_string(name)}", f"value = {_toml_string(value)}", 'unit = "fraction"',
                f"where = {_toml_string(f.where)}", f"text = {_toml_string(text)}",
            ]
    return "\n".join(out) + "\n"
