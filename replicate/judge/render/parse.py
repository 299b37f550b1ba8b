"""Text and markdown of ``replicate parse``: what one parser made of one run (pure).

Lines, parsed and unparsed shares, the accuracy against gold under the unparsed policy (the source's rule
by default), extraction failures (a count and share, or "not recorded"), the label distribution and the
harness's own figure beside the recomputed one, each share with its bootstrap interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from replicate.judge.model import KEY_SEP, extraction_failures
from replicate.judge.render import harness_table, policy_head, wilson_share
from replicate.labels import LabelSet, label_name
from replicate.output import Format, FormatArg, pct, table
from replicate.pairwise.layout import POSITIONS_NOTE, game_index, is_pairwise

if TYPE_CHECKING:
    from replicate.judge.harness import HarnessCheck
    from replicate.judge.parsed import ParseIntervals
    from replicate.judge.sourcerule import UnparsedChoice


@dataclass(frozen=True)
class ParseSummary:
    """What one parser made of one run's outputs."""

    run: str
    parser: str
    lines: int
    records: int
    parsed: int
    unparsed: int
    labels: dict[int, int]
    gold: dict[int, int]
    rewritten: int
    thoughts: int
    skipped: int
    output_fields: tuple[str, ...]
    files: tuple
    reader: str = "-"
    #: Bootstrap intervals of the shares (``parse --replicates N``, N > 0).
    intervals: ParseIntervals | None = None
    #: Of the unparsed, the records whose answer the file's own extraction did not find (None: not told).
    extraction_failures: int | None = None
    #: The parser's (or reader's) label set: labels and gold are shown by its names when it names them.
    label_set: LabelSet | None = None
    #: The unparsed policy the accuracy is under (the source's rule by default) and how it was chosen.
    choice: UnparsedChoice | None = None
    #: Items right against gold and items counted under :attr:`choice`'s policy (None: no gold).
    correct: int | None = None
    counted: int | None = None
    #: The harness's own figures beside the recomputed accuracy.
    harness: tuple[HarnessCheck, ...] = ()
    #: Why the file's log records no extraction failure (shown as "not recorded"), else None.
    failures_unrecorded: str | None = None
    #: Items that are games of both-order pairwise judgments: what their labels are about (None: other items).
    positions: str | None = None
    #: For such items keyed by game (Arena-Hard): each game's label counts, the table split by game.
    by_game: dict[str, dict[int, int]] | None = None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.counted if self.correct is not None and self.counted else None

    def failure_share(self) -> tuple[float, tuple[float, float] | None] | None:
        """The extraction failures' share of the records and its 95% Wilson interval, when they are told."""
        from replicate.stats.intervals import wilson_interval

        if self.extraction_failures is None or not self.records:
            return None
        return self.extraction_failures / self.records, wilson_interval(self.extraction_failures, self.records)

    def name(self, code: int) -> int | str:
        """How label ``code`` is shown (:func:`~replicate.labels.label_name`)."""
        return label_name(code, self.label_set)

    @property
    def shown_labels(self) -> list[int]:
        """The labels of the distribution table: read by the parser or present in gold."""
        return sorted(set(self.labels) | set(self.gold))

    def rate(self, count: int) -> float | None:
        return count / self.records if self.records else None

    def label_share(self, label: int) -> float | None:
        return self.labels.get(label, 0) / self.parsed if self.parsed else None

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "run": self.run,
            "parser": self.parser,
            "reader": self.reader,
            "lines": self.lines,
            "records": self.records,
            "parsed": self.parsed,
            "unparsed": self.unparsed,
            **({} if self.extraction_failures is None else {"extraction_failures": self.extraction_failures}),
            **({} if self.failures_unrecorded is None else {"extraction_failures": None,
                                                            "extraction_failures_not_recorded": self.failures_unrecorded}),
            "labels": {str(self.name(k)): v for k, v in sorted(self.labels.items())},
            "gold": {str(self.name(k)): v for k, v in sorted(self.gold.items())},
            "rewritten": self.rewritten,
            "thoughts": self.thoughts,
            "skipped": self.skipped,
            "output_fields": list(self.output_fields),
            "files": [f.to_json() for f in self.files],
        }
        if self.label_set is not None:
            out["label_set"] = self.label_set.to_json()
        if self.positions is not None:
            out["positions"] = self.positions
        if self.by_game is not None:
            out["labels_by_game"] = {g: {str(self.name(k)): v for k, v in sorted(c.items())} for g, c in self.by_game.items()}
        if self.choice is not None:
            out["unparsed_rule"] = self.choice.to_json()
        if self.counted is not None:
            out["accuracy"] = {"correct": self.correct, "counted": self.counted, "accuracy": self.accuracy,
                               "unparsed_policy": self.choice.policy if self.choice is not None else None}
            if self.intervals is not None and "accuracy" in self.intervals.rates:
                out["accuracy"]["interval"] = {"accuracy": self.intervals.rates["accuracy"].to_json()}
        failed = self.failure_share()
        if failed is not None:
            out["extraction_failure_share"] = {"share": failed[0], "wilson": None if failed[1] is None else list(failed[1])}
        if self.harness:
            out["harness"] = [h.to_json() for h in self.harness]
        iv = self.intervals
        if iv is not None:
            out["shares"] = {
                "parsed_rate": self.rate(self.parsed),
                "unparsed_rate": self.rate(self.unparsed),
                "interval": {k: v.to_json() for k, v in iv.rates.items()},
            }
            out["label_shares"] = {
                str(self.name(k)): {"share": self.label_share(k), "interval": {"share": iv.labels[k].to_json()}}
                for k in self.shown_labels
            }
            out["uncertainty"] = {k: v for k, v in iv.settings.to_json().items() if k != "min_items"}  # no verdict here
        return out


