"""AlpacaEval's win rate from its annotations, as ``alpaca_eval/metrics/helpers.py`` computes it (pure).

Each annotation records a preference between the baseline's output
(``output_1``, ``generator_1``) and the model's (``output_2``,
``generator_2``): 1 the baseline's, 2 the model's, 1.5 a draw (0 in old
files), a fraction for a weighted annotator. AlpacaEval drops what is not a
preference (null, outside 1-2) and prints ``win_rate``, the mean of
preference - 1 times 100 (ties as half; a weighted annotator's fractions as
they are), and ``discrete_win_rate``, the same over the preferences rounded
to 1, 1.5 or 2. The length-controlled win rate (a fitted GLM over output
lengths) is :mod:`replicate.pairwise.lc`'s.
"""

from __future__ import annotations

from typing import Sequence

from replicate.judge.uncertainty import Uncertainty
from replicate.pairwise.layout import ALPACAEVAL_KEY
from replicate.pairwise.rules import Record, alpacaeval_record
from replicate.pairwise.tally import PairwiseError, PairwiseTally, count
from replicate.parsing import Parser


def alpacaeval_records(
    keys: Sequence[str], outputs: Sequence[str | None], parser: Parser, *, key_names: Sequence[str], sep: str,
) -> list[Record]:
    """Each annotation keyed (instruction, generator_1, generator_2) as a record of generator_2 against its
    baseline, its preference read by ``parser``'s score (``alpacaeval-preference@1``)."""
    if tuple(key_names) != ALPACAEVAL_KEY:
        raise PairwiseError(f"AlpacaEval win rates need annotations keyed {', '.join(ALPACAEVAL_KEY)}")
    records = []
    for key, text in zip(keys, outputs, strict=True):
        instruction, baseline, model = key.split(sep)
        try:
            records.append(alpacaeval_record(instruction, model, baseline, parser.score(text)))
        except ValueError as exc:
            raise PairwiseError(f"{parser.name} read {text!r} as {exc}; read AlpacaEval's preferences with "
                                "alpacaeval-preference@1") from None
    return records


def alpacaeval_tally(
    keys: Sequence[str], outputs: Sequence[str | None], parser: Parser, *, key_names: Sequence[str], sep: str,
    reader: str = "-", uncertainty: Uncertainty | None = None,
) -> PairwiseTally:
    """Every generator_2's win rate against its baseline from annotations keyed (instruction, generator_1,
    generator_2), each preference read by ``parser``'s score (``alpacaeval-preference@1``)."""
    records = alpacaeval_records(keys, outputs, parser, key_names=key_names, sep=sep)
    baselines = {r.models[1] for r in records} - {r.models[0] for r in records}
    return count(records, rule="alpacaeval", parser=parser.name, reader=reader, left_out=baselines,
                 uncertainty=uncertainty)