def parse_summary(
    labelled, run, intervals: Callable[..., ParseIntervals] | None = None, choice: UnparsedChoice | None = None,
) -> ParseSummary:
    """What ``labelled`` (``run`` read by one parser) holds; ``intervals(labelled, labels, policy)`` adds the shares'
    intervals. ``choice``: the unparsed policy of the accuracy against gold and of the harness's own figure
    (default: the source's rule of the run's readers)."""
    from replicate.judge.harness import correct_counted, harness_checks
    from replicate.judge.model import failures_unrecorded
    from replicate.judge.sourcerule import unparsed_choice

    choice = choice if choice is not None else unparsed_choice([run])
    labels = _counts(labelled.labels)
    gold = _counts(run.gold)  # NO_GOLD (-1): the file carries none
    ivs = None if intervals is None else intervals(labelled, sorted(set(labels) | set(gold)), policy=choice.policy)
    correct, counted = correct_counted(labelled, choice.policy) if gold else (None, None)
    positions, by_game = _positions(labelled)
    return ParseSummary(
        run=run.name,
        parser=labelled.parser,
        lines=sum(f.lines for f in run.files),
        records=len(run),
        parsed=len(labelled) - labelled.unparsed,  # --out-of-scale drop: the dropped items are neither
        unparsed=labelled.unparsed,
        labels=dict(labels),
        gold=dict(gold),
        rewritten=sum(f.rewritten for f in run.files),
        thoughts=sum(f.thoughts for f in run.files),
        skipped=sum(f.skipped for f in run.files),
        output_fields=tuple(dict.fromkeys(f.output_field for f in run.files if f.output_field)),
        files=run.files,
        reader=run.reader,
        intervals=ivs,
        extraction_failures=extraction_failures(run.files),
        label_set=labelled.label_set,
        choice=choice,
        correct=correct,
        counted=counted,
        harness=tuple(harness_checks(labelled, choice.policy)),
        failures_unrecorded=failures_unrecorded(run.files),
        positions=positions,
        by_game=by_game,
    )


#: Integer values at most this are counted a value at a time (one comparison each, nothing of the items' length
#: kept but a mask); larger ones by sorting (``np.unique``: an index and a sorted copy of every value).
FEW_VALUES = 64


def _counts(values: np.ndarray) -> dict[int, int]:
    """How often each value >= 0 occurs, in order of first occurrence (as a ``Counter`` of them gives)."""
    values = np.asarray(values)
    top = int(values.max(initial=-1)) if values.dtype.kind in "iu" else FEW_VALUES
    if top < FEW_VALUES:  # labels and grades: a few small values (1.4 M items: about 25 MB less than unique's)
        seen = []
        for v in range(top + 1):
            hit = values == v
            n = int(np.count_nonzero(hit))
            if n:
                seen.append((int(np.argmax(hit)), v, n))
        return {v: n for _, v, n in sorted(seen)}
    values = values[values >= 0]
    distinct, first, counts = np.unique(values, return_index=True, return_counts=True)
    return {int(distinct[i]): int(counts[i]) for i in np.argsort(first)}


def _positions(labelled) -> tuple[str | None, dict[str, dict[int, int]] | None]:
    """For games of both-order pairwise judgments: what their labels are about, and the counts per game."""
    names = getattr(labelled, "key_names", None)
    if not is_pairwise(names):
        return None, None
    at = game_index(names)
    if at is None:
        return POSITIONS_NOTE.format(what="both games of each record are counted here together (A is the model "
                                          "named first in each item's key)"), None
    by_game: dict[str, Counter[int]] = {}
    for key, label in zip(labelled.keys.tolist(), labelled.labels.tolist()):
        counts = by_game.setdefault(key.split(KEY_SEP)[at], Counter())
        if label >= 0:
            counts[int(label)] += 1
    note = POSITIONS_NOTE.format(what="the counts are split by game (game 1 shows the baseline as A, game 2 the model)")
    return note, {g: dict(c) for g, c in sorted(by_game.items())}


def parse_text(s: ParseSummary, fmt: FormatArg) -> str:
    from replicate.judge.render.errors import how_resampled, with_interval

    iv = s.intervals

    def share(value: float | None, key: str | int) -> str:
        """A share in percent, then its interval (``key``: a rate's name or a label) when there is one."""
        if iv is None or value is None:
            return pct(value, 1)
        return with_interval(pct(value, 1), iv.rates[key] if isinstance(key, str) else iv.labels[key], "share")

    rows: list[list[Any]] = [
        ["lines", s.lines],
        ["records (items)", s.records],
        ["parsed", f"{s.parsed} ({share(s.rate(s.parsed), 'parsed_rate')})"],
        ["unparsed", f"{s.unparsed} ({share(s.rate(s.unparsed), 'unparsed_rate')})"],
        *_failure_rows(s),
        ["skipped lines (warned)", s.skipped],
        ["rewritten (original_output kept)", s.rewritten],
        ["with a non-empty thought", s.thoughts],
        ["output field", ", ".join(s.output_fields) or "-"],
    ]
    if s.counted is not None:
        rows.insert(2, ["accuracy against gold", f"{s.correct} of {s.counted} ({share(s.accuracy, 'accuracy')})"])
    head = f"{s.run}: read with {s.parser}\n"
    if Format(fmt) is Format.markdown:
        head = f"## {head}\n"
    if s.choice is not None and (s.choice.rule is not None or s.counted is not None):
        head += policy_head(s.choice, fmt)
    by_game = s.by_game or {}
    games = list(by_game)
    dist_rows = [
        [s.name(k), s.labels.get(k, 0), share(s.label_share(k), k), *(by_game[g].get(k, 0) for g in games),
         s.gold.get(k, 0)]
        for k in s.shown_labels
    ]
    dist_rows.append(["unparsed", s.unparsed, "", *([""] * len(games)), ""])
    headers = ["label", "count", "share of parsed", *(f"game {g}" for g in games), "gold count"]
    out = head + table(rows, ["", "count"], fmt) + "\n" + table(dist_rows, headers, fmt)
    if s.positions is not None:
        out += f"\nPairwise games: {s.positions}.\n"
    if s.harness:
        out += "\n" + harness_table(s.harness, fmt)
    if iv is not None and s.records:
        out += f"\nIntervals: {how_resampled(iv.rates['unparsed_rate'])}.\n"
    return out


def _failure_rows(s: ParseSummary) -> list[list[Any]]:
    """The extraction failures among the unparsed: a count and share with its Wilson interval, or "not recorded"."""
    if s.failures_unrecorded is not None:
        return [["of unparsed: no answer found ([invalid])", f"not recorded ({s.failures_unrecorded})"]]
    if s.extraction_failures is None:
        return []
    return [["of unparsed: no answer found ([invalid])", f"{s.extraction_failures}{wilson_share(s.extraction_failures, s.records)}"]]
